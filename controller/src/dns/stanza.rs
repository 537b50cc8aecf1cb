//! The rewrite rules for a set of served hosts, in the order CoreDNS must try them.

use std::{fmt, str::FromStr};

use shunt_proxy::routes::spec::{HostMatch, TableSpec};

pub const BEGIN_MARKER: &str = "# BEGIN shunt";
pub const END_MARKER: &str = "# END shunt";

/// A `--dns-exclude` pattern: `shop.example.com`, or `*.example.com` for every name one label
/// below `example.com` (and a served `*.example.com` itself).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DnsExclude(HostMatch);

/// The rules for one set of hosts: `lines()` for the ConfigMap, `Display` for a marker block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stanza {
    lines: Vec<String>,
    /// `# refused HOST: reason` lines: served hosts deliberately left out, and why.
    notes: Vec<String>,
}

// === impl DnsExclude ===

impl FromStr for DnsExclude {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match HostMatch::from_rule_host(s) {
            HostMatch::Any => Err("an empty pattern excludes nothing; give a host or *.domain".to_string()),
            HostMatch::Exact(host) if host.contains('*') => Err(format!("{s:?}: `*` only as the whole first label")),
            pattern => Ok(DnsExclude(pattern)),
        }
    }
}

impl From<HostMatch> for DnsExclude {
    fn from(host: HostMatch) -> Self {
        DnsExclude(host)
    }
}

impl DnsExclude {
    fn excludes(&self, host: &HostMatch) -> bool {
        // `*.example.com` as written also names a load balancer's any-depth `*.example.com`.
        let same_wildcard = matches!((&self.0, host), (HostMatch::Wildcard(a), HostMatch::DeepWildcard(b)) if a == b);
        same_wildcard || self.0.covers(host)
    }
}

// === impl Stanza ===

impl Stanza {
    /// Exact hosts first (CoreDNS stops at the first matching rule), then one-label wildcards.
    /// An excluded exact host under a served wildcard gets a rule rewriting it to itself, so
    /// the wildcard's rule never sees it and it keeps resolving the public way.
    pub fn new<'h>(hosts: impl IntoIterator<Item = &'h HostMatch>, target: &str, exclude: &[DnsExclude]) -> Self {
        let target = target.trim_end_matches('.');
        let mut hosts: Vec<&HostMatch> = hosts.into_iter().filter(|h| !matches!(h, HostMatch::Any)).collect();
        hosts.sort();
        hosts.dedup();
        let excluded = |host: &HostMatch| exclude.iter().any(|pattern| pattern.excludes(host));
        let mut lines = Vec::new();
        for host in &hosts {
            if let HostMatch::Exact(name) = host
                && !excluded(host)
            {
                lines.push(format!("rewrite name exact {name} {target}"));
            }
        }
        for host in &hosts {
            let regex = match host {
                HostMatch::Wildcard(suffix) => one_label_regex(suffix),
                HostMatch::DeepWildcard(suffix) => any_depth_regex(suffix),
                _ => continue,
            };
            if excluded(host) {
                continue;
            }
            for pattern in exclude {
                if let HostMatch::Exact(name) = &pattern.0
                    && host.covers(&pattern.0)
                {
                    lines.push(format!("rewrite name exact {name} {name}"));
                }
            }
            lines.push(format!("rewrite stop name regex {regex} {target}. answer auto"));
        }
        Stanza {
            lines,
            notes: Vec::new(),
        }
    }

    /// Adds a `# refused HOST: reason` comment per host left out on purpose (the caller also
    /// excludes them), so whoever reads the block sees why.
    pub fn with_refused(mut self, refused: &[(HostMatch, String)]) -> Self {
        self.notes = refused
            .iter()
            .map(|(host, reason)| format!("# refused {host}: {}", reason.replace(['\n', '\r'], " ")))
            .collect();
        self
    }

    pub fn lines(&self) -> &[String] {
        &self.lines
    }

    /// The rules alone, one per line: what a `coredns-custom` `*.override` key holds.
    pub fn override_file(&self) -> String {
        let mut text = format!("{BEGIN_MARKER} (written by shunt; edits are overwritten)\n");
        for line in self.notes.iter().chain(&self.lines) {
            text.push_str(line);
            text.push('\n');
        }
        text.push_str(END_MARKER);
        text.push('\n');
        text
    }
}

impl fmt::Display for Stanza {
    /// The marker block to paste inside the Corefile's `.:53 {` block.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{BEGIN_MARKER}")?;
        for line in self.notes.iter().chain(&self.lines) {
            writeln!(f, "{line}")?;
        }
        writeln!(f, "{END_MARKER}")
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

    #[test]
    fn exact_hosts_get_an_exact_rewrite_to_the_service() {
        let stanza = Stanza::new(&hosts(&["shop.example.com", "api.example.com"]), TARGET, &[]);
        assert_eq!(
            stanza.lines(),
            [
                "rewrite name exact api.example.com shunt.shunt-system.svc.cluster.local",
                "rewrite name exact shop.example.com shunt.shunt-system.svc.cluster.local",
            ]
        );
    }

    #[test]
    fn a_wildcard_gets_an_anchored_one_label_regex_after_the_exact_hosts() {
        let stanza = Stanza::new(&hosts(&["*.apps.example.com", "shop.example.com", ""]), TARGET, &[]);
        assert_eq!(
            stanza.lines(),
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
        let served = hosts(&[
            "shop.example.com",
            "pay.example.com",
            "*.apps.example.com",
            "*.blog.example.com",
        ]);
        let stanza = Stanza::new(
            &served,
            TARGET,
            &excludes(&["pay.example.com", "*.blog.example.com", "legacy.apps.example.com"]),
        );
        assert_eq!(
            stanza.lines(),
            [
                "rewrite name exact shop.example.com shunt.shunt-system.svc.cluster.local",
                "rewrite name exact legacy.apps.example.com legacy.apps.example.com",
                r"rewrite stop name regex ^[^.]+\.apps\.example\.com\.$ shunt.shunt-system.svc.cluster.local. answer auto",
            ]
        );
        let wildcard_pattern = Stanza::new(
            &hosts(&["a.example.com", "a.b.example.com"]),
            TARGET,
            &excludes(&["*.example.com"]),
        );
        assert_eq!(
            wildcard_pattern.lines(),
            ["rewrite name exact a.b.example.com shunt.shunt-system.svc.cluster.local"],
            "*.example.com excludes one label only"
        );
    }

    #[test]
    fn no_hosts_give_an_empty_but_well_formed_block() {
        let stanza = Stanza::new(&[], TARGET, &[]);
        assert!(stanza.lines().is_empty());
        assert_eq!(stanza.to_string(), "# BEGIN shunt\n# END shunt\n");
    }

    #[test]
    fn refused_hosts_are_left_out_with_a_comment_and_deep_wildcards_match_any_depth() {
        let served = vec![
            HostMatch::Exact("shop.example.com".into()),
            HostMatch::Exact("pay.example.com".into()),
            HostMatch::DeepWildcard("apps.example.com".into()),
        ];
        let refused = vec![(
            HostMatch::Exact("pay.example.com".into()),
            "CertificateUnavailable: no".to_string(),
        )];
        let exclude: Vec<DnsExclude> = refused.iter().map(|(host, _)| host.clone().into()).collect();
        let stanza = Stanza::new(&served, TARGET, &exclude).with_refused(&refused);
        assert_eq!(
            stanza.to_string(),
            "# BEGIN shunt\n# refused pay.example.com: CertificateUnavailable: no\n\
             rewrite name exact shop.example.com shunt.shunt-system.svc.cluster.local\n\
             rewrite stop name regex ^(?:[^.]+\\.)+apps\\.example\\.com\\.$ shunt.shunt-system.svc.cluster.local. answer auto\n\
             # END shunt\n"
        );
        let excluded = Stanza::new(&served, TARGET, &excludes(&["*.apps.example.com", "pay.example.com"]));
        assert!(
            excluded.lines().iter().all(|line| !line.contains("apps")),
            "a written wildcard excludes the any-depth one: {excluded}"
        );
        let regex = Regex::new(&any_depth_regex("apps.example.com")).expect("a valid regex");
        assert!(regex.is_match("a.apps.example.com."));
        assert!(regex.is_match("a.b.apps.example.com."));
        assert!(!regex.is_match("apps.example.com."));
        assert!(!regex.is_match("a.apps.example.com.default.svc.cluster.local."));
    }

    #[test]
    fn exclude_patterns_are_checked() {
        assert!("".parse::<DnsExclude>().is_err());
        assert!("a.*.example.com".parse::<DnsExclude>().is_err());
        assert_eq!(
            "Shop.Example.com.".parse::<DnsExclude>(),
            Ok(DnsExclude(HostMatch::Exact("shop.example.com".into())))
        );
    }
}
