//! HTTP/2 to pods, cleartext (h2c) or over TLS: one multiplexed connection per endpoint.
//!
//! Kept apart from the HTTP/1 pool on purpose. HTTP/2 sends the request URI's authority as
//! `:authority`, which backends treat as the Host; here the URI keeps the caller's host while
//! the connection goes to the pod address, so a backend sees the name it was asked for.
//!
//! A pod that sends GOAWAY (a rollout, a graceful restart) keeps its in-flight streams, but
//! new ones fail on that connection: the first stream to fail that way drops the connection
//! from the map, and the next request opens a new one.

use std::{
    collections::HashMap,
    net::SocketAddr,
    sync::{
        Arc, Mutex, MutexGuard,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use http::{Request, Response};
use hyper::{body::Incoming, client::conn::http2::SendRequest};
use tokio_rustls::TlsConnector;

use super::{UpstreamError, connect, is_going_away};
use crate::{body::RequestBody, metrics::UpstreamStats, spec::UpstreamProtocol};

#[derive(Clone, Default)]
pub struct H2Connections {
    /// By pod address and whether the connection speaks TLS.
    connections: Arc<Mutex<HashMap<(SocketAddr, bool), Connection>>>,
    next_id: Arc<AtomicU64>,
}

#[derive(Clone)]
struct Connection {
    /// Tells this connection from its successor, so a late failure never drops a newer one.
    id: u64,
    sender: SendRequest<RequestBody>,
}

impl H2Connections {
    /// Sends `req` on the pod's connection (over TLS with `tls`), opening it within
    /// `connect_timeout` if needed.
    pub async fn send(
        &self,
        addr: SocketAddr,
        tls: Option<&TlsConnector>,
        stats: &UpstreamStats,
        req: Request<RequestBody>,
        connect_timeout: Duration,
    ) -> Result<Response<Incoming>, UpstreamError> {
        let key = (addr, tls.is_some());
        let Connection { id, mut sender } = self.connection(key, tls, stats, connect_timeout).await?;
        let sent = async {
            sender.ready().await?;
            sender.send_request(req).await
        };
        sent.await.map_err(|error| {
            if is_going_away(&error) {
                self.forget(key, id);
            }
            UpstreamError::Request(error.into())
        })
    }

    async fn connection(
        &self,
        key: (SocketAddr, bool),
        tls: Option<&TlsConnector>,
        stats: &UpstreamStats,
        connect_timeout: Duration,
    ) -> Result<Connection, UpstreamError> {
        if let Some(connection) = self.lock().get(&key).filter(|c| !c.sender.is_closed()).cloned() {
            stats.connection_reused();
            return Ok(connection);
        }
        let open = connect::OpenConnection::new(stats.connections());
        // Boxed: dialing is rare, and its future would otherwise make every request's larger.
        let dial = Box::pin(connect::h2(key.0, tls, open));
        let sender = match tokio::time::timeout(connect_timeout, dial).await {
            Ok(Ok(sender)) => sender,
            Ok(Err(error)) => return Err(UpstreamError::Connect(error)),
            Err(_) => return Err(UpstreamError::connect_timeout()),
        };
        stats.connection_opened(if tls.is_some() {
            UpstreamProtocol::H2Tls
        } else {
            UpstreamProtocol::H2c
        });
        let connection = Connection {
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            sender,
        };
        let mut connections = self.lock();
        // Connections to pods that went away close on their own; forget them here.
        connections.retain(|_, c| !c.sender.is_closed());
        connections.insert(key, connection.clone());
        Ok(connection)
    }

    fn forget(&self, key: (SocketAddr, bool), id: u64) {
        let mut connections = self.lock();
        if connections.get(&key).is_some_and(|c| c.id == id) {
            connections.remove(&key);
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<(SocketAddr, bool), Connection>> {
        self.connections.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
