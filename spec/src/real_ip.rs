//! ingress-nginx's ConfigMap forwarding keys as a route carries them: whose address the caller's
//! is (nginx's realip module, which `enable-real-ip` or `use-forwarded-headers` turn on with
//! `forwarded-for-header` and `proxy-real-ip-cidr`), and which of the caller's forwarding fields
//! the pod sees instead of ours (`use-forwarded-headers`, `compute-full-forwarded-for`).

use serde::Serialize;

use crate::TrustedProxies;

/// Longest field name the keys may name (a name, not a value: nothing real comes near it).
pub const MAX_FIELD_NAME_LEN: usize = 64;

/// The forwarding keys of an nginx route where they differ from ingress-nginx's defaults.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NginxForwarding {
    /// nginx's `real_ip_header`, `real_ip_recursive on` and `set_real_ip_from` (nginx.tmpl, the
    /// http block); `None` when neither key turns the module on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub real_ip: Option<RealIp>,
    /// `use-forwarded-headers`: the caller's X-Forwarded-Proto, -Port and -Host stand for the
    /// connection's scheme, port and Host (lua_ingress.lua's `rewrite`), whoever sent them.
    pub pass_forwarded: bool,
    /// `compute-full-forwarded-for` with `use-forwarded-headers`: X-Forwarded-For is the caller's
    /// chain followed by the connection's peer, not the caller's address alone.
    pub full_forwarded_for: bool,
    /// `forwarded-for-header`, lowercase: the field X-Original-Forwarded-For copies
    /// (`buildForwardedFor`). A field name without `_`, at most [`MAX_FIELD_NAME_LEN`] bytes.
    pub original_for: String,
}

/// Where nginx's realip module reads the caller's address, and from whom it believes it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RealIp {
    /// The field, lowercase; the same rules as [`NginxForwarding::original_for`].
    pub field: String,
    /// Every line of the field, last first: nginx reads all lines of a `real_ip_header` spelled
    /// exactly `X-Forwarded-For`, and only the first line of any other.
    pub every_line: bool,
    /// `proxy-real-ip-cidr`: peers whose field is read, and the addresses in it walked past.
    pub from: TrustedProxies,
}

impl Default for NginxForwarding {
    /// ingress-nginx's defaults: the peer is the caller, the caller's fields are replaced.
    fn default() -> Self {
        NginxForwarding {
            real_ip: None,
            pass_forwarded: false,
            full_forwarded_for: false,
            original_for: "x-forwarded-for".to_string(),
        }
    }
}

impl NginxForwarding {
    pub fn is_default(&self) -> bool {
        *self == NginxForwarding::default()
    }
}
