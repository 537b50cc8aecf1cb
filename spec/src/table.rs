//! The plain description of a route table: what `compile` produces, what `/routes` shows,
//! and what the publisher compares to skip no-op publishes. No indexes, no runtime state.

use std::{collections::BTreeMap, net::SocketAddr, sync::Arc};

use serde::{Serialize, Serializer};

use crate::{Document, HostMatch, RouteOptions, TlsSpec, UpstreamTls};

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
    /// Read-only JSON documents the admin listener serves at `/{name}` (e.g. a profile's report),
    /// deflated JSON text: a 10k-host report is ~12 MiB as a `serde_json::Value`, ~2.4 MiB as
    /// text, a tenth of that deflated, and a shared document is one pointer to copy and compare
    /// between compiles. Published with the table, so they always describe the routes being served.
    #[serde(skip)]
    pub documents: BTreeMap<String, Document>,
    /// Hosts served only on the listener of another port (`--gateway-port`, a Gateway listener
    /// on neither 80 nor 443), by port; each sorted by `host`. Empty unless such listeners exist.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub ports: BTreeMap<u16, PortHosts>,
}

/// The hosts of one extra port's listener, sorted by `host`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct PortHosts(#[serde(serialize_with = "shared_hosts")] pub Vec<Arc<VirtualHostSpec>>);

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
    pub options: Arc<RouteOptions>,
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
    /// For `Https` backends: verification, SNI, versions and client certificate beyond the
    /// plain HTTPS client's; `None` (every other backend) changes nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tls: Option<Arc<UpstreamTls>>,
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
    /// HTTP/2 over TLS, agreed by ALPN `h2` (gRPC to pods serving TLS); certificates are
    /// handled as for [`UpstreamProtocol::Https`].
    #[serde(rename = "h2-tls")]
    H2Tls,
    /// [`UpstreamProtocol::Https`] for a caller over TLS, [`UpstreamProtocol::Http1`] for one
    /// over cleartext, to the same port: chosen per request ([`UpstreamProtocol::for_caller`]),
    /// as ingress-nginx's `AUTO_HTTP` writes `proxy_pass $scheme://`.
    #[serde(rename = "auto-http")]
    AutoHttp,
}

// === impl UpstreamProtocol ===

impl UpstreamProtocol {
    /// As `/routes` and backend ids spell it.
    pub const fn as_str(self) -> &'static str {
        match self {
            UpstreamProtocol::Http1 => "http1",
            UpstreamProtocol::H2c => "h2c",
            UpstreamProtocol::Https => "https",
            UpstreamProtocol::H2Tls => "h2-tls",
            UpstreamProtocol::AutoHttp => "auto-http",
        }
    }

    /// The protocol a request from a caller over TLS (`tls`) or cleartext is sent in: only
    /// [`UpstreamProtocol::AutoHttp`] depends on it.
    #[inline(always)]
    pub const fn for_caller(self, tls: bool) -> Self {
        match self {
            UpstreamProtocol::AutoHttp if tls => UpstreamProtocol::Https,
            UpstreamProtocol::AutoHttp => UpstreamProtocol::Http1,
            other => other,
        }
    }

    /// Whether the pod is spoken to in HTTP/2 (one multiplexed connection, no hop-by-hop
    /// header rewriting of HTTP/1).
    pub const fn is_h2(self) -> bool {
        matches!(self, UpstreamProtocol::H2c | UpstreamProtocol::H2Tls)
    }
}

/// Appends `port` in decimal, as a [`BackendId`] ends: without a formatter (`format!` was a
/// tenth of a 10k-Ingress compile).
pub fn push_port(id: &mut String, port: u16) {
    let mut digits = [0u8; 5];
    let mut at = digits.len();
    let mut rest = port;
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    digits[at..].iter().for_each(|&digit| id.push(char::from(digit)));
}

#[cfg(test)]
mod tests {
    use super::UpstreamProtocol;

    #[test]
    fn routes_json_and_backend_ids_spell_each_protocol_alike() {
        use UpstreamProtocol::*;
        for protocol in [Http1, H2c, Https, H2Tls, AutoHttp] {
            let json = serde_json::to_value(protocol).expect("a protocol serialises");
            assert_eq!(json, protocol.as_str(), "{protocol:?}");
        }
        assert!(H2c.is_h2() && H2Tls.is_h2() && !Https.is_h2() && !Http1.is_h2() && !AutoHttp.is_h2());
    }

    #[test]
    fn only_auto_http_depends_on_the_callers_tls() {
        use UpstreamProtocol::*;
        assert_eq!((AutoHttp.for_caller(true), AutoHttp.for_caller(false)), (Https, Http1));
        for protocol in [Http1, H2c, Https, H2Tls] {
            assert_eq!(
                (protocol.for_caller(true), protocol.for_caller(false)),
                (protocol, protocol)
            );
        }
    }
}
