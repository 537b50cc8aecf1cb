//! Custom error pages as ingress-nginx writes them: `custom-http-errors` (annotation and
//! ConfigMap key), `default-backend`, `disable-proxy-intercept-errors` and the controller's
//! `--default-backend-service` (shunt's `--nginx-default-backend`), into the [`ErrorPages`]
//! a route carries.
//!
//! ```text
//! location codes (annotation) ─▶ error_page CODE = @custom_<default-backend or global>_CODE
//!   else ConfigMap codes ───────▶ the same, inherited from the http block, to the global one
//! proxy_intercept_errors on ◀─ location codes unless disabled there, or ConfigMap codes unless
//!                               disabled in the ConfigMap; off: only nginx's own errors go
//! ```
//! The error backend is the `default-backend` Service's first port when it has endpoints
//! (controller.go, `custom-default-backend-*`), else the global one when it has endpoints, else
//! ingress-nginx's built-in default server, which answers 404 to anything.

use crate::objects::HTTPIngressPath;
use shunt_spec::{ERROR_CODES, ErrorLocation, ErrorPages};

use super::{
    Nginx,
    annotations::{Refusal, flag},
    claims::Walk,
};
use crate::compile::{PathClaim, Sink};

/// The error-page keys of one Ingress, as written; resolved once all are seen.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct ErrorKeys {
    codes: Option<String>,
    backend: Option<String>,
    disable_intercept: Option<String>,
}

/// What an Ingress's keys ask of its locations.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ErrorAnnotations {
    /// `custom-http-errors`: sorted, without repeats; `None` leaves the ConfigMap's.
    pub codes: Option<Vec<u16>>,
    /// `default-backend`: a Service of the Ingress's namespace.
    pub backend: Option<String>,
    /// `disable-proxy-intercept-errors`.
    pub disable_intercept: bool,
}

/// The ConfigMap's `custom-http-errors` and `disable-proxy-intercept-errors`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GlobalErrors {
    pub codes: Vec<u16>,
    pub disable_intercept: bool,
}

/// Where a location's errors may go, found by the caller: the `default-backend` Service's
/// backend id when it has endpoints, and the global one's when it has endpoints.
pub(super) struct ErrorBackends {
    pub annotation: Option<String>,
    pub global: Option<String>,
}

impl GlobalErrors {
    /// Reads the ConfigMap key `key`: `custom-http-errors` or `disable-proxy-intercept-errors`.
    pub(super) fn set(&mut self, key: &str, value: &str) -> Result<(), Refusal> {
        if key == "custom-http-errors" {
            self.codes = configmap_codes(value).map_err(|()| Refusal::Unsupported)?;
        } else {
            self.disable_intercept = flag(value)?;
        }
        Ok(())
    }
}

impl ErrorKeys {
    /// Keeps `value` when `name` (without the prefix) is an error-page key; `false` otherwise.
    pub(super) fn set(&mut self, name: &str, value: &str) -> bool {
        let slot = match name {
            "custom-http-errors" => &mut self.codes,
            "default-backend" => &mut self.backend,
            "disable-proxy-intercept-errors" => &mut self.disable_intercept,
            _ => return false,
        };
        *slot = Some(value.to_string());
        true
    }

    /// What the keys ask, or the key that refuses the Ingress's hosts.
    pub(super) fn resolve(&self) -> Result<ErrorAnnotations, (Refusal, &'static str)> {
        let codes = match self.codes.as_deref() {
            None => None,
            Some(value) => annotation_codes(value).map_err(|refusal| (refusal, "custom-http-errors"))?,
        };
        let backend = match self.backend.as_deref() {
            None | Some("") => None,
            Some(name) if service_name(name.trim()) => Some(name.trim().to_string()),
            Some(_) => return Err((Refusal::Invalid, "default-backend")),
        };
        let disable_intercept = match self.disable_intercept.as_deref() {
            None | Some("") => false,
            Some(value) => flag(value).map_err(|refusal| (refusal, "disable-proxy-intercept-errors"))?,
        };
        Ok(ErrorAnnotations {
            codes,
            backend,
            disable_intercept,
        })
    }
}

/// `custom-http-errors` on an Ingress: its validator, with the value's spaces removed, takes
/// `^(?:[4,5]\d{2},?)*$`; its parser splits on `,`, trims, skips empty items and reads each
/// as a number (customhttperrors/main.go). A value the validator refuses fails the Ingress;
/// one whose numbers nginx would not take (`404500`, `0`) fails nginx's reload: both refused.
/// `Ok(None)`: a blank value, which ingress-nginx ignores.
pub(super) fn annotation_codes(value: &str) -> Result<Option<Vec<u16>>, Refusal> {
    let compact: String = value.chars().filter(|c| *c != ' ').collect();
    if compact.is_empty() {
        return Ok(None);
    }
    let items: Vec<&str> = compact.split(',').collect();
    let last = items.len() - 1;
    let mut codes = Vec::with_capacity(items.len());
    for (at, item) in items.iter().enumerate() {
        if item.is_empty() && at == last {
            break;
        }
        let bytes = item.as_bytes();
        if bytes.len() != 3 || !matches!(bytes[0], b'4' | b'5') || !bytes.iter().all(u8::is_ascii_digit) {
            return Err(Refusal::Invalid);
        }
        codes.push(item.parse().map_err(|_| Refusal::Invalid)?);
    }
    Ok(Some(sorted(codes)))
}

/// The ConfigMap's `custom-http-errors`: items split on `,` and trimmed; one that is not a
/// number is skipped, as is a number outside 300-599 (configmap.go, `filterErrors`). shunt
/// replaces only 400-599 (`Err`: a listed 3xx).
pub(super) fn configmap_codes(value: &str) -> Result<Vec<u16>, ()> {
    let mut codes = Vec::new();
    for item in value.split(',').map(str::trim).filter(|item| !item.is_empty()) {
        let Some(code) = go_atoi(item) else { continue };
        match code {
            300..=399 => return Err(()),
            400..=599 => codes.push(code as u16),
            _ => {}
        }
    }
    Ok(sorted(codes))
}

/// Go's `strconv.Atoi` for the values it takes: an optional sign, then ASCII digits.
fn go_atoi(item: &str) -> Option<i64> {
    let digits = item.strip_prefix(['+', '-']).unwrap_or(item);
    if digits.is_empty() || digits.len() > 18 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    item.parse().ok()
}

fn sorted(mut codes: Vec<u16>) -> Vec<u16> {
    codes.sort_unstable();
    codes.dedup();
    debug_assert!(codes.iter().all(|code| ERROR_CODES.contains(code)));
    codes
}

/// A DNS-1035 label, as `ValidateServiceName` requires of `default-backend`.
fn service_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    let inner = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-';
    (1..=63).contains(&bytes.len())
        && bytes[0].is_ascii_lowercase()
        && bytes.iter().all(inner)
        && bytes[bytes.len() - 1] != b'-'
}

/// The error pages of one location: `None` when no status is listed anywhere.
pub(super) fn pages(
    annotations: &ErrorAnnotations,
    global: &GlobalErrors,
    backends: ErrorBackends,
    location: ErrorLocation,
) -> Option<ErrorPages> {
    let own = annotations.codes.as_ref().filter(|codes| !codes.is_empty());
    // The http block's `proxy_intercept_errors on`, which a location without its own inherits.
    let inherited = !global.codes.is_empty() && !global.disable_intercept;
    let (codes, backend, intercept) = match own {
        Some(codes) => {
            let backend = backends.annotation.or(backends.global);
            (codes.clone(), backend, !annotations.disable_intercept || inherited)
        }
        None if global.codes.is_empty() => return None,
        None => (global.codes.clone(), backends.global, inherited),
    };
    Some(ErrorPages {
        codes,
        backend,
        intercept,
        location,
    })
}

/// The error pages of a path claim of `nginx`.
pub(super) fn claim(
    nginx: &Nginx<'_>,
    sink: &mut Sink<'_>,
    walk: &Walk<'_>,
    path: &HTTPIngressPath,
) -> Option<ErrorPages> {
    let annotations = &nginx.annotations.errors;
    let global = &walk.config.errors;
    if annotations.codes.as_ref().is_none_or(Vec::is_empty) && global.codes.is_empty() {
        return None;
    }
    // A Service without endpoints is no error backend: nginx keeps the next one.
    let mut with_endpoints = |(namespace, name): (&str, &str)| {
        let resolved = sink.backends.resolve_first_port(namespace, name)?;
        (!resolved.spec.endpoints.is_empty()).then(|| resolved.id.clone())
    };
    let backends = ErrorBackends {
        annotation: (annotations.backend.as_deref()).and_then(|name| with_endpoints((nginx.namespace, name))),
        global: walk.default_backend.and_then(|(ns, name)| with_endpoints((ns, name))),
    };
    let service = path.backend.service.as_ref();
    let port = service.and_then(|service| service.port.as_ref());
    let location = ErrorLocation {
        namespace: nginx.namespace.to_string(),
        ingress_name: nginx.name.to_string(),
        service_name: service.map(|service| service.name.to_string()).unwrap_or_default(),
        service_port: match port {
            Some(port) if port.number.is_some_and(|number| number > 0) => port.number.unwrap_or_default().to_string(),
            Some(port) => port.name.as_deref().unwrap_or_default().to_string(),
            None => String::new(),
        },
    };
    pages(annotations, global, backends, location)
}

/// Puts a claimed route's error backend in the table beside the route's own.
pub(super) fn hold_backend(claim: &PathClaim, sink: &mut Sink<'_>) {
    let options = claim.route.options.as_deref();
    let id = options.and_then(|options| options.error_pages.as_ref()?.backend.as_ref());
    if let Some(resolved) = id.and_then(|id| sink.backends.resolved(id)) {
        sink.table.add_alternative(&resolved);
    }
}

/// Why a claim's host is refused when its backend has no endpoints and its `default-backend`
/// Service has some: ingress-nginx then sends the location's requests to that Service, with
/// X-Code 503 (controller.go, `location.Backend = name`), which shunt does not reproduce.
pub(super) fn unreproduced(nginx: &Nginx<'_>, sink: &mut Sink<'_>, claim: &PathClaim) -> Option<String> {
    let name = nginx.annotations.errors.backend.as_deref()?;
    let backend = claim.backend.as_deref().filter(|b| b.spec.endpoints.is_empty())?;
    let fallback = sink.backends.resolve_first_port(nginx.namespace, name)?;
    (!fallback.spec.endpoints.is_empty()).then(|| {
        format!(
            "UnsupportedAnnotation: {}default-backend: backend {} has no endpoints, so ingress-nginx sends its requests to the default backend",
            super::annotations::PREFIX,
            backend.id
        )
    })
}
