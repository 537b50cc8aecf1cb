//! The plain description of a route table: what `compile` produces, what `/routes` shows,
//! and what the publisher compares to skip no-op publishes. No indexes, no runtime state.

use std::{collections::BTreeMap, fmt, net::SocketAddr, sync::Arc};

use serde::{Serialize, Serializer};

pub use self::options::{
    BodyLimit, Forwarding, HttpsRedirect, Listeners, RedirectSpec, RewriteSpec, RouteOptions, Scheme, SourceRanges,
};

mod options;

/// Names a backend: `namespace/service:port`, the port as the Ingress spelled it.
pub type BackendId = String;

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TableSpec {
    /// Sorted by `host`; at most one entry per `HostMatch`. Shared: the incremental compile
    /// keeps the same hosts between compiles, and an unchanged host is one pointer here.
    #[serde(serialize_with = "shared_hosts")]
    pub hosts: Vec<Arc<VirtualHostSpec>>,
    /// Serves requests no rule matches.
    pub default_backend: Option<BackendId>,
    /// Every backend a path or the default backend names.
    pub backends: BTreeMap<BackendId, BackendSpec>,
    /// Server certificates by SNI name.
    pub tls: TlsSpec,
    /// Read-only JSON documents the admin listener serves at `/{name}` (e.g. a profile's report).
    /// Published with the table, so they always describe the routes being served.
    #[serde(skip)]
    pub documents: BTreeMap<String, serde_json::Value>,
}

/// Names a certificate: `namespace/secret`.
pub type CertificateId = String;

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TlsSpec {
    /// Which certificate each host's handshake gets (exact or wildcard hosts only).
    pub hosts: BTreeMap<HostMatch, CertificateId>,
    /// For SNI names nothing covers and clients that send none (`--default-ssl-certificate`).
    pub default: Option<CertificateId>,
    /// Every certificate `hosts` or `default` names.
    pub certificates: BTreeMap<CertificateId, CertificateSpec>,
}

/// A certificate as PEM, checked by compile (parses, key matches, covers its hosts, not expired).
/// Equality is on the PEM, so a rotated Secret is a change and an untouched one is not.
#[derive(Clone, PartialEq, Eq, Serialize)]
pub struct CertificateSpec {
    #[serde(skip)]
    pub chain_pem: Vec<u8>,
    #[serde(skip)]
    pub key_pem: Vec<u8>,
    /// DNS names of the leaf, for `/routes`.
    pub names: Vec<String>,
    /// RFC 3339, for `/routes`.
    pub not_after: String,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum HostMatch {
    /// A lowercase DNS name, no port, no trailing dot.
    Exact(String),
    /// `*.example.com` stored as `example.com`: matches exactly one extra label.
    Wildcard(String),
    /// `*.example.com` as cloud load balancers and nginx read it, stored as `example.com`:
    /// matches one or more extra labels. Shown as `**.example.com`.
    DeepWildcard(String),
    /// Rules without a host.
    Any,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct VirtualHostSpec {
    pub host: HostMatch,
    /// At most one entry per `(path, kind)` on each listener; order does not matter for matching.
    pub paths: Vec<PathSpec>,
    /// A request for this host that none of its paths match gets 404 instead of falling through
    /// to wildcard hosts, host-less rules and the default backend (load balancers that key rules
    /// by domain first), on both listeners even when it has paths on one only.
    #[serde(skip_serializing_if = "is_false")]
    pub exclusive: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PathSpec {
    /// Starts with `/`. For `Prefix` it carries no trailing slash unless it is `/`.
    pub path: String,
    pub kind: PathKind,
    pub backend: BackendId,
    /// The object that asked for this path, `namespace/name`; used in logs and metrics.
    pub source: String,
    /// Plain-HTTP requests get a 308 to the same URL over HTTPS.
    #[serde(skip_serializing_if = "is_false")]
    pub ssl_redirect: bool,
    /// What profiles other than Ingress-spec add; the default changes nothing.
    #[serde(flatten)]
    pub options: RouteOptions,
}

/// The shared hosts as a list of hosts (serde's own `Arc` support is a crate feature that would
/// rebuild every serde user in the tree).
fn shared_hosts<S: Serializer>(hosts: &[Arc<VirtualHostSpec>], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_seq(hosts.iter().map(|vhost| &**vhost))
}

/// The shared endpoint list as a list.
fn shared_endpoints<S: Serializer>(endpoints: &Arc<[SocketAddr]>, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_seq(endpoints.iter())
}

fn is_false(value: &bool) -> bool {
    !value
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum PathKind {
    Exact,
    /// Ingress-spec `Prefix`: whole path segments (`/foo` matches `/foo/bar`, not `/foobar`).
    Prefix,
    /// An nginx-style location: a character prefix (`/foo` matches `/foobar`); the longest
    /// wins, and a rule ending in `/` answers the same path without it with a 301 to itself.
    CharPrefix,
    /// An nginx `~*` location: the path is a regular expression matched case-insensitively
    /// from the start of the request path. A host with one has only these; they are tried in
    /// the order of their `rank` option and the first that matches wins.
    Regex,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BackendSpec {
    pub protocol: UpstreamProtocol,
    /// Pod addresses, sorted and deduplicated. Empty means "answer 503". Shared, so the spec the
    /// compile keeps and the table's hold one list (and equal lists compare by address first).
    #[serde(serialize_with = "shared_endpoints")]
    pub endpoints: Arc<[SocketAddr]>,
    /// The EndpointSlice hints naming each endpoint's consumers, by address; only endpoints with
    /// hints are here. Shared like `endpoints`.
    #[serde(skip_serializing_if = "no_topology", serialize_with = "shared_topology")]
    pub topology: Arc<BTreeMap<SocketAddr, EndpointTopology>>,
}

/// One endpoint's hints (`forNodes`, `forZones`), as the EndpointSlice gives them: the
/// EndpointSlice controller names the endpoint's own node and zone there. Empty lists: no hint.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct EndpointTopology {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub for_nodes: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub for_zones: Vec<String>,
}

fn no_topology(topology: &Arc<BTreeMap<SocketAddr, EndpointTopology>>) -> bool {
    topology.is_empty()
}

fn shared_topology<S: Serializer>(
    topology: &Arc<BTreeMap<SocketAddr, EndpointTopology>>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_map(topology.iter())
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum UpstreamProtocol {
    #[default]
    Http1,
    /// HTTP/2 with prior knowledge over cleartext (`appProtocol: kubernetes.io/h2c`, gRPC).
    H2c,
    /// HTTP/1.1 over TLS (`appProtocol: https`, or the backend-protocol annotation).
    Https,
}

// === impl UpstreamProtocol ===

impl UpstreamProtocol {
    /// As `/routes` and backend ids spell it.
    pub const fn as_str(self) -> &'static str {
        match self {
            UpstreamProtocol::Http1 => "http1",
            UpstreamProtocol::H2c => "h2c",
            UpstreamProtocol::Https => "https",
        }
    }
}

// === impl CertificateSpec ===

impl CertificateSpec {
    pub fn new(chain_pem: Vec<u8>, key_pem: Vec<u8>, names: Vec<String>, not_after: String) -> Self {
        CertificateSpec {
            chain_pem,
            key_pem,
            names,
            not_after,
        }
    }
}

impl fmt::Debug for CertificateSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the key, not even in a debug log.
        f.debug_struct("CertificateSpec")
            .field("names", &self.names)
            .field("not_after", &self.not_after)
            .finish_non_exhaustive()
    }
}

// === impl HostMatch ===

impl HostMatch {
    /// Parses an Ingress rule host: `""` is `Any`, `*.a.b` a wildcard, anything else exact.
    /// Lowercases; validation of the DNS name is the caller's job.
    pub fn from_rule_host(host: &str) -> Self {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        if host.is_empty() {
            HostMatch::Any
        } else if let Some(suffix) = host.strip_prefix("*.") {
            HostMatch::Wildcard(suffix.to_string())
        } else {
            HostMatch::Exact(host)
        }
    }
}

impl HostMatch {
    /// Whether `self`, read as a certificate name or a host pattern, covers `host`: equal
    /// names, or a wildcard and a name exactly one label below it. `Any` covers nothing.
    pub fn covers(&self, host: &HostMatch) -> bool {
        match (self, host) {
            (HostMatch::Any, _) | (_, HostMatch::Any) => false,
            (pattern, host) if pattern == host => true,
            (HostMatch::Wildcard(suffix), HostMatch::Exact(name)) => HostMatch::wildcard_suffix(name) == Some(suffix),
            (HostMatch::DeepWildcard(suffix), HostMatch::Exact(name) | HostMatch::Wildcard(name)) => name
                .strip_suffix(suffix.as_str())
                .is_some_and(|labels| labels.len() > 1 && labels.ends_with('.')),
            (HostMatch::DeepWildcard(suffix), HostMatch::DeepWildcard(name)) => name
                .strip_suffix(suffix.as_str())
                .is_some_and(|labels| labels.ends_with('.')),
            _ => false,
        }
    }

    /// The suffix a `*.` pattern must have to cover `host`: what follows its first label, which
    /// must not be empty (`.example.com` is not one label below `example.com`). The one rule
    /// for certificate names, `--dns-exclude` patterns and route lookup.
    pub fn wildcard_suffix(host: &str) -> Option<&str> {
        host.split_once('.')
            .and_then(|(label, rest)| (!label.is_empty()).then_some(rest))
    }
}

impl fmt::Display for HostMatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HostMatch::Exact(host) => f.write_str(host),
            HostMatch::Wildcard(suffix) => write!(f, "*.{suffix}"),
            HostMatch::DeepWildcard(suffix) => write!(f, "**.{suffix}"),
            HostMatch::Any => f.write_str("*"),
        }
    }
}

impl Serialize for HostMatch {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}
