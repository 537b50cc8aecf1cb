//! Standalone mode: manifest files in, route tables out. Files are polled (cheap `stat`s), so an
//! edit is live within a poll interval whatever the editor or volume does to the file.
//!
//! ```text
//! files ─poll─▶ last good objects per file ─▶ ClusterState ─compile─▶ TableSpec ─▶ RoutePublisher
//!   └ parse error: reported (path, document), that file's previous objects kept
//! ```

use std::{
    collections::{BTreeMap, BTreeSet},
    path::PathBuf,
    time::{Duration, Instant, SystemTime},
};

use k8s_openapi::jiff::Timestamp;
use shunt_proxy::publish::{Published, RoutePublisher};
use tracing::{debug, info, warn};

use crate::{
    compile::{ClusterState, CompileOptions, Compiled, compile},
    manifests::{self, Object},
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
}

struct WatchedFile {
    root: usize,
    fingerprint: Option<Fingerprint>,
    objects: Vec<Object>,
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
        })
    }

    pub fn with_fixed(fixed: Vec<Object>) -> Self {
        ManifestWatcher {
            roots: Vec::new(),
            files: BTreeMap::new(),
            fixed,
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
                    objects: Vec::new(),
                });
                if fingerprint.is_some() && entry.fingerprint == fingerprint {
                    continue;
                }
                entry.fingerprint = fingerprint;
                match manifests::parse_file(&path) {
                    Ok(objects) => {
                        debug!(path = %path.display(), objects = objects.len(), "Loaded manifest file");
                        if entry.objects != objects {
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
        self.files.retain(|path, _| seen.contains(path));
        changed || before != self.files.len()
    }

    /// Every object currently loaded, fixed ones first.
    pub fn state(&self) -> ClusterState {
        let objects = self
            .fixed
            .iter()
            .cloned()
            .chain(self.files.values().flat_map(|f| f.objects.iter().cloned()));
        ClusterState::from_objects(objects)
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

/// Polls, compiles and publishes until `shutdown` resolves.
pub async fn run(
    mut watcher: ManifestWatcher,
    options: CompileOptions,
    mut publisher: RoutePublisher,
    metrics: ControllerMetrics,
    interval: Duration,
    shutdown: impl std::future::Future<Output = ()>,
) {
    tokio::pin!(shutdown);
    let mut reported = BTreeSet::new();
    let mut last_compile: Option<Instant> = None;
    loop {
        let task_metrics = metrics.clone();
        let mut task_options = options.clone();
        task_options.now = Some(Timestamp::now());
        // Also recompile now and then with nothing changed: a certificate may have expired.
        let due = last_compile.is_none_or(|at| at.elapsed() >= RECOMPILE_EVERY);
        let poll = tokio::task::spawn_blocking(move || {
            let changed = watcher.poll(&task_metrics);
            let compiled = (changed || due).then(|| compile(&watcher.state(), &task_options));
            (watcher, compiled)
        });
        let compiled;
        (watcher, compiled) = poll.await.expect("manifest polling does not panic");
        if let Some(compiled) = compiled {
            last_compile = Some(Instant::now());
            metrics.compiles.inc();
            publish(&mut publisher, compiled, &metrics, &mut reported);
        }
        tokio::select! {
            () = tokio::time::sleep(interval) => {}
            () = &mut shutdown => return,
        }
    }
}

/// Reports new diagnostics and publishes the table. Shared by every route source.
pub fn publish(
    publisher: &mut RoutePublisher,
    compiled: Compiled,
    metrics: &ControllerMetrics,
    reported: &mut BTreeSet<(String, String, String)>,
) {
    let Compiled {
        table,
        diagnostics,
        default_certificate_error,
        shadow,
        ..
    } = compiled;
    metrics.set_diagnostics(&diagnostics);
    metrics.set_shadow(&shadow);
    let mut current: BTreeSet<_> = diagnostics
        .iter()
        .map(|d| {
            (
                format!("{}/{}", d.namespace, d.name),
                d.reason.as_str().to_string(),
                d.message.clone(),
            )
        })
        .collect();
    for (ingress, reason, message) in current.difference(reported) {
        warn!(ingress = %ingress, reason = %reason, "{message}");
    }
    if let Some(error) = default_certificate_error {
        let entry = (String::new(), "DefaultCertificate".to_string(), error);
        if !reported.contains(&entry) {
            warn!(
                "{}; clients without a matching certificate get the self-signed fallback",
                entry.2
            );
        }
        current.insert(entry);
    }
    current.extend(crate::shadow_log::log_verdicts(&shadow, reported));
    *reported = current;
    let hosts = table.hosts.len();
    let paths: usize = table.hosts.iter().map(|h| h.paths.len()).sum();
    let backends = table.backends.len();
    let endpoints: usize = table.backends.values().map(|b| b.endpoints.len()).sum();
    match publisher.publish(table) {
        Published::Unchanged => debug!("Route table unchanged"),
        Published::Swapped { warnings } => {
            for warning in warnings {
                warn!(host = %warning.host, pattern = %warning.pattern, reason = %warning.reason, "Path left out of the table");
            }
            info!(
                hosts,
                paths,
                backends,
                endpoints,
                diagnostics = diagnostics.len(),
                "Published route table"
            );
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
    let dataplane = crate::dataplane::Dataplane::new(&mut registry);
    let metrics = ControllerMetrics::register(&mut registry);
    let shutdown = crate::dataplane::Shutdown::on_signals();
    let source = tokio::spawn(run(
        watcher,
        options,
        dataplane.publisher,
        metrics,
        poll_interval,
        shutdown.clone().requested(),
    ));
    crate::dataplane::serve(proxy, dataplane.reader, dataplane.metrics, registry, shutdown).await?;
    source.abort();
    Ok(())
}
