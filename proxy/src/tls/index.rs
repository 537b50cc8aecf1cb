//! Which certificate a TLS handshake gets: exact SNI name, then a one-label wildcard, then the
//! table's default (`--default-ssl-certificate`). Part of the published table, so a rotated
//! Secret applies to the next handshake and open connections keep the one they have.

use std::{collections::HashMap, sync::Arc};

use rustls::sign::CertifiedKey;

use crate::spec::HostMatch;

#[derive(Default)]
pub struct CertificateIndex {
    exact: HashMap<Box<str>, Arc<CertifiedKey>>,
    /// Keyed by the suffix after `*.`.
    wildcard: HashMap<Box<str>, Arc<CertifiedKey>>,
    default: Option<Arc<CertifiedKey>>,
}

// === impl CertificateIndex ===

impl CertificateIndex {
    pub fn insert(&mut self, host: &HostMatch, key: Arc<CertifiedKey>) {
        match host {
            HostMatch::Exact(name) => self.exact.insert(name.as_str().into(), key),
            HostMatch::Wildcard(suffix) => self.wildcard.insert(suffix.as_str().into(), key),
            // X.509 wildcards cover one label: a deeper pattern never names a certificate.
            HostMatch::DeepWildcard(_) | HostMatch::Any => None,
        };
    }

    pub fn set_default(&mut self, key: Arc<CertifiedKey>) {
        self.default = Some(key);
    }

    /// The certificate for an SNI name (any case, no trailing dot expected), or the default.
    /// `None` when nothing fits and no default is configured: the caller's fallback applies.
    pub fn resolve(&self, server_name: Option<&str>) -> Option<&Arc<CertifiedKey>> {
        if let Some(name) = server_name {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            if let Some(key) = self.exact.get(name.as_str()) {
                return Some(key);
            }
            if let Some((_, suffix)) = name.split_once('.')
                && let Some(key) = self.wildcard.get(suffix)
            {
                return Some(key);
            }
        }
        self.default.as_ref()
    }
}
