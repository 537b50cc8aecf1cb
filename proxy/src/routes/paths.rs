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
//! `Regex` paths (nginx `~*` locations) are a host's only paths when it has one: a
//! [`RegexPaths`] set tried in rank order (see `regex.rs`).
//!
//! A host where some path carries request conditions is ranked: its `Exact` and `Prefix` paths
//! are a [`RankedPaths`] list tried in rank order (see `ranked.rs`).
//!
//! `CharPrefix` paths (nginx locations) do not fit matchit's segment model; they live in a
//! [`Locations`] list beside the tree, built only for hosts that have them. Order of lookup:
//! `Exact`, then the longest `CharPrefix`, then the longest `Prefix`.
//!
//! A host whose one rule is `Prefix /` (most hosts of a large cluster) gets no tree: every path
//! is that route, and 10,000 two-pattern matchit trees would cost about 1 KB a host. Nor does one
//! whose rules are all the character prefix `/` (a TKE load balancer's usual rule): every path
//! starting with `/` is that route. A host with a
//! few `Exact` and `Prefix` rules and no braces gets a [`PathList`] scanned in order instead: the
//! same answers (a proptest compares it with the tree), without a tree to build (matchit inserts
//! are a large part of publishing many such hosts).

use std::{borrow::Cow, collections::BTreeMap, sync::Arc};

use super::{conditions::Facts, ranked::RankedPaths, regex::RegexPaths, table::Route};
use crate::spec::PathKind;

pub(super) enum PathTable {
    /// The host's only rule is `Prefix /`.
    Root(Arc<Route>),
    /// The host's only rule is `CharPrefix /`: the paths that start with `/`.
    CharRoot(Arc<Route>),
    /// Boxed, as the tree: a host's table sits in a map entry per host.
    List(Box<PathList>),
    /// Boxed: a host's table sits in a map entry per host.
    Tree(Box<PathTree>),
    /// nginx regex locations, first match wins.
    Regex(Box<RegexPaths>),
    /// Paths with request conditions, by rank.
    Ranked(Box<RankedPaths>),
}

/// Hosts with at most this many rules may get a [`PathList`]: a scan of a few short strings
/// is as quick as a tree walk.
const LIST_MAX: usize = 8;

/// A host's few `Exact` and `Prefix` rules (paths as written, no braces, no `CharPrefix`).
#[derive(Default)]
pub(super) struct PathList {
    exact: Box<[(Box<str>, Arc<Route>)]>,
    /// Longest first, so the first that covers a path is the longest match.
    prefix: Box<[(Box<str>, Arc<Route>)]>,
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

/// Collects a host's paths, then picks the representation: the matchit patterns, which reject
/// duplicates instead of choosing (precedence is settled here), are written only for a tree.
#[derive(Default)]
pub(super) struct PathTableBuilder<'p> {
    /// Every rule in the order given.
    rules: Vec<(&'p str, PathKind, Arc<Route>)>,
    slash_redirects: Vec<(&'p str, Arc<Route>)>,
    /// Some path of the host carries request conditions.
    ranked: bool,
}

/// A tree's patterns: a pattern's routes by kind.
type Slots = BTreeMap<String, Slot>;

// === impl PathTableBuilder ===

impl<'p> PathTableBuilder<'p> {
    /// Adds a path. The first route given for a `(path, kind)` keeps it.
    pub(super) fn add(&mut self, path: &'p str, kind: PathKind, route: Arc<Route>) {
        self.rules.push((path, kind, route));
    }

    /// The 301 a `CharPrefix` rule `path` (ending in `/`) gives for `path` without its slash.
    pub(super) fn add_slash_redirect(&mut self, path: &'p str, route: Arc<Route>) {
        if let Some(bare) = path.strip_suffix('/').filter(|bare| !bare.is_empty()) {
            self.slash_redirects.push((bare, route));
        }
    }

    /// The host has request conditions on some path (on any listener): every path is ranked.
    pub(super) fn ranked(&mut self) {
        self.ranked = true;
    }

    /// Builds the table; patterns matchit refuses come back as `(pattern, reason)`.
    pub(super) fn build(self) -> (PathTable, Vec<(String, String)>) {
        if self.ranked {
            let (paths, rejected) = RankedPaths::build(self.rules);
            return (PathTable::Ranked(Box::new(paths)), rejected);
        }
        if self.rules.iter().any(|(_, kind, _)| *kind == PathKind::Regex) {
            return self.build_regex();
        }
        if self.slash_redirects.is_empty() {
            if let Some(route) = self.root_only() {
                return (PathTable::Root(route), Vec::new());
            }
            if let Some(route) = self.char_root_only() {
                return (PathTable::CharRoot(route), Vec::new());
            }
            if let Some(list) = self.list() {
                return (PathTable::List(Box::new(list)), Vec::new());
            }
        }
        self.build_tree()
    }

    /// The route of a host whose paths are all `Prefix /` (the first one given keeps it).
    fn root_only(&self) -> Option<Arc<Route>> {
        let (_, _, first) = self.rules.first()?;
        let root = |(path, kind, _): &(&str, PathKind, _)| *kind == PathKind::Prefix && prefix_base(path) == "/";
        self.rules.iter().all(root).then(|| first.clone())
    }

    /// The route of a host whose paths are all `CharPrefix /` (the first one given keeps it).
    fn char_root_only(&self) -> Option<Arc<Route>> {
        let (_, _, first) = self.rules.first()?;
        let root = |(path, kind, _): &(&str, PathKind, _)| *kind == PathKind::CharPrefix && *path == "/";
        self.rules.iter().all(root).then(|| first.clone())
    }

    /// The [`PathList`] of a host with few rules, none `CharPrefix`, no braces in any path
    /// (matchit syntax, which the list need not unescape). The first route given for a path
    /// and kind keeps it, as in the tree.
    fn list(&self) -> Option<PathList> {
        if self.rules.len() > LIST_MAX {
            return None;
        }
        let mut exact: Vec<(Box<str>, Arc<Route>)> = Vec::with_capacity(self.rules.len());
        let mut prefix: Vec<(Box<str>, Arc<Route>)> = Vec::with_capacity(self.rules.len());
        for (path, kind, route) in &self.rules {
            if path.contains(['{', '}']) {
                return None;
            }
            let (list, pattern) = match kind {
                PathKind::CharPrefix | PathKind::Regex => return None,
                PathKind::Exact => (&mut exact, *path),
                PathKind::Prefix => (&mut prefix, prefix_base(path)),
            };
            // At most LIST_MAX rules: a scan is cheaper than a set.
            if !list.iter().any(|(known, _)| **known == *pattern) {
                list.push((pattern.into(), route.clone()));
            }
        }
        prefix.sort_by(|(a, _), (b, _)| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        Some(PathList {
            exact: exact.into_boxed_slice(),
            prefix: prefix.into_boxed_slice(),
        })
    }

    /// The matchit tree, whatever the rules.
    fn build_tree(self) -> (PathTable, Vec<(String, String)>) {
        let mut slots = Slots::new();
        let mut locations: BTreeMap<&str, Arc<Route>> = BTreeMap::new();
        for (path, kind, route) in self.rules {
            match kind {
                PathKind::CharPrefix => {
                    locations.entry(path).or_insert(route);
                }
                // `build` sends hosts with any to `build_regex`.
                PathKind::Regex => unreachable!("a regex path in a tree"),
                PathKind::Exact => {
                    slot(&mut slots, &escape(path)).exact.get_or_insert(route);
                }
                PathKind::Prefix => {
                    let base = prefix_base(path);
                    let escaped = escape(base);
                    let rest = match base {
                        "/" => CATCH_ALL.to_string(),
                        _ => format!("{escaped}{CATCH_ALL}"),
                    };
                    slot(&mut slots, &escaped).prefix.get_or_insert(route.clone());
                    slots.entry(rest).or_default().prefix.get_or_insert(route);
                }
            }
        }
        let mut router = matchit::Router::new();
        let mut rejected = Vec::new();
        for (pattern, slot) in slots {
            if let Err(error) = router.insert(pattern.clone(), slot) {
                rejected.push((pattern, error.to_string()));
            }
        }
        let locations = (!locations.is_empty()).then(|| {
            let mut rules: Vec<(Box<str>, Arc<Route>)> = locations
                .into_iter()
                .map(|(path, route)| (path.into(), route))
                .collect();
            rules.sort_by(|(a, _), (b, _)| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
            let mut slash_redirects = BTreeMap::new();
            for (path, route) in self.slash_redirects {
                slash_redirects.entry(Box::from(path)).or_insert(route);
            }
            Locations { rules, slash_redirects }
        });
        (PathTable::Tree(Box::new(PathTree { router, locations })), rejected)
    }
}

impl PathTableBuilder<'_> {
    /// A host with regex paths: they alone, in rank order. Others cannot be placed among them
    /// (nginx turns every location of such a host into a regex) and are reported.
    fn build_regex(self) -> (PathTable, Vec<(String, String)>) {
        let mut regexes = Vec::with_capacity(self.rules.len());
        let mut rejected = Vec::new();
        for (path, kind, route) in self.rules {
            if kind == PathKind::Regex {
                regexes.push((path, route.rules.rank, route));
            } else {
                rejected.push((
                    path.to_string(),
                    "not a regex path, on a host with regex paths".to_string(),
                ));
            }
        }
        let (paths, mut refused) = RegexPaths::build(regexes);
        rejected.append(&mut refused);
        let table = match paths {
            Some(paths) => PathTable::Regex(Box::new(paths)),
            None => PathTable::List(Box::default()),
        };
        (table, rejected)
    }
}

/// The slot of `pattern`, looked up before its key is allocated.
fn slot<'s>(slots: &'s mut Slots, pattern: &str) -> &'s mut Slot {
    if !slots.contains_key(pattern) {
        slots.insert(pattern.to_string(), Slot::default());
    }
    slots.get_mut(pattern).expect("inserted above")
}

/// A `Prefix` path's element boundary: `/p/` covers what `/p` does; only slashes is `/`.
pub(super) fn prefix_base(path: &str) -> &str {
    match path.trim_end_matches('/') {
        "" => "/",
        base => base,
    }
}

// === impl PathTable ===

impl PathTable {
    /// `facts` is read only by a ranked host's conditions.
    #[inline]
    pub(super) fn lookup(&self, path: &str, facts: &impl Facts) -> Option<&Arc<Route>> {
        match self {
            PathTable::Root(route) => Some(route),
            PathTable::CharRoot(route) => path.starts_with('/').then_some(route),
            PathTable::List(list) => list.lookup(path),
            PathTable::Tree(tree) => tree.lookup(path),
            PathTable::Regex(regexes) => regexes.lookup(path),
            PathTable::Ranked(ranked) => ranked.lookup(path, facts),
        }
    }
}

/// Whether `Prefix` element boundary `prefix` (see [`prefix_base`]) covers `path` by whole
/// elements: `/p` covers `/p`, `/p/` and `/p/x`, not `/px`; `/` covers every path.
pub(crate) fn prefix_covers(prefix: &str, path: &str) -> bool {
    prefix == "/"
        || path
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

// === impl PathList ===

impl PathList {
    /// `Exact` by equality, then the longest `Prefix` covering the path by whole elements:
    /// `/p` covers `/p`, `/p/` and `/p/x`, not `/px`; `/` covers every path.
    fn lookup(&self, path: &str) -> Option<&Arc<Route>> {
        if let Some((_, route)) = self.exact.iter().find(|(exact, _)| **exact == *path) {
            return Some(route);
        }
        self.prefix
            .iter()
            .find(|(prefix, _)| prefix_covers(prefix, path))
            .map(|(_, route)| route)
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

/// What a `Prefix` pattern's second slot adds to its base.
const CATCH_ALL: &str = "/{*rest}";

/// matchit treats `{` and `}` as parameter syntax; user paths are literal. Most paths have
/// neither and are not copied.
fn escape(path: &str) -> Cow<'_, str> {
    if path.contains(['{', '}']) {
        Cow::Owned(path.replace('{', "{{").replace('}', "}}"))
    } else {
        Cow::Borrowed(path)
    }
}

#[cfg(test)]
mod tests;
