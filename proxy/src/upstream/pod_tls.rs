//! A backend's own upstream TLS client ([`UpstreamTls`]), built once per distinct setting when
//! the table is published and shared by every worker; its id keeps its connections apart in
//! the pools (a connection verified under one setting is never reused under another).

use std::sync::{
    Arc,
    atomic::{AtomicU64, Ordering},
};

use rustls::pki_types::ServerName;
use tokio_rustls::TlsConnector;
use tracing::warn;

use crate::spec::UpstreamTls;

/// Pool-key ids: 0 is cleartext, 1 the process's plain HTTPS client; settings count from 2.
static NEXT_ID: AtomicU64 = AtomicU64::new(2);

pub struct PodTls {
    pub id: u64,
    /// `None` when the setting could not be built: every dial fails (502), never unverified.
    pub connector: Option<TlsConnector>,
    /// Sent as SNI; `None`: the pod's IP is dialed without SNI.
    pub sni: Option<ServerName<'static>>,
    pub spec: Arc<UpstreamTls>,
}

impl PodTls {
    /// Builds the client for `spec`, offering HTTP/1.1 by ALPN as the plain HTTPS client does.
    pub fn new(backend: &str, spec: Arc<UpstreamTls>) -> Self {
        let sni = spec.sni.as_deref().map(crate::tls::dns_name).transpose();
        let built = crate::tls::pod_client_config(&spec, b"http/1.1").and_then(|config| Ok((config, sni?)));
        let (connector, sni) = match built {
            Ok((config, sni)) => (Some(TlsConnector::from(Arc::new(config))), sni),
            Err(error) => {
                warn!(%error, backend, "Upstream TLS setting unusable; its pods answer 502");
                (None, None)
            }
        };
        PodTls {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            connector,
            sni,
            spec,
        }
    }
}

/// The connector's stand-in when a setting could not be built.
#[derive(Debug, thiserror::Error)]
#[error("the backend's upstream TLS setting is unusable")]
pub struct UnusableTls;
