//! `ObjectMeta` as the watchers decode it: what the stores and the watcher read, and nothing else.
//!
//! An object as the API server sends it carries `managedFields` (one entry per field manager,
//! each a JSON copy of the fields it owns: often the largest part of the object), owner
//! references, finalizers, and, after `kubectl apply`, a whole copy of the object in an
//! annotation. Decoding those into k8s-openapi's `ObjectMeta` only for the store's slimming to
//! drop them made every watch event and list page allocate and free several times what is kept;
//! at 10,000 Ingresses that churn, interleaved with the objects kept, left partly used pages
//! behind. Here they are skipped while parsing, never allocated.

use std::{collections::BTreeMap, fmt};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use serde::{
    Deserialize, Deserializer,
    de::{IgnoredAny, MapAccess, Visitor},
};

/// The annotation `kubectl apply` keeps a whole copy of the object in.
pub const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// The fields of `ObjectMeta` any reader of a watched object uses: the stores' names, compile's
/// annotations, labels and creationTimestamp, Events' uid, the watcher's and the status writer's
/// resourceVersion, Gateway status's generation.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireMeta {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    namespace: Option<String>,
    #[serde(default)]
    uid: Option<String>,
    #[serde(default)]
    resource_version: Option<String>,
    #[serde(default)]
    generation: Option<i64>,
    #[serde(default)]
    creation_timestamp: Option<Time>,
    #[serde(default)]
    deletion_timestamp: Option<Time>,
    #[serde(default, deserialize_with = "annotations_but_last_applied")]
    annotations: Option<BTreeMap<String, String>>,
    #[serde(default)]
    labels: Option<BTreeMap<String, String>>,
}

/// Decodes an object's `metadata`, skipping what no reader uses (see the module's text).
pub fn decode_meta<'de, D: Deserializer<'de>>(deserializer: D) -> Result<ObjectMeta, D::Error> {
    let Some(wire) = Option::<WireMeta>::deserialize(deserializer)? else {
        return Ok(ObjectMeta::default());
    };
    Ok(ObjectMeta {
        name: wire.name,
        namespace: wire.namespace,
        uid: wire.uid,
        resource_version: wire.resource_version,
        generation: wire.generation,
        creation_timestamp: wire.creation_timestamp,
        deletion_timestamp: wire.deletion_timestamp,
        annotations: wire.annotations,
        labels: wire.labels,
        ..ObjectMeta::default()
    })
}

/// Annotations without kubectl's last-applied copy, whose value is skipped unread.
fn annotations_but_last_applied<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<BTreeMap<String, String>>, D::Error> {
    struct Entries;

    impl<'de> Visitor<'de> for Entries {
        type Value = Option<BTreeMap<String, String>>;

        fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
            formatter.write_str("a map of strings to strings")
        }

        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_none<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
            deserializer.deserialize_map(self)
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut annotations = BTreeMap::new();
            while let Some(key) = map.next_key::<String>()? {
                if key == LAST_APPLIED {
                    map.next_value::<IgnoredAny>()?;
                } else {
                    annotations.insert(key, map.next_value::<String>()?);
                }
            }
            Ok(Some(annotations))
        }
    }

    deserializer.deserialize_option(Entries)
}

#[cfg(test)]
mod tests;
