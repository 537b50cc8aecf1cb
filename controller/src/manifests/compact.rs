//! A file's objects kept between polls as deflated JSON instead of parsed k8s-openapi values.
//!
//! ```text
//! parse_file ─▶ Vec<Object> ─encode─▶ CompactObjects (deflated JSON) ─decode, at each compile─▶ objects
//! ```
//! A parsed object is mostly its type's layout (every optional field of `ObjectMeta`,
//! `ServiceSpec` or an endpoint takes room when absent) plus one allocation per string, list and
//! map: about 2.3 KB for an Ingress, Service or five-endpoint EndpointSlice, against 200-350 bytes
//! of JSON. Compile needs owned objects anyway (the state it reads is built anew each time), so
//! decoding costs about what a deep clone of the kept objects would.
//! Manifests repeat themselves (every Ingress, Service and slice spelled alike): deflate at its
//! fastest level keeps 10,000 of each in ~0.5 MiB instead of ~9 MiB of JSON, for a few ms of
//! inflating per MiB at each compile.

use std::io::{Read, Write};

use flate2::{Compression, read::DeflateDecoder, write::DeflateEncoder};
use k8s_openapi::api::{
    core::v1::{ConfigMap, Secret},
    networking::v1::{Ingress, IngressClass},
};
use serde::{Deserialize, Serialize};

use super::Object;
use crate::{
    objects::{EndpointSlice, Namespace, Service, TkeServiceConfig},
    sources::gateway::{
        grpc::objects::GRPCRoute,
        objects::{Gateway, GatewayClass, HTTPRoute, ReferenceGrant},
    },
};

/// The objects of one file that compile reads, as deflated JSON. Skipped kinds are left out:
/// nothing downstream of the watcher reads them. Equal objects give equal bytes (k8s-openapi
/// writes fields in a fixed order, maps sorted, and deflate is deterministic), so comparing
/// bytes tells whether a file changed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompactObjects {
    deflated: Box<[u8]>,
}

/// The kinds compile reads, tagged so they decode back into their own type.
#[derive(Serialize, Deserialize)]
#[allow(
    clippy::large_enum_variant,
    reason = "as `Object`: decoded values only pass through on their way into it"
)]
enum Compact {
    Ingress(Ingress),
    IngressClass(IngressClass),
    Service(Service),
    EndpointSlice(EndpointSlice),
    Secret(Secret),
    ConfigMap(ConfigMap),
    GatewayClass(GatewayClass),
    Gateway(Gateway),
    HTTPRoute(HTTPRoute),
    GRPCRoute(GRPCRoute),
    ReferenceGrant(ReferenceGrant),
    TkeServiceConfig(TkeServiceConfig),
    Namespace(Namespace),
}

// === impl CompactObjects ===

impl CompactObjects {
    /// Fails only for an object k8s-openapi cannot write back or read again (it checks that
    /// the bytes decode), which the caller treats as it treats a file that does not parse.
    pub fn encode(objects: Vec<Object>) -> Result<Self, serde_json::Error> {
        let compact: Vec<Compact> = objects
            .into_iter()
            .filter_map(|object| match object {
                Object::Ingress(o) => Some(Compact::Ingress(o)),
                Object::IngressClass(o) => Some(Compact::IngressClass(o)),
                Object::Service(o) => Some(Compact::Service(o)),
                Object::EndpointSlice(o) => Some(Compact::EndpointSlice(o)),
                Object::Secret(o) => Some(Compact::Secret(o)),
                Object::ConfigMap(o) => Some(Compact::ConfigMap(o)),
                Object::GatewayClass(o) => Some(Compact::GatewayClass(o)),
                Object::Gateway(o) => Some(Compact::Gateway(o)),
                Object::HTTPRoute(o) => Some(Compact::HTTPRoute(o)),
                Object::GRPCRoute(o) => Some(Compact::GRPCRoute(o)),
                Object::ReferenceGrant(o) => Some(Compact::ReferenceGrant(o)),
                Object::TkeServiceConfig(o) => Some(Compact::TkeServiceConfig(o)),
                Object::Namespace(o) => Some(Compact::Namespace(o)),
                Object::Skipped(_) => None,
            })
            .collect();
        let json = serde_json::to_vec(&compact)?;
        serde_json::from_slice::<Vec<Compact>>(&json)?;
        let mut deflated = DeflateEncoder::new(Vec::new(), Compression::fast());
        // Writing into a `Vec` cannot fail.
        let deflated = deflated
            .write_all(&json)
            .and_then(|()| deflated.finish())
            .map_err(serde_json::Error::io)?;
        Ok(CompactObjects {
            deflated: deflated.into(),
        })
    }

    /// The objects back, in the order they were encoded. `encode` checked that they decode.
    pub fn decode(&self) -> Vec<Object> {
        // A file not read yet holds nothing (not even `[]`).
        if self.deflated.is_empty() {
            return Vec::new();
        }
        let mut json = Vec::with_capacity(self.deflated.len() * 8);
        let inflated = DeflateDecoder::new(&*self.deflated).read_to_end(&mut json);
        let compact = inflated
            .map_err(serde_json::Error::io)
            .and_then(|_| serde_json::from_slice(&json));
        let compact: Vec<Compact> = compact.unwrap_or_else(|error| {
            tracing::error!(%error, "Kept manifest objects no longer decode; leaving them out");
            Vec::new()
        });
        compact
            .into_iter()
            .map(|object| match object {
                Compact::Ingress(o) => Object::Ingress(o),
                Compact::IngressClass(o) => Object::IngressClass(o),
                Compact::Service(o) => Object::Service(o),
                Compact::EndpointSlice(o) => Object::EndpointSlice(o),
                Compact::Secret(o) => Object::Secret(o),
                Compact::ConfigMap(o) => Object::ConfigMap(o),
                Compact::GatewayClass(o) => Object::GatewayClass(o),
                Compact::Gateway(o) => Object::Gateway(o),
                Compact::HTTPRoute(o) => Object::HTTPRoute(o),
                Compact::GRPCRoute(o) => Object::GRPCRoute(o),
                Compact::ReferenceGrant(o) => Object::ReferenceGrant(o),
                Compact::TkeServiceConfig(o) => Object::TkeServiceConfig(o),
                Compact::Namespace(o) => Object::Namespace(o),
            })
            .collect()
    }

    /// Bytes held, for the memory figures.
    pub fn len(&self) -> usize {
        self.deflated.len()
    }

    pub fn is_empty(&self) -> bool {
        self.deflated.is_empty()
    }
}
