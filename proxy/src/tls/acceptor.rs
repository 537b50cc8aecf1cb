//! The rustls server side: a certificate resolver over the live table, ALPN `h2` and
//! `http/1.1`, and the self-signed certificate served when nothing else fits.

use std::{fmt, sync::Arc};

use rustls::{
    ServerConfig,
    server::{ClientHello, ResolvesServerCert},
    sign::CertifiedKey,
};
use tokio_rustls::TlsAcceptor;

use super::certificate::{LoadedCertificate, provider};
use crate::publish::RouteReader;

/// The name on the fallback certificate: `.invalid` can never belong to a real host
/// (RFC 6761), so shunt never hands out a certificate that looks like someone else's.
pub const FALLBACK_NAME: &str = "shunt-default.invalid";

/// Picks a certificate from whatever table is live at handshake time.
struct TableResolver {
    routes: RouteReader,
    fallback: Arc<CertifiedKey>,
}

impl ResolvesServerCert for TableResolver {
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        let table = self.routes.load();
        let chosen = table
            .certificates()
            .resolve(hello.server_name())
            .unwrap_or(&self.fallback);
        Some(chosen.clone())
    }
}

impl fmt::Debug for TableResolver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TableResolver").finish_non_exhaustive()
    }
}

/// TLS 1.2 and 1.3 with rustls' safe defaults; certificates from `routes` by SNI.
pub fn acceptor(routes: RouteReader, fallback: Arc<CertifiedKey>) -> TlsAcceptor {
    let mut config = ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .expect("the ring provider supports the default protocol versions")
        .with_no_client_auth()
        .with_cert_resolver(Arc::new(TableResolver { routes, fallback }));
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
