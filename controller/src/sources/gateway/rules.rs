//! One HTTPRoute's rules to table entries: each match of each rule becomes a path with its
//! conditions and the rule's behaviours (filters, backends), not yet placed on a host.
//!
//! ```text
//! rule ─ matches (none: PathPrefix /) ─▶ Match ──────────────┐
//!      ─ filters (per match: ReplacePrefixMatch needs its path) ┼─▶ Entry { match, RouteOptions }
//!      ─ backendRefs (once per rule) ─▶ backend | split ─────┘
//! ```

use std::sync::Arc;

use shunt_spec::{BackendSplit, RouteOptions};

use super::{
    backends::{self, Referrer, RuleBackends},
    filters,
    grants::Grants,
    matches::{self, Match, Specificity},
    mirror,
    objects::{HTTPRoute, HTTPRouteMatch, HTTPRouteRule},
    timeouts,
};
use crate::compile::{Backends, Resolved, namespace_name};

/// Most rules in one route, and matches in one rule and in all of a route's rules (the CRD's).
pub const MAX_RULES: usize = 16;
pub const MAX_RULE_MATCHES: usize = 64;
pub const MAX_ROUTE_MATCHES: usize = 128;

/// One match of one rule, with what the rule does.
#[derive(Clone, Debug)]
pub struct Entry {
    pub matched: Match,
    pub specificity: Specificity,
    /// Rule index, then match index: the last tie-breakers.
    pub order: (usize, usize),
    /// `None` with a split or a redirect.
    pub backend: Option<Arc<Resolved>>,
    /// Everything but `listeners` and `rank`, set where the entry is placed.
    pub options: RouteOptions,
}

/// A route's entries, in rule and match order.
#[derive(Clone, Debug, Default)]
pub struct RouteRules {
    pub entries: Vec<Entry>,
    pub resolved: Vec<Arc<Resolved>>,
    /// The parents' `ResolvedRefs` reason when some reference did not resolve.
    pub unresolved: Option<&'static str>,
}

/// Compiles `route`'s rules; the error (`UnsupportedValue`) says what shunt cannot serve.
pub fn compile(route: &HTTPRoute, grants: &Grants<'_>, backends: &mut Backends<'_>) -> Result<RouteRules, String> {
    compile_as(backends::HTTP_ROUTE, route, grants, backends)
}

/// [`compile`] for a route of another kind in HTTPRoute's shape (a GRPCRoute's, `grpc.rs`).
pub fn compile_as(
    referrer: Referrer,
    route: &HTTPRoute,
    grants: &Grants<'_>,
    backends: &mut Backends<'_>,
) -> Result<RouteRules, String> {
    let (namespace, _) = namespace_name(&route.metadata);
    let rules = &route.spec.rules;
    if rules.len() > MAX_RULES {
        return Err(format!("more than {MAX_RULES} rules"));
    }
    let total: usize = rules.iter().map(|rule| rule.matches.len().max(1)).sum();
    if total > MAX_ROUTE_MATCHES || rules.iter().any(|rule| rule.matches.len() > MAX_RULE_MATCHES) {
        return Err(format!(
            "more than {MAX_RULE_MATCHES} matches in a rule or {MAX_ROUTE_MATCHES} in the route"
        ));
    }
    check_names(rules)?;
    let default_match = [HTTPRouteMatch::default()];
    let mut compiled = RouteRules::default();
    for (rule_at, rule) in rules.iter().enumerate() {
        let raw_matches = if rule.matches.is_empty() {
            &default_match[..]
        } else {
            &rule.matches
        };
        let parsed: Vec<Match> = raw_matches.iter().map(matches::parse).collect::<Result<_, _>>()?;
        let per_match: Vec<filters::Filters> = parsed
            .iter()
            .map(|found| filters::parse(&rule.filters, found))
            .collect::<Result<_, _>>()?;
        let forwards = per_match
            .iter()
            .any(|filters| filters.redirect.is_none() && !filters.extension);
        let target = match forwards {
            true => backends::resolve((referrer, namespace), &rule.backend_refs, grants, backends)?,
            false => RuleBackends::default(),
        };
        let deadlines = timeouts::deadlines(rule.timeouts.as_ref())?;
        let mirrors = match forwards {
            true => mirror::resolve((referrer, namespace), &rule.filters, grants, backends)?,
            false => mirror::RuleMirrors::default(),
        };
        compiled.unresolved = compiled.unresolved.or(target.unresolved).or(mirrors.unresolved);
        compiled
            .resolved
            .extend(target.resolved.iter().chain(&mirrors.resolved).cloned());
        for (match_at, (found, filters)) in parsed.into_iter().zip(per_match).enumerate() {
            if filters.extension {
                compiled.unresolved = compiled.unresolved.or(Some("InvalidKind"));
            }
            let mut entry = entry(found, filters, &target, (rule_at, match_at));
            entry.options.deadlines = deadlines;
            if entry.options.redirect.is_none() {
                entry.options.mirror = mirrors.mirrors.clone();
            }
            compiled.entries.push(entry);
        }
    }
    Ok(compiled)
}

/// Rule names as the CRD admits them: DNS subdomains of at most 253 characters, each name once.
fn check_names(rules: &[HTTPRouteRule]) -> Result<(), String> {
    let names: Vec<&str> = rules.iter().filter_map(|rule| rule.name.as_deref()).collect();
    let label = |label: &str| {
        let bytes = label.as_bytes();
        let inner = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-';
        !label.is_empty() && !label.starts_with('-') && !label.ends_with('-') && bytes.iter().all(inner)
    };
    if let Some(name) = (names.iter()).find(|name| name.len() > 253 || !name.split('.').all(label)) {
        return Err(format!("rule name {name:?} is not a DNS subdomain"));
    }
    match (names.iter().enumerate()).find(|(at, name)| names[..*at].contains(name)) {
        Some((_, name)) => Err(format!("rule name {name:?} is given twice")),
        None => Ok(()),
    }
}

fn entry(found: Match, filters: filters::Filters, target: &RuleBackends, order: (usize, usize)) -> Entry {
    let mut options = RouteOptions {
        conditions: (!found.conditions.is_empty()).then(|| found.conditions.clone()),
        request_headers: filters.request_headers,
        response_headers: filters.response_headers,
        upstream_host: filters.upstream_host,
        path_replacement: filters.path_replacement,
        cors: filters.cors,
        ..RouteOptions::default()
    };
    let mut backend = None;
    if filters.extension {
        // An extension filter shunt cannot resolve: the rule answers 500, as the spec requires.
        options.split = Some(BackendSplit {
            choices: vec![backends::no_backend()],
        });
    } else if let Some(redirect) = filters.redirect {
        options.redirect = Some(redirect);
    } else {
        backend = target.backend.clone();
        options.split = target.split.clone();
    }
    Entry {
        specificity: matches::specificity(&found),
        matched: found,
        order,
        backend,
        options,
    }
}
