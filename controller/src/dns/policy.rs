//! Which served hosts cluster DNS may send to shunt, and why the others may not: any user who
//! can create an Ingress names its hosts, so a host must not capture names the cluster answers
//! itself (Services, the API server, reverse lookups) nor a whole public suffix (`*.com`).
//!
//! ```text
//! served hosts ─▶ DnsPolicy::plan ─▶ Plan { rewrite, refused: host + reason } ─▶ Stanza
//!                                        ▲ other producers add refusals with Plan::refuse
//! ```

use std::{fmt, str::FromStr};

use shunt_spec::HostMatch;

use super::stanza::DnsExclude;
use crate::compile::parse_host;

/// Names CoreDNS answers from Kubernetes in every stock install, whatever `--cluster-domain` says:
/// `.local` is reserved for multicast DNS, so no public host lives under it.
const DEFAULT_CLUSTER_DOMAIN: &str = "cluster.local";
const REVERSE_ZONES: [&str; 2] = ["in-addr.arpa", "ip6.arpa"];

/// A `--dns-domain` suffix: only hosts at or under one of these are rewritten (when any is given).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DnsDomain(String);

/// A zone CoreDNS serves itself, and where we learnt of it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Protected {
    zone: String,
    source: ZoneSource,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZoneSource {
    ClusterDomain,
    KubernetesPlugin,
    Reverse,
}

/// What decides rewrite or refuse. Built once from the flags; the Corefile's `kubernetes` zones
/// are added when shunt manages the Corefile ([`DnsPolicy::with_kubernetes_zones`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DnsPolicy {
    protected: Vec<Protected>,
    /// Empty: every suffix allowed (subject to the other checks).
    domains: Vec<DnsDomain>,
    exclude: Vec<DnsExclude>,
}

/// Why a served host gets no rewrite rule. Rendered after `# refused HOST: ` and in Events.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RefusalReason {
    /// At, under, or (for a wildcard) covering a zone CoreDNS answers itself.
    ClusterZone { zone: String, source: ZoneSource },
    /// The host is itself a public suffix (`com`, `co.uk`, `github.io`).
    PublicSuffix { suffix: String },
    /// `*.SUFFIX` with SUFFIX a public suffix: every registrable domain under it.
    WildcardOnPublicSuffix { suffix: String },
    /// `--dns-domain` is set and the host is under none of them.
    OutsideDnsDomains { domains: Vec<String> },
    /// The operator listed it in `--dns-exclude`.
    Excluded { pattern: String },
    /// Refused by another part of shunt (e.g. a shadowed host shunt holds no certificate for).
    Other { code: &'static str, detail: String },
}

/// One served host left out of the rules, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub host: HostMatch,
    pub reason: RefusalReason,
}

/// The policy applied to a set of served hosts: each one is in exactly one of the two lists.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// Sorted, deduplicated, never `Any`.
    pub rewrite: Vec<HostMatch>,
    /// Sorted by host.
    pub refused: Vec<Refusal>,
    /// Exact `--dns-exclude` names: kept public even under a rewritten wildcard.
    pub keep_public: Vec<String>,
}

// === impl DnsDomain ===

impl FromStr for DnsDomain {
    type Err = String;

    /// Parsed like an Ingress host, but must be a plain name (no wildcard).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match parse_host(s) {
            Ok(HostMatch::Exact(name)) => Ok(DnsDomain(name)),
            Ok(_) => Err(format!("{s:?}: a DNS domain is a plain name like example.com")),
            Err(error) => Err(format!("{s:?}: {error}")),
        }
    }
}

impl DnsDomain {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

// === impl DnsPolicy ===

impl DnsPolicy {
    /// `cluster_domain` must already be a valid name (see [`parse_cluster_domain`]).
    pub fn new(cluster_domain: &str, domains: Vec<DnsDomain>, exclude: Vec<DnsExclude>) -> Self {
        let mut policy = DnsPolicy {
            protected: Vec::new(),
            domains,
            exclude,
        };
        policy.protect(cluster_domain, ZoneSource::ClusterDomain);
        policy.protect(DEFAULT_CLUSTER_DOMAIN, ZoneSource::ClusterDomain);
        for zone in REVERSE_ZONES {
            policy.protect(zone, ZoneSource::Reverse);
        }
        policy
    }

    /// The policy plus the zones a Corefile's `kubernetes` plugin serves.
    pub fn with_kubernetes_zones(&self, zones: &[String]) -> Self {
        let mut policy = self.clone();
        for zone in zones {
            policy.protect(zone, ZoneSource::KubernetesPlugin);
        }
        policy
    }

    fn protect(&mut self, zone: &str, source: ZoneSource) {
        let zone = zone.trim_end_matches('.').to_ascii_lowercase();
        if !zone.is_empty() && !self.protected.iter().any(|p| p.zone == zone) {
            self.protected.push(Protected { zone, source });
        }
    }

    /// Splits `hosts` into those rewritten and those refused (`Any` is dropped: no name).
    pub fn plan<'h>(&self, hosts: impl IntoIterator<Item = &'h HostMatch>) -> Plan {
        let mut hosts: Vec<&HostMatch> = hosts.into_iter().filter(|h| !matches!(h, HostMatch::Any)).collect();
        hosts.sort();
        hosts.dedup();
        let mut plan = Plan {
            keep_public: self
                .exclude
                .iter()
                .filter_map(|pattern| match pattern.host() {
                    HostMatch::Exact(name) => Some(name.clone()),
                    _ => None,
                })
                .collect(),
            ..Plan::default()
        };
        for host in hosts {
            match self.decide(host) {
                None => plan.rewrite.push(host.clone()),
                Some(reason) => plan.refused.push(Refusal {
                    host: host.clone(),
                    reason,
                }),
            }
        }
        plan
    }

    /// `None`: rewrite. Safety checks come first, so a host both excluded and a public suffix
    /// is reported as the public suffix.
    pub fn decide(&self, host: &HostMatch) -> Option<RefusalReason> {
        let (name, wildcard, any_depth) = match host {
            HostMatch::Exact(name) => (name.as_str(), false, false),
            HostMatch::Wildcard(suffix) => (suffix.as_str(), true, false),
            HostMatch::DeepWildcard(suffix) => (suffix.as_str(), true, true),
            HostMatch::Any => return None,
        };
        for protected in &self.protected {
            // A wildcard one label above a zone would also rewrite the zone's own name; one of
            // any depth, every zone below it.
            let covers_zone = if any_depth {
                at_or_under(&protected.zone, name)
            } else {
                wildcard && protected.zone.split_once('.').is_some_and(|(_, parent)| parent == name)
            };
            if at_or_under(name, &protected.zone) || covers_zone {
                return Some(RefusalReason::ClusterZone {
                    zone: protected.zone.clone(),
                    source: protected.source,
                });
            }
        }
        if is_public_suffix(name) {
            let suffix = name.to_string();
            return Some(if wildcard {
                RefusalReason::WildcardOnPublicSuffix { suffix }
            } else {
                RefusalReason::PublicSuffix { suffix }
            });
        }
        if !self.domains.is_empty() && !self.domains.iter().any(|domain| at_or_under(name, &domain.0)) {
            return Some(RefusalReason::OutsideDnsDomains {
                domains: self.domains.iter().map(|d| d.0.clone()).collect(),
            });
        }
        self.exclude
            .iter()
            .find(|pattern| pattern.excludes(host))
            .map(|pattern| RefusalReason::Excluded {
                pattern: pattern.host().to_string(),
            })
    }
}

/// `--cluster-domain`, checked with the Ingress host parser (a trailing dot is allowed, as
/// kubelet's `clusterDomain` sometimes carries one).
pub fn parse_cluster_domain(s: &str) -> Result<String, String> {
    match parse_host(s.strip_suffix('.').unwrap_or(s)) {
        Ok(HostMatch::Exact(name)) => Ok(name),
        Ok(_) => Err(format!("{s:?}: the cluster domain is a plain name like cluster.local")),
        Err(error) => Err(format!("{s:?}: {error}")),
    }
}

fn at_or_under(name: &str, zone: &str) -> bool {
    name == zone || name.strip_suffix(zone).is_some_and(|head| head.ends_with('.'))
}

/// Per the Public Suffix List, including its implicit `*` rule: an unlisted top-level label
/// (`internal`, `corp`) counts as a suffix too, so `*.corp` is refused like `*.com`.
pub fn is_public_suffix(name: &str) -> bool {
    psl::suffix_str(name) == Some(name)
}

// === impl Plan ===

impl Plan {
    /// Moves `host` from the rewritten to the refused hosts (the way other parts of shunt, such
    /// as the shadow profile, keep a host out of DNS). A host not served is refused all the same,
    /// so the operator sees the reason.
    pub fn refuse(&mut self, host: HostMatch, reason: RefusalReason) {
        self.rewrite.retain(|h| *h != host);
        if self.refused.iter().any(|r| r.host == host) {
            return;
        }
        let at = self.refused.partition_point(|r| r.host < host);
        self.refused.insert(at, Refusal { host, reason });
    }
}

// === impl RefusalReason ===

impl fmt::Display for RefusalReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RefusalReason::ClusterZone { zone, source } => match source {
                ZoneSource::ClusterDomain => write!(f, "in the cluster domain {zone}, which CoreDNS answers itself"),
                ZoneSource::KubernetesPlugin => write!(f, "in zone {zone}, served by the Corefile's kubernetes plugin"),
                ZoneSource::Reverse => write!(f, "in the reverse-lookup zone {zone}"),
            },
            RefusalReason::PublicSuffix { suffix } => write!(f, "{suffix} is a public suffix"),
            RefusalReason::WildcardOnPublicSuffix { suffix } => {
                write!(f, "a wildcard directly under the public suffix {suffix}")
            }
            RefusalReason::OutsideDnsDomains { domains } => {
                write!(f, "not under a --dns-domain ({})", domains.join(", "))
            }
            RefusalReason::Excluded { pattern } => write!(f, "excluded by --dns-exclude {pattern}"),
            RefusalReason::Other { code, detail } => write!(f, "{code}: {detail}"),
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.host, self.reason)
    }
}

#[cfg(test)]
mod tests;
