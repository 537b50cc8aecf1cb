//! k8s-openapi objects into ours, field by field: what the JSON path would keep.

use k8s_openapi::api::{core::v1, discovery::v1 as discovery};

use super::{
    Endpoint, EndpointConditions, EndpointHints, EndpointPort, EndpointSlice, HintName, Service, ServicePort,
    ServiceSpec, intern,
};

impl From<v1::Service> for Service {
    fn from(service: v1::Service) -> Self {
        Service {
            metadata: service.metadata.into(),
            spec: service.spec.map(|spec| ServiceSpec {
                type_: spec.type_.map(intern),
                ports: spec
                    .ports
                    .map(|ports| ports.into_iter().map(ServicePort::from).collect()),
            }),
        }
    }
}

impl From<v1::ServicePort> for ServicePort {
    fn from(port: v1::ServicePort) -> Self {
        ServicePort {
            name: port.name.map(Into::into),
            port: port.port,
            protocol: port.protocol.map(intern),
            app_protocol: port.app_protocol.map(intern),
        }
    }
}

impl From<discovery::EndpointSlice> for EndpointSlice {
    fn from(slice: discovery::EndpointSlice) -> Self {
        EndpointSlice::from_parts(
            slice.metadata,
            slice.address_type.as_str().into(),
            slice.endpoints.into_iter().map(Endpoint::from).collect(),
            slice
                .ports
                .map(|ports| ports.into_iter().map(EndpointPort::from).collect()),
        )
    }
}

impl From<discovery::Endpoint> for Endpoint {
    fn from(endpoint: discovery::Endpoint) -> Self {
        Endpoint {
            addresses: endpoint.addresses.into_iter().collect(),
            conditions: endpoint.conditions.map(|conditions| EndpointConditions {
                ready: conditions.ready,
                serving: conditions.serving,
                terminating: conditions.terminating,
            }),
            hints: endpoint.hints.map(|hints| {
                let names = |names: Option<Vec<String>>| -> Vec<HintName> {
                    names
                        .into_iter()
                        .flatten()
                        .map(|name| HintName { name: name.into() })
                        .collect()
                };
                Box::new(EndpointHints {
                    for_nodes: names(hints.for_nodes.map(|nodes| nodes.into_iter().map(|n| n.name).collect())),
                    for_zones: names(hints.for_zones.map(|zones| zones.into_iter().map(|z| z.name).collect())),
                })
            }),
        }
    }
}

impl From<discovery::EndpointPort> for EndpointPort {
    fn from(port: discovery::EndpointPort) -> Self {
        EndpointPort {
            name: port.name.map(Into::into),
            port: port.port,
            protocol: port.protocol.map(intern),
            app_protocol: port.app_protocol.map(intern),
        }
    }
}
