//! An nginx Ingress's paths claimed in the table: each becomes a route with what ingress-nginx's
//! location does besides forwarding (the template's request fields, the body limit, HSTS, the
//! HTTPS redirect, `upstream-vhost`, a fixed redirect, a rewrite), and a path another class
//! holds refuses its host. Hosts in regex mode are claimed by `regex.rs` instead.

use std::collections::{BTreeMap, BTreeSet};

use crate::objects::HTTPIngressPath;
use shunt_spec::{BackendId, Forwarding, HashKey, HostMatch, HttpsRedirect, PathKind, RedirectSpec, RouteOptions};

use super::{
    Nginx, Redirects, affinity::BackendAffinity, annotations::NginxAnnotations, canary::Canaries, config::NginxConfig,
    paths, report,
};
use crate::{
    compile::{PathClaim, Reason, RouteSettings, Sink},
    shadow::HostVerdict,
};

/// What every claim of one compile reads.
pub(super) struct Walk<'w> {
    /// Canary backends by the main backend they join.
    pub canaries: Canaries,
    /// `upstream-hash-by` keys by backend (see `hash.rs`).
    pub hashes: BTreeMap<BackendId, Option<HashKey>>,
    /// Sticky backends (see `affinity.rs`).
    pub affinities: BTreeMap<BackendId, BackendAffinity>,
    pub redirects: &'w Redirects<'w>,
    pub config: &'w NginxConfig,
    /// `--nginx-default-backend` (see `errors.rs`).
    pub default_backend: Option<&'w (String, String)>,
    /// Every nginx Ingress, `namespace/name`.
    pub sources: BTreeSet<&'w str>,
    /// Hosts where ingress-nginx makes every location a regex (`use-regex`, `rewrite-target`).
    pub regex_hosts: BTreeSet<String>,
}

/// Claims each path of the Ingress on hosts not in regex mode.
pub(super) fn claim(
    nginx: &Nginx<'_>,
    sink: &mut Sink<'_>,
    walk: &Walk<'_>,
    verdicts: &mut BTreeMap<String, HostVerdict>,
) {
    let Some(rules) = nginx.ingress.spec.as_ref().and_then(|spec| spec.rules.as_ref()) else {
        return;
    };
    for rule in rules {
        let raw = rule.host.as_deref().unwrap_or_default();
        let host = match crate::compile::parse_host(raw) {
            Ok(host) => host,
            Err(error) => {
                let message = format!("invalid host {raw:?}, rule skipped: {error}");
                report(nginx, sink, Reason::InvalidHost, message);
                continue;
            }
        };
        let name = host_name(raw);
        if walk.regex_hosts.contains(&name) || !routes_on(nginx, verdicts, &name) {
            continue;
        }
        for path in rule.http.iter().flat_map(|http| &http.paths) {
            let location = match paths::nginx_path(path.path.as_deref(), &path.path_type) {
                Ok(location) => location,
                Err(error) => {
                    let message = format!("invalid path {:?} on host \"{host}\": {error}", path.path);
                    report(nginx, sink, Reason::InvalidPath, message);
                    continue;
                }
            };
            let options = route_options(&nginx.annotations, walk.config);
            if let Some(claim) = path_claim(nginx, sink, walk, (&host, &name), path, location, options) {
                settle(nginx, sink, walk, &claim, verdicts);
            }
        }
    }
}

/// Whether the Ingress's paths on `host` are routed. Not when the Ingress asks what shunt cannot
/// do (an access rule, such as auth-url or source ranges, on any host, named or not), nor on a
/// host refused for anything but a conflict over a path: no caller reaching shunt by that name
/// gets an answer without what an annotation asked for.
pub(super) fn routes_on(nginx: &Nginx<'_>, verdicts: &BTreeMap<String, HostVerdict>, host: &str) -> bool {
    let refused = |verdict: &HostVerdict| verdict.reasons.iter().any(|reason| !reason.starts_with("Conflict:"));
    nginx.problems.is_empty() && !verdicts.get(host).is_some_and(refused)
}

/// A rule's host as verdicts key it.
pub(super) fn host_name(raw: &str) -> String {
    raw.trim_end_matches('.').to_ascii_lowercase()
}

/// The claim `path` makes at `location` (kind, table path); `None`, with a diagnostic, when its
/// backend is unusable.
pub(super) fn path_claim(
    nginx: &Nginx<'_>,
    sink: &mut Sink<'_>,
    walk: &Walk<'_>,
    (host, name): (&HostMatch, &str),
    path: &HTTPIngressPath,
    (kind, location): (PathKind, String),
    mut options: RouteOptions,
) -> Option<PathClaim> {
    if nginx.denied.is_some() {
        return Some(super::denied::claim(nginx, host, (kind, location), options));
    }
    // `no-auth-locations`: the location is served without the `auth_request` line.
    if walk.config.auth.exempt(path.path.as_deref().unwrap_or("/")) {
        options.external_auth = None;
    }
    if let Some(cache) = options.external_auth.as_mut().and_then(|auth| auth.cache.as_mut()) {
        let path_type = &*path.path_type;
        cache.scope = super::auth::cache::scope(name, path.path.as_deref().unwrap_or("/"), path_type);
    }
    // A `return` in the location answers before the HTTPS redirect (nginx's rewrite module runs
    // ahead of lua_ingress.lua's rewrite handler) and never reaches the backend.
    if options.redirect.is_some() {
        return Some(PathClaim {
            host: host.clone(),
            path: location,
            kind,
            backend: None,
            route: RouteSettings::from(options),
        });
    }
    let protocol = nginx.annotations.backend_protocol;
    let backend = match sink.backends.resolve(nginx.namespace, &path.backend, protocol) {
        Ok(resolved) => resolved,
        Err(error) => {
            let message = format!("{error} for path {location:?} on host \"{host}\"");
            report(nginx, sink, error.reason(), message);
            return None;
        }
    };
    options.canary = walk.canaries.get(&backend.id).map(|(_, canary)| canary.clone());
    options.hash = walk.hashes.get(&backend.id).cloned().flatten();
    options.error_pages = super::errors::claim(nginx, sink, walk, path);
    // Cookie affinity replaces the hash key (balancer.lua, `get_implementation`).
    options.affinity = walk.affinities.get(&backend.id).and_then(|a| a.route(name, path));
    if options.affinity.is_some() {
        options.hash = None;
    }
    let annotations = &nginx.annotations;
    let redirects = walk.redirects;
    let ssl_redirect = (annotations.force_ssl_redirect
        || (annotations.ssl_redirect.unwrap_or(true) && redirects.with_certificate.contains(name)))
        && !redirects.exempt.iter().any(|p| location.starts_with(p.as_str()));
    let mut route = RouteSettings::from(options);
    route.ssl_redirect = ssl_redirect;
    Some(PathClaim {
        host: host.clone(),
        path: location,
        kind,
        backend: Some(super::proxy_ssl::backend(nginx, backend)),
        route,
    })
}

/// Puts `claim` in the table. A slot another Ingress holds is a conflict; held by another
/// class's Ingress (which nginx would not see), it refuses the host.
pub(super) fn settle(
    nginx: &Nginx<'_>,
    sink: &mut Sink<'_>,
    walk: &Walk<'_>,
    claim: &PathClaim,
    verdicts: &mut BTreeMap<String, HostVerdict>,
) {
    if let Some(reason) = super::errors::unreproduced(nginx, sink, claim)
        && let Some(verdict) = verdicts.get_mut(&claim.host.to_string())
    {
        verdict.reasons.push(reason);
    }
    let Err(holder) = sink.table.claim(claim, &nginx.source) else {
        // The canary's backend goes into the table with the route naming it.
        let canary = claim
            .backend
            .as_ref()
            .and_then(|backend| walk.canaries.get(&backend.id));
        if let Some((alternative, _)) = canary {
            sink.table.add_alternative(alternative);
        }
        super::errors::hold_backend(claim, sink);
        if nginx.denied.is_none() {
            report_no_endpoints(nginx, claim, sink);
        }
        return;
    };
    if holder == nginx.source {
        return;
    }
    let message = format!(
        "path {:?} on host \"{}\" is already routed by ingress {holder:?}",
        claim.path, claim.host
    );
    report(nginx, sink, Reason::Conflict, message);
    if !walk.sources.contains(holder.as_str())
        && let Some(verdict) = verdicts.get_mut(&claim.host.to_string())
    {
        verdict
            .reasons
            .push(format!("Conflict: path {} is routed by {holder}", claim.path));
    }
}

/// What every route of an nginx Ingress does besides forwarding: the template's request fields,
/// the body limit, HSTS, the HTTPS redirect's form, `upstream-vhost` and a fixed redirect.
pub(super) fn route_options(annotations: &NginxAnnotations, config: &NginxConfig) -> RouteOptions {
    RouteOptions {
        forwarding: Forwarding::Nginx {
            original_uri: config.original_uri,
        },
        nginx_forwarding: config.forwarding.clone(),
        body_limit: Some(annotations.body_limit.unwrap_or(config.body_limit)),
        hsts: config.hsts.clone(),
        https_redirect: HttpsRedirect {
            code: config.redirect_code,
            trim_trailing_slash: !annotations.preserve_trailing_slash,
        },
        upstream_host: annotations.upstream_vhost.clone(),
        source_ranges: annotations.source_ranges(),
        cors: annotations.cors.clone(),
        external_auth: (config.auth).gate(annotations.external_auth.as_ref(), !annotations.no_global_auth),
        limits: annotations.limits.clone().map(|mut limits| {
            limits.rate_status = config.limit_status.rate;
            limits.connection_status = config.limit_status.connections;
            limits
        }),
        response_pace: annotations.pace.over(config.pace),
        timeouts: annotations.timeouts.or(config.timeouts).route(),
        next_upstream: (annotations.next_upstream.or(&config.next_upstream)).rule(config.retry_non_idempotent),
        redirect: annotations.redirect.as_ref().map(|fixed| RedirectSpec {
            code: fixed.code,
            scheme: None,
            host: None,
            port: None,
            path: None,
            drop_query: true,
            location: Some(fixed.url.clone()),
            replace_prefix: None,
            rewritten: false,
            www: false,
        }),
        ..RouteOptions::default()
    }
}

fn report_no_endpoints(nginx: &Nginx<'_>, claim: &PathClaim, sink: &mut Sink<'_>) {
    if let Some(resolved) = claim.backend.as_deref().filter(|b| b.spec.endpoints.is_empty()) {
        let (id, path, host) = (&resolved.id, &claim.path, &claim.host);
        let message = format!("backend {id:?} has no ready endpoints for path {path:?} on host \"{host}\"");
        report(nginx, sink, Reason::NoEndpoints, message);
    }
}
