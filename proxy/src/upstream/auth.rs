//! Connections to external auth services (ingress-nginx's `auth-url`): HTTP/1.1, cleartext or
//! TLS naming the URL's host as SNI (the auth location's `proxy_ssl_server_name on`; the
//! certificate is not checked, as `proxy_ssl_verify` is off), pooled per worker apart from the
//! pods' connections and bounded alike (`--upstream-max-connections` per address).

use std::{net::SocketAddr, sync::Arc, time::Duration};

use http::Response;
use rustls::pki_types::ServerName;

use super::{
    BoxError, Outgoing, UpstreamClients, UpstreamError, connect,
    h1::{self, Body, H1Error, Hold, Http1, Stream, WriteAt},
    pool::{Checkout, Pooled},
};
use crate::body::RequestBody;

/// An auth service's address and, over TLS, the name its handshake carries.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AuthKey {
    pub addr: SocketAddr,
    /// `Some` for `https`: the URL's host.
    pub tls: Option<Arc<str>>,
}

/// A pooled connection to an auth service, held by the exchange and then by the answer's body.
pub type AuthLease = Pooled<AuthKey, Http1>;

impl Hold for AuthLease {
    fn detach(self) -> Http1 {
        Pooled::detach(self)
    }
}

impl UpstreamClients {
    /// Sends `head` without a body to the auth service at `key`; dialing (TCP, TLS) and waiting
    /// for a pooled connection within `connect_timeout`.
    pub async fn send_auth(
        &self,
        key: &AuthKey,
        head: &Outgoing<'_>,
        connect_timeout: Duration,
    ) -> Result<Response<Body<AuthLease>>, UpstreamError> {
        let conn = match tokio::time::timeout(connect_timeout, self.auth.checkout(key)).await {
            Ok(Ok(Checkout::Idle(conn))) => conn,
            Ok(Ok(Checkout::Connect(permit))) => {
                let dial = Box::pin(dial(key, &self.tls));
                let stream = match tokio::time::timeout(connect_timeout, dial).await {
                    Ok(Ok(stream)) => stream,
                    Ok(Err(error)) => return Err(UpstreamError::Connect(error)),
                    Err(_) => return Err(UpstreamError::connect_timeout()),
                };
                self.auth.pooled(key.clone(), Http1::new(stream, Box::new(permit)))
            }
            Ok(Err(timeout)) => return Err(UpstreamError::PoolTimeout(timeout)),
            Err(_) => return Err(UpstreamError::connect_timeout()),
        };
        let response = h1::send(conn, head, RequestBody::Empty, WriteAt::Once, None).await;
        response.map_err(|error: H1Error| UpstreamError::Request(error.into()))
    }
}

async fn dial(key: &AuthKey, connector: &tokio_rustls::TlsConnector) -> Result<Stream, BoxError> {
    let stream = connect::tcp(key.addr).await?;
    let Some(name) = &key.tls else {
        return Ok(Stream::Tcp(stream));
    };
    // A name rustls cannot carry (an IP address) goes without SNI, as nginx sends none for one.
    let server_name = match ServerName::try_from(name.to_string()) {
        Ok(ServerName::DnsName(dns)) => ServerName::DnsName(dns),
        _ => ServerName::from(key.addr.ip()),
    };
    let stream = connector.connect(server_name, stream).await?;
    Ok(Stream::Tls(Box::new(stream)))
}
