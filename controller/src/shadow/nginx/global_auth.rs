//! The ConfigMap's global external authentication (`global-auth-*`, configmap.go `ReadConfig`)
//! and `no-auth-locations`, attached to locations as nginx.tmpl does: a location without its
//! own `auth-url` whose Ingress leaves `enable-global-auth` on is gated by the global URL
//! (template.go `shouldApplyGlobalAuth`), a location whose path starts with a
//! `no-auth-locations` entry by nothing (`isLocationInLocationList`).
//!
//! The global keys fill the same `$externalAuth` the template reads for an `auth-url`, so they
//! become the same [`ExternalAuth`] and are read by the annotation parser (`auth.rs`). Where
//! ingress-nginx warns and keeps its default for an invalid value (often: no gate at all), the
//! key refuses every host instead.

use shunt_spec::ExternalAuth;

use super::{annotations::Refusal, auth::AuthKeys};

/// config.go's `NoAuthLocations`.
const NO_AUTH_LOCATIONS: &str = "/.well-known/acme-challenge";

/// The ConfigMap's gate for every nginx location.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GlobalAuth {
    /// `global-auth-url` and companions; `None`: no global gate.
    pub external_auth: Option<ExternalAuth>,
    /// `no-auth-locations`: Ingress paths starting with one go without any gate.
    pub no_auth_locations: Vec<String>,
    keys: AuthKeys,
}

impl Default for GlobalAuth {
    fn default() -> Self {
        GlobalAuth {
            external_auth: None,
            no_auth_locations: locations(NO_AUTH_LOCATIONS),
            keys: AuthKeys::global(),
        }
    }
}

/// A comma-separated list, entries trimmed, empty ones skipped.
fn locations(value: &str) -> Vec<String> {
    let entries = value.split(',').map(|entry| entry.trim_matches(' '));
    entries.filter(|l| !l.is_empty()).map(str::to_string).collect()
}

impl GlobalAuth {
    /// Keeps `value` when `key` is one of the global auth keys; `false` otherwise.
    /// `global-auth-snippet` is not one: it stays refused with the other unknown keys.
    pub fn set(&mut self, key: &str, value: &str) -> bool {
        if key == "no-auth-locations" {
            self.no_auth_locations = locations(value);
            return true;
        }
        let Some(name) = key.strip_prefix("global-") else {
            return false;
        };
        let read = [
            "auth-url",
            "auth-method",
            "auth-signin",
            "auth-signin-redirect-param",
            "auth-response-headers",
            "auth-request-redirect",
            "auth-always-set-cookie",
            "auth-cache-key",
            "auth-cache-duration",
        ];
        read.contains(&name) && self.keys.set(name, value)
    }

    /// Resolves the keys seen; a refusal, added to `refusals`, names the ConfigMap key.
    pub fn resolve(&mut self, refusals: &mut Vec<String>) {
        match self.keys.resolve() {
            Ok(resolved) => self.external_auth = resolved,
            Err((refusal, key)) => {
                let kind = match refusal {
                    Refusal::Invalid => "InvalidConfigMapKey",
                    Refusal::Unsupported => "UnsupportedConfigMapKey",
                };
                refusals.push(format!("{kind}: global-{key}"));
            }
        }
    }

    /// Whether the location of Ingress path `path` goes without authentication.
    pub fn exempt(&self, path: &str) -> bool {
        self.no_auth_locations
            .iter()
            .any(|prefix| path.starts_with(prefix.as_str()))
    }

    /// The gate of a location: its Ingress's own, else the global one unless the Ingress turns
    /// it off (`enable-global-auth: "false"`).
    pub fn gate(&self, own: Option<&ExternalAuth>, global_enabled: bool) -> Option<ExternalAuth> {
        match own {
            Some(own) => Some(own.clone()),
            None if global_enabled => self.external_auth.clone(),
            None => None,
        }
    }
}

#[cfg(test)]
mod tests;
