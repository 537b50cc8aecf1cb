//! The fake API server's objects: one global resourceVersion counter, and every change kept in
//! order so a watch can resume from any version it saw (as the real watch cache does).
//!
//! ```text
//! apply / delete / write ─▶ objects + history[(version, ADDED|MODIFIED|DELETED, object)]
//!                                └ version.send(n) ─▶ every open watch replays what is new
//! ```

use std::{
    collections::BTreeMap,
    sync::{Mutex, MutexGuard},
    time::SystemTime,
};

use serde_json::{Value, json};
use tokio::sync::watch;

/// A kind shunt reads or writes, with the path segments the API serves it under.
#[derive(Debug, PartialEq, Eq)]
pub struct Resource {
    pub group: &'static str,
    pub plural: &'static str,
    pub kind: &'static str,
    pub namespaced: bool,
}

pub const RESOURCES: &[Resource] = &[
    Resource {
        group: "",
        plural: "services",
        kind: "Service",
        namespaced: true,
    },
    Resource {
        group: "",
        plural: "secrets",
        kind: "Secret",
        namespaced: true,
    },
    Resource {
        group: "",
        plural: "nodes",
        kind: "Node",
        namespaced: false,
    },
    Resource {
        group: "discovery.k8s.io",
        plural: "endpointslices",
        kind: "EndpointSlice",
        namespaced: true,
    },
    Resource {
        group: "networking.k8s.io",
        plural: "ingresses",
        kind: "Ingress",
        namespaced: true,
    },
    Resource {
        group: "networking.k8s.io",
        plural: "ingressclasses",
        kind: "IngressClass",
        namespaced: false,
    },
    Resource {
        group: "coordination.k8s.io",
        plural: "leases",
        kind: "Lease",
        namespaced: true,
    },
    Resource {
        group: "",
        plural: "configmaps",
        kind: "ConfigMap",
        namespaced: true,
    },
    Resource {
        group: "events.k8s.io",
        plural: "events",
        kind: "Event",
        namespaced: true,
    },
    // Managed CoreDNS reads the `coredns` Deployment's image for its version.
    Resource {
        group: "apps",
        plural: "deployments",
        kind: "Deployment",
        namespaced: true,
    },
];

/// Every served kind is `v1` of its group.
pub const VERSION: &str = "v1";

/// Where one object lives; `namespace` is empty for cluster-scoped kinds.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Key {
    pub plural: &'static str,
    pub namespace: String,
    pub name: String,
}

#[derive(Clone, Debug)]
pub struct Change {
    pub version: u64,
    /// `ADDED`, `MODIFIED` or `DELETED`, as a watch event's `type`.
    pub kind: &'static str,
    pub key: Key,
    pub object: Value,
}

/// Why a write was refused, as the API server's status code.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    NotFound,
    /// A create of an existing object, or a write carrying a stale resourceVersion.
    Conflict(&'static str),
    /// 422: the object's name is not a valid DNS subdomain (at most 253 characters).
    Invalid(String),
}

pub struct Store {
    inner: Mutex<Inner>,
    /// The version of the last change; open watches wait on it.
    latest: watch::Sender<u64>,
}

#[derive(Default)]
struct Inner {
    version: u64,
    objects: BTreeMap<Key, Value>,
    /// Every change since the start, oldest first.
    history: Vec<Change>,
}

// === impl Resource ===

impl Resource {
    pub fn by_kind(kind: &str) -> &'static Resource {
        RESOURCES
            .iter()
            .find(|r| r.kind == kind)
            .unwrap_or_else(|| panic!("the fake API server does not serve {kind}"))
    }

    pub fn by_path(group: &str, version: &str, plural: &str) -> Option<&'static Resource> {
        RESOURCES
            .iter()
            .find(|r| version == VERSION && r.group == group && r.plural == plural)
    }

    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            VERSION.to_string()
        } else {
            format!("{}/{VERSION}", self.group)
        }
    }
}

// === impl Key ===

impl Key {
    pub fn new(resource: &Resource, namespace: &str, name: &str) -> Key {
        let namespace = if resource.namespaced {
            namespace.to_string()
        } else {
            String::new()
        };
        Key {
            plural: resource.plural,
            namespace,
            name: name.to_string(),
        }
    }

    /// The key of an object with `kind` and `metadata`.
    pub fn of(object: &Value) -> Key {
        let resource = Resource::by_kind(object["kind"].as_str().expect("objects carry their kind"));
        let meta = &object["metadata"];
        Key::new(
            resource,
            meta["namespace"].as_str().unwrap_or_default(),
            meta["name"].as_str().expect("objects have a name"),
        )
    }
}

// === impl Store ===

impl Default for Store {
    fn default() -> Self {
        Store {
            inner: Mutex::default(),
            latest: watch::channel(0).0,
        }
    }
}

impl Store {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().expect("store lock")
    }

    /// The version of the last change, for watches to wait on.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.latest.subscribe()
    }

    pub fn get(&self, key: &Key) -> Option<Value> {
        self.lock().objects.get(key).cloned()
    }

    /// Creates or replaces `object` unconditionally (what a test or another controller does).
    pub fn apply(&self, object: Value) -> Value {
        let key = Key::of(&object);
        let mut inner = self.lock();
        let kind = if inner.objects.contains_key(&key) {
            "MODIFIED"
        } else {
            "ADDED"
        };
        let previous = inner.objects.get(&key).cloned();
        let stored = inner.record(kind, key, object, previous.as_ref());
        self.notify(inner);
        stored
    }

    /// Removes an object; a watch sees it DELETED at a new version.
    pub fn delete(&self, key: &Key) -> Option<Value> {
        let mut inner = self.lock();
        let object = inner.objects.remove(key)?;
        inner.version += 1;
        let mut object = object;
        object["metadata"]["resourceVersion"] = json!(inner.version.to_string());
        let change = Change {
            version: inner.version,
            kind: "DELETED",
            key: key.clone(),
            object: object.clone(),
        };
        inner.history.push(change);
        self.notify(inner);
        Some(object)
    }

    /// A client's create: 409 when the object exists, 422 when its name is invalid. Without a
    /// name, `metadata.generateName` (cut to 58 characters) plus 5 random characters, as the
    /// API server makes one.
    pub fn create(&self, mut object: Value) -> Result<Value, Refused> {
        let meta = &mut object["metadata"];
        if meta["name"].as_str().is_none_or(str::is_empty)
            && let Some(prefix) = meta["generateName"].as_str()
        {
            let prefix: String = prefix.chars().take(58).collect();
            let suffix: String = (0..5)
                .map(|_| fastrand::choice(GENERATED_CHARS).unwrap_or(&'x'))
                .collect();
            meta["name"] = json!(format!("{prefix}{suffix}"));
        }
        let name = meta["name"].as_str().unwrap_or_default();
        if !is_dns_subdomain(name) {
            return Err(Refused::Invalid(format!(
                "metadata.name: Invalid value: {name:?}: a lowercase RFC 1123 subdomain of at most 253 characters"
            )));
        }
        let key = Key::of(&object);
        let mut inner = self.lock();
        if inner.objects.contains_key(&key) {
            return Err(Refused::Conflict("AlreadyExists"));
        }
        let stored = inner.record("ADDED", key, object, None);
        self.notify(inner);
        Ok(stored)
    }

    /// A client's update (PUT): the body's resourceVersion, when set, must be the stored one.
    /// With `only_status`, everything but `status` is kept (the `/status` subresource).
    pub fn replace(&self, key: &Key, object: Value, only_status: bool) -> Result<Value, Refused> {
        let mut inner = self.lock();
        let current = inner.objects.get(key).cloned().ok_or(Refused::NotFound)?;
        let claimed = &object["metadata"]["resourceVersion"];
        if !claimed.is_null() && *claimed != current["metadata"]["resourceVersion"] {
            return Err(Refused::Conflict("Conflict"));
        }
        let next = if only_status {
            with_status(current.clone(), object["status"].clone())
        } else {
            object
        };
        let stored = inner.record("MODIFIED", key.clone(), next, Some(&current));
        self.notify(inner);
        Ok(stored)
    }

    /// A client's JSON merge patch (RFC 7386).
    pub fn merge_patch(&self, key: &Key, patch: &Value, only_status: bool) -> Result<Value, Refused> {
        let mut inner = self.lock();
        let current = inner.objects.get(key).cloned().ok_or(Refused::NotFound)?;
        let mut next = current.clone();
        if only_status {
            if let Some(status) = patch.get("status") {
                merge(&mut next["status"], status);
            }
        } else {
            merge(&mut next, patch);
        }
        let stored = inner.record("MODIFIED", key.clone(), next, Some(&current));
        self.notify(inner);
        Ok(stored)
    }

    /// The objects of `plural` in `namespace` (all when `None`) that `selects`, at the version now.
    pub fn list(&self, plural: &str, namespace: Option<&str>, selects: impl Fn(&Value) -> bool) -> (u64, Vec<Value>) {
        let inner = self.lock();
        let items = inner
            .objects
            .iter()
            .filter(|(key, object)| {
                key.plural == plural && namespace.is_none_or(|ns| key.namespace == ns) && selects(object)
            })
            .map(|(_, object)| object.clone())
            .collect();
        (inner.version, items)
    }

    /// One page of [`Store::list`]: at most `limit` objects whose (namespace, name) sorts after
    /// `after`, and whether more follow. Pages are not a snapshot: a list+watch client that
    /// watches from the first page's version still sees every change made between pages.
    pub fn list_page(
        &self,
        plural: &str,
        namespace: Option<&str>,
        after: Option<(&str, &str)>,
        limit: usize,
        selects: impl Fn(&Value) -> bool,
    ) -> (u64, Vec<Value>, bool) {
        let inner = self.lock();
        let mut items = inner
            .objects
            .iter()
            .filter(|(key, _)| key.plural == plural && namespace.is_none_or(|ns| key.namespace == ns))
            .filter(|(key, _)| after.is_none_or(|after| (key.namespace.as_str(), key.name.as_str()) > after))
            .filter(|(_, object)| selects(object))
            .map(|(_, object)| object.clone());
        let page: Vec<Value> = items.by_ref().take(limit).collect();
        let more = items.next().is_some();
        (inner.version, page, more)
    }

    /// The changes after `after` to objects of `plural` in `namespace`.
    pub fn changes_after(&self, after: u64, plural: &str, namespace: Option<&str>) -> Vec<Change> {
        let inner = self.lock();
        let start = inner.history.partition_point(|change| change.version <= after);
        inner.history[start..]
            .iter()
            .filter(|change| change.key.plural == plural && namespace.is_none_or(|ns| change.key.namespace == ns))
            .cloned()
            .collect()
    }

    /// Wakes the watches once the lock is released.
    fn notify(&self, inner: MutexGuard<'_, Inner>) {
        let version = inner.version;
        drop(inner);
        self.latest.send_replace(version);
    }
}

impl Inner {
    /// Stores `object` at the next version, with the metadata the server owns.
    fn record(&mut self, kind: &'static str, key: Key, mut object: Value, previous: Option<&Value>) -> Value {
        self.version += 1;
        let resource = Resource::by_kind(object["kind"].as_str().expect("objects carry their kind"));
        object["apiVersion"] = json!(resource.api_version());
        let meta = &mut object["metadata"];
        meta["resourceVersion"] = json!(self.version.to_string());
        if resource.namespaced {
            meta["namespace"] = json!(key.namespace);
        }
        match previous {
            Some(previous) => {
                meta["uid"] = previous["metadata"]["uid"].clone();
                meta["creationTimestamp"] = previous["metadata"]["creationTimestamp"].clone();
            }
            None => {
                meta["uid"] = json!(format!("uid-{}-{}-{}", key.plural, key.namespace, key.name));
                meta["creationTimestamp"] = json!(now_rfc3339());
            }
        }
        self.objects.insert(key.clone(), object.clone());
        self.history.push(Change {
            version: self.version,
            kind,
            key,
            object: object.clone(),
        });
        object
    }
}

/// What the API server draws generated name suffixes from (no vowels, no look-alikes).
const GENERATED_CHARS: &[char] = &[
    'b', 'c', 'd', 'f', 'g', 'h', 'j', 'k', 'l', 'm', 'n', 'p', 'q', 'r', 's', 't', 'v', 'w', 'x', 'z', '2', '4', '5',
    '6', '7', '8', '9',
];

/// RFC 1123 subdomain, as most object names must be: dot-separated labels of lowercase letters,
/// digits and `-`, each starting and ending alphanumeric; at most 253 characters.
pub fn is_dns_subdomain(name: &str) -> bool {
    let label = |label: &str| {
        let bytes = label.as_bytes();
        !bytes.is_empty()
            && bytes
                .iter()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
            && bytes.first() != Some(&b'-')
            && bytes.last() != Some(&b'-')
    };
    !name.is_empty() && name.len() <= 253 && name.split('.').all(label)
}

fn with_status(mut object: Value, status: Value) -> Value {
    match object.as_object_mut() {
        Some(fields) if status.is_null() => {
            fields.remove("status");
        }
        Some(fields) => {
            fields.insert("status".to_string(), status);
        }
        None => {}
    }
    object
}

/// RFC 7386: objects merge key by key, `null` removes, anything else replaces.
pub fn merge(target: &mut Value, patch: &Value) {
    let Some(patch) = patch.as_object() else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = json!({});
    }
    let fields = target.as_object_mut().expect("made an object above");
    for (key, value) in patch {
        if value.is_null() {
            fields.remove(key);
        } else {
            merge(fields.entry(key.clone()).or_insert(Value::Null), value);
        }
    }
}

/// Seconds precision, as `metadata.creationTimestamp` is written.
fn now_rfc3339() -> String {
    let seconds = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs();
    k8s_openapi::jiff::Timestamp::from_second(i64::try_from(seconds).expect("in range"))
        .expect("in range")
        .to_string()
}
