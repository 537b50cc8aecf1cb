//! A pod serving HTTP/1.1 over TLS and in cleartext on one port, as a pod behind
//! `backend-protocol: AUTO_HTTP` does: each connection is told apart by its first byte (a TLS
//! handshake record starts with 22), and answers [`echo`] as `tls` or `cleartext`.

use std::{convert::Infallible, sync::Arc};

use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use rustls::{
    ServerConfig,
    pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject},
};
use tokio::{
    io::{AsyncRead, AsyncWrite},
    net::{TcpListener, TcpStream},
    task::JoinHandle,
};
use tokio_rustls::TlsAcceptor;

use super::{Leaf, echo};

/// TLS's handshake record type: the first byte a TLS client sends.
const HANDSHAKE: u8 = 22;

pub struct DualPod {
    port: u16,
    accept: JoinHandle<()>,
}

impl DualPod {
    /// Serves over TLS with `leaf`'s chain, and in cleartext, on one loopback port.
    pub async fn start(leaf: &Leaf) -> DualPod {
        let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(leaf.chain_pem.as_bytes())
            .collect::<Result<_, _>>()
            .expect("rcgen writes PEM certificates");
        let key = PrivateKeyDer::from_pem_slice(leaf.key_pem.as_bytes()).expect("rcgen writes a PEM key");
        let config = ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .expect("ring supports the default protocol versions")
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .expect("the leaf and its key match");
        let acceptor = TlsAcceptor::from(Arc::new(config));
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("binding a pod on loopback");
        let port = listener.local_addr().expect("a bound listener has an address").port();
        let accept = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve(stream, acceptor.clone()));
            }
        });
        DualPod { port, accept }
    }

    pub fn port(&self) -> u16 {
        self.port
    }
}

impl Drop for DualPod {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

async fn serve(stream: TcpStream, acceptor: TlsAcceptor) {
    let mut first = [0u8; 1];
    if !matches!(stream.peek(&mut first).await, Ok(1)) {
        return;
    }
    if first[0] != HANDSHAKE {
        return serve_as(stream, "cleartext").await;
    }
    if let Ok(stream) = acceptor.accept(stream).await {
        serve_as(stream, "tls").await;
    }
}

async fn serve_as<S: AsyncRead + AsyncWrite + Unpin + Send + 'static>(stream: S, name: &'static str) {
    let service = service_fn(move |req| async move { Ok::<_, Infallible>(echo(name.to_string(), req).await) });
    let http1 = hyper::server::conn::http1::Builder::new();
    drop(http1.serve_connection(TokioIo::new(stream), service).await);
}
