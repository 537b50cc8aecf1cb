//! Server certificates by SNI name, as the compile checked them (parses, key matches, covers its
//! hosts, not expired); the proxy loads them into its resolver when it publishes.

use std::{collections::BTreeMap, fmt};

use serde::Serialize;

use crate::HostMatch;

/// Names a certificate: `namespace/secret`.
pub type CertificateId = String;

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TlsSpec {
    /// Which certificate each host's handshake gets (exact or wildcard hosts only).
    pub hosts: BTreeMap<HostMatch, CertificateId>,
    /// For SNI names nothing covers and clients that send none (`--default-ssl-certificate`).
    pub default: Option<CertificateId>,
    /// Every certificate `hosts` or `default` names.
    pub certificates: BTreeMap<CertificateId, CertificateSpec>,
}

/// A certificate as PEM, checked by compile (parses, key matches, covers its hosts, not expired).
/// Equality is on the PEM, so a rotated Secret is a change and an untouched one is not.
#[derive(Clone, PartialEq, Eq, Serialize)]
pub struct CertificateSpec {
    #[serde(skip)]
    pub chain_pem: Vec<u8>,
    #[serde(skip)]
    pub key_pem: Vec<u8>,
    /// DNS names of the leaf, for `/routes`.
    pub names: Vec<String>,
    /// RFC 3339, for `/routes`.
    pub not_after: String,
}

// === impl CertificateSpec ===

impl CertificateSpec {
    pub fn new(chain_pem: Vec<u8>, key_pem: Vec<u8>, names: Vec<String>, not_after: String) -> Self {
        CertificateSpec {
            chain_pem,
            key_pem,
            names,
            not_after,
        }
    }
}

impl fmt::Debug for CertificateSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the key, not even in a debug log.
        f.debug_struct("CertificateSpec")
            .field("names", &self.names)
            .field("not_after", &self.not_after)
            .finish_non_exhaustive()
    }
}
