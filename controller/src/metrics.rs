//! The control plane's metrics: what compile reported, and sources that failed to load.

use prometheus_client::{
    encoding::EncodeLabelSet,
    metrics::{counter::Counter, family::Family, gauge::Gauge},
    registry::Registry,
};

use crate::compile::Diagnostic;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabels {
    reason: &'static str,
}

#[derive(Clone, Default)]
pub struct ControllerMetrics {
    diagnostics: Family<ReasonLabels, Gauge>,
    pub source_errors: Counter,
    pub compiles: Counter,
    pub compile_panics: Counter,
}

impl ControllerMetrics {
    pub fn register(registry: &mut Registry) -> Self {
        let metrics = ControllerMetrics::default();
        registry.register(
            "shunt_ingress_diagnostics",
            "Problems the last compile found in Ingresses, by reason (each skipped its path or backend)",
            metrics.diagnostics.clone(),
        );
        registry.register(
            "shunt_source_errors",
            "Manifest files or API objects that failed to load; the last good version kept serving",
            metrics.source_errors.clone(),
        );
        registry.register("shunt_compiles", "Route table compilations", metrics.compiles.clone());
        registry.register(
            "shunt_compile_panics",
            "Compiles that panicked; the last table kept serving until the next change",
            metrics.compile_panics.clone(),
        );
        metrics
    }

    /// Sets the per-reason gauges to the last compile's counts (reasons now absent go to 0).
    pub fn set_diagnostics(&self, diagnostics: &[Diagnostic]) {
        self.diagnostics.clear();
        for diagnostic in diagnostics {
            self.diagnostics
                .get_or_create(&ReasonLabels {
                    reason: diagnostic.reason.as_str(),
                })
                .inc();
        }
    }
}
