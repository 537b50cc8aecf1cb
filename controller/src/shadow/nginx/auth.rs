//! `auth-url` and its companions read as ingress-nginx reads them
//! (internal/ingress/annotations/authreq/main.go) into the [`ExternalAuth`] the proxy applies
//! as the template's `auth_request` location does (nginx.tmpl, `location = {{ $authPath }}`).
//!
//! A host that kept its route but lost its gate would be served open, so every value this
//! cannot reproduce exactly refuses the hosts, with its key: nginx variables in the auth URL,
//! a cache key with variables shunt does not expand (`auth/cache.rs`). The fields of
//! `auth-proxy-set-headers` come from another ConfigMap, read apart (`auth/set_headers.rs`).
//! Without `auth-url` the other keys change nothing, as the parser stops at the missing URL.

pub(super) mod cache;
pub(super) mod set_headers;
mod signin;
mod url;

use shunt_spec::{AuthTimeouts, ExternalAuth, MAX_RESPONSE_HEADERS};

use super::annotations::{Refusal, flag};

/// The auth keys of one Ingress, as written; resolved once all are seen.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AuthKeys {
    url: Option<String>,
    method: Option<String>,
    signin: Option<String>,
    signin_param: Option<String>,
    response_headers: Option<String>,
    request_redirect: Option<String>,
    cache_key: Option<String>,
    cache_duration: Option<String>,
    always_set_cookie: Option<String>,
    proxy_set_headers: Option<String>,
    /// `auth-keepalive*`: the Lua path they choose is never taken while ingress-nginx's
    /// `use-http2` is on (its default; shunt refuses the ConfigMap key), so only validated.
    keepalive: Vec<(&'static str, String)>,
    enable_global: Option<String>,
    /// The ConfigMap's `global-auth-*` keys: no default `auth-cache-duration`.
    global: bool,
}

/// Fields nginx's template sets on the request to the pod itself: an auth answer's field of
/// the same name would be sent beside it, which the proxy does not reproduce.
const TEMPLATE_FIELDS: [&str; 18] = [
    "connection",
    "content-length",
    "host",
    "proxy",
    "transfer-encoding",
    "upgrade",
    "x-forwarded-for",
    "x-forwarded-host",
    "x-forwarded-port",
    "x-forwarded-prefix",
    "x-forwarded-proto",
    "x-forwarded-scheme",
    "x-original-forwarded-for",
    "x-original-forwarded-host",
    "x-original-uri",
    "x-real-ip",
    "x-request-id",
    "x-scheme",
];

impl AuthKeys {
    /// The keys of the ConfigMap's global gate.
    pub fn global() -> Self {
        AuthKeys {
            global: true,
            ..AuthKeys::default()
        }
    }

    /// Keeps `value` when `name` (without the prefix) is an auth key; `false` otherwise.
    pub fn set(&mut self, name: &str, value: &str) -> bool {
        let slot = match name {
            "auth-url" => &mut self.url,
            "auth-method" => &mut self.method,
            "auth-signin" => &mut self.signin,
            "auth-signin-redirect-param" => &mut self.signin_param,
            "auth-response-headers" => &mut self.response_headers,
            "auth-request-redirect" => &mut self.request_redirect,
            "auth-cache-key" => &mut self.cache_key,
            "auth-cache-duration" => &mut self.cache_duration,
            "auth-always-set-cookie" => &mut self.always_set_cookie,
            "auth-proxy-set-headers" => &mut self.proxy_set_headers,
            "enable-global-auth" => &mut self.enable_global,
            "auth-keepalive" => return self.keepalive("auth-keepalive", value),
            "auth-keepalive-requests" => return self.keepalive("auth-keepalive-requests", value),
            "auth-keepalive-timeout" => return self.keepalive("auth-keepalive-timeout", value),
            "auth-keepalive-share-vars" => return self.keepalive("auth-keepalive-share-vars", value),
            _ => return false,
        };
        *slot = Some(value.to_string());
        true
    }

    fn keepalive(&mut self, key: &'static str, value: &str) -> bool {
        self.keepalive.push((key, value.to_string()));
        true
    }

    /// `auth-proxy-set-headers` as written, when not blank: resolved against the cluster's
    /// ConfigMaps by [`set_headers::resolve`] once the gate exists.
    pub fn set_headers_reference(&self) -> Option<&str> {
        (self.proxy_set_headers.as_deref()).filter(|value| !value.trim().is_empty())
    }

    /// `enable-global-auth` (authreqglobal/main.go): on unless a valid boolean says off (an
    /// invalid value refuses the hosts in [`AuthKeys::resolve`]).
    pub fn global_enabled(&self) -> bool {
        self.enable_global
            .as_deref()
            .is_none_or(|value| flag(value.trim()) != Ok(false))
    }

    /// The Ingress's external authentication, or the key that refuses its hosts.
    pub fn resolve(&self) -> Result<Option<ExternalAuth>, (Refusal, &'static str)> {
        // authreqglobal/main.go: a boolean, which decides whether the ConfigMap's
        // global-auth-url gates locations without an auth-url (`global_auth.rs`).
        if let Some(value) = &self.enable_global {
            flag(value.trim()).map_err(|r| (r, "enable-global-auth"))?;
        }
        let Some(url) = &self.url else { return Ok(None) };
        let url = url::parse(url).map_err(|r| (r, "auth-url"))?;
        self.unreproduced()?;
        let method = self
            .method
            .as_deref()
            .map(method)
            .transpose()
            .map_err(|r| (r, "auth-method"))?;
        let signin = (self.signin.as_deref())
            .map(|value| signin::parse(value, self.signin_param.as_deref()))
            .transpose()?;
        let response_headers = (self.response_headers.as_deref())
            .map(response_headers)
            .transpose()
            .map_err(|r| (r, "auth-response-headers"))?
            .unwrap_or_default();
        let request_redirect = (self.request_redirect.as_deref())
            .map(request_redirect)
            .transpose()
            .map_err(|r| (r, "auth-request-redirect"))?
            .flatten();
        let always_set_cookie = (self.always_set_cookie.as_deref())
            .map(|value| flag(value.trim()))
            .transpose()
            .map_err(|r| (r, "auth-always-set-cookie"))?
            .unwrap_or(false);
        let cache = cache::parse(
            self.cache_key.as_deref(),
            self.cache_duration.as_deref(),
            method.as_deref(),
            !self.global,
        )?;
        Ok(Some(ExternalAuth {
            url,
            method,
            response_headers,
            request_redirect,
            set_headers: Vec::new(),
            signin,
            always_set_cookie,
            timeouts: AuthTimeouts::default(),
            cache,
        }))
    }

    /// The keys shunt does not reproduce, and values it would have to second-guess.
    fn unreproduced(&self) -> Result<(), (Refusal, &'static str)> {
        // Validated even without a key: an invalid value fails the whole parser.
        if let Some(duration) = &self.cache_duration
            && !cache_duration(duration)
        {
            return Err((Refusal::Invalid, "auth-cache-duration"));
        }
        for (key, value) in &self.keepalive {
            let value = value.trim();
            let valid = if *key == "auth-keepalive-share-vars" {
                flag(value).is_ok()
            } else {
                value.strip_prefix('-').unwrap_or(value).parse::<u32>().is_ok()
            };
            if !valid {
                return Err((Refusal::Invalid, key));
            }
        }
        Ok(())
    }
}

/// authreq's `methodsRegex`.
fn method(value: &str) -> Result<String, Refusal> {
    let value = value.replace(' ', "");
    const METHODS: [&str; 9] = [
        "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "CONNECT", "OPTIONS", "TRACE",
    ];
    if !METHODS.contains(&value.as_str()) {
        return Err(Refusal::Invalid);
    }
    // nginx's `proxy_method HEAD` waits for no body; CONNECT is no request an auth service takes.
    if matches!(value.as_str(), "HEAD" | "CONNECT") {
        return Err(Refusal::Unsupported);
    }
    Ok(value)
}

/// Comma-separated names (authreq's `headerRegexp`), each set on the request to the pod.
fn response_headers(value: &str) -> Result<Vec<String>, Refusal> {
    let mut names: Vec<String> = Vec::new();
    for name in value.split(',').map(str::trim).filter(|name| !name.is_empty()) {
        if !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(Refusal::Invalid);
        }
        // `$upstream_http_NAME` matches `-` and `_` alike; a name of the template's own would
        // be sent twice.
        let lower = name.to_ascii_lowercase();
        if name.contains('_') || TEMPLATE_FIELDS.contains(&lower.as_str()) || names.contains(&lower) {
            return Err(Refusal::Unsupported);
        }
        names.push(lower);
    }
    if names.len() > MAX_RESPONSE_HEADERS {
        return Err(Refusal::Unsupported);
    }
    Ok(names)
}

/// `auth-request-redirect`: quoted into `proxy_set_header X-Auth-Request-Redirect` unquoted,
/// so only what parser's `URLIsValidRegex` admits (spaces removed first).
fn request_redirect(value: &str) -> Result<Option<String>, Refusal> {
    let value = value.replace(' ', "");
    if value.is_empty() {
        return Ok(None);
    }
    if value.len() > shunt_spec::MAX_URL_LEN || !value.bytes().all(url::url_char) {
        return Err(Refusal::Invalid);
    }
    Ok(Some(value))
}

/// authreq's `ValidCacheDuration` over each comma-separated entry: status codes, then at least
/// one nginx duration.
fn cache_duration(value: &str) -> bool {
    let is_code = |e: &str| e.len() == 3 && e.bytes().all(|b| b.is_ascii_digit());
    let is_duration = |e: &str| {
        let digits = e.trim_end_matches(|c: char| c.is_ascii_alphabetic());
        let unit = &e[digits.len()..];
        !digits.is_empty()
            && digits.bytes().all(|b| b.is_ascii_digit())
            && matches!(unit, "ms" | "s" | "m" | "h" | "d" | "w" | "M" | "y")
    };
    value.split(',').map(str::trim).filter(|d| !d.is_empty()).all(|entry| {
        let mut seen_duration = false;
        for element in entry.split(' ').filter(|e| !e.is_empty()) {
            if is_code(element) {
                if seen_duration {
                    return false;
                }
            } else if is_duration(element) {
                seen_duration = true;
            }
        }
        seen_duration
    })
}

#[cfg(test)]
mod tests;
