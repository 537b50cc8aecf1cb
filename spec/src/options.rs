//! Per-route behaviour beyond "forward to the backend": the listeners that serve a route, the
//! redirect it answers with, and how a profile (ingress-nginx's) shapes what the pod and the
//! client see. The default of each changes nothing, so routes of shunt's own class carry none.

use serde::Serialize;

use crate::{
    AnswerDeadlines, BackendSplit, CanarySpec, CookieAffinity, CorsSpec, ErrorPages, ExternalAuth, HashKey,
    HeaderEdits, NextUpstream, NginxForwarding, PathReplacement, PrefixReplacement, RateLimits, RequestConditions,
    RequestMirrors, ResponsePace, RewriteTarget, UpstreamTimeouts,
};

/// Per-route behaviour beyond "forward to the backend".
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RouteOptions {
    /// Which listeners serve the route.
    #[serde(skip_serializing_if = "Listeners::is_both")]
    pub listeners: Listeners,
    /// Answer with a redirect instead of forwarding; `backend` is then not used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub redirect: Option<RedirectSpec>,
    /// A request header set to `http` or `https` by the listener the request arrived on
    /// (e.g. `X-Client-Proto`), replacing any value the client sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_protocol_header: Option<String>,
    /// Which forwarding fields the pod sees, and which of the pod's fields the client does not.
    #[serde(skip_serializing_if = "Forwarding::is_standard")]
    pub forwarding: Forwarding,
    /// ingress-nginx's ConfigMap forwarding keys, where they differ from its defaults: whose
    /// address is the caller's, and which of the caller's fields the pod sees.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nginx_forwarding: Option<NginxForwarding>,
    /// The largest request body the route takes (413 above it), instead of the proxy's limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body_limit: Option<BodyLimit>,
    /// `Strict-Transport-Security` on every answer the TLS listener gives for the route,
    /// replacing the pod's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hsts: Option<String>,
    /// How the redirect of plain HTTP to HTTPS (`ssl_redirect`) is written.
    #[serde(skip_serializing_if = "HttpsRedirect::is_standard")]
    pub https_redirect: HttpsRedirect,
    /// The `Host` the pod sees instead of the client's (a DNS name, optionally with a port).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upstream_host: Option<String>,
    /// A `Regex` path's place among its host's: the lowest that matches wins.
    #[serde(skip_serializing_if = "is_zero")]
    pub rank: u32,
    /// The path the pod sees, rewritten from the request's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rewrite: Option<RewriteSpec>,
    /// Which caller addresses the route answers; others get 403.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_ranges: Option<SourceRanges>,
    /// CORS (ingress-nginx's `enable-cors`, Gateway API's `CORS` filter): the preflight answered
    /// here, the fields set on allowed answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cors: Option<CorsSpec>,
    /// Requests and requests in progress per caller address (ingress-nginx's `limit-*`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limits: Option<RateLimits>,
    /// The answer's body sent at a bounded rate (ingress-nginx's `limit-rate`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_pace: Option<ResponsePace>,
    /// A request to an auth service decides whether the request goes on (ingress-nginx's
    /// `auth-url`); checked after the access rules.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub external_auth: Option<ExternalAuth>,
    /// Connect and read timeouts towards the pods, instead of the proxy's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeouts: Option<UpstreamTimeouts>,
    /// Deadlines on the answer, past which 504 (HTTPRoute `timeouts`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deadlines: Option<AnswerDeadlines>,
    /// ingress-nginx's canary: another backend some requests go to (see `balance.rs`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub canary: Option<CanarySpec>,
    /// `upstream-hash-by`: the endpoint is the one this key hashes to (see `balance.rs`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hash: Option<HashKey>,
    /// What the request must carry besides host and path (see `matching.rs`). A host where
    /// any path has conditions is ranked: its paths are tried by ascending `rank`, the first
    /// whose path and conditions match wins, and several may share a `(path, kind)`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conditions: Option<RequestConditions>,
    /// Edits of the request the pod sees, after the forwarding fields and before a split's own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_headers: Option<HeaderEdits>,
    /// Edits of the answer the client sees (the pod's; not the proxy's own error pages).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_headers: Option<HeaderEdits>,
    /// The path the pod sees, as a whole or by prefix; never together with `rewrite`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path_replacement: Option<PathReplacement>,
    /// Several backends by weight instead of `backend` (see `matching.rs`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub split: Option<BackendSplit>,
    /// Copies of the requests to other backends, answers discarded (Gateway API `RequestMirror`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mirror: Option<RequestMirrors>,
    /// ingress-nginx's custom error pages: listed statuses answered by an error backend (see
    /// `error_pages.rs`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_pages: Option<ErrorPages>,
    /// The route's own retry rules (nginx's `proxy_next_upstream*`), instead of the proxy's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_upstream: Option<NextUpstream>,
    /// ingress-nginx's `affinity: cookie` (see `affinity.rs`); the route's `hash` is then `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub affinity: Option<CookieAffinity>,
}

/// nginx's `deny RANGE;` lines, then `allow RANGE;` lines and `deny all;` when there are any
/// (ingress-nginx's `denylist-source-range` and `allowlist-source-range`): the caller's address
/// is judged against `deny` first, then must be in `allow` unless it is empty.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SourceRanges {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub deny: Vec<ipnet::IpNet>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<ipnet::IpNet>,
}

/// nginx's `rewrite "(?i)PATTERN" TARGET break;`: where the case-insensitive `pattern` matches
/// the request path (first match, anywhere), the path becomes `target` with `$1`..`$9`
/// replaced by its groups; the query string is kept.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RewriteSpec {
    pub pattern: String,
    pub target: RewriteTarget,
    /// Sent as `X-Forwarded-Prefix` with rewritten requests.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forwarded_prefix: Option<String>,
}

/// The request fields that say where a request came from, as the pod reads them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Forwarding {
    /// shunt's: `Forwarded`, X-Forwarded-For/-Proto/-Host/-Port, X-Real-IP, X-Request-Id, with
    /// `--trusted-proxies` deciding whose values are kept.
    #[default]
    Standard,
    /// The set ingress-nginx's template writes (X-Scheme, X-Forwarded-Scheme, the caller's own
    /// forwarding fields moved to X-Original-Forwarded-For/-Host, `Proxy` removed, no
    /// `Forwarded`), and no `Server` or `X-Accel-*` field of the pod's in the answer.
    Nginx {
        /// Also X-Original-URI: the request target as the client sent it.
        original_uri: bool,
    },
}

/// A request body limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BodyLimit {
    Bytes(u64),
    Unlimited,
}

/// How the redirect to HTTPS is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct HttpsRedirect {
    /// 301, 302, 307 or 308.
    pub code: u16,
    /// One `/` ending the request target (its query included) is removed, as ingress-nginx's
    /// `lua_ingress.lua` does unless `preserve-trailing-slash` is set: `/a/` goes to `https://h/a`.
    pub trim_trailing_slash: bool,
}

/// The listeners a route is served on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Listeners {
    #[default]
    Both,
    /// The plain-HTTP listener only.
    Plain,
    /// The HTTPS listener only.
    Tls,
}

/// A redirect answer: `Location` is the request's URL with the parts given here replaced (or one
/// fixed URL). The query string is kept unless `drop_query`. Unset parts keep the request's; a changed scheme or host drops
/// the request's port unless `port` names one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RedirectSpec {
    /// 301, 302, 303, 307 or 308.
    pub code: u16,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheme: Option<Scheme>,
    /// A lowercase DNS name without port.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// Starts with `/`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The request's query string is not appended (nginx's `return CODE URL`).
    #[serde(skip_serializing_if = "is_false")]
    pub drop_query: bool,
    /// `Location` is this absolute URL, verbatim: every part above is ignored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    /// The request path's matched prefix replaced (see [`PathReplacement::Prefix`]); not
    /// together with `path`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replace_prefix: Option<PrefixReplacement>,
    /// `Location` is the route's rewrite (an absolute target, `RouteOptions::rewrite`) of the
    /// request path, the query string appended: nginx's `rewrite` to an `http://` or `https://`
    /// URL, which ends the location with a redirect.
    #[serde(skip_serializing_if = "is_false")]
    pub rewritten: bool,
    /// ingress-nginx's redirect `server` of `from-to-www-redirect` (ngx_srv_redirect.lua):
    /// `Location` is the request's scheme, `host`, the port ingress-nginx's pod listens on for
    /// that scheme (80 or 443, always written) and the target as sent with one `/` at its end
    /// removed.
    #[serde(skip_serializing_if = "is_false")]
    pub www: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scheme {
    Http,
    Https,
}

// === impl Listeners ===

impl Listeners {
    pub fn is_both(&self) -> bool {
        *self == Listeners::Both
    }

    /// Whether a request on the TLS (or plain) listener may use the route.
    pub fn serves(self, tls: bool) -> bool {
        match self {
            Listeners::Both => true,
            Listeners::Plain => !tls,
            Listeners::Tls => tls,
        }
    }

    /// Whether some listener serves both routes.
    pub fn overlaps(self, other: Listeners) -> bool {
        self == Listeners::Both || other == Listeners::Both || self == other
    }
}

// === impl Scheme ===

impl Scheme {
    pub const fn as_str(self) -> &'static str {
        match self {
            Scheme::Http => "http",
            Scheme::Https => "https",
        }
    }

    pub const fn default_port(self) -> u16 {
        match self {
            Scheme::Http => 80,
            Scheme::Https => 443,
        }
    }
}

// === impl Forwarding ===

impl Forwarding {
    pub fn is_standard(&self) -> bool {
        *self == Forwarding::Standard
    }
}

// === impl BodyLimit ===

impl BodyLimit {
    /// As the proxy's own limit is given: `None` for no limit.
    pub const fn bytes(self) -> Option<u64> {
        match self {
            BodyLimit::Bytes(limit) => Some(limit),
            BodyLimit::Unlimited => None,
        }
    }
}

// === impl HttpsRedirect ===

impl Default for HttpsRedirect {
    /// 308 keeps the method and the body; the target as the client sent it.
    fn default() -> Self {
        HttpsRedirect {
            code: 308,
            trim_trailing_slash: false,
        }
    }
}

impl HttpsRedirect {
    pub fn is_standard(&self) -> bool {
        *self == HttpsRedirect::default()
    }
}

pub(crate) fn is_false(value: &bool) -> bool {
    !value
}

fn is_zero(value: &u32) -> bool {
    *value == 0
}

// === impl SourceRanges ===

impl SourceRanges {
    /// Whether a caller at `addr` is answered.
    pub fn admits(&self, addr: std::net::IpAddr) -> bool {
        // A dual-stack socket's IPv4-mapped peer is judged as the IPv4 address it is.
        let addr = addr.to_canonical();
        if self.deny.iter().any(|range| range.contains(&addr)) {
            return false;
        }
        self.allow.is_empty() || self.allow.iter().any(|range| range.contains(&addr))
    }
}
