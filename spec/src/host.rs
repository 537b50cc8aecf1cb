//! Which requests' `Host` a virtual host (or a certificate) is for.

use std::fmt;

use serde::{Serialize, Serializer};

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum HostMatch {
    /// A lowercase DNS name, no port, no trailing dot.
    Exact(String),
    /// `*.example.com` stored as `example.com`: matches exactly one extra label.
    Wildcard(String),
    /// `*.example.com` as cloud load balancers and nginx read it, stored as `example.com`:
    /// matches one or more extra labels. Shown as `**.example.com`.
    DeepWildcard(String),
    /// Rules without a host.
    Any,
}

// === impl HostMatch ===

impl HostMatch {
    /// Parses an Ingress rule host: `""` is `Any`, `*.a.b` a wildcard, anything else exact.
    /// Lowercases; validation of the DNS name is the caller's job.
    pub fn from_rule_host(host: &str) -> Self {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        if host.is_empty() {
            HostMatch::Any
        } else if let Some(suffix) = host.strip_prefix("*.") {
            HostMatch::Wildcard(suffix.to_string())
        } else {
            HostMatch::Exact(host)
        }
    }
}

impl HostMatch {
    /// Whether `self`, read as a certificate name or a host pattern, covers `host`: equal
    /// names, or a wildcard and a name exactly one label below it. `Any` covers nothing.
    pub fn covers(&self, host: &HostMatch) -> bool {
        match (self, host) {
            (HostMatch::Any, _) | (_, HostMatch::Any) => false,
            (pattern, host) if pattern == host => true,
            (HostMatch::Wildcard(suffix), HostMatch::Exact(name)) => HostMatch::wildcard_suffix(name) == Some(suffix),
            (HostMatch::DeepWildcard(suffix), HostMatch::Exact(name) | HostMatch::Wildcard(name)) => name
                .strip_suffix(suffix.as_str())
                .is_some_and(|labels| labels.len() > 1 && labels.ends_with('.')),
            (HostMatch::DeepWildcard(suffix), HostMatch::DeepWildcard(name)) => name
                .strip_suffix(suffix.as_str())
                .is_some_and(|labels| labels.ends_with('.')),
            _ => false,
        }
    }

    /// The suffix a `*.` pattern must have to cover `host`: what follows its first label, which
    /// must not be empty (`.example.com` is not one label below `example.com`). The one rule
    /// for certificate names, `--dns-exclude` patterns and route lookup.
    pub fn wildcard_suffix(host: &str) -> Option<&str> {
        host.split_once('.')
            .and_then(|(label, rest)| (!label.is_empty()).then_some(rest))
    }
}

impl fmt::Display for HostMatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HostMatch::Exact(host) => f.write_str(host),
            HostMatch::Wildcard(suffix) => write!(f, "*.{suffix}"),
            HostMatch::DeepWildcard(suffix) => write!(f, "**.{suffix}"),
            HostMatch::Any => f.write_str("*"),
        }
    }
}

impl Serialize for HostMatch {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}
