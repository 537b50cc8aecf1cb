//! How shunt speaks TLS to one backend's pods when a profile asks for more than "encrypt, do
//! not authenticate" (ingress-nginx's `proxy-ssl-*` keys). The controller checks every value
//! (it builds the client config once, as the proxy will); the proxy builds one client config
//! per distinct value when it publishes and fails closed (502) if one cannot be built.

use std::fmt;

use serde::Serialize;

/// The largest trusted-certificate bundle kept, PEM bytes (a few dozen CAs).
pub const MAX_TRUSTED_BYTES: usize = 64 * 1024;
/// The largest client certificate chain or key kept, PEM bytes.
pub const MAX_CLIENT_PEM_BYTES: usize = 64 * 1024;

/// One backend's upstream TLS settings; `None` on a backend is the plain HTTPS client.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct UpstreamTls {
    /// Checks the pod's chain and name; `None`: the pod is not authenticated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verify: Option<PodVerification>,
    /// The SNI name sent; `None`: none (the pod's IP is dialed). A DNS name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sni: Option<String>,
    pub versions: TlsVersions,
    /// Presented when the pod asks for a client certificate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_certificate: Option<ClientCertificate>,
}

/// What the pod's certificate must satisfy.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct PodVerification {
    /// Trusted certificates, DER. Self-issued ones are trust anchors; the others only help
    /// build the chain (OpenSSL's trusted store without partial chains). Must not be empty.
    #[serde(skip)]
    pub trusted: Vec<Vec<u8>>,
    /// The DNS name the pod's certificate must carry.
    pub name: String,
    /// Intermediate certificates allowed between the pod's certificate and the anchor
    /// (OpenSSL's verify depth).
    pub max_intermediates: u8,
}

/// Which TLS versions are offered (rustls speaks only these two).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TlsVersions {
    Tls12,
    Tls13,
    Both,
}

/// A client certificate as PEM, checked by the controller (parses, key matches).
#[derive(Clone, PartialEq, Eq, Hash, Serialize)]
pub struct ClientCertificate {
    #[serde(skip)]
    pub chain_pem: Vec<u8>,
    #[serde(skip)]
    pub key_pem: Vec<u8>,
}

impl fmt::Debug for ClientCertificate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the key, not even in a debug log.
        f.debug_struct("ClientCertificate")
            .field("chain_bytes", &self.chain_pem.len())
            .finish_non_exhaustive()
    }
}
