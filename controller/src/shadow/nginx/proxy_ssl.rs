//! The `proxy-ssl-*` keys: how nginx speaks TLS to an HTTPS pod.
//!
//! ingress-nginx's parser (internal/ingress/annotations/proxyssl/main.go, `Parse`) reads
//! `proxy-ssl-secret` first and stops when it is absent: the location keeps an empty config and
//! nginx.tmpl writes no `proxy_ssl_*` directive, so the other six keys change nothing (nginx
//! neither verifies the pod nor sends SNI, which is what shunt does too). With the secret, the
//! Secret decides: its `ca.crt` turns on `proxy_ssl_trusted_certificate` (and with it the
//! verify, depth, protocols and ciphers keys), its key pair a client certificate, and a
//! missing Secret denies every location of the Ingress (503). shunt does not read that Secret
//! yet, so the secret refuses the Ingress's hosts.

use super::annotations::Refusal;

/// The keys ingress-nginx's proxyssl parser reads (without the prefix).
const KEYS: [&str; 7] = [
    "proxy-ssl-ciphers",
    "proxy-ssl-name",
    "proxy-ssl-protocols",
    "proxy-ssl-secret",
    "proxy-ssl-server-name",
    "proxy-ssl-verify",
    "proxy-ssl-verify-depth",
];

/// The `proxy-ssl-*` keys of one Ingress, by name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProxySslKeys {
    present: Vec<&'static str>,
}

impl ProxySslKeys {
    /// Notes `name` (without the prefix) when it is a `proxy-ssl-*` key; `false` otherwise.
    /// The values do not matter: without the secret none is read, with it the host is refused.
    pub fn set(&mut self, name: &str) -> bool {
        let Some(key) = KEYS.iter().find(|key| **key == name) else {
            return false;
        };
        self.present.push(key);
        true
    }

    /// The keys that change nothing (all of them, when there is no secret), or the secret
    /// that refuses the hosts.
    pub fn resolve(&self) -> Result<Vec<&'static str>, (Refusal, &'static str)> {
        if self.present.contains(&"proxy-ssl-secret") {
            return Err((Refusal::Unsupported, "proxy-ssl-secret"));
        }
        Ok(self.present.clone())
    }
}
