//! A GRPCRoute match as an HTTPRoute match (a path on `/{service}/{method}` and the same
//! headers) plus what a table path cannot say: a whole-path condition, and the spec's
//! precedence (characters of the service, then of the method, then header matches).
//!
//! ```text
//! none                      ─▶ PathPrefix /
//! Exact service and method  ─▶ Exact /{service}/{method}
//! Exact service             ─▶ PathPrefix /{service}
//! Exact method, or a regex  ─▶ PathPrefix / (or /{service}) + path regex /(service)/(method)
//! ```

use std::cmp::Reverse;

use shunt_spec::ValueMatch;

use super::super::{
    matches::{MAX_VALUE_LEN, Specificity, check_regex},
    objects::{HTTPRouteMatch, PathMatch},
};
use super::objects::{GRPCMethodMatch, GRPCRouteMatch};

/// What a regular expression puts for a service or method left out: one path element.
const ANY_ELEMENT: &str = "[^/]+";

/// One match, in HTTPRoute's shape, with what only gRPC says.
#[derive(Clone, Debug, PartialEq)]
pub struct Translated {
    pub http: HTTPRouteMatch,
    /// The whole path must match it; `None` when the table path says everything.
    pub path: Option<ValueMatch>,
    /// Characters of the service and of the method matched: the spec's precedence.
    pub chars: (usize, usize),
}

/// Translates one match; the error says what shunt cannot serve.
pub fn translate(raw: &GRPCRouteMatch) -> Result<Translated, String> {
    let mut translated = match &raw.method {
        None => Translated {
            http: HTTPRouteMatch::default(),
            path: None,
            chars: (0, 0),
        },
        Some(method) => method_match(method)?,
    };
    translated.http.headers = raw.headers.clone();
    Ok(translated)
}

/// Where `translated` sorts among its host's matches, given its header matches (after
/// duplicates are dropped): lower sorts first and wins, as for HTTPRoute's.
pub fn specificity(translated: &Translated, headers: usize) -> Specificity {
    let (service, method) = translated.chars;
    (
        false,
        Reverse(service),
        Reverse(false),
        Reverse(method),
        Reverse(headers),
    )
}

fn method_match(raw: &GRPCMethodMatch) -> Result<Translated, String> {
    let service = raw.service.as_deref().filter(|value| !value.is_empty());
    let method = raw.method.as_deref().filter(|value| !value.is_empty());
    if [service, method]
        .iter()
        .flatten()
        .any(|value| value.len() > MAX_VALUE_LEN)
    {
        return Err(format!("a service or method longer than {MAX_VALUE_LEN} characters"));
    }
    let chars = (service.map_or(0, str::len), method.map_or(0, str::len));
    let exact = match raw.type_.as_deref().unwrap_or("Exact") {
        "Exact" => true,
        "RegularExpression" => false,
        other => return Err(format!("method match type {other:?} is not supported")),
    };
    if exact {
        check_names(service, method)?;
    }
    let (kind, path, condition) = match (exact, service, method) {
        (_, None, None) => return Err("a method match names neither a service nor a method".to_string()),
        (true, Some(service), Some(method)) => ("Exact", format!("/{service}/{method}"), None),
        (true, Some(service), None) => ("PathPrefix", format!("/{service}"), None),
        (true, None, Some(method)) => {
            let pattern = format!("/{ANY_ELEMENT}/{}", regex::escape(method));
            ("PathPrefix", "/".to_string(), Some(pattern))
        }
        (false, service, method) => {
            for pattern in [service, method].into_iter().flatten() {
                check_regex(pattern).map_err(|error| format!("method match regex {pattern:?}: {error}"))?;
            }
            let service = service.unwrap_or(ANY_ELEMENT);
            let method = method.unwrap_or(ANY_ELEMENT);
            (
                "PathPrefix",
                "/".to_string(),
                Some(format!("/(?:{service})/(?:{method})")),
            )
        }
    };
    let http = HTTPRouteMatch {
        path: Some(PathMatch {
            type_: Some(kind.to_string()),
            value: Some(path),
        }),
        ..HTTPRouteMatch::default()
    };
    Ok(Translated {
        http,
        path: condition.map(ValueMatch::Regex),
        chars,
    })
}

/// The CRD's characters for an `Exact` service (`pkg.Service`, case-insensitive, an optional
/// leading dot) and method (an identifier): nothing else can name a path element exactly.
fn check_names(service: Option<&str>, method: Option<&str>) -> Result<(), String> {
    let identifier = |part: &str| {
        let mut bytes = part.bytes();
        bytes
            .next()
            .is_some_and(|first| first.is_ascii_alphabetic() || first == b'_')
            && bytes.all(|byte| byte.is_ascii_alphanumeric() || byte == b'_')
    };
    if let Some(service) = service {
        let dotted = service.strip_prefix('.').unwrap_or(service);
        if !dotted.split('.').all(identifier) {
            return Err(format!("service {service:?} is not a dotted gRPC service name"));
        }
    }
    match method {
        Some(method) if !identifier(method) => Err(format!("method {method:?} is not a gRPC method name")),
        _ => Ok(()),
    }
}
