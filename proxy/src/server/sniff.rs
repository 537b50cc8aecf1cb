//! The security of a listener: plain, TLS, or either, told apart per connection by its first
//! byte (an extra Gateway port, `--gateway-port`, serves its HTTP and HTTPS listeners on one
//! address: which a connection is for only the client knows).
//!
//! ```text
//! accept ─▶ Plain ─────────────────────────────▶ HTTP
//!        ─▶ Tls ──────────────▶ TLS handshake ─▶ HTTP
//!        ─▶ Either ─ peek: 0x16 (handshake record) ─▶ TLS handshake; anything else ─▶ HTTP
//! ```

use std::time::Duration;

use tokio::net::TcpStream;
use tokio_rustls::TlsAcceptor;

/// The first byte of a TLS record carrying a handshake message (RFC 8446, section 5.1): every
/// ClientHello starts with it, and no HTTP/1.1 method or h2c preface does.
const HANDSHAKE_RECORD: u8 = 0x16;

/// How a listener's connections are secured.
#[derive(Clone, Default)]
pub enum Security {
    #[default]
    Plain,
    Tls(TlsAcceptor),
    /// TLS when the client's first byte opens a handshake, else plain.
    Either(TlsAcceptor),
}

impl From<Option<TlsAcceptor>> for Security {
    fn from(tls: Option<TlsAcceptor>) -> Self {
        tls.map_or(Security::Plain, Security::Tls)
    }
}

/// Whether `stream`'s client opens a TLS handshake; `None` when it sent nothing within
/// `timeout` or closed (the connection is dropped as an unfinished handshake would be). The
/// byte is only peeked: it stays for whoever reads next.
pub(super) async fn opens_tls(stream: &TcpStream, timeout: Duration) -> Option<bool> {
    let mut first = [0u8; 1];
    match tokio::time::timeout(timeout, stream.peek(&mut first)).await {
        Ok(Ok(1)) => Some(first[0] == HANDSHAKE_RECORD),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use tokio::{io::AsyncWriteExt, net::TcpListener};

    use super::*;

    async fn first_sent(bytes: &'static [u8]) -> Option<bool> {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let client = tokio::spawn(async move {
            let mut stream = TcpStream::connect(addr).await.unwrap();
            // Closed once written: what was sent stays readable, and an empty send is a close.
            stream.write_all(bytes).await.unwrap();
        });
        let (stream, _) = listener.accept().await.unwrap();
        client.await.unwrap();
        opens_tls(&stream, Duration::from_secs(5)).await
    }

    #[tokio::test]
    async fn a_client_hello_is_tls_and_a_request_or_h2c_preface_is_not() {
        assert_eq!(first_sent(&[0x16, 0x03, 0x01]).await, Some(true));
        assert_eq!(first_sent(b"GET / HTTP/1.1\r\n").await, Some(false));
        assert_eq!(first_sent(b"PRI * HTTP/2.0\r\n").await, Some(false));
    }

    #[tokio::test]
    async fn a_client_that_closes_without_a_byte_is_neither() {
        assert_eq!(first_sent(b"").await, None);
    }
}
