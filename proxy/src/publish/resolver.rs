//! The certificate each TLS handshake gets, from whatever table is live at that moment.

use std::{fmt, sync::Arc};

use rustls::{
    server::{ClientHello, ResolvesServerCert},
    sign::CertifiedKey,
};

use super::RouteReader;

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

// === impl RouteReader ===

impl RouteReader {
    /// Certificates by SNI from the live table; `fallback` for names nothing covers.
    pub(crate) fn certificate_resolver(&self, fallback: Arc<CertifiedKey>) -> Arc<dyn ResolvesServerCert> {
        Arc::new(TableResolver {
            routes: self.clone(),
            fallback,
        })
    }
}
