//! The control plane's metrics: what compile reported, and sources that failed to load.

use std::sync::Arc;

use prometheus_client::{
    encoding::EncodeLabelSet,
    metrics::{counter::Counter, family::Family, gauge::Gauge},
    registry::Registry,
};

use shunt_proxy::dataplane::{gauge_value, register};

use crate::{
    compile::{Diagnostic, Reason},
    shadow::{HostVerdict, Verdict},
};

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabels {
    reason: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct VerdictLabels {
    verdict: &'static str,
}

#[derive(Clone, Default)]
pub struct ControllerMetrics {
    diagnostics: Family<ReasonLabels, Gauge>,
    /// Hosts managed DNS refused, counted by the leader after each compile; kept here so a
    /// compile's reset of the family does not drop them.
    dns_refused: Gauge,
    shadow_hosts: Family<VerdictLabels, Gauge>,
    pub source_errors: Counter,
    pub compiles: Counter,
    pub compile_panics: Counter,
}

impl ControllerMetrics {
    pub fn register(registry: &mut Registry) -> Self {
        ControllerMetrics {
            diagnostics: register(
                registry,
                "shunt_ingress_diagnostics",
                "Problems the last compile found in Ingresses, by reason (each skipped its path or backend)",
                Family::default(),
            ),
            dns_refused: Gauge::default(),
            shadow_hosts: register(
                registry,
                "shunt_shadow_hosts",
                "Shadowed load-balancer hosts by verdict: identical (served, rewritten in DNS) or refused (left to the load balancer)",
                Family::default(),
            ),
            source_errors: register(
                registry,
                "shunt_source_errors",
                "Manifest files or API objects that failed to load; the last good version kept serving",
                Counter::default(),
            ),
            compiles: register(
                registry,
                "shunt_compiles",
                "Route table compilations",
                Counter::default(),
            ),
            compile_panics: register(
                registry,
                "shunt_compile_panics",
                "Compiles that panicked; the last table kept serving until the next change",
                Counter::default(),
            ),
        }
    }

    /// Sets the per-verdict gauges to the last compile's counts over every shadowed source (the
    /// Ingresses' hosts and the shadowed Gateways' route hostnames), each verdict present even at 0.
    pub fn set_shadow(&self, sources: [&[Arc<HostVerdict>]; 2]) {
        for verdict in Verdict::ALL {
            let count = (sources.iter().flat_map(|verdicts| verdicts.iter()))
                .filter(|v| v.verdict == verdict)
                .count();
            self.shadow_hosts
                .get_or_create(&VerdictLabels {
                    verdict: verdict.as_str(),
                })
                .set(gauge_value(count));
        }
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
        self.set_dns_refusals_label();
    }

    /// Sets the `DnsRewriteRefused` count (leader, `--manage-coredns`).
    pub fn set_dns_refusals(&self, count: usize) {
        self.dns_refused.set(gauge_value(count));
        self.set_dns_refusals_label();
    }

    fn set_dns_refusals_label(&self) {
        let count = self.dns_refused.get();
        let labels = ReasonLabels {
            reason: Reason::DnsRewriteRefused.as_str(),
        };
        if count > 0 {
            self.diagnostics.get_or_create(&labels).set(count);
        } else {
            self.diagnostics.remove(&labels);
        }
    }
}
