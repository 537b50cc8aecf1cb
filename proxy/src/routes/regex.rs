//! nginx's regular-expression locations (`location ~* "^PATH"`), as a host of the nginx profile
//! with `use-regex` or `rewrite-target` has them: every path of the host is one, they are tried
//! in the order given, and the first that matches the request path wins. One [`RegexSet`] pass
//! finds every match; the lowest index is the first in nginx's order.
//!
//! Patterns are compiled without Unicode (nginx's PCRE runs without UTF mode: `\w`, `\d` and
//! case folding are ASCII) and with a size limit, since a tenant writes them.

use std::sync::Arc;

use regex::bytes::{Regex, RegexBuilder, RegexSet, RegexSetBuilder};

use super::table::Route;

/// The compiled size one pattern may reach; a path that needs more is refused, not served.
pub(super) const PATTERN_SIZE_LIMIT: usize = 256 * 1024;
/// The same for a host's whole set.
const SET_SIZE_LIMIT: usize = 4 * 1024 * 1024;

/// The regex locations of one host, in nginx's order.
pub(super) struct RegexPaths {
    set: RegexSet,
    routes: Box<[Arc<Route>]>,
}

/// The location pattern: anchored at the start only, case-insensitive.
pub fn location_regex(pattern: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(&format!("^{pattern}"))
        .case_insensitive(true)
        .unicode(false)
        .size_limit(PATTERN_SIZE_LIMIT)
        .build()
}

/// The rewrite pattern: not anchored (nginx's `rewrite "(?i)PATTERN"`), case-insensitive.
pub fn rewrite_regex(pattern: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(pattern)
        .case_insensitive(true)
        .unicode(false)
        .size_limit(PATTERN_SIZE_LIMIT)
        .build()
}

impl RegexPaths {
    /// `rules` as `(pattern, rank, route)`: sorted by rank, the first of equal patterns kept.
    /// Patterns that do not compile come back as `(pattern, reason)`.
    pub(super) fn build(mut rules: Vec<(&str, u32, Arc<Route>)>) -> (Option<Self>, Vec<(String, String)>) {
        rules.sort_by_key(|(_, rank, _)| *rank);
        let mut rejected = Vec::new();
        let mut patterns: Vec<String> = Vec::with_capacity(rules.len());
        let mut routes = Vec::with_capacity(rules.len());
        for (pattern, _, route) in rules {
            if patterns.iter().any(|known| known[1..] == *pattern) {
                continue;
            }
            match location_regex(pattern) {
                Ok(_) => {
                    patterns.push(format!("^{pattern}"));
                    routes.push(route);
                }
                Err(error) => rejected.push((pattern.to_string(), error.to_string())),
            }
        }
        if patterns.is_empty() {
            return (None, rejected);
        }
        let set = RegexSetBuilder::new(&patterns)
            .case_insensitive(true)
            .unicode(false)
            .size_limit(SET_SIZE_LIMIT)
            .build();
        match set {
            Ok(set) => (
                Some(RegexPaths {
                    set,
                    routes: routes.into_boxed_slice(),
                }),
                rejected,
            ),
            Err(error) => {
                let reason = format!("the host's regex paths together: {error}");
                rejected.extend(patterns.into_iter().map(|p| (p[1..].to_string(), reason.clone())));
                (None, rejected)
            }
        }
    }

    pub(super) fn lookup(&self, path: &str) -> Option<&Arc<Route>> {
        let first = self.set.matches(path.as_bytes()).into_iter().next()?;
        self.routes.get(first)
    }
}

#[cfg(test)]
mod tests;
