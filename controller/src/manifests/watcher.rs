//! The source of `shunt serve`: manifest files, polled (cheap `stat`s), so an edit is live within
//! a poll interval whatever the editor or volume does to the file.
//!
//! ```text
//! files ─poll─▶ last good objects per file ─▶ ClusterState ─compile─▶ TableSpec ─▶ ControlPlane
//!   │                  └ objects that differ from the file's previous ones ─▶ Changes ─┘
//!   └ parse error: reported (path, document), that file's previous objects kept
//! ```
//! The compile is told which objects changed, so it redoes only the Ingresses they concern and
//! no decoded object is kept between compiles. After the first compile, the state holds only
//! the objects the compile reads ([`Reads`]): decoding every object at each edit left the
//! allocator's pages partly used next to the new table's, and resident memory grew by edit.

use std::{
    collections::{BTreeMap, BTreeSet},
    path::{Path, PathBuf},
    time::{Duration, SystemTime},
};

use tracing::{debug, warn};

use crate::{
    compile::{Changes, ClusterState, CompileOptions, Reads},
    control::{ControlPlane, Source},
    manifests::{self, CompactObjects, ManifestError, Object},
    metrics::ControllerMetrics,
    objects::Named,
};

/// Tracks the manifest files under some roots and the last good objects of each.
pub struct ManifestWatcher {
    roots: Vec<PathBuf>,
    files: BTreeMap<PathBuf, WatchedFile>,
    /// Built-in documents that never change (the demo's).
    fixed: Vec<Object>,
    /// Objects changed since the last [`ManifestWatcher::take_changes`].
    changes: Changes,
    /// The files those objects are in now (a removed file is in none).
    changed_files: BTreeSet<PathBuf>,
}

struct WatchedFile {
    root: usize,
    fingerprint: Option<Fingerprint>,
    /// Compact: at 10,000 objects parsed values would be most of the process's memory.
    objects: CompactObjects,
}

/// Cheap change detection: any edit, replace or rename changes one of these.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Fingerprint {
    len: u64,
    modified: Option<SystemTime>,
    #[cfg(unix)]
    inode: u64,
}

// === impl ManifestWatcher ===

impl ManifestWatcher {
    /// Fails when a root does not exist: a typo should stop startup, not serve nothing.
    pub fn new(roots: Vec<PathBuf>) -> Result<Self, ManifestError> {
        if let Some(root) = roots.iter().find(|root| !root.exists()) {
            return Err(ManifestError::Missing { path: root.clone() });
        }
        Ok(ManifestWatcher {
            roots,
            files: BTreeMap::new(),
            fixed: Vec::new(),
            changes: everything(),
            changed_files: BTreeSet::new(),
        })
    }

    pub fn with_fixed(fixed: Vec<Object>) -> Self {
        ManifestWatcher {
            roots: Vec::new(),
            files: BTreeMap::new(),
            fixed,
            changes: everything(),
            changed_files: BTreeSet::new(),
        }
    }

    /// Re-reads what changed. True when the objects differ from the last poll.
    pub fn poll(&mut self, metrics: &ControllerMetrics) -> bool {
        let mut changed = false;
        let mut seen = BTreeSet::new();
        for root_index in 0..self.roots.len() {
            let paths = match manifests::expand(std::slice::from_ref(&self.roots[root_index])) {
                Ok(paths) => paths,
                Err(error) => {
                    // A root that vanished for a moment (an editor's save): keep its files.
                    let root = self.roots[root_index].display();
                    debug!(%error, path = %root, "Manifest path unreadable, keeping its last objects");
                    seen.extend(
                        self.files
                            .iter()
                            .filter(|(_, f)| f.root == root_index)
                            .map(|(p, _)| p.clone()),
                    );
                    continue;
                }
            };
            for path in paths {
                changed |= self.read_file(root_index, &path, metrics);
                seen.insert(path);
            }
        }
        let before = self.files.len();
        let changes = &mut self.changes;
        self.files.retain(|path, file| {
            let keep = seen.contains(path);
            if !keep && !changes.everything {
                note_changes(changes, &file.objects.decode(), &[]);
            }
            keep
        });
        changed || before != self.files.len()
    }

    /// Reads `path` again if its fingerprint changed. True when its objects differ from the
    /// last good ones; a file that fails to parse keeps those.
    fn read_file(&mut self, root: usize, path: &Path, metrics: &ControllerMetrics) -> bool {
        let fingerprint = fingerprint(path);
        let entry = self.files.entry(path.to_path_buf()).or_insert_with(|| WatchedFile {
            root,
            fingerprint: None,
            objects: CompactObjects::default(),
        });
        if fingerprint.is_some() && entry.fingerprint == fingerprint {
            return false;
        }
        entry.fingerprint = fingerprint;
        let parsed = manifests::parse_file(path).and_then(|objects| {
            debug!(path = %path.display(), objects = objects.len(), "Loaded manifest file");
            CompactObjects::encode(objects).map_err(|source| ManifestError::Keep {
                path: path.to_path_buf(),
                source,
            })
        });
        let objects = match parsed {
            Ok(objects) => objects,
            Err(error) => {
                metrics.source_errors.inc();
                warn!(%error, path = %path.display(), "Manifest file rejected, its last good objects keep serving");
                return false;
            }
        };
        if entry.objects == objects {
            return false;
        }
        // Until the first compile takes the changes, everything is redone anyway.
        if !self.changes.everything {
            note_changes(&mut self.changes, &entry.objects.decode(), &objects.decode());
            self.changed_files.insert(path.to_path_buf());
        }
        entry.objects = objects;
        true
    }

    /// What changed since the last call (everything, the first time).
    pub fn take_changes(&mut self) -> Changes {
        self.changed_files.clear();
        std::mem::take(&mut self.changes)
    }

    /// The objects of the files changed since the last [`ManifestWatcher::take_changes`]: what
    /// [`ControlPlane::reads`] needs besides the changes.
    pub fn changed_state(&self) -> ClusterState {
        let files = self.changed_files.iter().filter_map(|path| self.files.get(path));
        ClusterState::from_objects(files.flat_map(|f| f.objects.decode()))
    }

    /// The objects `reads` wants. Files are decoded one at a time and what is not wanted is
    /// dropped at once, so an edit holds a few objects instead of every one (see [`Reads`]).
    pub fn state_reading(&self, reads: &Reads) -> ClusterState {
        let wanted = |object: &Object| match object {
            Object::Ingress(o) => {
                let tls = o.spec.as_ref().and_then(|spec| spec.tls.as_deref());
                reads.wants_ingress_named(&o.metadata, tls)
            }
            Object::Service(o) => reads.wants_service(o),
            Object::EndpointSlice(o) => reads.wants_slice(o),
            Object::IngressClass(_) | Object::Secret(_) | Object::ConfigMap(_) | Object::TkeServiceConfig(_) => true,
            // The Gateway API layer is compiled whole: its objects are always read.
            Object::GatewayClass(_)
            | Object::Gateway(_)
            | Object::HTTPRoute(_)
            | Object::GRPCRoute(_)
            | Object::ReferenceGrant(_)
            | Object::Namespace(_) => true,
            Object::Skipped(_) => false,
        };
        let objects = self.fixed.iter().filter(|o| wanted(o)).cloned().chain(
            self.files
                .values()
                .flat_map(|f| f.objects.decode().into_iter().filter(|o| wanted(o))),
        );
        ClusterState::from_objects(objects)
    }

    /// Every object currently loaded, fixed ones first.
    pub fn state(&self) -> ClusterState {
        let objects = self
            .fixed
            .iter()
            .cloned()
            .chain(self.files.values().flat_map(|f| f.objects.decode()));
        ClusterState::from_objects(objects)
    }
}

fn everything() -> Changes {
    Changes {
        everything: true,
        ..Default::default()
    }
}

/// Adds the objects that differ between a file's `old` and `new` objects to `changes`.
fn note_changes(changes: &mut Changes, old: &[Object], new: &[Object]) {
    fn key(kind: u8, object: &impl Named) -> (u8, String, String) {
        let (namespace, name) = object.namespace_name();
        let namespace = namespace.unwrap_or(crate::compile::DEFAULT_NAMESPACE);
        (kind, namespace.to_string(), name.unwrap_or_default().to_string())
    }
    let keyed = |object: &Object| match object {
        Object::Ingress(o) => Some(key(0, o)),
        Object::IngressClass(o) => Some(key(1, o)),
        // Read by the nginx and qcloud profiles: a change compiles everything again (changes are rare).
        Object::ConfigMap(o) => Some(key(1, o)),
        Object::TkeServiceConfig(o) => Some(key(4, o)),
        Object::Service(o) => Some(key(2, o)),
        Object::EndpointSlice(o) => Some(key(3, o)),
        // TLS and the Gateway API layer are compiled whole at each compile; skipped kinds are not compiled.
        Object::Secret(_)
        | Object::GatewayClass(_)
        | Object::Gateway(_)
        | Object::HTTPRoute(_)
        | Object::GRPCRoute(_)
        | Object::ReferenceGrant(_)
        | Object::Namespace(_)
        | Object::Skipped(_) => None,
    };
    let before: BTreeMap<_, &Object> = old.iter().filter_map(|o| Some((keyed(o)?, o))).collect();
    let after: BTreeMap<_, &Object> = new.iter().filter_map(|o| Some((keyed(o)?, o))).collect();
    let differ = before
        .iter()
        .filter(|(key, object)| after.get(*key) != Some(*object))
        .chain(after.iter().filter(|(key, object)| before.get(*key) != Some(*object)));
    for ((kind, namespace, name), _) in differ {
        let key = (namespace.clone(), name.clone());
        match kind {
            0 => _ = changes.ingresses.insert(key),
            1 | 4 => changes.ingress_classes = true,
            2 => _ = changes.services.insert(key),
            _ => _ = changes.endpoint_slices.insert(key),
        }
    }
}

fn fingerprint(path: &Path) -> Option<Fingerprint> {
    let meta = std::fs::metadata(path).ok()?;
    Some(Fingerprint {
        len: meta.len(),
        modified: meta.modified().ok(),
        #[cfg(unix)]
        inode: std::os::unix::fs::MetadataExt::ino(&meta),
    })
}

/// What changed since the last compile, and the objects the next compile reads: all of them
/// when it compiles everything, else only those [`ControlPlane::reads`] names.
fn next_state(
    watcher: &mut ManifestWatcher,
    control: &ControlPlane,
    options: &CompileOptions,
) -> (ClusterState, Changes) {
    let changed = watcher.changed_state();
    let changes = watcher.take_changes();
    let reads = control.reads(options, &changes, &changed);
    drop(changed);
    let partial = reads.and_then(|reads| {
        let partial = watcher.state_reading(&reads);
        reads.suffices(&partial).then_some(partial)
    });
    let state = partial.unwrap_or_else(|| watcher.state());
    (state, changes)
}

/// Manifest files as the compile loop's source ([`crate::control::compile_loop`]).
pub struct ManifestSource {
    watcher: ManifestWatcher,
    /// How often the files are checked for changes.
    interval: Duration,
}

impl ManifestSource {
    pub fn new(watcher: ManifestWatcher, interval: Duration) -> Self {
        ManifestSource { watcher, interval }
    }
}

impl Source for ManifestSource {
    /// The first poll: files that fail to parse are reported and left out.
    async fn ready(&mut self, metrics: &ControllerMetrics) -> bool {
        self.watcher.poll(metrics);
        true
    }

    async fn changed(&mut self, metrics: &ControllerMetrics) {
        loop {
            tokio::time::sleep(self.interval).await;
            if self.watcher.poll(metrics) {
                return;
            }
        }
    }

    fn compile(&mut self, control: &mut ControlPlane, options: &CompileOptions) -> Option<()> {
        let (state, changes) = next_state(&mut self.watcher, control, options);
        control.compile_changes_and_publish(state, options, Some(&changes), |_| ())
    }
}

#[cfg(test)]
mod tests;
