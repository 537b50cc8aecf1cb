//! Every `nginx.ingress.kubernetes.io/*` annotation classified: reproduced (parsed here into
//! what the routes need), no effect on the answer a caller gets, or refused with its key named.
//! A key no ingress-nginx parser reads is ignored, as nginx ignores it (`keys.rs`); a key it
//! reads that the table does not know is refused.

use crate::objects::{Annotations, Ingress};
use shunt_spec::{BodyLimit, CanaryRule, CorsSpec, ExternalAuth, HashKey, RateLimits, RewriteTarget, UpstreamProtocol};

use super::{
    affinity::{AffinityKeys, IngressAffinity},
    auth::AuthKeys,
    canary::CanaryKeys,
    cors::CorsKeys,
    errors::{ErrorAnnotations, ErrorKeys},
    limits::{LimitKeys, LimitStatus},
    next_upstream::{self, NextUpstreamKeys},
    pace::PaceKeys,
    proxy_ssl::ProxySslKeys,
    source_ranges::RangeList,
    timeouts::{TimeoutSeconds, seconds},
};

pub const PREFIX: &str = "nginx.ingress.kubernetes.io/";

/// Keys (without [`PREFIX`]) that change buffering, logging, tracing or endpoint choice, never
/// the status, headers or body a caller or pod sees.
pub const NO_EFFECT: [&str; 13] = [
    "client-body-buffer-size",
    "enable-access-log",
    "enable-opentelemetry",
    "enable-rewrite-log",
    "load-balance",
    "opentelemetry-trust-incoming-span",
    "proxy-buffer-size",
    "proxy-buffering",
    "proxy-buffers-number",
    "proxy-busy-buffers-size",
    "proxy-max-temp-file-size",
    "proxy-request-buffering",
    "service-upstream",
];

/// What one Ingress's annotations ask of its routes, and the keys its hosts are refused for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NginxAnnotations {
    /// `ssl-redirect`: `None` keeps the ConfigMap's default (on, for hosts with a certificate).
    pub ssl_redirect: Option<bool>,
    /// `force-ssl-redirect: "true"`: redirect plain HTTP even without a certificate.
    pub force_ssl_redirect: bool,
    /// `preserve-trailing-slash: "true"`: the HTTPS redirect keeps a `/` ending the target.
    pub preserve_trailing_slash: bool,
    pub backend_protocol: Option<UpstreamProtocol>,
    /// `proxy-body-size`: `None` keeps the ConfigMap's.
    pub body_limit: Option<BodyLimit>,
    /// `upstream-vhost`: the Host the pod sees.
    pub upstream_vhost: Option<String>,
    /// `temporal-redirect` or `permanent-redirect`: every path answers with this redirect.
    pub redirect: Option<FixedRedirect>,
    /// `app-root`: a request for `/` on the Ingress's hosts is redirected here (302).
    pub app_root: Option<String>,
    /// `from-to-www-redirect: "true"`: the other name of each host redirects to it (`www.rs`).
    pub from_to_www: bool,
    /// `use-regex: "true"`: the Ingress's paths are regular expressions.
    pub use_regex: bool,
    /// `rewrite-target`: the path the pod sees, `$1`..`$9` from the location's match.
    pub rewrite_target: Option<RewriteTarget>,
    /// `x-forwarded-prefix`: sent as X-Forwarded-Prefix where the path is rewritten.
    pub forwarded_prefix: Option<String>,
    /// `allowlist-source-range` (or, when it is absent, `whitelist-source-range`): `None` admits
    /// every address.
    pub allow_ranges: Option<Vec<ipnet::IpNet>>,
    /// `whitelist-source-range`, kept apart: the old name counts only without the new one.
    pub whitelist_ranges: Option<Vec<ipnet::IpNet>>,
    /// `denylist-source-range`.
    pub deny_ranges: Option<Vec<ipnet::IpNet>>,
    /// `*-snippet` keys: whether they run, are dropped or reject the Ingress is the ConfigMap's
    /// call (see `config::SnippetPolicy`).
    pub snippets: Vec<String>,
    /// `proxy-connect-timeout`, `proxy-read-timeout`, `proxy-send-timeout`: `None` keeps the
    /// ConfigMap's.
    pub timeouts: TimeoutSeconds,
    /// `proxy-next-upstream`, `-tries`, `-timeout`: unset ones keep the ConfigMap's.
    pub next_upstream: NextUpstreamKeys,
    /// `enable-cors` and the `cors-*` keys (see `cors.rs`).
    pub cors: Option<CorsSpec>,
    /// `limit-rps`, `limit-rpm`, `limit-connections` (see `limits.rs`), answered with 503 until
    /// the ConfigMap's codes are applied.
    pub limits: Option<RateLimits>,
    /// `limit-rate` and `limit-rate-after` as written, over the ConfigMap's (see `pace.rs`).
    pub pace: PaceKeys,
    /// `auth-url` and the `auth-*` keys of external authentication (see `auth.rs`).
    pub external_auth: Option<ExternalAuth>,
    /// `auth-proxy-set-headers` as written, beside an `auth-url`: the ConfigMap whose fields
    /// `external_auth` still lacks (see `auth/set_headers.rs`).
    pub auth_set_headers: Option<String>,
    /// `enable-global-auth: "false"`: the ConfigMap's `global-auth-url` gates none of the
    /// Ingress's locations (see `global_auth.rs`).
    pub no_global_auth: bool,
    /// `canary: "true"` and the `canary-*` keys (see `canary.rs`).
    pub canary: Option<CanaryRule>,
    /// `upstream-hash-by` (see `hash.rs`).
    pub hash: Option<HashKey>,
    /// `custom-http-errors`, `default-backend`, `disable-proxy-intercept-errors` (see `errors.rs`).
    pub errors: ErrorAnnotations,
    /// `affinity`, `affinity-mode` and the `session-cookie-*` keys (see `affinity.rs`).
    pub affinity: IngressAffinity,
    /// The `proxy-ssl-*` keys, resolved against their Secret by the compile (`proxy_ssl.rs`).
    pub proxy_ssl: ProxySslKeys,
    /// What they resolved to: the upstream TLS of the Ingress's HTTPS locations.
    pub upstream_tls: Option<std::sync::Arc<shunt_spec::UpstreamTls>>,
    /// `UnsupportedAnnotation: KEY` or `InvalidAnnotation: KEY`, one per offending key.
    pub refusals: Vec<String>,
    /// Keys (with the prefix) no ingress-nginx parser reads (see `keys.rs`): nginx ignores them.
    pub ignored: Vec<String>,
    /// [`NO_EFFECT`] keys present (with the prefix).
    pub no_effect: Vec<String>,
}

/// `return CODE URL` in every location of the Ingress.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FixedRedirect {
    pub code: u16,
    pub url: String,
}

/// The redirect annotations, read apart and resolved once all are seen (the codes belong to
/// their URL, and `temporal-redirect` wins; internal/ingress/annotations/redirect/redirect.go).
#[derive(Default)]
struct RedirectKeys<'a> {
    temporal: Option<&'a str>,
    temporal_code: Option<&'a str>,
    permanent: Option<&'a str>,
    permanent_code: Option<&'a str>,
}

/// Classifies every annotation of `ingress`.
pub fn parse(ingress: &Ingress) -> NginxAnnotations {
    let empty = Annotations::default();
    let annotations = ingress.metadata.annotations.as_ref().unwrap_or(&empty);
    let mut parsed = NginxAnnotations::default();
    let mut redirects = RedirectKeys::default();
    let mut cors = CorsKeys::default();
    let mut limits = LimitKeys::default();
    let mut canary = CanaryKeys::default();
    let mut errors = ErrorKeys::default();
    let mut auth = AuthKeys::default();
    let mut affinity = AffinityKeys::default();
    let mut proxy_ssl = ProxySslKeys::default();
    for (key, value) in annotations {
        let Some(name) = key.strip_prefix(PREFIX) else { continue };
        if !super::keys::read(name) {
            parsed.ignored.push(key.clone());
            continue;
        }
        if NO_EFFECT.contains(&name) {
            parsed.no_effect.push(key.clone());
            // `proxy-buffering` decides which answers `limit-rate` paces.
            limits.set(name, value);
            continue;
        }
        let slot = match name {
            "temporal-redirect" => &mut redirects.temporal,
            "temporal-redirect-code" => &mut redirects.temporal_code,
            "permanent-redirect" => &mut redirects.permanent,
            "permanent-redirect-code" => &mut redirects.permanent_code,
            name if name.ends_with("-snippet") => {
                parsed.snippets.push(key.clone());
                continue;
            }
            name if cors.set(name, value) => continue,
            name if limits.set(name, value) => continue,
            name if canary.set(name, value) => continue,
            name if errors.set(name, value) => continue,
            name if auth.set(name, value) => continue,
            name if affinity.set(name, value) => continue,
            name if proxy_ssl.set(name, value) => continue,
            name => {
                if let Err(refusal) = apply(&mut parsed, name, value) {
                    parsed.refusals.push(format!("{refusal}: {key}"));
                }
                continue;
            }
        };
        *slot = Some(value);
    }
    parsed.redirect = settle(&mut parsed.refusals, redirects.resolve()).unwrap_or_default();
    parsed.cors = settle(&mut parsed.refusals, cors.resolve()).unwrap_or_default();
    parsed.limits = settle(&mut parsed.refusals, limits.resolve(ingress, LimitStatus::default())).unwrap_or_default();
    parsed.pace = settle(&mut parsed.refusals, limits.pace()).unwrap_or_default();
    match auth.resolve() {
        Ok(spec) => {
            let reference = spec.as_ref().and(auth.set_headers_reference());
            parsed.auth_set_headers = reference.map(str::to_string);
            parsed.external_auth = spec;
        }
        Err((refusal, name)) => parsed.refusals.push(format!("{refusal}: {PREFIX}{name}")),
    }
    parsed.no_global_auth = !auth.global_enabled();
    parsed.canary = settle(&mut parsed.refusals, canary.resolve()).unwrap_or_default();
    parsed.errors = settle(&mut parsed.refusals, errors.resolve()).unwrap_or_default();
    parsed.affinity = settle(&mut parsed.refusals, affinity.resolve()).unwrap_or_default();
    let inert = proxy_ssl.inert().into_iter();
    parsed.no_effect.extend(inert.map(|name| format!("{PREFIX}{name}")));
    parsed.proxy_ssl = proxy_ssl;
    parsed
}

/// A group of keys' value, or `None` with its refusal noted (the key named).
fn settle<T>(refusals: &mut Vec<String>, resolved: Result<T, (Refusal, &str)>) -> Option<T> {
    resolved
        .map_err(|(refusal, name)| refusals.push(format!("{refusal}: {PREFIX}{name}")))
        .ok()
}

/// Why a key makes its hosts refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Refusal {
    Unsupported,
    Invalid,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Refusal::Unsupported => "UnsupportedAnnotation",
            Refusal::Invalid => "InvalidAnnotation",
        })
    }
}

fn apply(parsed: &mut NginxAnnotations, name: &str, value: &str) -> Result<(), Refusal> {
    match name {
        "ssl-redirect" => parsed.ssl_redirect = Some(flag(value)?),
        "force-ssl-redirect" => parsed.force_ssl_redirect = flag(value)?,
        "preserve-trailing-slash" => parsed.preserve_trailing_slash = flag(value)?,
        "backend-protocol" => parsed.backend_protocol = backend_protocol(value)?,
        "proxy-body-size" => parsed.body_limit = Some(body_size(value)?),
        "upstream-vhost" => parsed.upstream_vhost = Some(upstream_vhost(value)?),
        "app-root" => parsed.app_root = app_root(value)?,
        "upstream-hash-by" => parsed.hash = super::hash::key(value)?,
        "use-regex" => parsed.use_regex = flag(value)?,
        "from-to-www-redirect" => parsed.from_to_www = flag(value)?,
        // Checked here; the aliases themselves are read before the compile (`alias::of`).
        "server-alias" => drop(super::alias::parse(value)?),
        "rewrite-target" => parsed.rewrite_target = rewrite_target(value)?,
        "x-forwarded-prefix" => parsed.forwarded_prefix = Some(forwarded_prefix(value)?),
        "proxy-connect-timeout" => parsed.timeouts.connect = Some(seconds(value)?),
        "proxy-read-timeout" => parsed.timeouts.read = Some(seconds(value)?),
        "proxy-send-timeout" => parsed.timeouts.send = Some(seconds(value)?),
        "proxy-next-upstream" => parsed.next_upstream.conditions = Some(next_upstream::conditions(value)?),
        "proxy-next-upstream-tries" => parsed.next_upstream.tries = Some(next_upstream::tries(value)?),
        "proxy-next-upstream-timeout" => parsed.next_upstream.timeout = Some(next_upstream::timeout(value)?),
        // Only 1.1 is what shunt speaks upstream; 1.0 closes every connection and changes framing.
        "proxy-http-version" if value.trim() == "1.1" => {}
        "allowlist-source-range" => parsed.allow_ranges = ranges(value, false)?,
        "whitelist-source-range" => parsed.whitelist_ranges = ranges(value, false)?,
        "denylist-source-range" => parsed.deny_ranges = ranges(value, true)?,
        _ => return Err(Refusal::Unsupported),
    }
    Ok(())
}

/// ingress-nginx parses booleans with Go's `strconv.ParseBool`
/// (internal/ingress/annotations/parser/main.go, `GetBoolAnnotation`).
pub(super) fn flag(value: &str) -> Result<bool, Refusal> {
    match value {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Ok(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Ok(false),
        _ => Err(Refusal::Invalid),
    }
}

/// `HTTP`, `GRPC` (cleartext HTTP/2), `HTTPS` and `GRPCS` are forwarded as nginx forwards them
/// (template.go, `buildProxyPass`): HTTPS and GRPCS through the upstream TLS client of
/// `appProtocol: https` (GRPCS offering ALPN `h2`), which, as nginx without the `proxy-ssl-*`
/// keys (`proxy_ssl_verify` and `proxy_ssl_server_name` are off; `grpc_pass grpcs://` reads the
/// `grpc_ssl_*` directives, which nginx.tmpl never writes), neither checks the pod's certificate
/// nor sends SNI (it dials the pod's IP). `AUTO_HTTP` is `proxy_pass $scheme://`: the pod is
/// spoken to over TLS by a caller over TLS, in cleartext by the others, chosen per request.
/// `FCGI` is FastCGI: no counterpart.
fn backend_protocol(value: &str) -> Result<Option<UpstreamProtocol>, Refusal> {
    match value.trim().to_ascii_uppercase().as_str() {
        "HTTP" => Ok(None),
        "GRPC" => Ok(Some(UpstreamProtocol::H2c)),
        "HTTPS" => Ok(Some(UpstreamProtocol::Https)),
        "GRPCS" => Ok(Some(UpstreamProtocol::H2Tls)),
        "AUTO_HTTP" => Ok(Some(UpstreamProtocol::AutoHttp)),
        "FCGI" => Err(Refusal::Unsupported),
        _ => Err(Refusal::Invalid),
    }
}

/// A source range list as the route judges it (see `source_ranges.rs`): every address is no
/// allowlist at all, and a denylist of everything; one naming internal space is refused.
fn ranges(value: &str, deny: bool) -> Result<Option<Vec<ipnet::IpNet>>, Refusal> {
    match super::source_ranges::read(value) {
        RangeList::AllowAll if deny => Ok(Some(
            ["0.0.0.0/0", "::/0"].map(|all| all.parse().expect("valid")).to_vec(),
        )),
        RangeList::AllowAll => Ok(None),
        RangeList::Public(ranges) => Ok(Some(ranges)),
        RangeList::Internal => Err(Refusal::Unsupported),
        RangeList::Invalid => Err(Refusal::Invalid),
    }
}

/// nginx's size syntax (`client_max_body_size`): bytes, or a number with `k`, `m` or `g`; `0`
/// is no limit.
pub(super) fn body_size(value: &str) -> Result<BodyLimit, Refusal> {
    let value = value.trim();
    let (digits, unit) = match value.char_indices().last() {
        Some((at, unit)) if unit.is_ascii_alphabetic() => (&value[..at], unit.to_ascii_lowercase()),
        _ => (value, 'b'),
    };
    let shift = match unit {
        'b' => 0,
        'k' => 10,
        'm' => 20,
        'g' => 30,
        _ => return Err(Refusal::Invalid),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Refusal::Invalid);
    }
    let number: u64 = digits.parse().map_err(|_| Refusal::Invalid)?;
    match number.checked_mul(1 << shift) {
        Some(0) => Ok(BodyLimit::Unlimited),
        Some(bytes) => Ok(BodyLimit::Bytes(bytes)),
        None => Err(Refusal::Invalid),
    }
}

/// A host (and port) as a Host field carries it; ingress-nginx quotes the value into
/// `proxy_set_header Host`, so anything else could not be reproduced byte for byte.
fn upstream_vhost(value: &str) -> Result<String, Refusal> {
    let host = value.trim();
    let allowed = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b':' | b'_');
    if host.is_empty() || !host.bytes().all(allowed) {
        return Err(Refusal::Unsupported);
    }
    Ok(host.to_string())
}

/// ingress-nginx's validator for `rewrite-target` and `app-root` (parser/validators.go,
/// `RegexPathWithCapture`): an optional leading `/`, then `- . _ ~ / : $` and ASCII letters and
/// digits. An empty target is no target.
fn path_with_capture(value: &str) -> bool {
    let rest = value.strip_prefix('/').unwrap_or(value);
    rest.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"-._~/:$".contains(&b))
}

/// `rewrite-target`: what nginx's `rewrite` writes; `$` other than before a group number would be
/// an nginx variable, and a target without a leading `/` no path. A target starting with
/// `http://` or `https://` makes nginx's `rewrite` answer a 302 to it instead.
fn rewrite_target(value: &str) -> Result<Option<RewriteTarget>, Refusal> {
    if value.is_empty() {
        return Ok(None);
    }
    if !path_with_capture(value) {
        return Err(Refusal::Invalid);
    }
    let parsed = if value.starts_with("http://") || value.starts_with("https://") {
        RewriteTarget::parse_absolute(value)
    } else {
        value.parse()
    };
    parsed.map(Some).map_err(|_| Refusal::Unsupported)
}

/// `x-forwarded-prefix`: quoted into `proxy_set_header X-Forwarded-Prefix "..."`.
fn forwarded_prefix(value: &str) -> Result<String, Refusal> {
    let plain = |b: u8| b.is_ascii_alphanumeric() || b"-._~/:".contains(&b);
    if value.is_empty() || !value.bytes().all(plain) {
        return Err(Refusal::Invalid);
    }
    Ok(value.to_string())
}

/// `app-root`: a path ingress-nginx accepts (rewrite/main.go keeps it only when it parses as a
/// request URI that is not absolute). Values it drops change nothing.
fn app_root(value: &str) -> Result<Option<String>, Refusal> {
    let path = value.trim();
    if !path_with_capture(path) {
        return Err(Refusal::Invalid);
    }
    if !path.starts_with('/') || path.starts_with("//") {
        return Ok(None);
    }
    // nginx would expand `$...` in `return 302 ...` as a variable.
    if path.contains('$') {
        return Err(Refusal::Unsupported);
    }
    Ok(Some(path.to_string()))
}

/// The characters ingress-nginx's URL validator admits (parser/validators.go, `URLIsValidRegex`).
fn valid_url(url: &str) -> bool {
    let allowed = |b: u8| b.is_ascii_alphanumeric() || b"-._~/:,?&=".contains(&b);
    let scheme_ok = url.starts_with("http://") || url.starts_with("https://");
    !url.is_empty() && url.bytes().all(allowed) && scheme_ok
}

impl RedirectKeys<'_> {
    /// The redirect the keys give, or the offending key.
    fn resolve(&self) -> Result<Option<FixedRedirect>, (Refusal, &'static str)> {
        if let Some(url) = self.temporal.map(str::trim).filter(|url| !url.is_empty()) {
            let code = redirect_code(self.temporal_code, 300..=307, 302).map_err(|r| (r, "temporal-redirect-code"))?;
            return fixed(url, code).map(Some).map_err(|r| (r, "temporal-redirect"));
        }
        let Some(url) = self.permanent.map(str::trim).filter(|url| !url.is_empty()) else {
            return Ok(None);
        };
        let code = redirect_code(self.permanent_code, 300..=308, 301).map_err(|r| (r, "permanent-redirect-code"))?;
        fixed(url, code).map(Some).map_err(|r| (r, "permanent-redirect"))
    }
}

/// A code out of `range` falls back to `default`, as redirect.go does.
fn redirect_code(value: Option<&str>, range: std::ops::RangeInclusive<u16>, default: u16) -> Result<u16, Refusal> {
    let Some(value) = value else { return Ok(default) };
    let code: i64 = value.trim().parse().map_err(|_| Refusal::Invalid)?;
    Ok(u16::try_from(code)
        .ok()
        .filter(|code| range.contains(code))
        .unwrap_or(default))
}

fn fixed(url: &str, code: u16) -> Result<FixedRedirect, Refusal> {
    if !valid_url(url) {
        return Err(Refusal::Invalid);
    }
    // nginx's `return` sends other codes with the URL as the body, not as Location.
    if !matches!(code, 301 | 302 | 303 | 307 | 308) {
        return Err(Refusal::Unsupported);
    }
    Ok(FixedRedirect {
        code,
        url: url.to_string(),
    })
}

impl NginxAnnotations {
    /// ingress-nginx's `needsRewrite` (controller/location.go): a target that differs from the
    /// location's path.
    pub fn rewrites(&self, path: &str) -> bool {
        self.rewrite_target
            .as_ref()
            .is_some_and(|target| target.as_str() != path)
    }

    /// The caller addresses the Ingress's routes answer (`None`: all).
    pub fn source_ranges(&self) -> Option<shunt_spec::SourceRanges> {
        let allow = self.allow_ranges.clone().or_else(|| self.whitelist_ranges.clone());
        super::source_ranges::rule(allow, self.deny_ranges.clone())
    }

    /// The location is a regex whatever its host (`use-regex`, or a rewrite of it).
    pub fn regex_location(&self, path: &str) -> bool {
        self.use_regex || self.rewrites(path)
    }
}
