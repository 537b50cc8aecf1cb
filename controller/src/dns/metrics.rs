//! Managed DNS's own metrics: the states an operator should be paged for, each a gauge that is 1
//! while it lasts (node-local-dns left alone, a Corefile that never reloads, a prune on hold).

use prometheus_client::{metrics::gauge::Gauge, registry::Registry};
use shunt_proxy::dataplane::register;

#[derive(Clone, Debug, Default)]
pub struct DnsMetrics {
    /// node-local-dns runs and shunt's block is not in its Corefile: its pods bypass the rules.
    pub node_local_unmanaged: Gauge,
    /// The edited Corefile has no `reload`: CoreDNS never loads the edits until restarted.
    pub corefile_without_reload: Gauge,
    /// A change removing most (or all) of the rules is waiting out `--dns-prune-delay`.
    pub prune_waiting: Gauge,
}

impl DnsMetrics {
    pub fn register(registry: &mut Registry) -> Self {
        DnsMetrics {
            node_local_unmanaged: register(
                registry,
                "shunt_dns_node_local_unmanaged",
                "1 while node-local-dns exists and shunt's block is not in its Corefile (its pods resolve served hosts past shunt)",
                Gauge::default(),
            ),
            corefile_without_reload: register(
                registry,
                "shunt_dns_corefile_without_reload",
                "1 while the managed Corefile has no reload plugin (CoreDNS loads the rules only on restart)",
                Gauge::default(),
            ),
            prune_waiting: register(
                registry,
                "shunt_dns_prune_waiting",
                "1 while a change removing more than half of the managed DNS rules waits --dns-prune-delay",
                Gauge::default(),
            ),
        }
    }
}

/// 1 for true, 0 for false.
pub fn flag(gauge: &Gauge, on: bool) {
    gauge.set(i64::from(on));
}
