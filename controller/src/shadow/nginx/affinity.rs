//! `affinity: cookie`, `affinity-mode` and the `session-cookie-*` keys, read as
//! sessionaffinity/main.go reads them (an invalid value is the default, never an error) and
//! gathered per backend as controller.go's `createServers` gathers them:
//!
//! ```text
//! Ingresses naming a backend, oldest first ─ any with `affinity: cookie` ─▶ the backend is sticky
//!   mode: the first Ingress with a valid `affinity-mode`, cookie or not
//!   cookie settings: the last `affinity: cookie` Ingress's
//!   locations setting the cookie: every (host, path) of those Ingresses to the backend
//! ─▶ each route to the backend: CookieAffinity { Path: session-cookie-path or the location's
//!    path, set_cookie: its location is listed (sticky.lua `should_set_cookie`) }
//! ```

use std::collections::{BTreeMap, BTreeSet};

use crate::objects::HTTPIngressPath;
use shunt_spec::{AffinityMode, BackendId, CookieAffinity, MAX_COOKIE_SECONDS, MAX_NAME_LEN, MAX_VALUE_LEN, SameSite};

use super::{
    Nginx,
    annotations::{PREFIX, Refusal, flag},
    canary::Canaries,
    regex::{host_paths, location_path},
};
use crate::{compile::Sink, shadow::HostVerdict};

/// sessionaffinity/main.go's `defaultAffinityCookieName`.
const DEFAULT_NAME: &str = "INGRESSCOOKIE";

/// The affinity keys of one Ingress, as written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AffinityKeys {
    values: BTreeMap<&'static str, String>,
}

/// What one Ingress's affinity keys say.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IngressAffinity {
    /// `affinity: cookie`.
    pub cookie: bool,
    /// A valid `affinity-mode`, which counts even without `affinity: cookie`.
    pub mode: Option<AffinityMode>,
    pub settings: CookieSettings,
}

/// The `session-cookie-*` keys of an `affinity: cookie` Ingress, defaults applied.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CookieSettings {
    pub name: String,
    /// `None`: the location's path.
    pub path: Option<String>,
    pub domain: Option<String>,
    pub max_age: Option<i64>,
    pub expires: Option<i64>,
    pub same_site: Option<SameSite>,
    pub conditional_same_site_none: bool,
    pub secure: bool,
    pub change_on_failure: bool,
}

impl AffinityKeys {
    /// Keeps `value` when `name` (without the prefix) is an affinity key; `false` otherwise.
    pub fn set(&mut self, name: &str, value: &str) -> bool {
        const KEYS: [&str; 12] = [
            "affinity",
            "affinity-canary-behavior",
            "affinity-mode",
            "session-cookie-change-on-failure",
            "session-cookie-conditional-samesite-none",
            "session-cookie-domain",
            "session-cookie-expires",
            "session-cookie-max-age",
            "session-cookie-name",
            "session-cookie-path",
            "session-cookie-samesite",
            "session-cookie-secure",
        ];
        let Some(key) = KEYS.iter().find(|key| **key == name) else {
            return false;
        };
        self.values.insert(key, value.to_string());
        true
    }

    /// The Ingress's affinity, or the key that refuses its hosts: a value nginx would write
    /// into the cookie but shunt does not (blanks inside, past the bounds, a number Lua's
    /// `tonumber` would read its own way).
    pub fn resolve(&self) -> Result<IngressAffinity, (Refusal, &'static str)> {
        let get = |key: &str| self.values.get(key).map(String::as_str);
        let cookie = get("affinity").is_some_and(|v| v.trim() == "cookie" && normalize(v) == "cookie");
        let mode = get("affinity-mode")
            .filter(|v| matches!(v.trim(), "balanced" | "persistent"))
            .map(|v| match normalize(v).as_str() {
                // balancer.lua: anything but `persistent` is balanced.
                "persistent" => AffinityMode::Persistent,
                _ => AffinityMode::Balanced,
            });
        if !cookie {
            return Ok(IngressAffinity {
                cookie,
                mode,
                settings: CookieSettings::default(),
            });
        }
        let text = |key: &'static str, allowed: fn(u8) -> bool| text(get(key), allowed).map_err(|r| (r, key));
        let settings = CookieSettings {
            name: text("session-cookie-name", basic)?.unwrap_or_else(|| DEFAULT_NAME.to_string()),
            path: text("session-cookie-path", url)?,
            domain: text("session-cookie-domain", basic)?,
            max_age: seconds(get("session-cookie-max-age"), false).map_err(|r| (r, "session-cookie-max-age"))?,
            expires: seconds(get("session-cookie-expires"), true).map_err(|r| (r, "session-cookie-expires"))?,
            same_site: get("session-cookie-samesite").and_then(same_site),
            conditional_same_site_none: boolean(get("session-cookie-conditional-samesite-none")),
            secure: boolean(get("session-cookie-secure")),
            change_on_failure: boolean(get("session-cookie-change-on-failure")),
        };
        if settings.name.len() > MAX_NAME_LEN {
            return Err((Refusal::Unsupported, "session-cookie-name"));
        }
        Ok(IngressAffinity { cookie, mode, settings })
    }
}

/// validators.go's `BasicCharsRegex` and `URLIsValidRegex` characters.
fn basic(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._~/:".contains(&b)
}

fn url(b: u8) -> bool {
    basic(b) || b",?&=".contains(&b)
}

/// parser/main.go's `normalizeString`: each line trimmed.
fn normalize(value: &str) -> String {
    value.split('\n').map(str::trim).collect::<Vec<_>>().join("\n")
}

/// A string key whose validator admits `allowed` bytes once spaces are removed
/// (`ValidateRegex(.., true)`); one it refuses, or empty, is `None` (the default). Spaces
/// left inside, or a value past [`MAX_VALUE_LEN`], are refused.
fn text(value: Option<&str>, allowed: fn(u8) -> bool) -> Result<Option<String>, Refusal> {
    let Some(value) = value.filter(|v| v.bytes().filter(|&b| b != b' ').all(allowed)) else {
        return Ok(None);
    };
    let value = normalize(value);
    if value.is_empty() {
        return Ok(None);
    }
    if value.contains(' ') || value.len() > MAX_VALUE_LEN {
        return Err(Refusal::Unsupported);
    }
    Ok(Some(value))
}

/// `session-cookie-max-age` and `-expires`: main.go keeps a value matching
/// `(^0|-?[1-9]\d*$)` (spaces removed first for `expires`), sticky.lua writes `tonumber` of it.
/// A value of digits is that number; one the unanchored pattern admits that is not (`0x10`,
/// `a1`) is refused, as Lua would read it its own way or fail.
fn seconds(value: Option<&str>, remove_space: bool) -> Result<Option<i64>, Refusal> {
    let Some(value) = value else { return Ok(None) };
    let checked = if remove_space {
        value.replace(' ', "")
    } else {
        value.to_string()
    };
    let value = normalize(value);
    if !expires_pattern(&checked) || value.is_empty() || !expires_pattern(&value) {
        return Ok(None);
    }
    let digits = value.strip_prefix('-').unwrap_or(&value);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Refusal::Unsupported);
    }
    match value.parse::<i64>() {
        Ok(seconds) if seconds.abs() <= MAX_COOKIE_SECONDS => Ok(Some(seconds)),
        _ => Err(Refusal::Unsupported),
    }
}

/// Go's `regexp.MatchString("(^0|-?[1-9]\d*$)", value)`: starts with `0`, or ends in digits
/// from a non-zero one on.
pub(super) fn expires_pattern(value: &str) -> bool {
    let tail = value.len() - value.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    value.starts_with('0') || value[value.len() - tail..].bytes().any(|b| b != b'0')
}

/// `session-cookie-samesite`: the validator takes none, lax or strict in any case, but
/// lua-resty-cookie's `bake` writes only `Strict`, `Lax` and `None` as spelled.
fn same_site(value: &str) -> Option<SameSite> {
    if !matches!(value.trim().to_ascii_lowercase().as_str(), "none" | "lax" | "strict") {
        return None;
    }
    match normalize(value).as_str() {
        "Strict" => Some(SameSite::Strict),
        "Lax" => Some(SameSite::Lax),
        "None" => Some(SameSite::None),
        _ => None,
    }
}

/// A boolean key: `strconv.ParseBool`, anything else `false`.
fn boolean(value: Option<&str>) -> bool {
    value.is_some_and(|v| flag(v).unwrap_or(false))
}

/// A sticky backend: its mode, the cookie settings and the locations that set the cookie.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct BackendAffinity {
    mode: AffinityMode,
    settings: CookieSettings,
    /// `(host, path as written)` of the `affinity: cookie` Ingresses' paths to the backend.
    locations: BTreeSet<(String, String)>,
}

/// Each sticky backend, from the main Ingresses (canaries serve no location) in precedence order.
pub(super) fn by_backend(nginxes: &[Nginx<'_>], sink: &mut Sink<'_>) -> BTreeMap<BackendId, BackendAffinity> {
    let mut modes: BTreeMap<BackendId, AffinityMode> = BTreeMap::new();
    let mut sticky: BTreeMap<BackendId, BackendAffinity> = BTreeMap::new();
    for nginx in nginxes {
        let affinity = &nginx.annotations.affinity;
        for (host, path) in host_paths(nginx) {
            let protocol = nginx.annotations.backend_protocol;
            let Ok(resolved) = sink.backends.resolve(nginx.namespace, &path.backend, protocol) else {
                continue;
            };
            if let Some(mode) = affinity.mode {
                modes.entry(resolved.id.clone()).or_insert(mode);
            }
            if !affinity.cookie {
                continue;
            }
            let entry = sticky.entry(resolved.id.clone()).or_insert_with(|| BackendAffinity {
                mode: AffinityMode::Balanced,
                settings: CookieSettings::default(),
                locations: BTreeSet::new(),
            });
            entry.settings = affinity.settings.clone();
            let written = path.path.as_deref().unwrap_or_default().to_string();
            entry.locations.insert((host, written));
        }
    }
    for (id, affinity) in &mut sticky {
        affinity.mode = modes.get(id).copied().unwrap_or_default();
    }
    sticky
}

impl BackendAffinity {
    /// The affinity of a route on `host` at the Ingress path `path`; `None` when the location's
    /// path cannot be the cookie's `Path`.
    pub fn route(&self, host: &str, path: &HTTPIngressPath) -> Option<CookieAffinity> {
        let location = location_path(path);
        // sticky.lua `should_set_cookie`: the request's host, else its wildcard form.
        let wildcard = host.split_once('.').map(|(_, rest)| format!("*.{rest}"));
        let listed = |host: &str| self.locations.contains(&(host.to_string(), location.clone()));
        let set_cookie = listed(host) || wildcard.as_deref().is_some_and(listed);
        let cookie_path = self.settings.path.clone().unwrap_or(location);
        let plain = |b: u8| b.is_ascii_graphic() && b != b';';
        if cookie_path.len() > MAX_VALUE_LEN || !cookie_path.bytes().all(plain) {
            return None;
        }
        let settings = &self.settings;
        Some(CookieAffinity {
            mode: self.mode,
            name: settings.name.clone(),
            set_cookie,
            path: cookie_path,
            domain: settings.domain.clone(),
            max_age: settings.max_age,
            expires: settings.expires,
            same_site: settings.same_site,
            conditional_same_site_none: settings.conditional_same_site_none,
            secure: settings.secure,
            change_on_failure: settings.change_on_failure,
        })
    }
}

/// A sticky backend with a canary refuses the hosts routing to it: balancer.lua sends a client
/// whose cookie the canary set to the canary (`route_to_alternative_balancer`,
/// `is_affinitized`), which shunt does not reproduce. A location path that cannot be the
/// cookie's `Path` refuses its host too.
pub(super) fn refuse(
    nginxes: &[Nginx<'_>],
    affinities: &BTreeMap<BackendId, BackendAffinity>,
    canaries: &Canaries,
    sink: &mut Sink<'_>,
    verdicts: &mut BTreeMap<String, HostVerdict>,
) {
    for nginx in nginxes {
        for (host, path) in host_paths(nginx) {
            let protocol = nginx.annotations.backend_protocol;
            let Ok(resolved) = sink.backends.resolve(nginx.namespace, &path.backend, protocol) else {
                continue;
            };
            let Some(affinity) = affinities.get(&resolved.id) else {
                continue;
            };
            let why = if canaries.get(&resolved.id).is_some() {
                "with a canary on the same backend"
            } else if affinity.route(&host, path).is_none() {
                "the location's path cannot be the cookie's Path"
            } else {
                continue;
            };
            if let Some(verdict) = verdicts.get_mut(&host) {
                let reason = format!("UnsupportedAnnotation: {PREFIX}affinity: {why}");
                if !verdict.reasons.contains(&reason) {
                    verdict.reasons.push(reason);
                }
            }
        }
    }
}
