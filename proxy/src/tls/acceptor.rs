//! The rustls server side: certificates from a resolver (the live table's), ALPN `h2` and
//! `http/1.1`, and the self-signed certificate served when nothing else fits.

use std::sync::Arc;

use rustls::{ServerConfig, server::ResolvesServerCert, sign::CertifiedKey};
use tokio_rustls::TlsAcceptor;

use super::certificate::{LoadedCertificate, provider};

/// The name on the fallback certificate: `.invalid` can never belong to a real host
/// (RFC 6761), so shunt never hands out a certificate that looks like someone else's.
pub const FALLBACK_NAME: &str = "shunt-default.invalid";

/// TLS 1.2 and 1.3 with rustls' safe defaults; certificates by SNI from `certificates` (the
/// live table's: [`crate::publish::RouteReader::certificate_resolver`]).
pub fn acceptor(certificates: Arc<dyn ResolvesServerCert>) -> TlsAcceptor {
    let mut config = ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .expect("the ring provider supports the default protocol versions")
        .with_no_client_auth()
        .with_cert_resolver(certificates);
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    TlsAcceptor::from(Arc::new(config))
}

/// A fresh self-signed certificate for [`FALLBACK_NAME`], made at start.
pub fn self_signed() -> Arc<CertifiedKey> {
    let made = rcgen::generate_simple_self_signed(vec![FALLBACK_NAME.to_string()])
        .expect("generating a self-signed certificate with ring does not fail");
    let loaded = LoadedCertificate::from_pem(made.cert.pem().as_bytes(), made.signing_key.serialize_pem().as_bytes())
        .expect("rcgen's own certificate and key load");
    loaded.key
}
