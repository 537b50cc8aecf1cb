//! The rewrite rules for a [`Plan`], in the order CoreDNS must try them, inside the release's
//! markers, with a `# refused HOST: reason` comment for each host left out.

use std::{fmt, str::FromStr};

use shunt_proxy::routes::spec::{HostMatch, TableSpec};

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
mod tests {
    use regex::Regex;

    use super::*;

    const TARGET: &str = "shunt.shunt-system.svc.cluster.local";

    fn hosts(names: &[&str]) -> Vec<HostMatch> {
        names.iter().map(|name| HostMatch::from_rule_host(name)).collect()
    }

    fn excludes(patterns: &[&str]) -> Vec<DnsExclude> {
        patterns.iter().map(|p| p.parse().expect("a valid pattern")).collect()
    }

    fn mk_release() -> Release {
        "shunt-system/shunt".parse().expect("valid")
    }

    fn mk_stanza(names: &[&str], exclude: &[&str]) -> Stanza {
        let plan = DnsPolicy::new("cluster.local", Vec::new(), excludes(exclude)).plan(&hosts(names));
        Stanza::new(&mk_release(), &plan, TARGET)
    }

    #[test]
    fn exact_hosts_get_an_exact_rewrite_to_the_service() {
        let stanza = mk_stanza(&["shop.example.com", "api.example.com"], &[]);
        assert_eq!(
            stanza.rules(),
            [
                "rewrite name exact api.example.com shunt.shunt-system.svc.cluster.local",
                "rewrite name exact shop.example.com shunt.shunt-system.svc.cluster.local",
            ]
        );
    }

    #[test]
    fn an_any_depth_wildcard_gets_a_regex_matching_every_depth_below_its_suffix_only() {
        let plan = DnsPolicy::new("cluster.local", Vec::new(), Vec::new())
            .plan(&[HostMatch::DeepWildcard("apps.example.com".into())]);
        let stanza = Stanza::new(&mk_release(), &plan, TARGET);
        assert_eq!(
            stanza.rules(),
            [format!(
                r"rewrite stop name regex ^(?:[^.]+\.)+apps\.example\.com\.$ {TARGET}. answer auto"
            )]
        );
        let regex = Regex::new(&any_depth_regex("apps.example.com")).expect("a valid regex");
        assert!(regex.is_match("a.apps.example.com."));
        assert!(regex.is_match("a.b.apps.example.com."));
        assert!(!regex.is_match("apps.example.com."));
        assert!(!regex.is_match("a.apps.example.com.default.svc.cluster.local."));
    }

    #[test]
    fn a_wildcard_gets_an_anchored_one_label_regex_after_the_exact_hosts() {
        let stanza = mk_stanza(&["*.apps.example.com", "shop.example.com", ""], &[]);
        assert_eq!(
            stanza.rules(),
            [
                "rewrite name exact shop.example.com shunt.shunt-system.svc.cluster.local",
                r"rewrite stop name regex ^[^.]+\.apps\.example\.com\.$ shunt.shunt-system.svc.cluster.local. answer auto",
            ]
        );
    }

    #[test]
    fn the_regex_matches_one_label_and_nothing_else() {
        let regex = Regex::new(&one_label_regex("example.com")).expect("the rule is a valid RE2-style regex");
        assert!(regex.is_match("a.example.com."));
        assert!(regex.is_match("shop-1.example.com."));
        for name in [
            "a.b.example.com.",
            "example.com.",
            "a.example.com.default.svc.cluster.local.",
            "a.example.com",
            "a.exampleXcom.",
            "aexample.com.",
        ] {
            assert!(!regex.is_match(name), "{name} must not match");
        }
    }

    #[test]
    fn excluded_hosts_keep_resolving_publicly() {
        let stanza = mk_stanza(
            &[
                "shop.example.com",
                "pay.example.com",
                "*.apps.example.com",
                "*.blog.example.com",
            ],
            &["pay.example.com", "*.blog.example.com", "legacy.apps.example.com"],
        );
        assert_eq!(
            stanza.rules(),
            [
                "rewrite name exact shop.example.com shunt.shunt-system.svc.cluster.local",
                "rewrite name exact legacy.apps.example.com legacy.apps.example.com",
                r"rewrite stop name regex ^[^.]+\.apps\.example\.com\.$ shunt.shunt-system.svc.cluster.local. answer auto",
            ]
        );
        let wildcard_pattern = mk_stanza(&["a.example.com", "a.b.example.com"], &["*.example.com"]);
        assert_eq!(
            wildcard_pattern.rules(),
            ["rewrite name exact a.b.example.com shunt.shunt-system.svc.cluster.local"],
            "*.example.com excludes one label only"
        );
    }

    #[test]
    fn no_hosts_give_an_empty_but_well_formed_block() {
        let stanza = mk_stanza(&[], &[]);
        assert!(stanza.rules().is_empty());
        assert_eq!(
            stanza.to_string(),
            "# BEGIN shunt shunt-system/shunt\n# END shunt shunt-system/shunt\n"
        );
    }

    #[test]
    fn refused_hosts_are_comments_in_the_pasted_block_and_absent_from_the_managed_rules() {
        let mut plan = DnsPolicy::new("cluster.local", Vec::new(), Vec::new()).plan(&hosts(&[
            "shop.example.com",
            "*.com",
            "kubernetes.default.svc.cluster.local",
        ]));
        plan.refuse(
            HostMatch::from_rule_host("tke.example.com"),
            RefusalReason::Other {
                code: "CertificateUnavailable",
                detail: "no certificate".into(),
            },
        );
        let stanza = Stanza::new(&mk_release(), &plan, TARGET);
        assert_eq!(
            stanza.to_string(),
            format!(
                "# BEGIN shunt shunt-system/shunt\n\
                 # refused kubernetes.default.svc.cluster.local: in the cluster domain cluster.local, which CoreDNS answers itself\n\
                 # refused tke.example.com: CertificateUnavailable: no certificate\n\
                 # refused *.com: a wildcard directly under the public suffix com\n\
                 rewrite name exact shop.example.com {TARGET}\n\
                 # END shunt shunt-system/shunt\n"
            )
        );
        assert_eq!(
            stanza.rules(),
            [format!("rewrite name exact shop.example.com {TARGET}")]
        );
        assert!(!stanza.override_file(false).contains("# refused"));
        assert!(stanza.override_file(true).contains("\n# refused *.com: "));
    }

    fn mk_service_name(host: &str, service: &str) -> ServiceName {
        let (namespace, name) = service.split_once('/').expect("NS/NAME");
        ServiceName {
            host: HostMatch::from_rule_host(host),
            target: format!("{name}.{namespace}.svc.cluster.local"),
            service: service.to_string(),
        }
    }

    #[test]
    fn load_balancer_names_answer_with_their_service_unless_refused_or_taken() {
        let policy = DnsPolicy::new("cluster.local", Vec::new(), excludes(&["skip.example.com"]));
        let mut stanza = Stanza::new(
            &mk_release(),
            &policy.plan(&hosts(&["shop.example.com", "*.apps.example.com"])),
            TARGET,
        );
        stanza.add_services(
            &policy,
            &[
                mk_service_name("db.example.com", "data/db"),
                mk_service_name("x.apps.example.com", "data/x"),
                mk_service_name("skip.example.com", "data/skip"),
                mk_service_name("api.default.svc.cluster.local", "data/api"),
            ],
        );
        assert_eq!(
            stanza.rules(),
            [
                format!("rewrite name exact shop.example.com {TARGET}"),
                "rewrite name exact db.example.com db.data.svc.cluster.local".to_string(),
                format!(r"rewrite stop name regex ^[^.]+\.apps\.example\.com\.$ {TARGET}. answer auto"),
            ]
        );
        let refused: Vec<String> = stanza.refused().iter().map(|r| r.host.to_string()).collect();
        assert_eq!(
            refused,
            [
                "api.default.svc.cluster.local",
                "skip.example.com",
                "x.apps.example.com"
            ]
        );
        assert!(stanza.hosts().contains(&HostMatch::from_rule_host("db.example.com")));
    }

    #[test]
    fn exclude_patterns_use_the_ingress_host_parser() {
        for bad in [
            "",
            "a.*.example.com",
            "a b.example.com",
            "x\nrewrite",
            "10.0.0.1",
            "a..b",
        ] {
            assert!(bad.parse::<DnsExclude>().is_err(), "{bad:?}");
        }
        assert_eq!(
            "Shop.Example.com".parse::<DnsExclude>(),
            Ok(DnsExclude(HostMatch::Exact("shop.example.com".into())))
        );
    }
}
