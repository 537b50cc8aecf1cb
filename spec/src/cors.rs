//! CORS as a route behaviour, whoever asked for it: ingress-nginx's `enable-cors` annotations
//! and Gateway API's `CORS` filter give the same [`CorsSpec`]; where their answers differ the
//! spec says which one it wants ([`CorsStyle`], the [`AllowOrigin`] variants). The proxy answers
//! the preflight and sets the fields.

use std::fmt;

use serde::Serialize;

/// A route's CORS, after its source's validation and defaults.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CorsSpec {
    pub allow_origin: AllowOrigin,
    /// `Access-Control-Allow-Methods`; not sent when `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allow_methods: Option<CorsList>,
    /// `Access-Control-Allow-Headers`; not sent when `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allow_headers: Option<CorsList>,
    /// `Access-Control-Allow-Credentials: true` is sent.
    pub allow_credentials: bool,
    /// `Access-Control-Expose-Headers`, verbatim; not sent when `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expose_headers: Option<String>,
    /// `Access-Control-Max-Age`, in seconds, as Go prints an int.
    pub max_age: i64,
    /// Which requests are preflights, and which fields each answer gets.
    #[serde(skip_serializing_if = "CorsStyle::is_nginx")]
    pub style: CorsStyle,
}

/// Which requests get CORS fields, and the `Access-Control-Allow-Origin` they get.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AllowOrigin {
    /// ingress-nginx's `*`: every request, with an Origin or not, answered
    /// `Access-Control-Allow-Origin: *` (the template's `set $http_origin *; set $cors 'true';`).
    Any,
    /// ingress-nginx's origins such as `https://a.example`, `https://*.example:8443` or `null`,
    /// matched as the template's `if ($http_origin ~* ((o1)|(o2))$ )` does; the Origin is echoed.
    /// Must not be empty.
    List(Vec<String>),
    /// Gateway API's `*`: every request with an Origin, which is echoed (valid with credentials,
    /// where `*` is not).
    Echo,
    /// Gateway API's origins: a request whose whole Origin matches one is allowed, and its
    /// Origin echoed. May be empty (no Origin is allowed).
    Origins(Vec<OriginPattern>),
}

/// A list field's value; serialised as its text, `Requested` as the `*` it is written as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CorsList {
    /// Sent verbatim.
    Listed(String),
    /// The preflight's own `Access-Control-Request-Method` or `-Headers` echoed, not sent
    /// without one: Gateway API's `*`, which must not be sent as `*` with credentials.
    Requested,
}

/// How the answers are shaped where the sources differ.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CorsStyle {
    /// ingress-nginx's template: any `OPTIONS` with an allowed Origin is answered 204 with
    /// `Content-Length: 0`; every answer for an allowed Origin gets every field; an `OPTIONS`
    /// from another Origin goes to the pod.
    #[default]
    Nginx,
    /// The Fetch standard, as Gateway API asks: a preflight is an `OPTIONS` with an Origin and
    /// an `Access-Control-Request-Method`, always answered here (204, the fields only for an
    /// allowed Origin); other answers for an allowed Origin get only `-Allow-Origin`,
    /// `-Allow-Credentials` and `-Expose-Headers`.
    Fetch,
}

/// One Gateway API origin other than `*`: `<scheme>://<host>(:<port>)`, built by
/// [`OriginPattern::parse`] only, so scheme and host are lowercase and the port is explicit.
/// Serialised as its text, with the port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OriginPattern {
    scheme: OriginScheme,
    host: OriginHost,
    /// The pattern's, or its scheme's default (80, 443).
    port: u16,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OriginScheme {
    Http,
    Https,
}

/// The host part of an [`OriginPattern`], lowercase.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OriginHost {
    /// `*`: any host.
    Any,
    /// `*.example.com`, kept as `.example.com`: any host of one or more labels before it.
    Suffix(String),
    Exact(String),
}

/// The longest origin the CRD admits.
pub const MAX_ORIGIN_LEN: usize = 253;

// === impl CorsList ===

impl Serialize for CorsList {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            CorsList::Listed(text) => serializer.serialize_str(text),
            CorsList::Requested => serializer.serialize_str("*"),
        }
    }
}

// === impl CorsStyle ===

impl CorsStyle {
    fn is_nginx(&self) -> bool {
        *self == CorsStyle::Nginx
    }
}

// === impl OriginPattern ===

impl OriginPattern {
    /// An origin as the CRD's pattern admits it (`http(s)://` then `*`, or DNS labels with an
    /// optional leading `*.`, then an optional port of 1 to 65535); `None` for anything else.
    pub fn parse(text: &str) -> Option<OriginPattern> {
        if text.len() > MAX_ORIGIN_LEN {
            return None;
        }
        let (scheme, rest) = text.split_once("://")?;
        let scheme = match scheme {
            "http" => OriginScheme::Http,
            "https" => OriginScheme::Https,
            _ => return None,
        };
        let (host, port) = match rest.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (rest, None),
        };
        let port = match port {
            None => scheme.default_port(),
            Some(digits) if (1..=5).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit()) => {
                digits.parse().ok().filter(|&port| port != 0)?
            }
            Some(_) => return None,
        };
        let host = host.to_ascii_lowercase();
        let host = match host.strip_prefix('*') {
            Some("") => OriginHost::Any,
            Some(suffix) if suffix.starts_with('.') && is_labels(&suffix[1..]) => {
                OriginHost::Suffix(suffix.to_string())
            }
            Some(_) => return None,
            None if is_labels(&host) => OriginHost::Exact(host),
            None => return None,
        };
        Some(OriginPattern { scheme, host, port })
    }

    pub fn scheme(&self) -> OriginScheme {
        self.scheme
    }

    pub fn host(&self) -> &OriginHost {
        &self.host
    }

    pub fn port(&self) -> u16 {
        self.port
    }
}

impl fmt::Display for OriginPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let host = match &self.host {
            OriginHost::Any => "*",
            OriginHost::Suffix(suffix) => return write!(f, "{}://*{suffix}:{}", self.scheme.as_str(), self.port),
            OriginHost::Exact(host) => host,
        };
        write!(f, "{}://{host}:{}", self.scheme.as_str(), self.port)
    }
}

impl Serialize for OriginPattern {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

// === impl OriginScheme ===

impl OriginScheme {
    pub fn default_port(self) -> u16 {
        match self {
            OriginScheme::Http => 80,
            OriginScheme::Https => 443,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            OriginScheme::Http => "http",
            OriginScheme::Https => "https",
        }
    }
}

/// `([a-z0-9-]+\.)*[a-z0-9-]+`, lowercase already.
fn is_labels(host: &str) -> bool {
    host.split('.')
        .all(|label| !label.is_empty() && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
}

#[cfg(test)]
mod tests;
