//! nginx's `rewrite "(?i)PATTERN" TARGET break;` (ingress-nginx's `rewrite-target`): the path
//! the pod sees, made from the request path's first match of the pattern. `$1`..`$9` are the
//! match's groups (empty when a group did not take part); any other `$` would be an nginx
//! variable, which is refused when the rule is built. Without a `?` in the target (ingress-nginx's
//! validator admits none), nginx keeps the request's query string.

use http::{HeaderValue, uri::PathAndQuery};
use regex::bytes::Regex;

use super::{regex::rewrite_regex, spec::RewriteSpec};

/// A rewrite ready for requests.
#[derive(Debug)]
pub struct Rewrite {
    regex: Regex,
    target: Box<[Part]>,
    forwarded_prefix: Option<HeaderValue>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Part {
    Text(Box<str>),
    /// `$1`..`$9`.
    Group(usize),
}

/// The parts of a target: text and `$N` groups. A target must start with `/` and hold no `?`,
/// `#`, whitespace or control character; a `$` must be followed by a digit 1-9.
pub fn parse_target(target: &str) -> Result<Vec<Part>, String> {
    if !target.starts_with('/') {
        return Err(format!("target {target:?} does not start with /"));
    }
    if let Some(bad) = target
        .chars()
        .find(|c| matches!(c, '?' | '#') || c.is_whitespace() || c.is_control())
    {
        return Err(format!("target {target:?} holds {bad:?}"));
    }
    let mut parts = Vec::new();
    let mut text = String::new();
    let mut chars = target.chars();
    while let Some(c) = chars.next() {
        if c != '$' {
            text.push(c);
            continue;
        }
        match chars.next().and_then(|d| d.to_digit(10)).filter(|d| *d >= 1) {
            Some(group) => {
                if !text.is_empty() {
                    parts.push(Part::Text(std::mem::take(&mut text).into()));
                }
                parts.push(Part::Group(group as usize));
            }
            None => {
                return Err(format!(
                    "target {target:?}: '$' not followed by a group number 1-9 (an nginx variable)"
                ));
            }
        }
    }
    if !text.is_empty() {
        parts.push(Part::Text(text.into()));
    }
    Ok(parts)
}

impl Rewrite {
    pub fn new(spec: &RewriteSpec) -> Result<Self, String> {
        let regex =
            rewrite_regex(&spec.pattern).map_err(|error| format!("rewrite pattern {:?}: {error}", spec.pattern))?;
        let target = parse_target(&spec.target)?.into_boxed_slice();
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
        let captures = self.regex.captures(path.as_bytes())?;
        let mut out = Vec::with_capacity(path.len() + 16);
        for part in &self.target {
            match part {
                Part::Text(text) => out.extend_from_slice(text.as_bytes()),
                Part::Group(group) => {
                    if let Some(found) = captures.get(*group) {
                        out.extend_from_slice(found.as_bytes());
                    }
                }
            }
        }
        if let Some(query) = query {
            out.push(b'?');
            out.extend_from_slice(query.as_bytes());
        }
        PathAndQuery::from_maybe_shared(bytes::Bytes::from(out)).ok()
    }

    pub fn forwarded_prefix(&self) -> Option<&HeaderValue> {
        self.forwarded_prefix.as_ref()
    }
}

#[cfg(test)]
mod tests;
