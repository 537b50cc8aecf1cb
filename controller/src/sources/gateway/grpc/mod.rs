//! GRPCRoute: a route in HTTPRoute's shape whose matches name `/{service}/{method}`, served to
//! its pods over HTTP/2 with prior knowledge (h2c). It goes through HTTPRoute's attachment,
//! rules, filters, backends and hosts; only its matches and backends' protocol are its own.
//!
//! ```text
//! GRPCRoute ─ translate ─▶ HTTPRoute (paths, headers, filters, backendRefs) + per match extras
//!           ─ rules::compile_as(GRPCRoute, h2c) ─▶ entries ─ extras: path condition, precedence ─▶ entries
//! ```
//! Merging is never done between the two kinds: a listener takes, for a hostname, the older of
//! an HTTPRoute and a GRPCRoute (`conflicts.rs`).

pub mod conflicts;
mod matches;
pub mod objects;

#[cfg(test)]
mod tests;

use std::sync::Arc;

use shunt_spec::UpstreamProtocol;

use self::{matches::Translated, objects::GRPCRoute};
use super::{
    backends::Referrer,
    grants::Grants,
    objects::{HTTPRoute, HTTPRouteRule, HTTPRouteSpec},
    rules::{self, MAX_ROUTE_MATCHES, MAX_RULE_MATCHES, MAX_RULES, RouteRules},
};
use crate::compile::{Backends, namespace_name};

/// The kind, as status and ReferenceGrants name it.
pub const KIND: &str = "GRPCRoute";

const REFERRER: Referrer = Referrer {
    kind: KIND,
    protocol: Some(UpstreamProtocol::H2c),
};

/// The filters a GRPCRoute may carry (the CRD's); `RequestMirror` is served as HTTPRoute's is.
const FILTERS: [&str; 4] = [
    "RequestHeaderModifier",
    "ResponseHeaderModifier",
    "RequestMirror",
    "ExtensionRef",
];

/// The Services `routes`' backendRefs name, as (namespace, name).
pub fn named_services(routes: &[Arc<GRPCRoute>]) -> impl Iterator<Item = (&str, &str)> {
    routes.iter().flat_map(|route| {
        let (namespace, _) = namespace_name(&route.metadata);
        let refs = route.spec.rules.iter().flat_map(|rule| &rule.backend_refs);
        refs.map(move |reference| {
            (
                reference.namespace.as_deref().unwrap_or(namespace),
                reference.name.as_str(),
            )
        })
    })
}

/// A GRPCRoute in HTTPRoute's shape.
pub struct Shaped {
    pub route: HTTPRoute,
    /// By rule, then match (a rule without matches has one); the error is what shunt cannot serve.
    extras: Result<Vec<Vec<Translated>>, String>,
}

/// `route` in HTTPRoute's shape: metadata, parentRefs and hostnames as they are, so attachment
/// judges them as an HTTPRoute's.
pub fn shape(route: &GRPCRoute) -> Shaped {
    let mut shaped = HTTPRoute {
        metadata: route.metadata.clone(),
        spec: HTTPRouteSpec {
            parent_refs: route.spec.parent_refs.clone(),
            hostnames: route.spec.hostnames.clone(),
            rules: Vec::new(),
        },
        status: None,
    };
    let extras = shape_rules(route, &mut shaped.spec.rules);
    Shaped { route: shaped, extras }
}

fn shape_rules(route: &GRPCRoute, into: &mut Vec<HTTPRouteRule>) -> Result<Vec<Vec<Translated>>, String> {
    let rules = &route.spec.rules;
    // Bounded before anything is copied: the same limits as HTTPRoute's, which the CRD sets.
    let total: usize = rules.iter().map(|rule| rule.matches.len().max(1)).sum();
    if rules.len() > MAX_RULES
        || total > MAX_ROUTE_MATCHES
        || rules.iter().any(|rule| rule.matches.len() > MAX_RULE_MATCHES)
    {
        return Err(format!(
            "more than {MAX_RULES} rules, {MAX_RULE_MATCHES} matches in a rule or {MAX_ROUTE_MATCHES} in the route"
        ));
    }
    let mut extras = Vec::with_capacity(rules.len());
    for rule in rules {
        if let Some(filter) = rule
            .filters
            .iter()
            .find(|filter| !FILTERS.contains(&filter.type_.as_str()))
        {
            return Err(format!("filter type {:?} is not a GRPCRoute filter", filter.type_));
        }
        let default_match = [Default::default()];
        let raw = if rule.matches.is_empty() {
            &default_match[..]
        } else {
            &rule.matches
        };
        let translated: Vec<Translated> = raw.iter().map(matches::translate).collect::<Result<_, _>>()?;
        into.push(HTTPRouteRule {
            name: rule.name.clone(),
            matches: translated.iter().map(|one| one.http.clone()).collect(),
            filters: rule.filters.clone(),
            backend_refs: rule.backend_refs.clone(),
            ..HTTPRouteRule::default()
        });
        extras.push(translated);
    }
    Ok(extras)
}

/// Compiles a shaped GRPCRoute through HTTPRoute's rules, then adds what only gRPC says to each
/// entry: the whole-path condition and the spec's precedence.
pub fn compile(shaped: &Shaped, grants: &Grants<'_>, backends: &mut Backends<'_>) -> Result<RouteRules, String> {
    let extras = shaped.extras.as_ref().map_err(Clone::clone)?;
    let mut compiled = rules::compile_as(REFERRER, &shaped.route, grants, backends)?;
    for entry in &mut compiled.entries {
        let (rule_at, match_at) = entry.order;
        let Some(extra) = extras.get(rule_at).and_then(|rule| rule.get(match_at)) else {
            continue;
        };
        if let Some(path) = &extra.path {
            let conditions = entry.options.conditions.get_or_insert_with(Default::default);
            conditions.path = Some(path.clone());
            entry.matched.conditions.path = Some(path.clone());
        }
        entry.specificity = matches::specificity(extra, entry.matched.conditions.headers.len());
    }
    Ok(compiled)
}
