//! Hosts in regex mode: where any location has `use-regex` or a `rewrite-target` that differs
//! from its path, ingress-nginx writes every location of the host as `~* "^PATH"`
//! (template.go `enforceRegexModifier`, `buildLocation`), Exact ones included. nginx then tries
//! them in the order ingress-nginx lists them and the first match wins:
//!
//! ```text
//! locations of every Ingress on the host, oldest Ingress first; a (path, type) already listed
//!   is skipped (controller.go, getBackendServers)
//!   ─▶ stable sort by path, descending; then stable by length, descending  (same file)
//!   ─▶ each Prefix location of an Ingress without its own regex becomes `PATH/` followed by
//!      an Exact `PATH` unless an Exact one exists (location.go, updateServerLocations)
//!   ─▶ the default backend's `/` stays first among equals: an Exact `/` behind it never matches
//! ```
//!
//! Each becomes a `Regex` claim ranked by that order; a pattern the proxy's engine cannot run
//! (look-around, backreferences) refuses the host.

use std::collections::{BTreeMap, BTreeSet};

use crate::objects::HTTPIngressPath;
use shunt_proxy::publish::location_regex;
use shunt_spec::{PathKind, RedirectSpec, RewriteSpec};

use super::{
    Nginx,
    claims::{Walk, host_name, path_claim, route_options, routes_on, settle},
};
use crate::shadow::HostVerdict;

/// One location on its way to the table.
#[derive(Clone)]
pub(super) struct Location<'n> {
    pub path: String,
    pub exact: bool,
    pub nginx: &'n Nginx<'n>,
    pub ingress_path: &'n HTTPIngressPath,
}

/// The hosts any of whose locations is a regex of its own.
pub(super) fn hosts(nginxes: &[Nginx<'_>]) -> BTreeSet<String> {
    let mut regex_hosts = BTreeSet::new();
    for nginx in nginxes {
        for (host, path) in host_paths(nginx) {
            if nginx.annotations.regex_location(&location_path(path)) {
                regex_hosts.insert(host);
            }
        }
    }
    regex_hosts
}

/// Claims the locations of `host`, in nginx's order.
pub(super) fn claim_host(
    host: &str,
    nginxes: &[Nginx<'_>],
    sink: &mut crate::compile::Sink<'_>,
    walk: &Walk<'_>,
    verdicts: &mut BTreeMap<String, HostVerdict>,
) {
    let Ok(matched) = crate::compile::parse_host(host) else {
        return;
    };
    let locations = ordered(listed(host, nginxes));
    for location in &locations {
        if let Err(error) = location_regex(&location.path)
            && let Some(verdict) = verdicts.get_mut(host)
        {
            verdict.reasons.push(format!(
                "UnsupportedPath: {:?} is not a regular expression shunt can run: {error}",
                location.path
            ));
        }
    }
    for (index, location) in locations.iter().enumerate() {
        // Refused (by that, or by an annotation of an Ingress on the host): nothing is routed.
        if !routes_on(location.nginx, verdicts, host) {
            continue;
        }
        let annotations = &location.nginx.annotations;
        let mut options = route_options(annotations, walk.config);
        // Rank 0 is app-root's.
        options.rank = index as u32 + 1;
        if let Some(target) = &annotations.rewrite_target
            && annotations.rewrites(&location.path)
            // A `return` (temporal- or permanent-redirect) comes first in the location.
            && options.redirect.is_none()
        {
            // nginx's `rewrite ... break` to a URL ends the location with a 302 to it.
            options.redirect = target.is_absolute().then_some(RedirectSpec {
                code: 302,
                scheme: None,
                host: None,
                port: None,
                path: None,
                drop_query: false,
                location: None,
                replace_prefix: None,
                rewritten: true,
                www: false,
            });
            options.rewrite = Some(RewriteSpec {
                pattern: location.path.clone(),
                target: target.clone(),
                forwarded_prefix: annotations.forwarded_prefix.clone(),
            });
        }
        let place = (PathKind::Regex, location.path.clone());
        let target = (&matched, host);
        if let Some(claim) = path_claim(
            location.nginx,
            sink,
            walk,
            target,
            location.ingress_path,
            place,
            options,
        ) {
            settle(location.nginx, sink, walk, &claim, verdicts);
        }
    }
}

/// The locations of `host` as `getBackendServers` collects them: every Ingress in precedence
/// order, the first of a (path, type) kept; an empty path is `/`.
pub(super) fn listed<'n>(host: &str, nginxes: &'n [Nginx<'n>]) -> Vec<Location<'n>> {
    let mut locations: Vec<Location<'n>> = Vec::new();
    for nginx in nginxes {
        for (rule_host, ingress_path) in host_paths(nginx) {
            if rule_host != host {
                continue;
            }
            let path = location_path(ingress_path);
            let exact = ingress_path.path_type == "Exact";
            if locations.iter().any(|l| l.path == path && l.exact == exact) {
                continue;
            }
            locations.push(Location {
                path,
                exact,
                nginx,
                ingress_path,
            });
        }
    }
    locations
}

/// nginx's order of `listed` locations, Prefix ones expanded, unreachable ones dropped.
pub(super) fn ordered(mut locations: Vec<Location<'_>>) -> Vec<Location<'_>> {
    locations.sort_by(|a, b| b.path.cmp(&a.path));
    locations.sort_by_key(|l| std::cmp::Reverse(l.path.len()));
    let exact_paths: BTreeSet<String> = locations.iter().filter(|l| l.exact).map(|l| l.path.clone()).collect();
    // Without a Prefix `/` of an Ingress, the default backend's `^/` sits first among the
    // length-1 paths and answers everything an Exact `/` would.
    let root_replaced = locations.iter().any(|l| l.path == "/" && !l.exact);
    let mut expanded = Vec::with_capacity(locations.len() * 2);
    for location in locations {
        if location.path == "/" {
            if !location.exact || root_replaced {
                expanded.push(location);
            }
            continue;
        }
        if location.exact || location.nginx.annotations.regex_location(&location.path) {
            expanded.push(location);
            continue;
        }
        let mut prefix = location.clone();
        if !prefix.path.ends_with('/') {
            prefix.path.push('/');
        }
        let has_exact = exact_paths.contains(&location.path);
        expanded.push(prefix);
        if !has_exact {
            expanded.push(Location {
                exact: true,
                ..location
            });
        }
    }
    expanded
}

/// Every (lowercase host, path) of an Ingress's rules.
pub(super) fn host_paths<'n>(nginx: &'n Nginx<'n>) -> impl Iterator<Item = (String, &'n HTTPIngressPath)> + 'n {
    let rules = nginx.ingress.spec.as_ref().and_then(|spec| spec.rules.as_ref());
    rules.into_iter().flatten().flat_map(|rule| {
        let host = host_name(rule.host.as_deref().unwrap_or_default());
        rule.http
            .iter()
            .flat_map(|http| &http.paths)
            .map(move |path| (host.clone(), path))
    })
}

/// ingress-nginx's location path: the Ingress path, `/` when empty.
pub(super) fn location_path(path: &HTTPIngressPath) -> String {
    match path.path.as_deref() {
        None | Some("") => "/".to_string(),
        Some(path) => path.to_string(),
    }
}
