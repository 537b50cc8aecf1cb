//! A ranked host's paths (a host where some path carries request conditions, see
//! `spec::RequestConditions`): tried by ascending rank, the first whose path and conditions
//! match wins. Several may share a `(path, kind)` when their conditions differ. Only `Exact`
//! (equal) and `Prefix` (whole elements, as Ingress `Prefix`) paths have a place here.
//!
//! A linear scan: a ranked host's rules come from a few routes, bounded by the compile; the
//! conditions are read only for paths whose path matched.

use std::sync::Arc;

use super::{
    conditions::Facts,
    paths::{prefix_base, prefix_covers},
    table::Route,
};
use crate::spec::PathKind;

pub(super) struct RankedPaths {
    /// By ascending rank; equal ranks in the order given.
    paths: Box<[RankedPath]>,
}

struct RankedPath {
    /// For `Prefix`, its element boundary (no trailing slash unless `/`).
    path: Box<str>,
    exact: bool,
    route: Arc<Route>,
}

impl RankedPaths {
    /// `rules` as `(path, kind, route)` in the order given; other kinds come back as
    /// `(path, reason)`.
    pub(super) fn build(rules: Vec<(&str, PathKind, Arc<Route>)>) -> (Self, Vec<(String, String)>) {
        let mut paths = Vec::with_capacity(rules.len());
        let mut rejected = Vec::new();
        for (path, kind, route) in rules {
            let (path, exact) = match kind {
                PathKind::Exact => (path, true),
                PathKind::Prefix => (prefix_base(path), false),
                PathKind::CharPrefix | PathKind::Regex => {
                    rejected.push((
                        path.to_string(),
                        format!("a {kind:?} path, on a host with request conditions"),
                    ));
                    continue;
                }
            };
            paths.push(RankedPath {
                path: path.into(),
                exact,
                route,
            });
        }
        // Stable: equal ranks keep the order given.
        paths.sort_by_key(|path| path.route.rules.rank);
        let paths = paths.into_boxed_slice();
        (RankedPaths { paths }, rejected)
    }

    pub(super) fn lookup(&self, path: &str, facts: &impl Facts) -> Option<&Arc<Route>> {
        self.paths
            .iter()
            .find(|ranked| {
                let covers = match ranked.exact {
                    true => *ranked.path == *path,
                    false => prefix_covers(&ranked.path, path),
                };
                covers
                    && (ranked.route.rules.conditions.as_deref())
                        .is_none_or(|conditions| conditions.path_holds(path) && facts.satisfy(conditions))
            })
            .map(|ranked| &ranked.route)
    }
}

#[cfg(test)]
mod tests;
