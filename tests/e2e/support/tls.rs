//! TLS for the end-to-end tests: a test CA and its certificates as `kubernetes.io/tls` Secrets,
//! clients that show which certificate shunt presented, and origins that speak HTTPS.
//!
//! ```text
//! TestCa ─issue─▶ Leaf ─mk_tls_secret─▶ manifests ─▶ shunt ◀─ClientHello(SNI)─ TlsClient ─▶ presented leaf
//!                   └─▶ TlsBackend (tokio-rustls + hyper HTTP/1.1) ◀─ shunt (appProtocol: https)
//! ```

use std::{
    convert::Infallible,
    net::SocketAddr,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use base64::{Engine as _, engine::general_purpose::STANDARD as BASE64};
use http::{Request, Version};
use hyper::{client::conn, service::service_fn};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose, date_time_ymd,
};
use rustls::{
    ClientConfig, DigitallySignedStruct, RootCertStore, ServerConfig, SignatureScheme,
    client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier},
    crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature},
    pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime, pem::PemObject},
};
use serde_json::{Value, json};
use tokio::{net::TcpListener, task::JoinHandle};
use tokio_rustls::{TlsAcceptor, TlsConnector, client::TlsStream};

use super::{Body, BoxError, Ingress, Manifest, REQUEST_TIMEOUT, Reply, collect, echo};

/// A certificate authority that exists for one test.
pub struct TestCa {
    issuer: CertifiedIssuer<'static, KeyPair>,
    /// The certificates above this one (an intermediate's issuers), PEM; empty for a root.
    above_pem: String,
}

/// A server certificate the [`TestCa`] issued, with its key.
pub struct Leaf {
    /// The leaf, then the CA: what `tls.crt` holds.
    pub chain_pem: String,
    pub key_pem: String,
    pub der: CertificateDer<'static>,
}

/// Makes TLS connections to shunt (or any server) with one rustls configuration.
pub struct TlsClient {
    config: ClientConfig,
}

/// One TLS connection carrying HTTP/1.1 or HTTP/2, whichever ALPN chose.
pub struct TlsConnection {
    /// The leaf certificate the server presented in this connection's handshake.
    pub leaf: CertificateDer<'static>,
    /// The ALPN protocol agreed on, if any.
    pub alpn: Option<Vec<u8>>,
    sender: Sender,
}

enum Sender {
    Http1(conn::http1::SendRequest<Body>),
    Http2(conn::http2::SendRequest<Body>),
}

/// An HTTPS origin answering [`echo`] over HTTP/1.1; stops accepting when dropped.
pub struct TlsBackend {
    pub addr: SocketAddr,
    /// TCP connections accepted, whether or not their handshake then succeeded.
    connections: Arc<AtomicUsize>,
    accept: JoinHandle<()>,
}

/// Accepts any certificate so a test can see which one the server chose; handshake signatures
/// are still checked, so the server did hold the key.
#[derive(Debug)]
struct AnyCertificate(Arc<CryptoProvider>);

/// The crypto the tests use on both sides: ring, as shunt does.
fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

// === impl TestCa ===

impl TestCa {
    pub fn new(name: &str) -> TestCa {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA parameters without names");
        params.distinguished_name.push(DnType::CommonName, name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let key = KeyPair::generate().expect("generating a CA key");
        TestCa {
            issuer: CertifiedIssuer::self_signed(params, key).expect("self-signing the test CA"),
            above_pem: String::new(),
        }
    }

    /// An intermediate CA this one issued; its leaves' chains carry it and those above it.
    pub fn intermediate(&self, name: &str) -> TestCa {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA parameters without names");
        params.distinguished_name.push(DnType::CommonName, name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let key = KeyPair::generate().expect("generating a CA key");
        TestCa {
            issuer: CertifiedIssuer::signed_by(params, key, &self.issuer).expect("signing an intermediate"),
            above_pem: self.pem() + &self.above_pem,
        }
    }

    pub fn der(&self) -> CertificateDer<'static> {
        self.issuer.der().clone()
    }

    pub fn pem(&self) -> String {
        self.issuer.pem()
    }

    /// A server certificate for `names` (wildcards allowed), valid from 1975 to 4096.
    pub fn issue(&self, names: &[&str]) -> Leaf {
        self.issue_with(Self::leaf_params(names))
    }

    /// A client certificate for `names` (extended key usage clientAuth).
    pub fn issue_client(&self, names: &[&str]) -> Leaf {
        let mut params = Self::leaf_params(names);
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        self.issue_with(params)
    }

    /// A server certificate for `names` that expired in 2021.
    pub fn issue_expired(&self, names: &[&str]) -> Leaf {
        let mut params = Self::leaf_params(names);
        (params.not_before, params.not_after) = (date_time_ymd(2020, 1, 1), date_time_ymd(2021, 1, 1));
        self.issue_with(params)
    }

    /// A client configuration that trusts this CA only and checks the server name.
    pub fn client(&self) -> TlsClient {
        let mut roots = RootCertStore::empty();
        roots
            .add(self.issuer.der().clone())
            .expect("the test CA is a valid root");
        let config = ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .expect("ring supports the default protocol versions")
            .with_root_certificates(roots)
            .with_no_client_auth();
        TlsClient::new(config)
    }

    fn leaf_params(names: &[&str]) -> CertificateParams {
        let names: Vec<String> = names.iter().map(|name| name.to_string()).collect();
        let mut params = CertificateParams::new(names.clone()).expect("valid DNS names");
        params
            .distinguished_name
            .push(DnType::CommonName, names.first().cloned().unwrap_or_default());
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        params
    }

    fn issue_with(&self, params: CertificateParams) -> Leaf {
        let key = KeyPair::generate().expect("generating a leaf key");
        let cert = params.signed_by(&key, &self.issuer).expect("signing a leaf");
        Leaf {
            chain_pem: cert.pem() + &self.pem() + &self.above_pem,
            key_pem: key.serialize_pem(),
            der: cert.der().clone(),
        }
    }
}

// === impl Leaf ===

impl Leaf {
    /// The DNS names of the leaf, as [`leaf_names`] reads them.
    pub fn names(&self) -> Vec<String> {
        leaf_names(&self.der)
    }
}

/// The DNS subjectAltNames of a DER certificate, for messages and for certificates a test did
/// not make (shunt's self-signed fallback).
pub fn leaf_names(der: &CertificateDer<'_>) -> Vec<String> {
    let (_, parsed) = x509_parser::parse_x509_certificate(der).expect("the server sent a parseable certificate");
    let san = parsed.subject_alternative_name().expect("a well-formed subjectAltName");
    san.into_iter()
        .flat_map(|san| san.value.general_names.iter())
        .filter_map(|name| match name {
            x509_parser::extensions::GeneralName::DNSName(dns) => Some(dns.to_string()),
            _ => None,
        })
        .collect()
}

/// A `kubernetes.io/tls` Secret holding `leaf` in `data`, base64-encoded, as kubectl writes it.
pub fn mk_tls_secret(namespace: &str, name: &str, leaf: &Leaf) -> Value {
    let data = json!({"tls.crt": BASE64.encode(&leaf.chain_pem), "tls.key": BASE64.encode(&leaf.key_pem)});
    json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": namespace},
        "type": "kubernetes.io/tls",
        "data": data,
    })
}

/// A Secret of `type_` with `string_data` in plain text, as people write them by hand.
pub fn mk_string_secret(namespace: &str, name: &str, type_: &str, string_data: &[(&str, &str)]) -> Value {
    let string_data: serde_json::Map<String, Value> = string_data
        .iter()
        .map(|(key, value)| (key.to_string(), json!(value)))
        .collect();
    json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": namespace},
        "type": type_,
        "stringData": string_data,
    })
}

/// `ingress` with `spec.tls`, one entry per `(hosts, secretName)`; empty hosts are left out,
/// which means the hosts of the Ingress's rules.
pub fn with_tls(ingress: &Ingress, entries: &[(&[&str], &str)]) -> Value {
    let mut document = ingress.documents().remove(0);
    let tls: Vec<Value> = entries
        .iter()
        .map(|(hosts, secret)| {
            let mut entry = json!({"secretName": secret});
            if !hosts.is_empty() {
                entry["hosts"] = json!(hosts);
            }
            entry
        })
        .collect();
    document["spec"]["tls"] = json!(tls);
    document
}

// === impl TlsClient ===

impl TlsClient {
    /// Accepts whatever certificate the server presents, to find out which one that is.
    pub fn any_certificate() -> TlsClient {
        let config = ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .expect("ring supports the default protocol versions")
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider())))
            .with_no_client_auth();
        TlsClient::new(config)
    }

    /// Offers HTTP/1.1 over ALPN unless [`TlsClient::alpn`] says otherwise.
    fn new(mut config: ClientConfig) -> TlsClient {
        // Each handshake must be a full one: a resumed session presents no certificate, and
        // rustls would report the one from the session it resumed.
        config.resumption = rustls::client::Resumption::disabled();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        TlsClient { config }
    }

    /// The ALPN protocols to offer, in order of preference.
    pub fn alpn(mut self, protocols: &[&[u8]]) -> TlsClient {
        self.config.alpn_protocols = protocols.iter().map(|protocol| protocol.to_vec()).collect();
        self
    }

    /// A TLS handshake with `addr`, sending `sni` as the server name; `None` sends no SNI (the
    /// client connects by IP address, as a client without SNI support looks to the server).
    pub async fn handshake(
        &self,
        addr: SocketAddr,
        sni: Option<&str>,
    ) -> Result<TlsStream<tokio::net::TcpStream>, BoxError> {
        let server_name = match sni {
            Some(name) => ServerName::try_from(name.to_string())?,
            None => ServerName::IpAddress(addr.ip().into()),
        };
        let connector = TlsConnector::from(Arc::new(self.config.clone()));
        let tcp = tokio::net::TcpStream::connect(addr).await?;
        Ok(tokio::time::timeout(REQUEST_TIMEOUT, connector.connect(server_name, tcp)).await??)
    }

    /// The leaf certificate `addr` presents for `sni`; panics when the handshake fails.
    pub async fn presented(&self, addr: SocketAddr, sni: Option<&str>) -> CertificateDer<'static> {
        let stream = self
            .handshake(addr, sni)
            .await
            .unwrap_or_else(|error| panic!("TLS handshake for {sni:?}: {error}"));
        peer_leaf(&stream)
    }

    /// A TLS connection speaking HTTP/2 when ALPN agreed on `h2`, else HTTP/1.1.
    pub async fn connect(&self, addr: SocketAddr, sni: Option<&str>) -> Result<TlsConnection, BoxError> {
        let stream = self.handshake(addr, sni).await?;
        let (leaf, alpn) = (
            peer_leaf(&stream),
            stream.get_ref().1.alpn_protocol().map(<[u8]>::to_vec),
        );
        let io = TokioIo::new(stream);
        let sender = if alpn.as_deref() == Some(b"h2") {
            let (sender, connection) = conn::http2::handshake(TokioExecutor::new(), io).await?;
            tokio::spawn(async move { drop(connection.await) });
            Sender::Http2(sender)
        } else {
            let (sender, connection) = conn::http1::handshake(io).await?;
            tokio::spawn(async move { drop(connection.await) });
            Sender::Http1(sender)
        };
        Ok(TlsConnection { leaf, alpn, sender })
    }

    /// Sends `req` over a new connection for `sni` and collects the answer; panics on failure.
    pub async fn send(&self, addr: SocketAddr, sni: Option<&str>, req: Request<Body>) -> Reply {
        let what = format!(
            "{} {} (SNI {sni:?}, Host {:?})",
            req.method(),
            req.uri(),
            req.headers().get("host")
        );
        let sent = async { self.connect(addr, sni).await?.send(req).await };
        sent.await
            .unwrap_or_else(|error: BoxError| panic!("{what} over TLS failed: {error}"))
    }
}

fn peer_leaf(stream: &TlsStream<tokio::net::TcpStream>) -> CertificateDer<'static> {
    let chain = stream
        .get_ref()
        .1
        .peer_certificates()
        .expect("a full handshake shows the server's chain");
    chain.first().expect("the chain starts with the leaf").clone()
}

// === impl TlsConnection ===

impl TlsConnection {
    /// Sends one request on this connection (never a new one) and collects the answer. Over
    /// HTTP/2 the URI must be absolute: its authority becomes `:authority`.
    pub async fn send(&mut self, mut req: Request<Body>) -> Result<Reply, BoxError> {
        let response = match &mut self.sender {
            Sender::Http1(sender) => tokio::time::timeout(REQUEST_TIMEOUT, sender.send_request(req)).await??,
            Sender::Http2(sender) => {
                *req.version_mut() = Version::HTTP_2;
                tokio::time::timeout(REQUEST_TIMEOUT, sender.send_request(req)).await??
            }
        };
        collect(response).await
    }
}

// === impl TlsBackend ===

impl TlsBackend {
    /// Serves [`echo`] as `name` over TLS with `leaf`, HTTP/1.1 only.
    pub async fn start(name: &str, leaf: &Leaf) -> TlsBackend {
        TlsBackend::start_with(name, leaf, b"http/1.1").await
    }

    /// Serves [`echo`] as `name` over TLS with `leaf`, HTTP/2 only (ALPN `h2`), as gRPC pods do.
    pub async fn start_h2(name: &str, leaf: &Leaf) -> TlsBackend {
        TlsBackend::start_with(name, leaf, b"h2").await
    }

    /// Accepts TLS with `leaf` agreeing no ALPN protocol, then reads and never answers: a pod
    /// that a client must not wait on.
    pub async fn start_mute(leaf: &Leaf) -> TlsBackend {
        TlsBackend::start_with("mute", leaf, b"").await
    }

    async fn start_with(name: &str, leaf: &Leaf, alpn: &[u8]) -> TlsBackend {
        let chain = vec![leaf.der.clone()];
        let key = PrivateKeyDer::from_pem_slice(leaf.key_pem.as_bytes()).expect("rcgen writes a PEM key");
        let mut config = ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .expect("ring supports the default protocol versions")
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .expect("the leaf and its key match");
        config.alpn_protocols = if alpn.is_empty() { vec![] } else { vec![alpn.to_vec()] };
        let acceptor = TlsAcceptor::from(Arc::new(config));
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("binding an HTTPS backend on loopback");
        let addr = listener.local_addr().expect("a bound listener has an address");
        let connections = Arc::new(AtomicUsize::new(0));
        let accept = tokio::spawn(serve_tls(
            listener,
            acceptor,
            (name.to_string(), alpn.to_vec()),
            connections.clone(),
        ));
        TlsBackend {
            addr,
            connections,
            accept,
        }
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// TCP connections accepted so far: tells "refused our certificate" from "never connected".
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

impl Drop for TlsBackend {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

async fn serve_tls(
    listener: TcpListener,
    acceptor: TlsAcceptor,
    (name, alpn): (String, Vec<u8>),
    connections: Arc<AtomicUsize>,
) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            // Out of file descriptors, say: back off instead of spinning.
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        connections.fetch_add(1, Ordering::SeqCst);
        let (acceptor, name, alpn) = (acceptor.clone(), name.clone(), alpn.clone());
        // A failed handshake (shunt refusing our certificate) is what some tests want: ignore it.
        tokio::spawn(async move {
            let Ok(stream) = acceptor.accept(stream).await else {
                return;
            };
            let service = service_fn(move |req| {
                let name = name.clone();
                async move { Ok::<_, Infallible>(echo(name, req).await) }
            });
            // By what the pod serves, not what was agreed: nginx's TLS client offers no ALPN.
            match alpn.as_slice() {
                b"" => drop(tokio::io::copy(&mut { stream }, &mut tokio::io::sink()).await),
                b"h2" => {
                    let builder = hyper::server::conn::http2::Builder::new(hyper_util::rt::TokioExecutor::new());
                    drop(builder.serve_connection(TokioIo::new(stream), service).await);
                }
                _ => {
                    let http1 = hyper::server::conn::http1::Builder::new();
                    drop(http1.serve_connection(TokioIo::new(stream), service).await);
                }
            }
        });
    }
}

// === impl AnyCertificate ===

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
