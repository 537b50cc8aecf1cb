//! TLS: server certificates chosen by SNI from the live table, and TLS to HTTPS backends.
//!
//! ```text
//! ClientHello(SNI) ─▶ TableResolver ─load─▶ RouteTable::certificates() ─▶ exact │ *.wildcard │ default
//!                                                                            └ none: self-signed fallback
//! ```
//! SNI picks the certificate; the Host header still picks the route.

mod acceptor;
mod certificate;
mod index;
mod pod;
mod upstream;

pub use rustls::RootCertStore;
pub use tokio_rustls::TlsAcceptor;

pub use self::{
    acceptor::{acceptor, self_signed},
    certificate::LoadedCertificate,
    index::CertificateIndex,
    pod::{PodTlsError, dns_name, pod_client_config, trusted_from_pem},
    upstream::{client_config, roots_from_pem},
};
