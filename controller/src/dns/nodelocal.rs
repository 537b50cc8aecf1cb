//! node-local-dns: the per-node CoreDNS cache (node-cache, 169.254.20.10) that pods query first
//! sends only the cluster zones to kube-dns and every other name straight upstream, past shunt's
//! rules. This block, at top level of its Corefile, forwards the rewritten names' zones to
//! kube-dns the way its `cluster.local:53 {` block does, so they reach the rules.
//!
//! ```text
//! pod ─▶ node-local-dns ─┬ cluster.local:53 ──────────────▶ kube-dns
//!                        ├ # BEGIN shunt NS/NAME zones ───▶ kube-dns (rules: shunt's Service)
//!                        └ .:53 ──────────────────────────▶ upstream (the load balancer's address)
//! ```
//!
//! The `bind` and `forward` lines are copied from `cluster.local:53 {` as written, node-cache's
//! `__PILLAR__` placeholders included (node-cache fills them in when it loads the Corefile).

use shunt_spec::HostMatch;

use super::{
    corefile::{
        CorefileError,
        blocks::{replace_top_level, server_blocks},
    },
    policy::{DnsPolicy, RefusalReason},
    release::Release,
};

pub mod managed;

/// Where node-cache's own manifests (and TKE's, kubespray's) keep its Corefile.
pub const DEFAULT_CONFIGMAP: (&str, &str) = ("kube-system", "node-local-dns");
/// The cluster zone whose block the lines are copied from.
const CLUSTER_ZONE: &str = "cluster.local";
/// node-cache's template lines, for a block printed without its Corefile.
pub const STANDARD_BIND: &str = "bind __PILLAR__LOCAL__DNS__ __PILLAR__DNS__SERVER__";
pub const STANDARD_FORWARD: [&str; 3] = ["forward . __PILLAR__CLUSTER__DNS__ {", "    force_tcp", "}"];

/// The zones to forward: each exact host is its own zone, `*.apps.example.com` (any depth too)
/// gives `apps.example.com`; a zone under another in the list is left out (the wider one
/// carries it). Never a zone the policy would refuse as a host (cluster zones, public suffixes).
pub fn zones(hosts: &[HostMatch], policy: &DnsPolicy) -> Vec<String> {
    let mut own: Vec<&str> = hosts
        .iter()
        .filter_map(|host| match host {
            HostMatch::Exact(name) => Some(name.as_str()),
            HostMatch::Wildcard(suffix) | HostMatch::DeepWildcard(suffix) => Some(suffix.as_str()),
            HostMatch::Any => None,
        })
        .filter(|zone| {
            let reason = policy.decide(&HostMatch::Exact(zone.to_string()));
            !matches!(
                reason,
                Some(RefusalReason::ClusterZone { .. } | RefusalReason::PublicSuffix { .. })
            )
        })
        .collect();
    own.sort_unstable();
    own.dedup();
    own.iter()
        .filter(|zone| !own.iter().any(|wider| is_under(zone, wider)))
        .map(|zone| zone.to_string())
        .collect()
}

/// Strictly under: `a.example.com` is under `example.com`, `example.com` is not.
pub fn is_under(name: &str, zone: &str) -> bool {
    name.strip_suffix(zone).is_some_and(|head| head.ends_with('.'))
}

/// The lines between the markers: one server block for every zone, or none.
pub fn body(zones: &[String], corefile: Option<&str>) -> Vec<String> {
    if zones.is_empty() {
        return Vec::new();
    }
    let (port, copied) = corefile.and_then(copied_lines).unwrap_or_else(|| {
        let mut lines = vec![STANDARD_BIND.to_string()];
        lines.extend(STANDARD_FORWARD.iter().map(|line| line.to_string()));
        ("53".to_string(), lines)
    });
    let keys: Vec<String> = zones.iter().map(|zone| format!("{zone}:{port}")).collect();
    let mut lines = vec![format!("{} {{", keys.join(" ")), "    errors".to_string()];
    lines.extend(copied.iter().map(|line| format!("    {line}")));
    lines.push("}".to_string());
    lines
}

/// The port and the `bind` and `forward` lines of the Corefile's `cluster.local` block.
fn copied_lines(corefile: &str) -> Option<(String, Vec<String>)> {
    let lines: Vec<&str> = corefile.lines().collect();
    let block = server_blocks(&lines)
        .into_iter()
        .find(|block| block.serves(CLUSTER_ZONE))?;
    let forward = block.directives(&lines, "forward");
    if forward.is_empty() {
        return None;
    }
    let copied = block
        .directives(&lines, "bind")
        .into_iter()
        .chain(forward)
        .flatten()
        .collect();
    Some((block.port().unwrap_or("53").to_string(), copied))
}

/// The block as `shunt dns --node-local-dns` prints it, markers included.
pub fn block(release: &Release, zones: &[String], corefile: Option<&str>) -> String {
    let mut text = format!("{}\n", release.begin_marker());
    for line in body(zones, corefile) {
        text.push_str(&line);
        text.push('\n');
    }
    text.push_str(&release.end_marker());
    text.push('\n');
    text
}

/// node-local-dns's Corefile with this release's block holding `zones` (at the end when new).
pub fn replace(corefile: &str, release: &Release, zones: &[String]) -> Result<String, CorefileError> {
    let lines = body(zones, Some(corefile));
    let markers = (release.begin_marker(), release.end_marker());
    replace_top_level(corefile, (&markers.0, &markers.1), &lines, None)
}

#[cfg(test)]
mod tests;
