//! nginx's `rewrite "(?i)PATTERN" TARGET break;` (ingress-nginx's `rewrite-target`): the path
//! the pod sees, made from the request path's first match of the pattern. `$1`..`$9` are the
//! match's groups (empty when a group did not take part); any other `$` would be an nginx
//! variable, which is refused when the rule is built. Without a `?` in the target (ingress-nginx's
//! validator admits none), nginx keeps the request's query string.

use http::{HeaderValue, uri::PathAndQuery};
use regex::bytes::Regex;

use super::regex::rewrite_regex;
use crate::spec::{RewritePart, RewriteSpec};

/// A rewrite ready for requests.
#[derive(Debug)]
pub struct Rewrite {
    regex: Regex,
    target: Box<[RewritePart]>,
    forwarded_prefix: Option<HeaderValue>,
}

impl Rewrite {
    pub fn new(spec: &RewriteSpec) -> Result<Self, String> {
        let regex =
            rewrite_regex(&spec.pattern).map_err(|error| format!("rewrite pattern {:?}: {error}", spec.pattern))?;
        let target = spec.target.parts().into();
        let forwarded_prefix = match &spec.forwarded_prefix {
            None => None,
            Some(prefix) => Some(
                HeaderValue::from_str(prefix)
                    .map_err(|_| format!("X-Forwarded-Prefix {prefix:?} is not a field value"))?,
            ),
        };
        Ok(Rewrite {
            regex,
            target,
            forwarded_prefix,
        })
    }

    /// The rewritten path and the request's query, or `None` when the pattern does not match
    /// (the request goes on unchanged).
    pub fn apply(&self, path: &str, query: Option<&str>) -> Option<PathAndQuery> {
        let mut out = self.substitute(path)?;
        if let Some(query) = query {
            out.push(b'?');
            out.extend_from_slice(query.as_bytes());
        }
        PathAndQuery::from_maybe_shared(bytes::Bytes::from(out)).ok()
    }

    /// The redirect's `Location` for an absolute target: the target with the groups of the
    /// path's match, then `?` and the query string unless it is empty (nginx appends `r->args`
    /// when the target holds no `?`). `None` when the pattern does not match.
    pub fn location(&self, path: &str, query: Option<&str>) -> Option<HeaderValue> {
        let mut out = self.substitute(path)?;
        if let Some(query) = query.filter(|query| !query.is_empty()) {
            out.push(b'?');
            out.extend_from_slice(query.as_bytes());
        }
        HeaderValue::from_maybe_shared(bytes::Bytes::from(out)).ok()
    }

    /// The target with `$1`..`$9` replaced by the groups of the pattern's first match in `path`.
    fn substitute(&self, path: &str) -> Option<Vec<u8>> {
        let captures = self.regex.captures(path.as_bytes())?;
        let mut out = Vec::with_capacity(path.len() + 16);
        for part in &self.target {
            match part {
                RewritePart::Text(text) => out.extend_from_slice(text.as_bytes()),
                RewritePart::Group(group) => {
                    if let Some(found) = captures.get(*group) {
                        out.extend_from_slice(found.as_bytes());
                    }
                }
            }
        }
        Some(out)
    }

    pub fn forwarded_prefix(&self) -> Option<&HeaderValue> {
        self.forwarded_prefix.as_ref()
    }
}

#[cfg(test)]
mod tests;
