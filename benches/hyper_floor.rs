//! The floor under shunt's serving cost: a stock hyper server (hyper-util's auto builder, tokio's
//! executor, one thread) that answers every request itself, as the pod does, with no routing and
//! no upstream. `benches/instructions.sh` runs it as the proxy `hyper` (`PROXIES=hyper`), so its
//! instructions per request are what hyper, h2 and rustls cost on the same harness; shunt's
//! figure minus this one is shunt's own part (routing, the upstream exchange, header work).
//!
//! With a fifth address it also serves h2c there with the h2 crate alone: one task per connection
//! answering its streams as they are accepted, no task per stream, no hyper. That is the least
//! any server built on h2 spends, the ceiling `benches/compare.sh` reports as `h2-floor`.
//!
//!   cargo build --release -p shunt-proxy --example hyper-floor
//!   target/release/examples/hyper-floor HTTP_ADDR HTTPS_ADDR CERT_PEM KEY_PEM [H2C_ADDR]  # until SIGTERM

use std::{convert::Infallible, net::SocketAddr, sync::Arc};

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Request, Response, body::Incoming, service::service_fn};
use hyper_util::{
    rt::{TokioExecutor, TokioIo},
    server::conn::auto::Builder,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

const BODY: &[u8] = b"hello from the pod\n";

async fn answer(_request: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let mut response = Response::new(Full::new(Bytes::from_static(BODY)));
    let content_type = hyper::header::HeaderValue::from_static("text/plain");
    response.headers_mut().insert(hyper::header::CONTENT_TYPE, content_type);
    Ok(response)
}

fn acceptor(cert: &str, key: &str) -> TlsAcceptor {
    let certs = CertificateDer::pem_file_iter(cert)
        .expect("reading the certificate")
        .collect::<Result<Vec<_>, _>>()
        .expect("a PEM certificate");
    let key = PrivateKeyDer::from_pem_file(key).expect("a PEM key");
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .expect("the certificate and its key");
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    TlsAcceptor::from(Arc::new(config))
}

/// Serves `listener`'s connections, over TLS when `tls` is set.
async fn serve(listener: TcpListener, tls: Option<TlsAcceptor>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let _ = stream.set_nodelay(true);
        let tls = tls.clone();
        tokio::spawn(async move {
            let builder = Builder::new(TokioExecutor::new());
            let service = service_fn(answer);
            let _ = match tls {
                None => builder.serve_connection(TokioIo::new(stream), service).await,
                Some(tls) => match tls.accept(stream).await {
                    Ok(stream) => builder.serve_connection(TokioIo::new(stream), service).await,
                    Err(_) => return,
                },
            };
        });
    }
}

/// Serves h2c (prior knowledge) with the h2 crate alone: each connection's streams are answered on
/// its own task as they are accepted, as a server that spawns nothing per stream would.
async fn serve_h2_alone(listener: TcpListener) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let _ = stream.set_nodelay(true);
        tokio::spawn(async move {
            let Ok(mut connection) = h2::server::handshake(stream).await else {
                return;
            };
            while let Some(Ok((_request, mut respond))) = connection.accept().await {
                let mut response = http::Response::new(());
                let content_type = http::HeaderValue::from_static("text/plain");
                response.headers_mut().insert(http::header::CONTENT_TYPE, content_type);
                if let Ok(mut body) = respond.send_response(response, false) {
                    let _ = body.send_data(Bytes::from_static(BODY), true);
                }
            }
        });
    }
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let h2_alone = (args.len() == 5).then(|| args.pop()).flatten();
    let [http, https, cert, key] =
        <[String; 4]>::try_from(args).expect("HTTP_ADDR HTTPS_ADDR CERT_PEM KEY_PEM [H2C_ADDR]");
    let address = |text: &str| text.parse::<SocketAddr>().expect("an address");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let plain = TcpListener::bind(address(&http)).await.expect("binding HTTP_ADDR");
        let secure = TcpListener::bind(address(&https)).await.expect("binding HTTPS_ADDR");
        tokio::spawn(serve(plain, None));
        tokio::spawn(serve(secure, Some(acceptor(&cert, &key))));
        if let Some(h2_alone) = h2_alone {
            let listener = TcpListener::bind(address(&h2_alone)).await.expect("binding H2C_ADDR");
            tokio::spawn(serve_h2_alone(listener));
        }
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).expect("SIGTERM");
        term.recv().await;
    });
}
