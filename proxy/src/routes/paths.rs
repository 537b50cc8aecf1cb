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
//!
//! `CharPrefix` paths (nginx locations) do not fit matchit's segment model; they live in a
//! [`Locations`] list beside the tree, built only for hosts that have them. Order of lookup:
//! `Exact`, then the longest `CharPrefix`, then the longest `Prefix`.
//!
//! A host whose one rule is `Prefix /` (most hosts of a large cluster) gets no tree: every path
//! is that route, and 10,000 two-pattern matchit trees would cost about 1 KB a host.

use std::{collections::BTreeMap, sync::Arc};

use super::{spec::PathKind, table::Route};

pub(super) enum PathTable {
    /// The host's only rule is `Prefix /`.
    Root(Arc<Route>),
    /// Boxed: a host's table sits in a map entry per host.
    Tree(Box<PathTree>),
}

pub(super) struct PathTree {
    router: matchit::Router<Slot>,
    locations: Option<Locations>,
}

/// Character-prefix rules of one host, longest first: the first that starts the path is the
/// longest match. A linear scan, bounded by the rules of one host (a load balancer's listener
/// holds tens, not thousands).
#[derive(Default)]
struct Locations {
    rules: Vec<(Box<str>, Arc<Route>)>,
    /// `/abc` for each rule `/abc/`: answered with a 301 to `/abc/` unless a rule is exactly `/abc`.
    slash_redirects: BTreeMap<Box<str>, Arc<Route>>,
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
    locations: BTreeMap<String, Arc<Route>>,
    slash_redirects: BTreeMap<String, Arc<Route>>,
}

// === impl PathTableBuilder ===

impl PathTableBuilder {
    /// Adds a path. The first route given for a `(path, kind)` keeps it.
    pub(super) fn add(&mut self, path: &str, kind: PathKind, route: Arc<Route>) {
        if kind == PathKind::CharPrefix {
            self.locations.entry(path.to_string()).or_insert(route);
            return;
        }
        let escaped = escape(path);
        match kind {
            PathKind::CharPrefix => unreachable!("handled above"),
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

    /// The 301 a `CharPrefix` rule `path` (ending in `/`) gives for `path` without its slash.
    pub(super) fn add_slash_redirect(&mut self, path: &str, route: Arc<Route>) {
        if let Some(bare) = path.strip_suffix('/').filter(|bare| !bare.is_empty()) {
            self.slash_redirects.entry(bare.to_string()).or_insert(route);
        }
    }

    /// Builds the tree; patterns matchit refuses come back as `(pattern, reason)`.
    pub(super) fn build(self) -> (PathTable, Vec<(String, String)>) {
        if let Some(route) = self.root_only() {
            return (PathTable::Root(route), Vec::new());
        }
        let mut router = matchit::Router::new();
        let mut rejected = Vec::new();
        for (pattern, slot) in self.slots {
            if let Err(error) = router.insert(pattern.clone(), slot) {
                rejected.push((pattern, error.to_string()));
            }
        }
        let locations = (!self.locations.is_empty()).then(|| {
            let mut rules: Vec<(Box<str>, Arc<Route>)> = self
                .locations
                .into_iter()
                .map(|(path, route)| (path.into(), route))
                .collect();
            rules.sort_by(|(a, _), (b, _)| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
            let slash_redirects = self
                .slash_redirects
                .into_iter()
                .map(|(path, route)| (path.into(), route))
                .collect();
            Locations { rules, slash_redirects }
        });
        (PathTable::Tree(Box::new(PathTree { router, locations })), rejected)
    }

    /// The route of a host whose paths are exactly one `Prefix /`.
    fn root_only(&self) -> Option<Arc<Route>> {
        if self.slots.len() != 2 || !self.locations.is_empty() || !self.slash_redirects.is_empty() {
            return None;
        }
        let only_prefix = |pattern: &str| match self.slots.get(pattern)? {
            Slot {
                exact: None,
                prefix: Some(route),
            } => Some(route),
            _ => None,
        };
        let (root, rest) = (only_prefix("/")?, only_prefix("/{*rest}")?);
        Arc::ptr_eq(root, rest).then(|| root.clone())
    }
}

// === impl PathTable ===

impl PathTable {
    pub(super) fn lookup(&self, path: &str) -> Option<&Arc<Route>> {
        match self {
            PathTable::Root(route) => Some(route),
            PathTable::Tree(tree) => tree.lookup(path),
        }
    }
}

// === impl PathTree ===

impl PathTree {
    fn lookup(&self, path: &str) -> Option<&Arc<Route>> {
        let found = self.router.at(path).ok();
        let slot = found.as_ref().map(|found| found.value);
        if let Some(route) = slot.and_then(|slot| slot.exact.as_ref()) {
            return Some(route);
        }
        if let Some(route) = self.locations.as_ref().and_then(|locations| locations.lookup(path)) {
            return Some(route);
        }
        // matchit backtracks into a shorter catch-all when `/p/{*rest}` would match an
        // empty rest: `/p/` lands on `/{*rest}`. A `Prefix /p` is the longer match there.
        let short_catch_all = found
            .as_ref()
            .is_some_and(|found| !found.params.is_empty() && path.len() > 1 && path.ends_with('/'));
        if short_catch_all && let Some(route) = self.prefix_at(path.trim_end_matches('/')) {
            return Some(route);
        }
        if let Some(route) = slot.and_then(|slot| slot.prefix.as_ref()) {
            return Some(route);
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

// === impl Locations ===

impl Locations {
    fn lookup(&self, path: &str) -> Option<&Arc<Route>> {
        let longest = self.rules.iter().find(|(rule, _)| path.starts_with(&**rule));
        if let Some((rule, route)) = longest
            && rule.len() == path.len()
        {
            return Some(route);
        }
        self.slash_redirects.get(path).or(longest.map(|(_, route)| route))
    }
}

/// matchit treats `{` and `}` as parameter syntax; user paths are literal.
fn escape(path: &str) -> String {
    path.replace('{', "{{").replace('}', "}}")
}
