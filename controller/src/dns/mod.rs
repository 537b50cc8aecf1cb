//! The DNS side: CoreDNS `rewrite` rules that send the hostnames shunt serves to shunt's
//! Service, so in-cluster callers keep their URLs and skip the cloud load balancer.
//!
//! ```text
//! TableSpec hosts ─▶ policy (rewrite, or refuse with a reason) ─▶ stanza (exact: rewrite name
//!                    exact, *.x: anchored one-label regex; `# refused HOST: reason` comments)
//!                      └─▶ `shunt dns` prints it
//!                      └─▶ managed (leader, CoreDNS ≥ 1.8.4): ConfigMap `NS.NAME.override`
//!                          key, or the `# BEGIN shunt NS/NAME` … `# END shunt NS/NAME` block
//!                          of the Corefile's `.:53 {`; refusals become Events
//! ```

pub mod check;
mod corefile;
mod diagnostics;
mod event;
mod gate;
mod guards;
mod managed;
mod metrics;
pub mod nodelocal;
mod policy;
mod release;
pub mod resolve;
pub mod services;
mod stanza;
mod sync;
mod version;
pub mod view;

pub use self::{
    corefile::{CorefileError, kubernetes_zones, replace_block},
    diagnostics::{log_new, refusal_diagnostics},
    gate::RuleForm,
    guards::DEFAULT_PRUNE_DELAY,
    managed::{CorednsTarget, CorednsWriter},
    metrics::DnsMetrics,
    policy::{DnsDomain, DnsPolicy, Plan, Refusal, RefusalReason, parse_cluster_domain},
    release::{BEGIN_MARKER, END_MARKER, Release},
    stanza::{DnsExclude, Stanza, any_depth_regex, one_label_regex, served_hosts},
    sync::{ManagedDns, ManagedDnsConfig},
    version::{CorednsVersion, MIN_COREDNS, VIEW_COREDNS},
};
