//! Building one host's routes: each path's upstream, rules, name and counters, asked of the
//! caller's [`BuildParts`] once per backend.

use std::{collections::BTreeMap, sync::Arc};

use http::HeaderName;

use super::{BuildParts, BuildWarning, FastMap, Route};
use crate::{
    headers::is_connection_or_framing_field,
    metrics::RouteStats,
    mirror::Mirror,
    routes::{ErrorRoute, rules::RouteRules, split::Split},
    spec::{BackendId, BackendSpec, HostMatch, PathSpec, RedirectSpec, RouteOptions, TableSpec, VirtualHostSpec},
    upstream::{Canary, RouteBalance, Upstream},
};

/// The caller's [`BuildParts`] during one build, with the build's upstream for each backend id
/// of the spec. The caller is asked once per backend, so every path naming one shares its `Arc`;
/// later paths find it here, keyed by the spec's own id (no copy), before the spec's B-tree is
/// searched.
pub(super) struct Parts<'s, P> {
    backends: &'s BTreeMap<BackendId, BackendSpec>,
    callbacks: P,
    known: FastMap<&'s str, Arc<Upstream>>,
    /// The last path's options and the rules made of them: a host's paths, and most hosts of a
    /// class, ask for the same, so their routes share one copy.
    last_rules: Option<(Arc<RouteOptions>, Arc<RouteRules>)>,
}

impl<'s, P: BuildParts> Parts<'s, P> {
    /// `expected`: how many backends the build will ask for, so the cache does not grow by rehashing.
    pub(super) fn new(spec: &'s TableSpec, callbacks: P, expected: usize) -> Self {
        Parts {
            backends: &spec.backends,
            callbacks,
            known: FastMap::with_capacity_and_hasher(expected, Default::default()),
            last_rules: None,
        }
    }

    /// `None` when the spec has no backend `id`.
    pub(super) fn get(&mut self, id: &str) -> Option<Arc<Upstream>> {
        if let Some(found) = self.known.get(id) {
            return Some(found.clone());
        }
        let backends = self.backends;
        let (id, _) = backends.get_key_value(id)?;
        let made = self.callbacks.upstream(id);
        self.known.insert(id, made.clone());
        Some(made)
    }

    pub(super) fn stats(&mut self, route: &Arc<str>, backend: Option<&Arc<str>>) -> RouteStats {
        self.callbacks.stats(route, backend)
    }
}

/// The default backend's route; the previous one (and its counters) while its upstream stays.
pub(super) fn default_route(
    spec: &TableSpec,
    previous: Option<&Arc<Route>>,
    parts: &mut Parts<'_, impl BuildParts>,
) -> Option<Arc<Route>> {
    let upstream = parts.get(spec.default_backend.as_ref()?)?;
    Some(match previous {
        Some(route) if Arc::ptr_eq(&route.upstream, &upstream) => route.clone(),
        _ => {
            let name: Arc<str> = "default".into();
            Arc::new(Route {
                stats: parts.stats(&name, Some(&upstream.id)),
                source: name.clone(),
                name,
                upstream,
                ssl_redirect: false,
                redirect: None,
                client_protocol_header: None,
                rules: RouteRules::unchanged(),
            })
        }
    })
}

/// The routes of one host, shared by its listener views, each with the path it serves.
/// Paths that cannot be served (unknown backend, bad header name) become warnings.
pub(super) fn build_routes<'s>(
    vhost: &'s VirtualHostSpec,
    nowhere: &Arc<Upstream>,
    parts: &mut Parts<'_, impl BuildParts>,
    warnings: &mut Vec<BuildWarning>,
) -> Vec<(Arc<Route>, &'s PathSpec)> {
    let mut built: Vec<(Arc<Route>, &PathSpec)> = Vec::with_capacity(vhost.paths.len());
    let mut scratch = String::new();
    for path in &vhost.paths {
        let redirect = path.options.redirect.clone().map(Box::new);
        // A redirect forwards nowhere; a split forwards to its choices' backends, not `backend`.
        let upstream = match (&redirect, &path.options.split) {
            (Some(_), _) | (_, Some(_)) => nowhere.clone(),
            (None, None) => match parts.get(&path.backend) {
                Some(upstream) => upstream,
                None => {
                    warnings.push(BuildWarning {
                        host: vhost.host.clone(),
                        pattern: path.path.clone(),
                        reason: format!("backend {} is not in the table", path.backend),
                    });
                    continue;
                }
            },
        };
        let client_protocol_header = match path.options.client_protocol_header.as_deref().map(protocol_header) {
            None => None,
            Some(Ok(name)) => Some(name),
            Some(Err(reason)) => {
                warnings.push(BuildWarning {
                    host: vhost.host.clone(),
                    pattern: path.path.clone(),
                    reason,
                });
                continue;
            }
        };
        let rules = match route_rules(path, parts) {
            Ok(rules) => rules,
            Err(reason) => {
                warnings.push(BuildWarning {
                    host: vhost.host.clone(),
                    pattern: path.path.clone(),
                    reason,
                });
                continue;
            }
        };
        let name = route_name(&mut scratch, &vhost.host, &path.path);
        // Metrics name the backend a route forwards to (its upstream's id); a redirect forwards
        // nowhere, a split to several.
        let backend = if Arc::ptr_eq(&upstream, nowhere) {
            None
        } else {
            Some(&upstream.id)
        };
        // A host's paths mostly come from one Ingress: share its name rather than copy it per route.
        let source = match built.last() {
            Some((last, _)) if *last.source == *path.source => last.source.clone(),
            _ => path.source.as_str().into(),
        };
        let route = Route {
            stats: parts.stats(&name, backend),
            name,
            source,
            upstream,
            ssl_redirect: path.ssl_redirect,
            redirect,
            client_protocol_header,
            rules,
        };
        built.push((Arc::new(route), path));
    }
    built
}

/// The rules `path`'s options ask for, shared: every route without options holds one set, and a
/// path whose options equal the previous path's holds its rules, unless the build gave those
/// rules upstreams or a balance of their own ([`RouteRules::is_the_routes_own`]).
pub(super) fn route_rules(path: &PathSpec, parts: &mut Parts<'_, impl BuildParts>) -> Result<Arc<RouteRules>, String> {
    let options = &path.options;
    if let Some((last, rules)) = &parts.last_rules
        && (Arc::ptr_eq(last, options) || last == options)
    {
        return Ok(rules.clone());
    }
    if **options == RouteOptions::default() {
        return Ok(RouteRules::unchanged());
    }
    let rules = RouteRules::from_options(options)
        .and_then(|rules| balanced(rules, path, parts))
        .and_then(|rules| with_error_pages(rules, path, parts))?;
    let rules = Arc::new(rules);
    if !rules.is_the_routes_own() {
        parts.last_rules = Some((options.clone(), rules.clone()));
    }
    Ok(rules)
}

/// `rules` with the path's canary (its upstream from `parts`), hash key and cookie affinity,
/// when it has any, and its split with each choice's upstream.
pub(super) fn balanced(
    mut rules: RouteRules,
    path: &PathSpec,
    parts: &mut Parts<'_, impl BuildParts>,
) -> Result<RouteRules, String> {
    let options = &path.options;
    if let Some(split) = &options.split {
        rules.split = Some(Arc::new(Split::new(split, |id| parts.get(id))?));
    }
    if let Some(mirror) = &options.mirror {
        rules.mirror = Some(Arc::new(Mirror::new(mirror, |id| parts.get(id))?));
    }
    if options.canary.is_none() && options.hash.is_none() && options.affinity.is_none() {
        return Ok(rules);
    }
    let canary = match &options.canary {
        None => None,
        Some(spec) => Some(Canary {
            upstream: parts
                .get(&spec.backend)
                .ok_or_else(|| format!("canary backend {} is not in the table", spec.backend))?,
            rule: spec.rule.clone(),
            hash: spec.hash.clone(),
        }),
    };
    rules.balance = Some(Arc::new(RouteBalance {
        canary,
        hash: options.hash.clone(),
        affinity: options.affinity.clone(),
    }));
    Ok(rules)
}

/// `rules` with the path's error pages and their backend's upstream from `parts`.
pub(super) fn with_error_pages(
    mut rules: RouteRules,
    path: &PathSpec,
    parts: &mut Parts<'_, impl BuildParts>,
) -> Result<RouteRules, String> {
    let Some(pages) = &path.options.error_pages else {
        return Ok(rules);
    };
    let upstream = match &pages.backend {
        None => None,
        Some(id) => Some(
            parts
                .get(id)
                .ok_or_else(|| format!("error backend {id} is not in the table"))?,
        ),
    };
    rules.error_pages = Some(Arc::new(ErrorRoute::new(pages, upstream)?));
    Ok(rules)
}

/// A route's client protocol header: a valid name, and none of the fields that frame or route the
/// message (set by a route, they would go out beside the proxy's own).
pub(super) fn protocol_header(name: &str) -> Result<HeaderName, String> {
    match HeaderName::from_bytes(name.as_bytes()) {
        Ok(name) if is_connection_or_framing_field(&name) => {
            Err(format!("client protocol header {name}: a connection or framing field"))
        }
        Ok(name) => Ok(name),
        Err(error) => Err(format!("client protocol header {name:?}: {error}")),
    }
}

/// A route's name, `host` + `path` as configured, written in `scratch` (one buffer for a host's
/// routes) and then copied once into the `Arc` that the route and its counters share.
pub(super) fn route_name(scratch: &mut String, host: &HostMatch, path: &str) -> Arc<str> {
    scratch.clear();
    match host {
        HostMatch::Exact(host) => scratch.push_str(host),
        HostMatch::Wildcard(suffix) => {
            scratch.push_str("*.");
            scratch.push_str(suffix);
        }
        HostMatch::DeepWildcard(suffix) => {
            scratch.push_str("**.");
            scratch.push_str(suffix);
        }
        HostMatch::Any => scratch.push('*'),
    }
    scratch.push_str(path);
    Arc::from(scratch.as_str())
}

/// The 301 from `/abc` to `/abc/` that a `CharPrefix` rule `/abc/` gives, as nginx does.
pub(super) fn slash_redirect(
    route: &Arc<Route>,
    path: &PathSpec,
    parts: &mut Parts<'_, impl BuildParts>,
) -> Arc<Route> {
    let name: Arc<str> = format!("{} (add slash)", route.name).into();
    Arc::new(Route {
        stats: parts.stats(&name, None),
        name,
        source: route.source.clone(),
        upstream: route.upstream.clone(),
        ssl_redirect: false,
        redirect: Some(Box::new(RedirectSpec {
            code: 301,
            scheme: None,
            host: None,
            port: None,
            path: Some(path.path.clone()),
            drop_query: false,
            location: None,
            replace_prefix: None,
            rewritten: false,
            www: false,
        })),
        client_protocol_header: None,
        rules: route.rules.clone(),
    })
}
