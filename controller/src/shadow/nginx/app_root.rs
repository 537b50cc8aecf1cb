//! `app-root`: ingress-nginx writes `if ($uri = /) { return 302 $scheme://$http_host/ROOT; }`
//! into the `server` of each host of the Ingress, ahead of its locations (nginx.tmpl, in the
//! locations loop but outside `location`), so `/` is redirected whichever Ingress's location
//! would have matched it. No location is chosen for that answer: no HSTS header filter runs and
//! no body limit applies (the server rewrite phase comes before `client_max_body_size`).
//! On a host in regex mode the claim is the regex `^/$` with rank 0, first of the host's.

use std::collections::BTreeMap;

use shunt_spec::{BodyLimit, Forwarding, PathKind, RedirectSpec, RouteOptions};

use super::{
    Nginx,
    claims::{Walk, host_name, routes_on},
    config::NginxConfig,
    report,
};
use crate::{
    compile::{PathClaim, Reason, RouteSettings, Sink},
    shadow::HostVerdict,
};

/// Claims `/` (Exact) with the redirect on every host of the Ingress, before any path claim.
pub(super) fn claim(
    nginx: &Nginx<'_>,
    sink: &mut Sink<'_>,
    walk: &Walk<'_>,
    verdicts: &mut BTreeMap<String, HostVerdict>,
) {
    let Some(app_root) = &nginx.annotations.app_root else {
        return;
    };
    let rules = nginx.ingress.spec.as_ref().and_then(|spec| spec.rules.as_ref());
    for rule in rules.into_iter().flatten() {
        let raw = rule.host.as_deref().unwrap_or_default();
        // An invalid host is reported once, by the path claims.
        let Ok(host) = crate::compile::parse_host(raw) else {
            continue;
        };
        if !routes_on(nginx, verdicts, &host_name(raw)) {
            continue;
        }
        // On a host in regex mode every route is a regex: `$uri = /` is `^/$`, ahead of them all.
        let (kind, path) = if walk.regex_hosts.contains(&host_name(raw)) {
            (PathKind::Regex, "/$")
        } else {
            (PathKind::Exact, "/")
        };
        let claim = PathClaim {
            host: host.clone(),
            path: path.to_string(),
            kind,
            backend: None,
            route: RouteSettings::from(options(app_root, walk.config)),
        };
        let Err(holder) = sink.table.claim(&claim, &nginx.source) else {
            continue;
        };
        if holder == nginx.source {
            continue;
        }
        let message = format!("app-root on host \"{host}\": path \"/\" is already routed by ingress {holder:?}");
        report(nginx, sink, Reason::Conflict, message);
        if let Some(verdict) = verdicts.get_mut(&raw.trim_end_matches('.').to_ascii_lowercase()) {
            verdict
                .reasons
                .push(format!("Conflict: app-root and path / of {holder}"));
        }
    }
}

fn options(app_root: &str, config: &NginxConfig) -> RouteOptions {
    RouteOptions {
        forwarding: Forwarding::Nginx {
            original_uri: config.original_uri,
        },
        body_limit: Some(BodyLimit::Unlimited),
        redirect: Some(RedirectSpec {
            code: 302,
            scheme: None,
            host: None,
            port: None,
            path: Some(app_root.to_string()),
            drop_query: true,
            location: None,
            replace_prefix: None,
            rewritten: false,
            www: false,
        }),
        ..RouteOptions::default()
    }
}
