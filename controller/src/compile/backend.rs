//! Ingress backends to [`BackendSpec`]s: the Service and its port, then the addresses of its
//! EndpointSlices.
//!
//! ```text
//! IngressBackend ─▶ Service (ns/name) ─▶ ServicePort (number | name) ─▶ EndpointSlices
//!                                              └ appProtocol ─▶ protocol     └ ready, else serving+terminating
//! ```

use std::{
    collections::{BTreeMap, HashMap, HashSet},
    fmt,
    net::{IpAddr, SocketAddr},
    sync::{Arc, LazyLock},
};

use crate::objects::{IngressBackend, IngressServiceBackend, ServiceBackendPort};
use shunt_spec::{BackendId, BackendSpec, EndpointTopology, UpstreamProtocol};

use crate::objects::{Endpoint, EndpointPort, EndpointSlice, HintName, Service, ServicePort};

use super::{ClusterState, Reason, namespace_name};

/// Why a backend could not be resolved. Context (which path, which host) is added by the caller.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BackendError {
    #[error("backend names no service")]
    Missing,
    #[error("resource backend {kind} {name:?} is not supported")]
    Resource { kind: String, name: String },
    #[error("backend service has an empty name")]
    EmptyName,
    #[error("backend service \"{service}\" names no port")]
    NoPort { service: String },
    #[error("backend service \"{service}\" sets both port number {number} and port name {name:?}")]
    AmbiguousPort { service: String, number: i32, name: String },
    #[error("backend service \"{service}\" port {number} is out of range")]
    PortRange { service: String, number: i32 },
    #[error("service \"{service}\" not found")]
    MissingService { service: String },
    #[error("service \"{service}\" is of type ExternalName, which has no endpoints to proxy to")]
    ExternalName { service: String },
    #[error("service \"{service}\" has no TCP port {port}")]
    MissingPort { service: String, port: PortRef },
}

/// A Service port as an Ingress names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PortRef {
    Number(u16),
    Name(String),
}

/// A resolved backend: its id and what the table stores for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    pub id: BackendId,
    pub spec: BackendSpec,
}

/// foldhash, not SipHash: the keys are names from our own state, hashed once per Service, slice
/// and path of a compile, where SipHash's flood resistance buys nothing and costs a few percent.
type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// Services and EndpointSlices indexed by namespace and name, and every backend resolved so far
/// (many paths name the same one).
pub struct Backends<'a> {
    services: FastMap<(&'a str, &'a str), &'a Service>,
    /// By namespace and the Service named in their `kubernetes.io/service-name` label.
    slices: FastMap<(&'a str, &'a str), Vec<&'a EndpointSlice>>,
    /// Shared: every path naming a backend gets the same one, not a copy of its endpoints.
    resolved: FastMap<BackendId, Result<Arc<Resolved>, BackendError>>,
    /// The id being looked up, written in place: a backend resolved before costs no allocation.
    id: String,
}

// === impl BackendError ===

impl BackendError {
    pub fn reason(&self) -> Reason {
        match self {
            BackendError::Missing => Reason::MissingBackend,
            BackendError::Resource { .. } => Reason::ResourceBackend,
            BackendError::EmptyName
            | BackendError::NoPort { .. }
            | BackendError::AmbiguousPort { .. }
            | BackendError::PortRange { .. } => Reason::InvalidBackend,
            BackendError::MissingService { .. } => Reason::MissingService,
            BackendError::ExternalName { .. } => Reason::ExternalNameService,
            BackendError::MissingPort { .. } => Reason::MissingServicePort,
        }
    }
}

// === impl PortRef ===

impl fmt::Display for PortRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PortRef::Number(number) => write!(f, "{number}"),
            PortRef::Name(name) => write!(f, "named {name:?}"),
        }
    }
}

// === impl Backends ===

impl<'a> Backends<'a> {
    pub fn new(state: &'a ClusterState) -> Self {
        Self::indexing(state, state.services.len(), |_| true)
    }

    /// Indexes only the Services (namespace, name) in `needed` and their slices: an incremental
    /// compile redoing a few Ingresses does not index every Service of the cluster.
    pub fn only(state: &'a ClusterState, needed: &HashSet<(&str, &str)>) -> Self {
        // Every Service and slice of the cluster is checked against it: hash with foldhash.
        let needed: HashSet<(&str, &str), foldhash::fast::RandomState> = needed.iter().copied().collect();
        Self::indexing(state, needed.len(), |key| needed.contains(&key))
    }

    /// Indexes the Services `wanted` takes (about `expected` of them) and their slices.
    fn indexing(state: &'a ClusterState, expected: usize, wanted: impl Fn((&str, &str)) -> bool) -> Self {
        let mut services = FastMap::with_capacity_and_hasher(expected, Default::default());
        services.extend(
            state
                .services
                .iter()
                .map(|service| (namespace_name(&service.metadata), &**service))
                .filter(|(key, _)| wanted(*key)),
        );
        let mut slices: FastMap<_, Vec<_>> =
            FastMap::with_capacity_and_hasher(state.endpoint_slices.len().min(services.len()), Default::default());
        for slice in &state.endpoint_slices {
            if let Some(service) = slice.service_name.as_deref() {
                let (namespace, _) = namespace_name(&slice.metadata);
                if wanted((namespace, service)) {
                    slices.entry((namespace, service)).or_default().push(&**slice);
                }
            }
        }
        Backends {
            resolved: FastMap::with_capacity_and_hasher(services.len(), Default::default()),
            services,
            slices,
            id: String::new(),
        }
    }

    /// Resolves a backend of an Ingress in `namespace`. A backend without endpoints resolves
    /// (the proxy answers 503 for it); the caller reports it.
    /// `protocol` (from an annotation) overrides what the port's `appProtocol` says; such a
    /// backend gets its own id (`…:port@https`), as it needs its own connections.
    pub fn resolve(
        &mut self,
        namespace: &str,
        backend: &IngressBackend,
        protocol: Option<UpstreamProtocol>,
    ) -> Result<Arc<Resolved>, BackendError> {
        let (service, port) = service_ref(namespace, backend)?;
        // `namespace/service:port[@protocol]`, pushed piece by piece: `format!` was a tenth of a
        // 10k-Ingress compile.
        let id = &mut self.id;
        id.clear();
        id.push_str(namespace);
        id.push('/');
        id.push_str(service);
        id.push(':');
        match &port {
            PortRef::Number(number) => shunt_spec::push_port(id, *number),
            PortRef::Name(name) => id.push_str(name),
        }
        if let Some(protocol) = protocol {
            id.push('@');
            id.push_str(protocol.as_str());
        }
        if let Some(known) = self.resolved.get(id.as_str()) {
            return known.clone();
        }
        let id = id.clone();
        let result = self.lookup(namespace, service, &port).map(|mut spec| {
            spec.protocol = protocol.unwrap_or(spec.protocol);
            Arc::new(Resolved { id: id.clone(), spec })
        });
        self.resolved.insert(id, result.clone());
        result
    }

    /// The Service `namespace/name` at its first port, as ingress-nginx takes a default
    /// backend (`Spec.Ports[0]`); `None` when it is missing or has no port.
    pub fn resolve_first_port(&mut self, namespace: &str, name: &str) -> Option<Arc<Resolved>> {
        let service = self.services.get(&(namespace, name))?;
        let port = service.spec.as_ref()?.ports.as_ref()?.first()?.port;
        let backend = IngressBackend {
            service: Some(IngressServiceBackend {
                name: name.into(),
                port: Some(ServiceBackendPort {
                    number: Some(port),
                    name: None,
                }),
            }),
            resource: None,
        };
        self.resolve(namespace, &backend, None).ok()
    }

    /// A backend resolved before, by its id.
    pub fn resolved(&self, id: &str) -> Option<Arc<Resolved>> {
        self.resolved.get(id)?.as_ref().ok().cloned()
    }

    /// The `spec.type` of the Service `namespace/name` (`ClusterIP` when unset, as the API
    /// defaults it); `None` when the Service is not in the state.
    pub fn service_type(&self, namespace: &str, name: &str) -> Option<&str> {
        let service = self.services.get(&(namespace, name))?;
        let type_ = service.spec.as_ref().and_then(|spec| spec.type_.as_deref());
        Some(type_.unwrap_or("ClusterIP"))
    }

    fn lookup(&self, namespace: &str, name: &str, port: &PortRef) -> Result<BackendSpec, BackendError> {
        let service = || format!("{namespace}/{name}");
        let found = self
            .services
            .get(&(namespace, name))
            .ok_or_else(|| BackendError::MissingService { service: service() })?;
        let spec = found.spec.as_ref();
        if spec.and_then(|spec| spec.type_.as_deref()) == Some("ExternalName") {
            return Err(BackendError::ExternalName { service: service() });
        }
        let service_port = spec
            .and_then(|spec| spec.ports.as_ref())
            .into_iter()
            .flatten()
            .filter(|candidate| is_tcp(candidate.protocol.as_deref()))
            .find(|candidate| match port {
                PortRef::Number(number) => candidate.port == i32::from(*number),
                PortRef::Name(port_name) => candidate.name.as_deref() == Some(port_name.as_str()),
            })
            .ok_or_else(|| BackendError::MissingPort {
                service: service(),
                port: port.clone(),
            })?;
        let slices = self
            .slices
            .get(&(namespace, name))
            .map(Vec::as_slice)
            .unwrap_or_default();
        Ok(backend_spec(service_port, slices))
    }
}

/// The Service name and port a backend names, checked the way the API server would.
fn service_ref<'b>(namespace: &str, backend: &'b IngressBackend) -> Result<(&'b str, PortRef), BackendError> {
    let Some(service) = &backend.service else {
        return Err(match &backend.resource {
            Some(resource) => BackendError::Resource {
                kind: resource.kind.clone(),
                name: resource.name.clone(),
            },
            None => BackendError::Missing,
        });
    };
    if service.name.is_empty() {
        return Err(BackendError::EmptyName);
    }
    let qualified = || format!("{namespace}/{}", service.name);
    let port = service.port.as_ref();
    let name = port
        .and_then(|port| port.name.as_deref())
        .filter(|name| !name.is_empty());
    let port = match (port.and_then(|port| port.number), name) {
        (Some(number), Some(name)) => {
            return Err(BackendError::AmbiguousPort {
                service: qualified(),
                number,
                name: name.to_string(),
            });
        }
        (Some(number), None) => match u16::try_from(number) {
            Ok(number) if number != 0 => PortRef::Number(number),
            _ => {
                return Err(BackendError::PortRange {
                    service: qualified(),
                    number,
                });
            }
        },
        (None, Some(name)) => PortRef::Name(name.to_string()),
        (None, None) => return Err(BackendError::NoPort { service: qualified() }),
    };
    Ok((&service.name, port))
}

/// Collects the endpoints of one Service port across its slices: ready ones, or when none is
/// ready, those still serving while terminating (better than a certain 503 during a rollout).
fn backend_spec(service_port: &ServicePort, slices: &[&EndpointSlice]) -> BackendSpec {
    let mut ready = Vec::new();
    let mut draining = Vec::new();
    let mut slice_protocol = None;
    let mut topology = BTreeMap::new();
    for slice in slices {
        let family_v4 = match slice.address_type.as_str() {
            "IPv4" => true,
            "IPv6" => false,
            // FQDN slices are deprecated and carry no addresses a proxy can dial.
            _ => continue,
        };
        // Slice ports are named like the Service port they serve; unnamed equals "".
        let Some(slice_port) = slice.ports.iter().flatten().find(|candidate| {
            is_tcp(candidate.protocol.as_deref())
                && candidate.name.as_deref().unwrap_or_default() == service_port.name.as_deref().unwrap_or_default()
        }) else {
            continue;
        };
        let Some(port) = port_number(slice_port) else { continue };
        slice_protocol = slice_protocol.or(slice_port.app_protocol.as_deref().and_then(protocol_of));
        for endpoint in &slice.endpoints {
            // Only the first address has defined semantics (kube-proxy ignores the rest).
            let Some(ip) = endpoint
                .addresses
                .first()
                .and_then(|address| address.parse::<IpAddr>().ok())
            else {
                continue;
            };
            if ip.is_ipv4() != family_v4 {
                continue;
            }
            let conditions = endpoint.conditions.as_ref();
            let is_ready = conditions.and_then(|c| c.ready).unwrap_or(true);
            let serving = conditions.and_then(|c| c.serving).unwrap_or(is_ready);
            let terminating = conditions.and_then(|c| c.terminating).unwrap_or(false);
            let address = SocketAddr::new(ip, port);
            if let Some(place) = endpoint_topology(endpoint) {
                topology.insert(address, place);
            }
            if is_ready {
                ready.push(address);
            } else if serving && terminating {
                draining.push(address);
            }
        }
    }
    let mut endpoints = if ready.is_empty() { draining } else { ready };
    endpoints.sort_unstable();
    endpoints.dedup();
    topology.retain(|address, _| endpoints.binary_search(address).is_ok());
    let protocol = match service_port.app_protocol.as_deref() {
        Some(app_protocol) => protocol_of(app_protocol),
        None => slice_protocol,
    };
    BackendSpec {
        protocol: protocol.unwrap_or_default(),
        endpoints: endpoints.into(),
        topology: if topology.is_empty() {
            no_topology()
        } else {
            Arc::new(topology)
        },
        tls: None,
    }
}

/// The empty topology every backend without hints shares: one allocation, not one per backend.
fn no_topology() -> Arc<BTreeMap<SocketAddr, EndpointTopology>> {
    static EMPTY: LazyLock<Arc<BTreeMap<SocketAddr, EndpointTopology>>> = LazyLock::new(Default::default);
    EMPTY.clone()
}

/// An endpoint's hints for the proxy's choice; `None` when it has none.
fn endpoint_topology(endpoint: &Endpoint) -> Option<EndpointTopology> {
    let names = |names: &[HintName]| names.iter().map(|hint| hint.name.to_string()).collect();
    let hints = endpoint.hints.as_deref()?;
    let place = EndpointTopology {
        for_nodes: names(&hints.for_nodes),
        for_zones: names(&hints.for_zones),
    };
    (place != EndpointTopology::default()).then_some(place)
}

fn port_number(port: &EndpointPort) -> Option<u16> {
    port.port
        .and_then(|port| u16::try_from(port).ok())
        .filter(|&port| port != 0)
}

/// What an `appProtocol` asks for: cleartext HTTP/2 with prior knowledge for
/// `kubernetes.io/h2c` (and gRPC), TLS for `https`; `None` means plain HTTP/1.1.
fn protocol_of(app_protocol: &str) -> Option<UpstreamProtocol> {
    let is = |known: &[&str]| known.iter().any(|name| app_protocol.eq_ignore_ascii_case(name));
    if is(&["kubernetes.io/h2c", "h2c", "grpc"]) {
        Some(UpstreamProtocol::H2c)
    } else if is(&["https", "kubernetes.io/https"]) {
        Some(UpstreamProtocol::Https)
    } else {
        None
    }
}

/// Ports without a protocol are TCP (the API default).
fn is_tcp(protocol: Option<&str>) -> bool {
    protocol.is_none_or(|protocol| protocol == "TCP")
}
