//! The control plane, kept off the data path: the compile loop and the table build run on a
//! thread of their own, and only the publish (one `ArcSwap` store) reaches the proxy workers.
//!
//! ```text
//! shunt-control thread:
//!   Source (files | API stores) ─change, or RECOMPILE_EVERY─▶ compile ─▶ RouteTable::build ─▶ store ══▶ proxy workers
//!                                                             └ panic: logged, shunt_compile_panics_total + 1,
//!                                                               last table serves on, next try on the next change
//! ```
//! The compile is incremental ([`Incremental`]): its kept contributions live on this thread, and
//! a panic drops them, so the next compile starts from scratch.

use std::{
    collections::BTreeSet,
    future::Future,
    panic::{AssertUnwindSafe, catch_unwind},
    time::Duration,
};

use k8s_openapi::jiff::Timestamp;
use shunt_proxy::publish::{Published, RoutePublisher, SpecChanges};
use tracing::{debug, error, info, warn};

use crate::{
    compile::{Changes, ClusterState, CompileOptions, Compiled, Incremental, Reads},
    metrics::ControllerMetrics,
};

/// How often the table is recompiled with no change in sight, so an expired certificate is
/// noticed (and its hosts fall back to the default) without an edit. Checks of the cluster's
/// DNS (the CoreDNS version, the rules last written) are trusted for as long.
pub const RECOMPILE_EVERY: Duration = Duration::from_secs(60);

/// The compile step; a seam so tests can make it panic.
pub type CompileFn = fn(&ClusterState, &CompileOptions) -> Compiled;

/// Compiles states and publishes their tables; owned by the control thread.
pub struct ControlPlane {
    publisher: RoutePublisher,
    metrics: ControllerMetrics,
    /// Diagnostics already logged, so each is logged once while it lasts.
    reported: BTreeSet<(String, String, String)>,
    /// Replaces the incremental compile (tests inject one that panics).
    compile: Option<CompileFn>,
    incremental: Incremental,
}

/// Runs `task` on a new thread with its own single-threaded runtime, so whatever it computes
/// never stalls a proxy worker's connections or health probes.
pub fn spawn_thread<F, Fut>(task: F) -> std::io::Result<std::thread::JoinHandle<()>>
where
    F: FnOnce() -> Fut + Send + 'static,
    Fut: Future<Output = ()>,
{
    std::thread::Builder::new().name("shunt-control".into()).spawn(move || {
        match tokio::runtime::Builder::new_current_thread().enable_all().build() {
            Ok(runtime) => runtime.block_on(task()),
            Err(error) => error!(%error, "Control plane runtime failed to start; no table will be published"),
        }
    })
}

/// Where the compile loop takes its objects from: manifest files (`shunt serve`) or the API's
/// stores (`shunt run`).
pub trait Source {
    /// Resolves once the first state is complete; `false` when it never will be.
    fn ready(&mut self, metrics: &ControllerMetrics) -> impl Future<Output = bool>;

    /// Resolves once something changed since the last [`Source::compile`].
    fn changed(&mut self, metrics: &ControllerMetrics) -> impl Future<Output = ()>;

    /// Compiles the current objects with `control` and hands on what the source's owner needs;
    /// `None` when the compile panicked.
    fn compile(&mut self, control: &mut ControlPlane, options: &CompileOptions) -> Option<()>;
}

/// Compiles and publishes what `source` holds, again after each change and at least every
/// [`RECOMPILE_EVERY`], until `shutdown` resolves. Meant for the control thread
/// ([`spawn_thread`]): a source may block it while it reads or compiles.
pub async fn compile_loop(
    mut source: impl Source,
    options: CompileOptions,
    mut control: ControlPlane,
    shutdown: impl Future<Output = ()>,
) {
    let compiles = async {
        if !source.ready(control.metrics()).await {
            return;
        }
        loop {
            let mut task_options = options.clone();
            task_options.now = Some(Timestamp::now());
            let panicked = source.compile(&mut control, &task_options).is_none();
            crate::residency::after_compile();
            // Nothing changed for a while: compile anyway, a certificate may have expired. Not
            // after a panic: the same objects would panic the same way.
            let changed = source.changed(control.metrics());
            if panicked {
                changed.await;
            } else {
                let _ = tokio::time::timeout(RECOMPILE_EVERY, changed).await;
            }
        }
    };
    tokio::select! {
        () = compiles => {}
        () = shutdown => {}
    }
}

// === impl ControlPlane ===

impl ControlPlane {
    pub fn new(publisher: RoutePublisher, metrics: ControllerMetrics) -> Self {
        ControlPlane {
            publisher,
            metrics,
            reported: BTreeSet::new(),
            compile: None,
            incremental: Incremental::default(),
        }
    }

    /// Replaces the compile step (tests inject one that panics).
    pub fn with_compile(mut self, compile: CompileFn) -> Self {
        self.compile = Some(compile);
        self
    }

    pub fn metrics(&self) -> &ControllerMetrics {
        &self.metrics
    }

    /// What the next compile of `changes` reads of the state ([`Incremental::reads`]); `None`
    /// when it reads all of it, as an injected compile step does.
    pub fn reads(&self, options: &CompileOptions, changes: &Changes, changed: &ClusterState) -> Option<Reads> {
        match self.compile {
            Some(_) => None,
            None => self.incremental.reads(options, changes, changed),
        }
    }

    /// Compiles `state`, hands the result to `keep` (what the caller needs besides the table),
    /// then publishes. `None` when any of it panicked: counted and logged, the live table stays.
    /// What changed is found by comparing the objects' `Arc`s with the previous state's.
    pub fn compile_and_publish<T>(
        &mut self,
        state: &ClusterState,
        options: &CompileOptions,
        keep: impl FnOnce(&Compiled) -> T,
    ) -> Option<T> {
        self.compile_changes_and_publish(state, options, None, keep)
    }

    /// [`ControlPlane::compile_and_publish`] told what changed since the previous call, for a
    /// caller whose objects are new `Arc`s each time (`shunt serve` decodes its files). An owned
    /// `state` is dropped once compiled, before the table is built: the publish's long-lived
    /// allocations then reuse its memory instead of taking more (`shunt serve` at 10k Ingresses).
    pub fn compile_changes_and_publish<T>(
        &mut self,
        state: impl std::borrow::Borrow<ClusterState>,
        options: &CompileOptions,
        changes: Option<&Changes>,
        keep: impl FnOnce(&Compiled) -> T,
    ) -> Option<T> {
        let step = AssertUnwindSafe(|| {
            let compiled = match (self.compile, changes) {
                (Some(compile), _) => compile(state.borrow(), options),
                (None, Some(changes)) => self.incremental.compile_changes(state.borrow(), options, changes),
                (None, None) => self.incremental.compile(state.borrow(), options),
            };
            drop(state);
            // What changed since the table this plane published last (its previous compile).
            let spec_changes = match self.compile {
                Some(_) => None,
                None => self.incremental.spec_changes().cloned(),
            };
            self.metrics.compiles.inc();
            let kept = keep(&compiled);
            self.publish(compiled, spec_changes);
            kept
        });
        let outcome = catch_unwind(step);
        // The old table and the compile's scratch are freed by now (or by the worker that
        // drops the old table last, which is busy and reuses them).
        crate::allocator::release_freed();
        match outcome {
            Ok(kept) => Some(kept),
            Err(panic) => {
                // Half-updated contributions would be wrong next time: start over.
                self.incremental = Incremental::default();
                self.metrics.compile_panics.inc();
                let message = panic_message(&*panic);
                error!(panic = %message, "Compile panicked; the last table keeps serving until the next change");
                None
            }
        }
    }

    /// Reports new diagnostics and publishes the table (building only what `changes` names).
    fn publish(&mut self, compiled: Compiled, changes: Option<SpecChanges>) {
        let Compiled {
            table,
            diagnostics,
            default_certificate_error,
            shadow,
            shadow_gateway,
            ..
        } = compiled;
        self.metrics.set_diagnostics(&diagnostics);
        self.metrics.set_shadow([&shadow, &shadow_gateway]);
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
        for (ingress, reason, message) in current.difference(&self.reported) {
            warn!(ingress = %ingress, reason = %reason, "{message}");
        }
        if let Some(error) = default_certificate_error {
            let entry = (String::new(), "DefaultCertificate".to_string(), error);
            if !self.reported.contains(&entry) {
                warn!(
                    "{}; clients without a matching certificate get the self-signed fallback",
                    entry.2
                );
            }
            current.insert(entry);
        }
        let logged = [
            (&shadow, "shadow"),
            (&shadow_gateway, crate::sources::gateway::SHADOW_DOCUMENT),
        ];
        for (verdicts, document) in logged {
            current.extend(crate::shadow::log::log_verdicts(verdicts, document, &self.reported));
        }
        self.reported = current;
        let hosts = table.hosts.len();
        let paths: usize = table.hosts.iter().map(|h| h.paths.len()).sum();
        let backends = table.backends.len();
        let endpoints: usize = table.backends.values().map(|b| b.endpoints.len()).sum();
        let published = match &changes {
            Some(changes) => self.publisher.publish_changed(table, changes),
            None => self.publisher.publish(table),
        };
        match published {
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
}

/// The text a panic was raised with, when it was a string.
fn panic_message(panic: &(dyn std::any::Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(not a string)")
}

#[cfg(test)]
mod tests;
