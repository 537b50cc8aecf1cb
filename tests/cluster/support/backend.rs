//! In-process origins on `127.0.0.1:0` (or a pod address) that answer with their name and remember when each request
//! arrived, so a test can tell when traffic first reached one.

use std::{
    convert::Infallible,
    net::{IpAddr, Ipv4Addr, SocketAddr},
    sync::{Arc, Mutex},
};

use bytes::Bytes;
use http::Response;
use http_body_util::Full;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::{net::TcpListener, task::JoinHandle, time::Instant};

/// A running origin; stops accepting when dropped.
pub struct Backend {
    pub name: String,
    pub addr: SocketAddr,
    /// When each request arrived, oldest first.
    arrivals: Arc<Mutex<Vec<Instant>>>,
    accept: JoinHandle<()>,
}

impl Backend {
    pub async fn start(name: &str) -> Backend {
        let loopback = IpAddr::V4(Ipv4Addr::LOCALHOST);
        Backend::start_on(loopback, name).await.expect("binding a backend")
    }

    /// An origin on `ip` (port 0): a pod address for the real API server, which refuses
    /// loopback endpoints.
    pub async fn start_on(ip: IpAddr, name: &str) -> std::io::Result<Backend> {
        let listener = TcpListener::bind(SocketAddr::new(ip, 0)).await?;
        let addr = listener.local_addr().expect("a bound address");
        let arrivals = Arc::new(Mutex::new(Vec::new()));
        let (seen, body) = (arrivals.clone(), Bytes::from(name.to_string()));
        let accept = tokio::spawn(async move {
            loop {
                // An accept error on loopback is unexpected: stop, so the test fails on it.
                let Ok((stream, _)) = listener.accept().await else {
                    break;
                };
                let (seen, body) = (seen.clone(), body.clone());
                let service = service_fn(move |_req| {
                    seen.lock().expect("arrivals lock").push(Instant::now());
                    let body = body.clone();
                    async move { Ok::<_, Infallible>(Response::new(Full::new(body))) }
                });
                tokio::spawn(async move {
                    let builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
                    let _ = builder.serve_connection(TokioIo::new(stream), service).await;
                });
            }
        });
        Ok(Backend {
            name: name.to_string(),
            addr,
            arrivals,
            accept,
        })
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    pub fn hits(&self) -> usize {
        self.arrivals.lock().expect("arrivals lock").len()
    }

    /// When the first request at or after `since` arrived.
    pub fn first_hit_since(&self, since: Instant) -> Option<Instant> {
        self.arrivals
            .lock()
            .expect("arrivals lock")
            .iter()
            .copied()
            .find(|at| *at >= since)
    }
}

impl Drop for Backend {
    fn drop(&mut self) {
        self.accept.abort();
    }
}
