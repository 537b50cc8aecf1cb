//! The ConfigMap's forwarding keys (`use-forwarded-headers`, `enable-real-ip`,
//! `compute-full-forwarded-for`, `forwarded-for-header`, `proxy-real-ip-cidr`, and
//! `use-proxy-protocol` where it meets them), read as nginx.tmpl writes them:
//!
//! - either of the first two turns on nginx's realip module for every server:
//!   `real_ip_header` the forwarded-for field, `real_ip_recursive on`, one `set_real_ip_from` per
//!   `proxy-real-ip-cidr` entry (configmap.go `ReadConfig`: `0.0.0.0/0` when the key is absent);
//! - `use-forwarded-headers` also lets the caller's X-Forwarded-Proto, -Port and -Host stand for
//!   the connection's (lua_ingress.lua's `rewrite`), and with `compute-full-forwarded-for` the
//!   pod's X-Forwarded-For is `$http_x_forwarded_for, $realip_remote_addr`;
//! - `forwarded-for-header` is also the field X-Original-Forwarded-For copies.

use ipnet::IpNet;
use shunt_spec::{ExternalAuth, MAX_FIELD_NAME_LEN, NginxForwarding, RealIp, TrustedProxies};

use super::annotations::{Refusal, flag};

/// The keys [`ForwardingKeys::read`] reads.
pub(super) const FORWARDING_KEYS: [&str; 6] = [
    "use-forwarded-headers",
    "enable-real-ip",
    "compute-full-forwarded-for",
    "use-proxy-protocol",
    "forwarded-for-header",
    "proxy-real-ip-cidr",
];

/// `proxy-real-ip-cidr` entries at most: a ConfigMap is an operator's, but still bounded.
const MAX_CIDRS: usize = 256;

/// The keys as the ConfigMap holds them, until every key is read.
#[derive(Clone, Debug)]
pub(super) struct ForwardingKeys {
    use_forwarded_headers: bool,
    enable_real_ip: bool,
    compute_full: bool,
    use_proxy_protocol: bool,
    /// `forwarded-for-header` as written (nginx compares `X-Forwarded-For` exactly).
    field: String,
    cidrs: Vec<IpNet>,
}

impl Default for ForwardingKeys {
    /// config.go's `NewDefault` and configmap.go's `0.0.0.0/0`.
    fn default() -> Self {
        ForwardingKeys {
            use_forwarded_headers: false,
            enable_real_ip: false,
            compute_full: false,
            use_proxy_protocol: false,
            field: "X-Forwarded-For".to_string(),
            cidrs: vec![IpNet::V4(Default::default())],
        }
    }
}

impl ForwardingKeys {
    /// Reads one of [`FORWARDING_KEYS`].
    pub(super) fn read(&mut self, key: &str, value: &str) -> Result<(), Refusal> {
        match key {
            "use-forwarded-headers" => flag(value).map(|on| self.use_forwarded_headers = on),
            "enable-real-ip" => flag(value).map(|on| self.enable_real_ip = on),
            "compute-full-forwarded-for" => flag(value).map(|on| self.compute_full = on),
            "use-proxy-protocol" => flag(value).map(|on| self.use_proxy_protocol = on),
            "forwarded-for-header" => field_name(value).map(|()| self.field = value.to_string()),
            "proxy-real-ip-cidr" => cidrs(value).map(|cidrs| self.cidrs = cidrs),
            _ => Err(Refusal::Unsupported),
        }
    }

    /// What every nginx route carries: `Ok(None)` for ingress-nginx's defaults, `Err` with the
    /// key shunt cannot reproduce.
    pub(super) fn contract(&self) -> Result<Option<NginxForwarding>, &'static str> {
        // With both, nginx reads the caller's field only when the PROXY protocol's source is
        // trusted, and walks it from the load balancer's address: shunt's callers come
        // without a load balancer in between, so neither address exists.
        if self.use_proxy_protocol && self.use_forwarded_headers {
            return Err("use-proxy-protocol");
        }
        // With the PROXY protocol alone (or beside enable-real-ip), nginx's caller is the
        // PROXY source: the peer shunt sees (see config.rs).
        let real_ip_on = (self.use_forwarded_headers || self.enable_real_ip) && !self.use_proxy_protocol;
        let forwarding = NginxForwarding {
            real_ip: real_ip_on.then(|| RealIp {
                field: self.field.to_ascii_lowercase(),
                every_line: self.field == "X-Forwarded-For",
                from: TrustedProxies::new(self.cidrs.clone()),
            }),
            pass_forwarded: self.use_forwarded_headers,
            full_forwarded_for: self.use_forwarded_headers && self.compute_full,
            original_for: self.field.to_ascii_lowercase(),
        };
        Ok((!forwarding.is_default()).then_some(forwarding))
    }
}

/// An `auth-url` Ingress under `use-forwarded-headers`, where nginx's auth request differs from
/// shunt's: it carries `$full_x_forwarded_for` (`compute-full-forwarded-for`), and
/// `$pass_access_scheme`, the caller's X-Forwarded-Proto, as `X-Scheme` (`auth-method`) and in
/// the sign-in URL (`auth-signin`, template.go `buildAuthSignURL`). shunt's auth request writes
/// the caller's address and the connection's scheme, so the host is refused.
pub(super) fn auth_refusal(auth: Option<&ExternalAuth>, forwarding: Option<&NginxForwarding>) -> Option<String> {
    let (auth, forwarding) = (auth?, forwarding?);
    let differs =
        forwarding.pass_forwarded && (forwarding.full_forwarded_for || auth.method.is_some() || auth.signin.is_some());
    differs.then(|| {
        "UnsupportedConfigMapKey: use-forwarded-headers (with nginx.ingress.kubernetes.io/auth-url)".to_string()
    })
}

/// A field name nginx reads as the template writes it: a token, without `_` (nginx would match
/// `real_ip_header` on the name as written, but `$http_…` with `-` for `_`: two fields).
fn field_name(value: &str) -> Result<(), Refusal> {
    let token = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^`|~".contains(&b);
    if value.is_empty() || value.len() > MAX_FIELD_NAME_LEN || !value.bytes().all(|b| token(b) || b == b'_') {
        return Err(Refusal::Invalid);
    }
    if value.contains('_') {
        return Err(Refusal::Unsupported);
    }
    Ok(())
}

/// `proxy-real-ip-cidr`: comma-separated addresses and CIDRs (configmap.go
/// `splitAndTrimSpace`). A host name (resolved by nginx when it loads) is not reproduced.
fn cidrs(value: &str) -> Result<Vec<IpNet>, Refusal> {
    let entries: Vec<&str> = value.split(',').filter(|entry| !entry.is_empty()).collect();
    if entries.len() > MAX_CIDRS {
        return Err(Refusal::Unsupported);
    }
    entries
        .into_iter()
        .map(|entry| {
            let entry = entry.trim();
            if entry.is_empty() {
                // nginx.tmpl would write `set_real_ip_from ;`, which nginx refuses to load.
                return Err(Refusal::Invalid);
            }
            entry
                .parse::<IpNet>()
                .or_else(|_| entry.parse::<std::net::IpAddr>().map(IpNet::from))
                .map_err(|_| Refusal::Unsupported)
        })
        .collect()
}

#[cfg(test)]
mod tests;
