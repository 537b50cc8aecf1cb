//! `from-to-www-redirect`: ingress-nginx adds a `server` for the other name of each host one of
//! whose locations asks (`www.` added, or removed), answering every request with the
//! ConfigMap's `http-redirect-code` to the host (pkg/util/ingress `BuildRedirects`, nginx.tmpl's
//! RedirectServers, ngx_srv_redirect.lua). Not when the other name is itself an Ingress host of
//! the class: that server keeps it. On HTTPS that server has the host's certificate when it
//! covers the other name, else ingress-nginx's default one, which shunt does not reproduce: the
//! other name then moves for plain HTTP only.
//!
//! ```text
//! host a.example.com (an Ingress with the key) ─▶ www.a.example.com: every path ─▶ 308
//!   http://a.example.com:80/PATH (the target as sent, one ending / removed; 443 on HTTPS)
//! ```

use std::collections::{BTreeMap, BTreeSet};

use crate::objects::Ingress;
use shunt_spec::{BodyLimit, Forwarding, PathKind, RedirectSpec, RouteOptions};

use super::{Nginx, config::NginxConfig, report, rule_hosts};
use crate::{
    compile::{PathClaim, Reason, RouteSettings, Sink, TlsBuilder},
    shadow::HostVerdict,
};

/// One redirect server: its name, the host it sends to, the Ingresses asking.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct WwwRedirect {
    pub from: String,
    pub to: String,
    pub sources: Vec<String>,
}

/// The other name of `host`: `www.` removed, or added. `None` for a wildcard, which nginx would
/// not load as a server name (`www.*.example.com`).
pub fn other_name(host: &str) -> Option<String> {
    if host.starts_with('*') {
        return None;
    }
    Some(match host.strip_prefix("www.") {
        Some(bare) => bare.to_string(),
        None => format!("www.{host}"),
    })
}

/// Whether the Ingress carries `from-to-www-redirect: "true"` (read before the compile, for the
/// names it may serve).
pub fn asks(ingress: &Ingress) -> bool {
    let key = format!("{}from-to-www-redirect", super::annotations::PREFIX);
    let value = ingress.metadata.annotations.as_ref().and_then(|map| map.get(&key));
    value.is_some_and(|value| super::annotations::flag(value) == Ok(true))
}

/// The redirect servers the Ingresses' hosts ask for, sorted by name; a wildcard host asking
/// is refused (`verdicts`), as nginx would refuse the whole configuration.
pub(super) fn redirects(
    nginxes: &[Nginx<'_>],
    aliases: &BTreeSet<&String>,
    verdicts: &mut BTreeMap<String, HostVerdict>,
) -> Vec<WwwRedirect> {
    let mut asked: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for nginx in nginxes.iter().filter(|nginx| nginx.annotations.from_to_www) {
        // An alias is a server name, not a server: BuildRedirects reads hostnames only.
        for (host, _) in rule_hosts(nginx.ingress)
            .into_iter()
            .filter(|(host, _)| !aliases.contains(host))
        {
            asked.entry(host).or_default().push(nginx.source.clone());
        }
    }
    let servers: BTreeSet<String> = verdicts.keys().cloned().collect();
    let mut redirects = Vec::new();
    for (to, sources) in asked {
        let Some(from) = other_name(&to) else {
            if let Some(verdict) = verdicts.get_mut(&to) {
                let key = super::annotations::PREFIX;
                verdict.reasons.push(format!(
                    "UnsupportedAnnotation: {key}from-to-www-redirect on a wildcard host (nginx would not load www.{to})"
                ));
            }
            continue;
        };
        // ingress-nginx: "Already exists an Ingress with that hostname. Skipping creation".
        if !servers.contains(&from) {
            redirects.push(WwwRedirect { from, to, sources });
        }
    }
    redirects
}

/// Claims every path of each redirect's name and gives the name a verdict.
pub(super) fn claim(
    redirects: &[WwwRedirect],
    nginxes: &[Nginx<'_>],
    sink: &mut Sink<'_>,
    certificates: &mut TlsBuilder<'_>,
    config: &NginxConfig,
    verdicts: &mut BTreeMap<String, HostVerdict>,
) {
    for redirect in redirects {
        let Ok(from) = crate::compile::parse_host(&redirect.from) else {
            continue;
        };
        let nginx = nginxes.iter().find(|nginx| nginx.source == redirect.sources[0]);
        let Some(nginx) = nginx else { continue };
        let mut verdict = HostVerdict::new(redirect.from.clone(), from.clone());
        verdict.ingresses = redirect.sources.clone();
        verdict.add_listener("http");
        if super::alias::bind_like(nginxes, &redirect.to, &from, certificates) {
            verdict.add_listener("https");
        }
        let claim = PathClaim {
            host: from,
            path: "/".to_string(),
            kind: PathKind::Prefix,
            backend: None,
            route: RouteSettings::from(options(&redirect.to, config)),
        };
        if let Err(holder) = sink.table.claim(&claim, &nginx.source)
            && holder != nginx.source
        {
            let message = format!(
                "from-to-www-redirect: host \"{}\" is already routed by ingress {holder:?}",
                redirect.from
            );
            report(nginx, sink, Reason::Conflict, message);
            verdict.reasons.push(format!("Conflict: path / is routed by {holder}"));
        }
        verdicts.insert(redirect.from.clone(), verdict);
    }
}

/// The redirect server's answer: a server-level `return`, so no location (no HSTS) and no body
/// limit (the server rewrite phase comes before `client_max_body_size` is checked).
fn options(to: &str, config: &NginxConfig) -> RouteOptions {
    RouteOptions {
        forwarding: Forwarding::Nginx {
            original_uri: config.original_uri,
        },
        body_limit: Some(BodyLimit::Unlimited),
        redirect: Some(RedirectSpec {
            code: config.redirect_code,
            scheme: None,
            host: Some(to.to_string()),
            port: None,
            path: None,
            drop_query: false,
            location: None,
            replace_prefix: None,
            rewritten: false,
            www: true,
        }),
        ..RouteOptions::default()
    }
}
