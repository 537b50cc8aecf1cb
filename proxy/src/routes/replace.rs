//! Gateway API's `ReplacePrefixMatch` (see `spec::PrefixReplacement`), for the path the pod
//! sees and for a redirect's `Location`: the request path's elements that the route's `Prefix`
//! path matched become the replacement. A trailing slash of the request's stays; one of the
//! replacement's does not double the slash before the rest:
//!
//! ```text
//! /foo/bar, /foo → /xyz   /xyz/bar        /foo/, /foo → /xyz   /xyz/
//! /foo/bar, /foo → /xyz/  /xyz/bar        /foo,  /foo → /      /
//! /foo/bar, /foo → /      /bar            /foo,  /foo → /xyz   /xyz
//! ```

use std::borrow::Cow;

use super::paths::{prefix_base, prefix_covers};
use crate::spec::{PathReplacement, PrefixReplacement};

/// `path` with `replacement`'s matched prefix replaced; `path` itself when the prefix does not
/// cover it by whole elements (a lookup that took the route found it covered).
pub fn replace_prefix<'p>(replacement: &PrefixReplacement, path: &'p str) -> Cow<'p, str> {
    let matched = prefix_base(&replacement.matched);
    if !prefix_covers(matched, path) {
        return Cow::Borrowed(path);
    }
    let rest = match matched {
        // Every path starts with the root's `/`: all but that one is the rest.
        "/" if path == "/" => "",
        "/" => path,
        matched => &path[matched.len()..],
    };
    let with = replacement.replacement.as_str();
    if rest.is_empty() {
        return Cow::Owned(if with.is_empty() {
            "/".to_string()
        } else {
            with.to_string()
        });
    }
    let mut out = String::with_capacity(with.len() + rest.len());
    out.push_str(with.trim_end_matches('/'));
    out.push_str(rest);
    Cow::Owned(out)
}

/// The path the pod sees for `path` under `replacement`.
pub fn replace_path<'a>(replacement: &'a PathReplacement, path: &'a str) -> Cow<'a, str> {
    match replacement {
        PathReplacement::Full(full) => Cow::Borrowed(full),
        PathReplacement::Prefix(prefix) => replace_prefix(prefix, path),
    }
}

#[cfg(test)]
mod tests;
