//! A file's objects kept between polls as compact JSON instead of parsed k8s-openapi values.
//!
//! ```text
//! parse_file ─▶ Vec<Object> ─encode─▶ CompactObjects (bytes) ─decode, at each compile─▶ objects
//! ```
//! A parsed object is mostly its type's layout (every optional field of `ObjectMeta`,
//! `ServiceSpec` or an endpoint takes room when absent) plus one allocation per string, list and
//! map: about 2.3 KB for an Ingress, Service or five-endpoint EndpointSlice, against 200-350 bytes
//! of JSON. Compile needs owned objects anyway (the state it reads is built anew each time), so
//! decoding replaces the deep clone it used to take of the kept objects, at about the same cost.

use k8s_openapi::api::{
    core::v1::Secret,
    networking::v1::{Ingress, IngressClass},
};
use serde::{Deserialize, Serialize};

use super::Object;
use crate::objects::{EndpointSlice, Service};

/// The objects of one file that compile reads, as JSON. Skipped kinds are left out: nothing
/// downstream of the watcher reads them. Equal objects give equal bytes (k8s-openapi writes
/// fields in a fixed order, maps sorted), so comparing bytes tells whether a file changed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompactObjects {
    json: Box<[u8]>,
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
                Object::Skipped(_) => None,
            })
            .collect();
        let json = serde_json::to_vec(&compact)?;
        serde_json::from_slice::<Vec<Compact>>(&json)?;
        Ok(CompactObjects { json: json.into() })
    }

    /// The objects back, in the order they were encoded. `encode` checked that they decode.
    pub fn decode(&self) -> Vec<Object> {
        // A file not read yet holds nothing (not even `[]`).
        if self.json.is_empty() {
            return Vec::new();
        }
        let compact: Vec<Compact> = serde_json::from_slice(&self.json).unwrap_or_else(|error| {
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
            })
            .collect()
    }

    /// Bytes held, for the memory figures.
    pub fn len(&self) -> usize {
        self.json.len()
    }

    pub fn is_empty(&self) -> bool {
        self.json.is_empty()
    }
}
