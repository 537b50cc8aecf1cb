//! Standalone mode: manifest files in, route tables out. Files are polled (cheap `stat`s), so an
//! edit is live within a poll interval whatever the editor or volume does to the file.
//!
//! ```text
//! files ─poll─▶ last good objects per file ─▶ ClusterState ─compile─▶ TableSpec ─▶ ControlPlane
//!   │                  └ objects that differ from the file's previous ones ─▶ Changes ─┘
//!   └ parse error: reported (path, document), that file's previous objects kept
//! ```
//! The compile is told which objects changed, so it redoes only the Ingresses they concern and
//! no decoded object is kept between compiles. After the first compile, the state holds only
//! the objects the compile reads ([`Reads`]): decoding every object at each edit left the
//! allocator's pages partly used next to the new table's, ~4 MiB more resident by the 7th edit.

use std::{
    collections::{BTreeMap, BTreeSet},
    path::PathBuf,
    time::{Duration, Instant, SystemTime},
};

use k8s_openapi::jiff::Timestamp;
use tracing::{debug, warn};

use crate::{
    compile::{Changes, ClusterState, CompileOptions, Reads},
    control::ControlPlane,
    manifests::{self, CompactObjects, Object},
    metrics::ControllerMetrics,
};

/// How often the table is recompiled with no change in sight, so an expired certificate is
/// noticed (and its hosts fall back to the default) without an edit.
pub const RECOMPILE_EVERY: Duration = Duration::from_secs(60);

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
    pub fn new(roots: Vec<PathBuf>) -> anyhow::Result<Self> {
        for root in &roots {
            if !root.exists() {
                anyhow::bail!("manifest path {} does not exist", root.display());
            }
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
        for (root_index, root) in self.roots.iter().enumerate() {
            let paths = match manifests::expand(std::slice::from_ref(root)) {
                Ok(paths) => paths,
                Err(error) => {
                    // A root that vanished for a moment (an editor's save): keep its files.
                    debug!(%error, path = %root.display(), "Manifest path unreadable, keeping its last objects");
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
                seen.insert(path.clone());
                let fingerprint = fingerprint(&path);
                let entry = self.files.entry(path.clone()).or_insert_with(|| WatchedFile {
                    root: root_index,
                    fingerprint: None,
                    objects: CompactObjects::default(),
                });
                if fingerprint.is_some() && entry.fingerprint == fingerprint {
                    continue;
                }
                entry.fingerprint = fingerprint;
                let parsed = manifests::parse_file(&path).and_then(|objects| {
                    debug!(path = %path.display(), objects = objects.len(), "Loaded manifest file");
                    CompactObjects::encode(objects).map_err(|source| manifests::ManifestError::Keep {
                        path: path.clone(),
                        source,
                    })
                });
                match parsed {
                    Ok(objects) => {
                        if entry.objects != objects {
                            // Until the first compile takes the changes, everything is redone anyway.
                            if !self.changes.everything {
                                note_changes(&mut self.changes, &entry.objects.decode(), &objects.decode());
                                self.changed_files.insert(path.clone());
                            }
                            entry.objects = objects;
                            changed = true;
                        }
                    }
                    Err(error) => {
                        metrics.source_errors.inc();
                        warn!(%error, path = %path.display(), "Manifest file rejected, its last good objects keep serving");
                    }
                }
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
            Object::Ingress(o) => reads.wants_ingress(o),
            Object::Service(o) => reads.wants_service(o),
            Object::EndpointSlice(o) => reads.wants_slice(o),
            Object::IngressClass(_) | Object::Secret(_) => true,
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
    use k8s_openapi::Metadata;
    fn key<K: Metadata<Ty = k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta>>(
        kind: u8,
        object: &K,
    ) -> (u8, String, String) {
        let meta = object.metadata();
        let namespace = meta.namespace.as_deref().unwrap_or(crate::compile::DEFAULT_NAMESPACE);
        (kind, namespace.to_string(), meta.name.clone().unwrap_or_default())
    }
    let keyed = |object: &Object| match object {
        Object::Ingress(o) => Some(key(0, o)),
        Object::IngressClass(o) => Some(key(1, o)),
        Object::Service(o) => Some(key(2, o)),
        Object::EndpointSlice(o) => Some(key(3, o)),
        // TLS is walked whole at each compile; skipped kinds are not compiled.
        Object::Secret(_) | Object::Skipped(_) => None,
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
            1 => changes.ingress_classes = true,
            2 => _ = changes.services.insert(key),
            _ => _ = changes.endpoint_slices.insert(key),
        }
    }
}

fn fingerprint(path: &std::path::Path) -> Option<Fingerprint> {
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

/// Polls, compiles and publishes until `shutdown` resolves. Runs on the control thread, so the
/// polling and compiling may block it.
pub async fn run(
    mut watcher: ManifestWatcher,
    options: CompileOptions,
    mut control: ControlPlane,
    interval: Duration,
    shutdown: impl std::future::Future<Output = ()>,
) {
    tokio::pin!(shutdown);
    let mut last_compile: Option<Instant> = None;
    // After a panic, only a change compiles again: the same files would panic the same way.
    let mut panicked = false;
    loop {
        let changed = watcher.poll(control.metrics());
        // Also recompile now and then with nothing changed: a certificate may have expired.
        let due = !panicked && last_compile.is_none_or(|at| at.elapsed() >= RECOMPILE_EVERY);
        if changed || due {
            let mut task_options = options.clone();
            task_options.now = Some(Timestamp::now());
            last_compile = Some(Instant::now());
            let (state, changes) = next_state(&mut watcher, &control, &task_options);
            panicked = control
                .compile_changes_and_publish(state, &task_options, Some(&changes), |_| ())
                .is_none();
        }
        tokio::select! {
            () = tokio::time::sleep(interval) => {}
            () = &mut shutdown => return,
        }
    }
}

/// `shunt serve`: watch manifests and serve them until SIGTERM/SIGINT.
pub async fn serve(
    watcher: ManifestWatcher,
    proxy: &crate::cli::ProxyArgs,
    options: CompileOptions,
    poll_interval: Duration,
) -> anyhow::Result<()> {
    let mut registry = shunt_proxy::Registry::default();
    let dataplane = crate::dataplane::Dataplane::new(&mut registry, proxy.metrics_options());
    let metrics = ControllerMetrics::register(&mut registry);
    let shutdown = crate::dataplane::Shutdown::on_signals();
    let control = ControlPlane::new(dataplane.publisher, metrics);
    let stop = shutdown.clone().requested();
    crate::control::spawn_thread(move || run(watcher, options, control, poll_interval, stop))?;
    crate::dataplane::serve(proxy, dataplane.reader, dataplane.metrics, registry, shutdown).await
}

#[cfg(test)]
mod tests;
