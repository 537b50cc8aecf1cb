//! The `proxy-ssl-*` keys: how nginx speaks TLS to an HTTPS pod.
//!
//! ingress-nginx's parser (internal/ingress/annotations/proxyssl/main.go, `Parse`) reads
//! `proxy-ssl-secret` first and stops when it is absent: the location keeps an empty config and
//! nginx.tmpl writes no `proxy_ssl_*` directive, so the other six keys change nothing (nginx
//! neither verifies the pod nor sends SNI, which is what shunt does too). With the secret, the
//! Secret decides: its `ca.crt` turns on `proxy_ssl_trusted_certificate` (and with it the
//! verify, depth, protocols and ciphers keys), its key pair a client certificate, and a
//! missing Secret denies every location of the Ingress (503). shunt does not read that Secret
//! yet, so the secret refuses the Ingress's hosts; the refusal names the key that shunt could
//! not reproduce even once it does (see `values`).

mod values;

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

/// The `proxy-ssl-*` keys of one Ingress, by name, with the values the refusal depends on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProxySslKeys {
    present: Vec<&'static str>,
    secret: Option<String>,
    ciphers: Option<String>,
    verify_depth: Option<String>,
}

impl ProxySslKeys {
    /// Notes `name` (without the prefix) when it is a `proxy-ssl-*` key; `false` otherwise.
    pub fn set(&mut self, name: &str, value: &str) -> bool {
        let Some(key) = KEYS.iter().find(|key| **key == name) else {
            return false;
        };
        // Bounded: only the shape is read, and no legitimate value comes near the bound (a
        // longer one is refused, as it cannot be the default).
        let value = Some(value.chars().take(values::MAX_VALUE + 1).collect());
        match *key {
            "proxy-ssl-secret" => self.secret = value,
            "proxy-ssl-ciphers" => self.ciphers = value,
            "proxy-ssl-verify-depth" => self.verify_depth = value,
            _ => {}
        }
        self.present.push(key);
        true
    }

    /// The keys that change nothing (all of them, when there is no secret), or the key that
    /// refuses the hosts of an Ingress in `namespace`.
    pub fn resolve(&self, namespace: &str) -> Result<Vec<&'static str>, (Refusal, &'static str)> {
        let Some(secret) = &self.secret else {
            return Ok(self.present.clone());
        };
        match values::secret_namespace(secret) {
            None => return Err((Refusal::Invalid, "proxy-ssl-secret")),
            // allow-cross-namespace-resources is off by default: nginx denies the locations.
            Some(owner) if owner != namespace => return Err((Refusal::Unsupported, "proxy-ssl-secret")),
            Some(_) => {}
        }
        // These two apply once the Secret carries ca.crt; shunt cannot reproduce either then.
        if self
            .ciphers
            .as_deref()
            .is_some_and(|value| !values::default_ciphers(value))
        {
            return Err((Refusal::Unsupported, "proxy-ssl-ciphers"));
        }
        match self.verify_depth.as_deref().map(values::verify_depth) {
            Some(values::Depth::Negative) => return Err((Refusal::Invalid, "proxy-ssl-verify-depth")),
            Some(values::Depth::Deeper) => return Err((Refusal::Unsupported, "proxy-ssl-verify-depth")),
            Some(values::Depth::One) | None => {}
        }
        Err((Refusal::Unsupported, "proxy-ssl-secret"))
    }
}
