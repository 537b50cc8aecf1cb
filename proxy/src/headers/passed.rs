//! A route's ingress-nginx ConfigMap forwarding keys, parsed once per table build: the caller's
//! address (`real_ip.rs`), and the caller's own X-Forwarded-Proto, -Port and -Host standing
//! for the connection's with `use-forwarded-headers` (lua_ingress.lua's `rewrite`: whoever
//! sent them, the realip module's trust plays no part).

use http::{HeaderMap, HeaderName, HeaderValue};

use super::{
    forwarded::{X_FORWARDED_HOST, X_FORWARDED_PORT, X_FORWARDED_PROTO},
    real_ip::RealIpRule,
};
use crate::spec::NginxForwarding;

/// What a route's keys change about the caller and its fields.
#[derive(Clone, Debug)]
pub struct ForwardingKeys {
    pub real_ip: Option<RealIpRule>,
    /// `use-forwarded-headers`.
    pub pass_forwarded: bool,
    /// `compute-full-forwarded-for` (with `use-forwarded-headers`).
    pub full_forwarded_for: bool,
    /// `forwarded-for-header`: what X-Original-Forwarded-For copies.
    pub original_for: HeaderName,
}

impl ForwardingKeys {
    pub fn new(spec: &NginxForwarding) -> Result<Self, String> {
        let original_for = HeaderName::from_bytes(spec.original_for.as_bytes())
            .map_err(|_| format!("forwarded-for field {:?} is not a field name", spec.original_for))?;
        Ok(ForwardingKeys {
            real_ip: spec.real_ip.as_ref().map(RealIpRule::new).transpose()?,
            pass_forwarded: spec.pass_forwarded,
            full_forwarded_for: spec.full_forwarded_for && spec.pass_forwarded,
            original_for,
        })
    }

    /// `$pass_access_scheme` when the caller's X-Forwarded-Proto stands for it.
    pub fn passed_proto(&self, headers: &HeaderMap) -> Option<HeaderValue> {
        self.passed(headers, &X_FORWARDED_PROTO)
    }

    /// `$pass_port` when the caller's X-Forwarded-Port stands for it (lua L132-134; the
    /// listener's 443 rule, L153, gives the same text).
    pub fn passed_port(&self, headers: &HeaderMap) -> Option<HeaderValue> {
        self.passed(headers, &X_FORWARDED_PORT)
    }

    /// `$best_http_host` when the caller's X-Forwarded-Host stands for it: its part before the
    /// first `,`, untrimmed (lua L91-99, `parse_x_forwarded_host`).
    pub fn passed_host(&self, headers: &HeaderMap) -> Option<HeaderValue> {
        let hosts = self.passed(headers, &X_FORWARDED_HOST)?;
        let bytes = hosts.as_bytes();
        match bytes.iter().position(|&b| b == b',') {
            None => Some(hosts),
            Some(comma) => HeaderValue::from_bytes(&bytes[..comma]).ok(),
        }
    }

    /// The caller's `name` as nginx's `$http_` variable reads it (every line, joined by `, `).
    fn passed(&self, headers: &HeaderMap, name: &HeaderName) -> Option<HeaderValue> {
        if !self.pass_forwarded {
            return None;
        }
        joined_value(headers, name)
    }
}

/// Every line of `name`, joined by `, ` as nginx joins repeated fields; `None` without one.
pub(super) fn joined_value(headers: &HeaderMap, name: &HeaderName) -> Option<HeaderValue> {
    let mut lines = headers.get_all(name).iter();
    let first = lines.next()?;
    let Some(second) = lines.next() else {
        return Some(first.clone());
    };
    let mut out = first.as_bytes().to_vec();
    for line in std::iter::once(second).chain(lines) {
        out.extend_from_slice(b", ");
        out.extend_from_slice(line.as_bytes());
    }
    HeaderValue::from_bytes(&out).ok()
}
