//! The DNS side: CoreDNS `rewrite` rules that send the hostnames shunt serves to shunt's
//! Service, so in-cluster callers keep their URLs and skip the cloud load balancer, for address
//! records only, through node-local-dns too, and checked from where callers stand.
//!
//! ```text
//! TableSpec hosts ─▶ policy (rewrite, or refuse with a reason) ─▶ stanza (exact: rewrite name
//! (+ services: L4 names)                 exact, *.x: anchored regex; `# refused HOST: reason`)
//!                      └─▶ `shunt dns` prints it, the view block, the node-local-dns block
//!                      └─▶ sync (leader, managed): gate (CoreDNS ≥ 1.8.4; view ≥ 1.10) ─▶ guards
//!                          ─▶ managed: `# BEGIN shunt NS/NAME` in `.:53 {` (or a coredns-custom
//!                             key) + view.rs block before `.:53 {` ─▶ nodelocal: zones block
//!                          refusals become Events; metrics.rs, event.rs for what needs a human
//!                      └─▶ `shunt dns check`: check.rs verdicts over resolve/ (the pod's resolv.conf)
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
