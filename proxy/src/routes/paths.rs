//! One virtual host's paths as a matchit tree.
//!
//! Ingress semantics map onto matchit patterns like this:
//! - `Exact /p` inserts the static pattern `/p`;
//! - `Prefix /p` inserts `/p` and `/p/{*rest}`, so `/p`, `/p/` and `/p/x` match and `/px` does not;
//! - both kinds may share the pattern `/p`: a [`Slot`] holds one of each and `Exact` wins there.
//!
//! matchit prefers static segments over the catch-all, which is "longest match wins". Where it
//! finds nothing (a catch-all never matches an empty remainder, and a failed static branch is
//! not retried against a shorter prefix), [`PathTable::lookup`] walks up the path's ancestors
//! and accepts only `Prefix` slots there.

use std::{collections::BTreeMap, sync::Arc};

use super::{spec::PathKind, table::Route};

#[derive(Default)]
pub(super) struct PathTable {
    router: matchit::Router<Slot>,
}

#[derive(Default)]
struct Slot {
    exact: Option<Arc<Route>>,
    prefix: Option<Arc<Route>>,
}

/// Collects a host's paths before they go into matchit, which rejects duplicates instead of
/// choosing: precedence is settled here.
#[derive(Default)]
pub(super) struct PathTableBuilder {
    slots: BTreeMap<String, Slot>,
}

// === impl PathTableBuilder ===

impl PathTableBuilder {
    /// Adds a path. The first route given for a `(path, kind)` keeps it.
    pub(super) fn add(&mut self, path: &str, kind: PathKind, route: Arc<Route>) {
        let escaped = escape(path);
        match kind {
            PathKind::Exact => {
                self.slots.entry(escaped).or_default().exact.get_or_insert(route);
            }
            PathKind::Prefix => {
                let base = escaped.trim_end_matches('/');
                let rest = format!("{base}/{{*rest}}");
                let base = if base.is_empty() { "/" } else { base };
                self.slots
                    .entry(base.to_string())
                    .or_default()
                    .prefix
                    .get_or_insert(route.clone());
                self.slots.entry(rest).or_default().prefix.get_or_insert(route);
            }
        }
    }

    /// Builds the tree; patterns matchit refuses come back as `(pattern, reason)`.
    pub(super) fn build(self) -> (PathTable, Vec<(String, String)>) {
        let mut router = matchit::Router::new();
        let mut rejected = Vec::new();
        for (pattern, slot) in self.slots {
            if let Err(error) = router.insert(pattern.clone(), slot) {
                rejected.push((pattern, error.to_string()));
            }
        }
        (PathTable { router }, rejected)
    }
}

// === impl PathTable ===

impl PathTable {
    pub(super) fn lookup(&self, path: &str) -> Option<&Arc<Route>> {
        if let Ok(found) = self.router.at(path) {
            // matchit backtracks into a shorter catch-all when `/p/{*rest}` would match an
            // empty rest: `/p/` lands on `/{*rest}`. A `Prefix /p` is the longer match there.
            let short_catch_all = !found.params.is_empty() && path.len() > 1 && path.ends_with('/');
            if short_catch_all && let Some(route) = self.prefix_at(path.trim_end_matches('/')) {
                return Some(route);
            }
            let slot = found.value;
            if let Some(route) = slot.exact.as_ref().or(slot.prefix.as_ref()) {
                return Some(route);
            }
        }
        // Ancestors, longest first: "/a/b/c" tries "/a/b", "/a", "/"; "/a/b/" tries "/a/b" first.
        let mut rest = path;
        loop {
            rest = match rest.trim_end_matches('/') {
                trimmed if trimmed.len() < rest.len() => trimmed,
                trimmed => trimmed.rfind('/').map_or("", |slash| &trimmed[..slash]),
            };
            let candidate = if rest.is_empty() { "/" } else { rest };
            if let Some(route) = self.prefix_at(candidate) {
                return Some(route);
            }
            if rest.is_empty() {
                return None;
            }
        }
    }

    fn prefix_at(&self, path: &str) -> Option<&Arc<Route>> {
        let found = self.router.at(path).ok()?;
        found.value.prefix.as_ref()
    }
}

/// matchit treats `{` and `}` as parameter syntax; user paths are literal.
fn escape(path: &str) -> String {
    path.replace('{', "{{").replace('}', "}}")
}
