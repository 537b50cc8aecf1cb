//! A server certificate from PEM (as a `kubernetes.io/tls` Secret holds it): the chain, a key
//! that matches its leaf, the names the leaf covers and when it is valid.

use std::sync::Arc;

use rustls::{
    crypto::CryptoProvider,
    pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject},
    sign::CertifiedKey,
};

use crate::spec::HostMatch;

/// A parsed, usable certificate.
#[derive(Debug, Clone)]
pub struct LoadedCertificate {
    pub key: Arc<CertifiedKey>,
    /// Lowercase DNS names from the leaf's subjectAltName (or its CN when it has none),
    /// wildcards as `*.example.com`.
    pub names: Vec<String>,
    /// Unix seconds.
    pub not_before: i64,
    /// Unix seconds.
    pub not_after: i64,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CertificateError {
    #[error("tls.crt holds no PEM certificate")]
    NoCertificate,
    #[error("tls.crt is not valid PEM: {0}")]
    CertificatePem(String),
    #[error("tls.key holds no PEM private key (PKCS#8, PKCS#1 or SEC1)")]
    NoKey,
    #[error("tls.key is unusable: {0}")]
    Key(String),
    #[error("tls.key does not match the certificate")]
    KeyMismatch,
    #[error("the leaf certificate cannot be parsed: {0}")]
    Leaf(String),
}

/// The crypto shunt uses everywhere: ring, already in the tree through kube.
pub fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

// === impl LoadedCertificate ===

impl LoadedCertificate {
    /// Parses `chain_pem` (leaf first) and `key_pem`, checking that the key belongs to the leaf.
    pub fn from_pem(chain_pem: &[u8], key_pem: &[u8]) -> Result<Self, CertificateError> {
        let chain = CertificateDer::pem_slice_iter(chain_pem)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|error| CertificateError::CertificatePem(error.to_string()))?;
        let leaf = chain.first().ok_or(CertificateError::NoCertificate)?;
        let (names, not_before, not_after) = leaf_facts(leaf)?;
        let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(|error| match error {
            rustls::pki_types::pem::Error::NoItemsFound => CertificateError::NoKey,
            other => CertificateError::Key(other.to_string()),
        })?;
        let key = CertifiedKey::from_der(chain, key, &provider()).map_err(|error| match error {
            rustls::Error::InconsistentKeys(_) => CertificateError::KeyMismatch,
            other => CertificateError::Key(other.to_string()),
        })?;
        Ok(LoadedCertificate {
            key: Arc::new(key),
            names,
            not_before,
            not_after,
        })
    }

    /// Whether the leaf is valid for `host` by the usual rules: a `*.` name covers exactly one
    /// label, and a wildcard host needs a wildcard name.
    pub fn covers(&self, host: &HostMatch) -> bool {
        self.names
            .iter()
            .any(|name| HostMatch::from_rule_host(name).covers(host))
    }
}

/// Names and validity of the leaf.
fn leaf_facts(leaf: &CertificateDer<'_>) -> Result<(Vec<String>, i64, i64), CertificateError> {
    let (_, parsed) =
        x509_parser::parse_x509_certificate(leaf).map_err(|error| CertificateError::Leaf(error.to_string()))?;
    let mut names: Vec<String> = match parsed.subject_alternative_name() {
        Ok(Some(san)) => san
            .value
            .general_names
            .iter()
            .filter_map(|name| match name {
                x509_parser::extensions::GeneralName::DNSName(dns) => {
                    Some(dns.trim_end_matches('.').to_ascii_lowercase())
                }
                _ => None,
            })
            .collect(),
        Ok(None) => Vec::new(),
        Err(error) => return Err(CertificateError::Leaf(error.to_string())),
    };
    if names.is_empty() {
        // Legacy certificates without subjectAltName: clients still match the CN.
        names.extend(
            parsed
                .subject()
                .iter_common_name()
                .filter_map(|cn| cn.as_str().ok())
                .map(str::to_ascii_lowercase),
        );
    }
    let validity = parsed.validity();
    Ok((names, validity.not_before.timestamp(), validity.not_after.timestamp()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mk_cert(names: &[&str]) -> (String, String) {
        let cert = rcgen::generate_simple_self_signed(names.iter().map(|n| n.to_string()).collect::<Vec<_>>())
            .expect("rcgen makes a certificate");
        (cert.cert.pem(), cert.signing_key.serialize_pem())
    }

    #[test]
    fn a_matching_chain_and_key_load_with_their_names() {
        let (chain, key) = mk_cert(&["shop.example.com", "*.Blog.example.com"]);
        let loaded = LoadedCertificate::from_pem(chain.as_bytes(), key.as_bytes()).expect("loads");
        assert_eq!(loaded.names, ["shop.example.com", "*.blog.example.com"]);
        assert!(loaded.not_before < loaded.not_after);
    }

    #[test]
    fn names_cover_hosts_by_the_single_label_rule() {
        let (chain, key) = mk_cert(&["shop.example.com", "*.blog.example.com"]);
        let loaded = LoadedCertificate::from_pem(chain.as_bytes(), key.as_bytes()).expect("loads");
        let exact = |h: &str| HostMatch::Exact(h.to_string());
        assert!(loaded.covers(&exact("shop.example.com")));
        assert!(loaded.covers(&exact("www.blog.example.com")));
        assert!(loaded.covers(&HostMatch::Wildcard("blog.example.com".into())));
        assert!(!loaded.covers(&exact("a.b.blog.example.com")));
        assert!(!loaded.covers(&exact("blog.example.com")));
        assert!(!loaded.covers(&exact("other.example.com")));
        assert!(!loaded.covers(&HostMatch::Wildcard("example.com".into())));
        assert!(!loaded.covers(&HostMatch::Any));
    }

    #[test]
    fn a_key_from_another_certificate_is_rejected() {
        let (chain, _) = mk_cert(&["a.example.com"]);
        let (_, other_key) = mk_cert(&["b.example.com"]);
        let error = LoadedCertificate::from_pem(chain.as_bytes(), other_key.as_bytes()).unwrap_err();
        assert_eq!(error, CertificateError::KeyMismatch);
    }

    #[test]
    fn garbage_is_named_for_what_is_wrong() {
        let (chain, key) = mk_cert(&["a.example.com"]);
        assert_eq!(
            LoadedCertificate::from_pem(b"", key.as_bytes()).unwrap_err(),
            CertificateError::NoCertificate
        );
        assert_eq!(
            LoadedCertificate::from_pem(chain.as_bytes(), b"nope").unwrap_err(),
            CertificateError::NoKey
        );
        let truncated = &chain.as_bytes()[..chain.len() / 2];
        assert!(LoadedCertificate::from_pem(truncated, key.as_bytes()).is_err());
    }
}
