//! Every TKE Ingress annotation key classified: reproduced (parsed in `annotations.rs`), no
//! effect on the answer a caller gets (listed in `/shadow`), or refused with its key named. A key
//! under a TKE prefix that the table does not know is refused: a newer TKE may read it.
//!
//! `tke-service-config` and `tke-service-config-auto` are read with the TkeServiceConfig they
//! name (`service_config.rs`): its fields that change an answer refuse the hosts they touch.

/// TKE reads keys under both; `kubernetes.io/ingress.class` is the class selection's.
pub const PREFIXES: [&str; 2] = ["ingress.cloud.tencent.com/", "kubernetes.io/ingress."];

/// Keys shunt reproduces (see `annotations.rs`).
pub const REPRODUCED: [&str; 14] = [
    "kubernetes.io/ingress.class",
    "kubernetes.io/ingress.rule-mix",
    "kubernetes.io/ingress.rule-mix-both",
    "kubernetes.io/ingress.http-rules",
    "kubernetes.io/ingress.https-rules",
    "ingress.cloud.tencent.com/auto-rewrite",
    "ingress.cloud.tencent.com/auto-rewrite-code",
    "ingress.cloud.tencent.com/rewrite-support",
    "ingress.cloud.tencent.com/listen-ports",
    "ingress.cloud.tencent.com/enable-group",
    // Without it a ClusterIP backend is TKE's E4047 (see `route.rs`); with it the CLB reaches
    // the pods directly, which answers as shunt does.
    "ingress.cloud.tencent.com/direct-access",
    // Groups Ingresses on one load balancer (with enable-group); otherwise where the CLB is.
    "kubernetes.io/ingress.existLbId",
    // The TkeServiceConfig they name is read (see `service_config.rs`).
    "ingress.cloud.tencent.com/tke-service-config",
    "ingress.cloud.tencent.com/tke-service-config-auto",
];

/// Keys that choose, create, protect or bill the load balancer, or how it reaches and weighs
/// pods: never the status, headers or body a caller gets. TKE writes the read-only ones.
pub const NO_EFFECT: [&str; 16] = [
    "kubernetes.io/ingress.qcloud-loadbalance-id",
    "kubernetes.io/ingress.subnetId",
    "kubernetes.io/ingress.internetChargeType",
    "kubernetes.io/ingress.internetMaxBandwidthOut",
    "kubernetes.io/ingress.extensiveParameters",
    "ingress.cloud.tencent.com/loadbalance-nat-ipv6",
    "ingress.cloud.tencent.com/loadbalance-ipv6",
    "ingress.cloud.tencent.com/pass-to-target",
    "ingress.cloud.tencent.com/security-groups",
    "ingress.cloud.tencent.com/grace-shutdown",
    "ingress.cloud.tencent.com/grace-shutdown-tkex",
    "ingress.cloud.tencent.com/lb-rs-weight",
    "ingress.cloud.tencent.com/deletion-protection",
    "ingress.cloud.tencent.com/cross-region-id",
    "ingress.cloud.tencent.com/cross-vpc-id",
    "ingress.cloud.tencent.com/cross-type",
];

/// How one annotation key counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    Reproduced,
    NoEffect,
    /// Under a TKE prefix, but neither of the above: its hosts are refused.
    Refused,
    /// Not TKE's (another controller's, a tool's): ignored.
    Foreign,
}

/// The class of `key`.
pub fn classify(key: &str) -> Class {
    if REPRODUCED.contains(&key) {
        Class::Reproduced
    } else if NO_EFFECT.contains(&key) {
        Class::NoEffect
    } else if PREFIXES.iter().any(|prefix| key.starts_with(prefix)) {
        Class::Refused
    } else {
        Class::Foreign
    }
}
