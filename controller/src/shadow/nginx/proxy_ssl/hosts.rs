//! The server-level copy of the `proxy_ssl_*` lines. ingress-nginx also writes one Ingress's
//! lines into the host's `server` block (controller.go, `createServers`: the first with
//! `ca.crt`, else the last; `proxy-ssl-location-only` is off by default), and every location
//! that writes none of its own inherits them. Where the Ingresses of a host do not all carry
//! the same setting (or a canary shares the host, whose backend the main location's lines
//! reach), shunt cannot say which lines a location ends with: the host is refused.

use std::collections::BTreeMap;

use super::super::{Nginx, annotations::PREFIX, rule_hosts};
use crate::shadow::HostVerdict;

pub fn refuse_mixed(nginxes: &[Nginx<'_>], canaries: &[Nginx<'_>], verdicts: &mut BTreeMap<String, HostVerdict>) {
    let mut by_host: BTreeMap<String, (Vec<_>, bool)> = BTreeMap::new();
    for (nginx, canary) in nginxes
        .iter()
        .map(|n| (n, false))
        .chain(canaries.iter().map(|n| (n, true)))
    {
        for (host, _) in rule_hosts(nginx.ingress) {
            let (settings, with_canary) = by_host.entry(host).or_default();
            settings.push(nginx.annotations.upstream_tls.as_ref());
            *with_canary |= canary;
        }
    }
    for (host, (settings, with_canary)) in by_host {
        let any = settings.iter().any(Option::is_some);
        let mixed = settings.windows(2).any(|pair| pair[0] != pair[1]);
        if any
            && (mixed || with_canary)
            && let Some(verdict) = verdicts.get_mut(&host)
        {
            verdict
                .reasons
                .push(format!("UnsupportedAnnotation: {PREFIX}proxy-ssl-secret"));
        }
    }
}
