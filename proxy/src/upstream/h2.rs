//! HTTP/2 cleartext (h2c) to pods: one multiplexed connection per endpoint.
//!
//! Kept apart from the pooled HTTP/1 client on purpose. HTTP/2 sends the request URI's authority
//! as `:authority`, which backends treat as the Host; here the URI keeps the caller's host while
//! the connection goes to the pod address, so a backend sees the name it was asked for.

use std::{
    collections::HashMap,
    net::SocketAddr,
    sync::{Arc, Mutex},
    time::Duration,
};

use http::{Request, Response};
use hyper::{body::Incoming, client::conn::http2::SendRequest};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio::net::TcpStream;
use tracing::debug;

use super::UpstreamError;
use crate::body::RequestBody;

#[derive(Clone)]
pub struct H2Connections {
    connections: Arc<Mutex<HashMap<SocketAddr, SendRequest<RequestBody>>>>,
    connect_timeout: Duration,
}

impl H2Connections {
    pub fn new(connect_timeout: Duration) -> Self {
        H2Connections {
            connections: Default::default(),
            connect_timeout,
        }
    }

    pub async fn send(&self, addr: SocketAddr, req: Request<RequestBody>) -> Result<Response<Incoming>, UpstreamError> {
        let mut sender = self.sender(addr).await?;
        sender.ready().await.map_err(|e| UpstreamError::Request(e.into()))?;
        sender
            .send_request(req)
            .await
            .map_err(|e| UpstreamError::Request(e.into()))
    }

    async fn sender(&self, addr: SocketAddr) -> Result<SendRequest<RequestBody>, UpstreamError> {
        if let Some(sender) = self.lock().get(&addr).filter(|s| !s.is_closed()).cloned() {
            return Ok(sender);
        }
        let connect = TcpStream::connect(addr);
        let stream = match tokio::time::timeout(self.connect_timeout, connect).await {
            Ok(Ok(stream)) => stream,
            Ok(Err(error)) => return Err(UpstreamError::Connect(error.into())),
            Err(_) => {
                let timeout = std::io::Error::new(std::io::ErrorKind::TimedOut, "connect timed out");
                return Err(UpstreamError::Connect(timeout.into()));
            }
        };
        let _ = stream.set_nodelay(true);
        let (sender, connection) = hyper::client::conn::http2::Builder::new(TokioExecutor::new())
            .timer(TokioTimer::new())
            .keep_alive_interval(Duration::from_secs(20))
            .keep_alive_timeout(Duration::from_secs(10))
            .handshake(TokioIo::new(stream))
            .await
            .map_err(|e| UpstreamError::Connect(e.into()))?;
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                debug!(%error, endpoint = %addr, "h2c connection closed");
            }
        });
        let mut connections = self.lock();
        // Connections to pods that went away close on their own; forget them here.
        connections.retain(|_, sender| !sender.is_closed());
        connections.insert(addr, sender.clone());
        Ok(sender)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<SocketAddr, SendRequest<RequestBody>>> {
        self.connections.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
