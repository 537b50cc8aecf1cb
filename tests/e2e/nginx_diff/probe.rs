//! One request of a case, sent the same way to nginx and to shunt: plain HTTP/1.1, or over TLS
//! with HTTP/1.1 or HTTP/2, with the same Host (no port), fields and body.

use std::{
    fmt,
    net::{IpAddr, SocketAddr},
    time::Duration,
};

use bytes::Bytes;
use http::{Method, Request, header};
use http_body_util::{BodyExt, StreamBody};

use crate::support::{Body, BoxError, Reply, TlsClient, collect, full, send_h1, send_h1_from};

/// The request body a probe sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Payload {
    Empty,
    /// With `Content-Length`.
    Sized(usize),
    /// With `Transfer-Encoding: chunked` (HTTP/1.1) or no length (HTTP/2), in 1000-byte chunks.
    Chunked(usize),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    Plain,
    TlsHttp1,
    TlsHttp2,
}

#[derive(Clone, Debug)]
pub struct Probe {
    pub method: Method,
    pub host: &'static str,
    pub path: &'static str,
    pub transport: Transport,
    /// Fields sent as they are, repeated names included.
    pub headers: Vec<(&'static str, &'static str)>,
    pub payload: Payload,
    /// Only the status is compared (answers of ingress-nginx's default backend).
    pub status_only: bool,
    /// Sent to nginx only, for its expectations: the host is refused, so shunt's answer is
    /// never seen by a caller.
    pub nginx_only: bool,
    /// `(field, value)` nginx's own answer must show, as the rule the case tests says: these
    /// anchor the hand-written configuration, so nginx and shunt cannot agree on a wrong answer.
    pub expected: Vec<(&'static str, &'static str)>,
    /// The loopback address a plain HTTP/1.1 probe connects from (127.0.0.1 unless set).
    pub from: Option<IpAddr>,
    /// The least time the whole answer may take on either side, as a pace implies; never an
    /// upper bound, which a slow machine would break.
    pub at_least: Option<Duration>,
}

/// The TLS clients a case sends with: both trust the case's CA.
pub struct Clients {
    pub http1: TlsClient,
    pub http2: TlsClient,
}

/// Where one side listens.
#[derive(Clone, Copy)]
pub struct Listeners {
    pub http: SocketAddr,
    pub https: SocketAddr,
}

// === impl Probe ===

impl Probe {
    pub fn get(host: &'static str, path: &'static str) -> Probe {
        Probe {
            method: Method::GET,
            host,
            path,
            transport: Transport::Plain,
            headers: Vec::new(),
            payload: Payload::Empty,
            status_only: false,
            nginx_only: false,
            expected: Vec::new(),
            from: None,
            at_least: None,
        }
    }

    pub fn options(host: &'static str, path: &'static str) -> Probe {
        Probe {
            method: Method::OPTIONS,
            ..Probe::get(host, path)
        }
    }

    pub fn post(host: &'static str, path: &'static str, payload: Payload) -> Probe {
        Probe {
            method: Method::POST,
            payload,
            ..Probe::get(host, path)
        }
    }

    /// Over TLS (SNI = host), HTTP/1.1.
    pub fn https(mut self) -> Probe {
        self.transport = Transport::TlsHttp1;
        self
    }

    /// Over TLS (SNI = host), HTTP/2 chosen by ALPN; the host travels as `:authority`.
    pub fn h2(mut self) -> Probe {
        self.transport = Transport::TlsHttp2;
        self
    }

    /// Plain HTTP/1.1 from another loopback address (`127.0.0.2`), a peer the ConfigMap may not
    /// trust.
    pub fn from(mut self, addr: &'static str) -> Probe {
        self.from = Some(addr.parse().expect("a loopback address"));
        self
    }

    /// Both sides must take at least `least` to answer in whole (see [`Probe::at_least`]).
    pub fn takes_at_least(mut self, least: Duration) -> Probe {
        self.at_least = Some(least);
        self
    }

    pub fn header(mut self, name: &'static str, value: &'static str) -> Probe {
        self.headers.push((name, value));
        self
    }

    pub fn status_only(mut self) -> Probe {
        self.status_only = true;
        self
    }

    /// For a refused host: only nginx is asked (see [`Probe::nginx_only`]).
    pub fn refused_host(mut self) -> Probe {
        self.nginx_only = true;
        self
    }

    /// nginx's answer must have `field` (as [`super::observe::Seen`] names it) equal to `value`;
    /// `"<absent>"` for a field it must not have.
    pub fn expect(mut self, field: &'static str, value: &'static str) -> Probe {
        self.expected.push((field, value));
        self
    }

    /// Shorthand: the status, and the Location (`""` for none).
    pub fn expect_redirect(self, status: &'static str, location: &'static str) -> Probe {
        let probe = self.expect("status", status);
        if location.is_empty() {
            probe
        } else {
            probe.expect("response location", location)
        }
    }

    /// The client's own `X-Request-ID`, if it sent one.
    pub fn request_id(&self) -> Option<&'static str> {
        self.headers
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case("x-request-id"))
            .map(|(_, value)| *value)
    }

    /// Sends the probe to one side and collects the answer, or says why there is none.
    pub async fn send(&self, to: Listeners, clients: &Clients) -> Result<Reply, String> {
        let request = self.request();
        let sent = match self.transport {
            Transport::Plain => match self.from {
                None => async { collect(send_h1(to.http, request).await?).await }.await,
                Some(from) => async { collect(send_h1_from(from, to.http, request).await?).await }.await,
            },
            Transport::TlsHttp1 => send_tls(&clients.http1, to.https, self.host, request).await,
            Transport::TlsHttp2 => send_tls(&clients.http2, to.https, self.host, request).await,
        };
        sent.map_err(|error| error.to_string())
    }

    fn request(&self) -> Request<Body> {
        let mut builder = match self.transport {
            Transport::TlsHttp2 => Request::builder().uri(format!("https://{}{}", self.host, self.path)),
            _ => Request::builder().uri(self.path).header(header::HOST, self.host),
        };
        builder = builder.method(self.method.clone());
        for (name, value) in &self.headers {
            builder = builder.header(*name, *value);
        }
        let body = match self.payload {
            Payload::Empty => full(Bytes::new()),
            Payload::Sized(len) => full(pattern(len)),
            Payload::Chunked(len) => chunked(len),
        };
        builder.body(body).expect("a valid probe request")
    }
}

impl fmt::Display for Probe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let transport = match self.transport {
            Transport::Plain => "http/1.1",
            Transport::TlsHttp1 => "https http/1.1",
            Transport::TlsHttp2 => "https h2",
        };
        write!(f, "{} {} {}{}", self.method, transport, self.host, self.path)?;
        if let Some(from) = self.from {
            write!(f, " from {from}")?;
        }
        for (name, value) in &self.headers {
            write!(f, " [{name}: {value}]")?;
        }
        match self.payload {
            Payload::Empty => Ok(()),
            Payload::Sized(len) => write!(f, " (body {len} bytes)"),
            Payload::Chunked(len) => write!(f, " (chunked body {len} bytes)"),
        }
    }
}

async fn send_tls(client: &TlsClient, addr: SocketAddr, host: &str, request: Request<Body>) -> Result<Reply, BoxError> {
    client.connect(addr, Some(host)).await?.send(request).await
}

/// `len` bytes of a fixed pattern, so both sides' pods can hash the same body.
fn pattern(len: usize) -> Bytes {
    (0..len).map(|i| (i % 251) as u8).collect::<Vec<u8>>().into()
}

/// [`pattern`] as a stream without a length.
fn chunked(len: usize) -> Body {
    let bytes = pattern(len);
    let chunks: Vec<Result<hyper::body::Frame<Bytes>, BoxError>> = (0..len)
        .step_by(1000)
        .map(|start| Ok(hyper::body::Frame::data(bytes.slice(start..len.min(start + 1000)))))
        .collect();
    StreamBody::new(futures::stream::iter(chunks)).boxed()
}
