//! `shunt dns check`: run inside a pod, resolves every host shunt serves and every one it
//! refused through the pod's own resolver (`/etc/resolv.conf`: its nameservers, search list and
//! ndots, as written) and prints one line per host, or JSON with `--json`. Exit status 0 only
//! when every rewritten host resolves to the Service its rule names.

use std::{collections::BTreeMap, io::Write as _, net::IpAddr, path::PathBuf};

use clap::Args;
use shunt_spec::HostMatch;

use super::{Compiled, DnsSource, config_map_corefile};
use crate::{
    cmd::parse::parse_namespaced,
    dns::{
        check::{self, Answer, Hints, Verdict},
        resolve::ResolvConf,
    },
};

/// node-local-dns's usual link-local listen address (node-cache's `__PILLAR__LOCAL__DNS__`).
const NODE_LOCAL_ADDRESS: [u8; 4] = [169, 254, 20, 10];

#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub source: DnsSource,
    /// The resolver configuration to resolve through, as the pod's libc reads it.
    #[arg(long, value_name = "PATH", default_value = "/etc/resolv.conf")]
    pub resolv_conf: PathBuf,
    /// One JSON array of verdicts instead of lines.
    #[arg(long)]
    pub json: bool,
    /// CoreDNS's ConfigMap, read (when allowed) to tell a missing rule from a pending reload.
    #[arg(long, value_parser = parse_namespaced, value_name = "NAMESPACE/NAME", default_value = "kube-system/coredns")]
    pub coredns_configmap: (String, String),
    /// node-local-dns's ConfigMap, read (when allowed) to tell whether shunt's block is in it.
    #[arg(long, value_parser = parse_namespaced, value_name = "NAMESPACE/NAME", default_value = "kube-system/node-local-dns")]
    pub node_local_dns_configmap: (String, String),
}

pub async fn run(args: CheckArgs) -> anyhow::Result<()> {
    let compiled = args.source.compile().await?;
    let conf = ResolvConf::read(&args.resolv_conf)?;
    let hints = hints(&args, &compiled, &conf).await;
    let probes = check::probes(&compiled.stanza, &compiled.services, &compiled.target);
    let mut expected: BTreeMap<String, Vec<IpAddr>> = BTreeMap::new();
    let mut verdicts = Vec::with_capacity(probes.len());
    for probe in &probes {
        let target_addresses = match &probe.target {
            Some(target) if !expected.contains_key(target) => {
                let found = conf.lookup_ip(&format!("{target}.")).await;
                let addresses = found.ok().flatten().map(|r| r.addresses).unwrap_or_default();
                expected.entry(target.clone()).or_insert(addresses).clone()
            }
            Some(target) => expected[target].clone(),
            None => Vec::new(),
        };
        let answer = match conf.lookup_ip(&probe.name).await {
            Ok(Some(resolved)) => Answer::Addresses(resolved.addresses),
            Ok(None) => Answer::Nothing,
            Err(error) => Answer::Failed(error.to_string()),
        };
        verdicts.push(check::verdict(probe, &target_addresses, &answer, &hints));
    }
    print(&verdicts, args.json)?;
    let reaches = |v: &Verdict| v.result == check::Result::Shunt || v.result == check::Result::Refused;
    if !verdicts.iter().all(reaches) {
        std::process::exit(1);
    }
    Ok(())
}

fn print(verdicts: &[Verdict], json: bool) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut out, verdicts)?;
        writeln!(out)?;
    } else {
        for verdict in verdicts {
            writeln!(out, "{verdict}")?;
        }
    }
    out.flush()?;
    Ok(())
}

/// What shunt can learn about why a name might not reach it: the pod's first nameserver, and
/// (when the objects came from the API and RBAC allows) the two Corefiles.
async fn hints(args: &CheckArgs, compiled: &Compiled, conf: &ResolvConf) -> Hints {
    let via_node_local = conf
        .nameservers
        .first()
        .is_some_and(|server| server.ip() == IpAddr::from(NODE_LOCAL_ADDRESS));
    let mut hints = Hints {
        via_node_local,
        ..Hints::default()
    };
    let Some(client) = &compiled.client else {
        return hints;
    };
    let at = |(namespace, name): &(String, String)| (namespace.clone(), name.clone());
    let (namespace, name) = at(&args.node_local_dns_configmap);
    if let Some(corefile) = config_map_corefile(client, (&namespace, &name)).await {
        let begin = compiled.release.begin_marker();
        hints.node_local_unmanaged = !corefile.lines().any(|line| line.trim() == begin);
    }
    let (namespace, name) = at(&args.coredns_configmap);
    if let Some(corefile) = config_map_corefile(client, (&namespace, &name)).await {
        hints.coredns_has_rule = Some(Box::new(move |host: &HostMatch| has_rule(&corefile, host)));
    }
    hints
}

/// Whether the Corefile holds a rule naming `host` (an exact name, or a wildcard's regex).
fn has_rule(corefile: &str, host: &HostMatch) -> bool {
    let needle = match host {
        HostMatch::Exact(name) => format!("rewrite name exact {name} "),
        HostMatch::Wildcard(suffix) => crate::dns::one_label_regex(suffix),
        HostMatch::DeepWildcard(suffix) => crate::dns::any_depth_regex(suffix),
        HostMatch::Any => return false,
    };
    corefile.lines().any(|line| line.trim().contains(&needle))
}
