//! The rewrite rules for a [`Plan`], in the order CoreDNS must try them, inside the release's
//! markers, with a `# refused HOST: reason` comment for each host left out.

use std::{fmt, str::FromStr};

use shunt_spec::{HostMatch, TableSpec};

use super::{
    policy::{DnsPolicy, Plan, Refusal, RefusalReason},
    release::Release,
    services::ServiceName,
};
use crate::compile::parse_host;

/// A `--dns-exclude` pattern: `shop.example.com`, or `*.example.com` for every name one label
/// below `example.com` (and a served `*.example.com` itself).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DnsExclude(HostMatch);

/// One release's rules: `rules()` for the ConfigMap, `Display` for the block an operator pastes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stanza {
    release: Release,
    /// The rewritten hosts, sorted (the plan's): the view block and node-local-dns zones.
    hosts: Vec<HostMatch>,
    rules: Vec<String>,
    refused: Vec<Refusal>,
}

// === impl DnsExclude ===

impl FromStr for DnsExclude {
    type Err = String;

    /// The Ingress host parser, so a pattern can never put a space or a newline in a rule.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match parse_host(s) {
            Ok(HostMatch::Any) => Err("an empty pattern excludes nothing; give a host or *.domain".to_string()),
            Ok(pattern) => Ok(DnsExclude(pattern)),
            Err(error) => Err(format!("{s:?}: {error}")),
        }
    }
}

impl From<HostMatch> for DnsExclude {
    fn from(host: HostMatch) -> Self {
        DnsExclude(host)
    }
}

impl DnsExclude {
    pub fn excludes(&self, host: &HostMatch) -> bool {
        // `*.example.com` as written also names a load balancer's any-depth `*.example.com`.
        let same_wildcard = matches!((&self.0, host), (HostMatch::Wildcard(a), HostMatch::DeepWildcard(b)) if a == b);
        same_wildcard || self.0.covers(host)
    }

    pub fn host(&self) -> &HostMatch {
        &self.0
    }
}

// === impl Stanza ===

impl Stanza {
    /// Exact hosts first (CoreDNS stops at the first matching rule), then one-label wildcards.
    /// An excluded exact name under a rewritten wildcard gets a rule rewriting it to itself, so
    /// the wildcard's rule never sees it and it keeps resolving the public way.
    pub fn new(release: &Release, plan: &Plan, target: &str) -> Self {
        let target = target.trim_end_matches('.');
        let mut rules = Vec::new();
        for host in &plan.rewrite {
            if let HostMatch::Exact(name) = host {
                rules.push(format!("rewrite name exact {name} {target}"));
            }
        }
        for host in &plan.rewrite {
            let regex = match host {
                HostMatch::Wildcard(suffix) => one_label_regex(suffix),
                HostMatch::DeepWildcard(suffix) => any_depth_regex(suffix),
                _ => continue,
            };
            for name in &plan.keep_public {
                if host.covers(&HostMatch::Exact(name.clone())) {
                    rules.push(format!("rewrite name exact {name} {name}"));
                }
            }
            rules.push(format!("rewrite stop name regex {regex} {target}. answer auto"));
        }
        Stanza {
            release: release.clone(),
            hosts: plan.rewrite.clone(),
            rules,
            refused: plan.refused.clone(),
        }
    }

    /// Adds the rules for L4 LoadBalancer names the policy allows, each answering with its own
    /// Service; a name an Ingress host already takes, or the policy refuses, is refused.
    pub fn add_services(&mut self, policy: &DnsPolicy, names: &[ServiceName]) {
        for name in names {
            let taken = self
                .hosts
                .iter()
                .any(|host| *host == name.host || host.covers(&name.host));
            let reason = match policy.decide(&name.host) {
                _ if taken => Some(RefusalReason::Other {
                    code: "IngressHost",
                    detail: format!("an Ingress host shunt serves takes it before Service {}", name.service),
                }),
                reason => reason,
            };
            if let Some(reason) = reason {
                let at = self.refused.partition_point(|r| r.host < name.host);
                self.refused.insert(
                    at,
                    Refusal {
                        host: name.host.clone(),
                        reason,
                    },
                );
                continue;
            }
            let target = name.target.trim_end_matches('.');
            match &name.host {
                HostMatch::Exact(host) => {
                    // Exact names go before the first wildcard rule, which would take them.
                    let at = self
                        .rules
                        .iter()
                        .position(|rule| rule.starts_with("rewrite stop name regex"));
                    let at = at.unwrap_or(self.rules.len());
                    self.rules.insert(at, format!("rewrite name exact {host} {target}"));
                }
                HostMatch::Wildcard(suffix) => self.rules.push(format!(
                    "rewrite stop name regex {} {target}. answer auto",
                    one_label_regex(suffix)
                )),
                HostMatch::DeepWildcard(suffix) => self.rules.push(format!(
                    "rewrite stop name regex {} {target}. answer auto",
                    any_depth_regex(suffix)
                )),
                HostMatch::Any => continue,
            }
            self.hosts.push(name.host.clone());
        }
        self.hosts.sort();
    }

    pub fn release(&self) -> &Release {
        &self.release
    }

    pub fn hosts(&self) -> &[HostMatch] {
        &self.hosts
    }

    /// The `rewrite` lines alone: what the managed block holds (refusals go to Events there).
    pub fn rules(&self) -> &[String] {
        &self.rules
    }

    pub fn refused(&self) -> &[Refusal] {
        &self.refused
    }

    fn comment_lines(&self) -> impl Iterator<Item = String> + '_ {
        self.refused.iter().map(|refusal| format!("# refused {refusal}"))
    }

    /// What a `coredns-custom` `*.override` key holds; `with_refusals` for `shunt dns`.
    pub fn override_file(&self, with_refusals: bool) -> String {
        let mut text = format!(
            "{}\n# written by shunt; edits are overwritten\n",
            self.release.begin_marker()
        );
        let comments: Vec<String> = if with_refusals {
            self.comment_lines().collect()
        } else {
            Vec::new()
        };
        for line in comments.iter().chain(&self.rules) {
            text.push_str(line);
            text.push('\n');
        }
        text.push_str(&self.release.end_marker());
        text.push('\n');
        text
    }
}

impl fmt::Display for Stanza {
    /// The marker block to paste inside the Corefile's `.:53 {` block, refusals included.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.release.begin_marker())?;
        for line in self.comment_lines().chain(self.rules.iter().cloned()) {
            writeln!(f, "{line}")?;
        }
        writeln!(f, "{}", self.release.end_marker())
    }
}

/// `^[^.]+\.example\.com\.$`: exactly one label before the suffix, fully qualified, so neither
/// deeper names nor search-path expansions (`a.example.com.default.svc.cluster.local.`) match.
pub fn one_label_regex(suffix: &str) -> String {
    format!(r"^[^.]+\.{}\.$", suffix.replace('.', r"\."))
}

/// `^(?:[^.]+\.)+example\.com\.$`: one or more labels before the suffix (a load balancer's
/// `*.example.com`), fully qualified.
pub fn any_depth_regex(suffix: &str) -> String {
    format!(r"^(?:[^.]+\.)+{}\.$", suffix.replace('.', r"\."))
}

/// The hosts a table routes, exact and wildcard (host-less rules have no name to rewrite).
pub fn served_hosts(table: &TableSpec) -> Vec<HostMatch> {
    table
        .hosts
        .iter()
        .map(|vhost| vhost.host.clone())
        .filter(|host| !matches!(host, HostMatch::Any))
        .collect()
}

#[cfg(test)]
mod tests;
