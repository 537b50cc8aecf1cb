//! An HTTPS pod that notes the SNI name each handshake carried and, given a CA, requires a
//! client certificate that CA issued (what `proxy-ssl-secret`'s keypair is for).

use std::{
    convert::Infallible,
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
};

use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use rustls::{
    RootCertStore, ServerConfig,
    pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject},
    server::WebPkiClientVerifier,
};
use tokio::{net::TcpListener, task::JoinHandle};
use tokio_rustls::TlsAcceptor;

use super::{Leaf, TestCa, echo};

pub struct CheckedPod {
    port: u16,
    /// The SNI name of each completed handshake (`None`: the client sent none).
    sni: Arc<Mutex<Vec<Option<String>>>>,
    connections: Arc<AtomicUsize>,
    accept: JoinHandle<()>,
}

impl CheckedPod {
    /// Serves `echo` as `checked` over TLS with `leaf`'s whole chain, HTTP/1.1.
    pub async fn start(leaf: &Leaf, client_ca: Option<&TestCa>) -> CheckedPod {
        let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(leaf.chain_pem.as_bytes())
            .collect::<Result<_, _>>()
            .expect("rcgen writes PEM certificates");
        let key = PrivateKeyDer::from_pem_slice(leaf.key_pem.as_bytes()).expect("rcgen writes a PEM key");
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ServerConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .expect("ring supports the default protocol versions");
        let builder = match client_ca {
            None => builder.with_no_client_auth(),
            Some(ca) => {
                let mut roots = RootCertStore::empty();
                roots.add(ca.der()).expect("the test CA is a valid root");
                let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                    .build()
                    .expect("a client verifier");
                builder.with_client_cert_verifier(verifier)
            }
        };
        let config = builder
            .with_single_cert(chain, key)
            .expect("the leaf and its key match");
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("binding a pod on loopback");
        let port = listener.local_addr().expect("a bound listener has an address").port();
        let (sni, connections) = (Arc::default(), Arc::new(AtomicUsize::new(0)));
        let accept = tokio::spawn(serve(
            listener,
            TlsAcceptor::from(Arc::new(config)),
            Arc::clone(&sni),
            Arc::clone(&connections),
        ));
        CheckedPod {
            port,
            sni,
            connections,
            accept,
        }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn sni(&self) -> Vec<Option<String>> {
        self.sni.lock().expect("not poisoned").clone()
    }

    /// TCP connections accepted, whether or not their handshake then succeeded.
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

impl Drop for CheckedPod {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

async fn serve(
    listener: TcpListener,
    acceptor: TlsAcceptor,
    sni: Arc<Mutex<Vec<Option<String>>>>,
    connections: Arc<AtomicUsize>,
) {
    while let Ok((stream, _)) = listener.accept().await {
        connections.fetch_add(1, Ordering::SeqCst);
        let (acceptor, sni) = (acceptor.clone(), Arc::clone(&sni));
        tokio::spawn(async move {
            // A refused handshake (no or a wrong client certificate) is what some tests want.
            let Ok(stream) = acceptor.accept(stream).await else {
                return;
            };
            let name = stream.get_ref().1.server_name().map(str::to_string);
            sni.lock().expect("not poisoned").push(name);
            let service = service_fn(|req| async move { Ok::<_, Infallible>(echo("checked".to_string(), req).await) });
            let http1 = hyper::server::conn::http1::Builder::new();
            drop(http1.serve_connection(TokioIo::new(stream), service).await);
        });
    }
}
