//! A rewrite's target (ingress-nginx's `rewrite-target`), parsed once where the compile reads it:
//! text and `$1`..`$9` groups. Any other `$` would be an nginx variable, and is refused.

use std::{fmt, str::FromStr};

use serde::{Serialize, Serializer};

/// A valid target: starts with `/`, holds no `?`, `#`, whitespace or control character, and a
/// `$` only before a group number 1-9.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RewriteTarget {
    text: Box<str>,
    /// Must not be empty.
    parts: Box<[RewritePart]>,
}

/// Why a text is not a [`RewriteTarget`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidRewriteTarget(String);

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RewritePart {
    Text(Box<str>),
    /// `$1`..`$9`.
    Group(usize),
}

/// The parts of a target: text and `$N` groups. A target must start with `/` (or, `absolute`,
/// with `http://` or `https://`) and hold no `?`, `#`, whitespace or control character; a `$`
/// must be followed by a digit 1-9.
fn parse_target(target: &str, absolute: bool) -> Result<Vec<RewritePart>, String> {
    if absolute && !is_absolute(target) {
        return Err(format!("target {target:?} does not start with http:// or https://"));
    }
    if !absolute && !target.starts_with('/') {
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
                    parts.push(RewritePart::Text(std::mem::take(&mut text).into()));
                }
                parts.push(RewritePart::Group(group as usize));
            }
            None => {
                return Err(format!(
                    "target {target:?}: '$' not followed by a group number 1-9 (an nginx variable)"
                ));
            }
        }
    }
    if !text.is_empty() {
        parts.push(RewritePart::Text(text.into()));
    }
    Ok(parts)
}

// === impl RewriteTarget ===

impl RewriteTarget {
    pub fn parts(&self) -> &[RewritePart] {
        &self.parts
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// A target that is a whole URL, `http://` or `https://` and the rest as a path target's:
    /// nginx's `rewrite` answers it with a redirect instead of passing the request on.
    pub fn parse_absolute(text: &str) -> Result<Self, InvalidRewriteTarget> {
        let parts = parse_target(text, true).map_err(InvalidRewriteTarget)?;
        Ok(RewriteTarget {
            text: text.into(),
            parts: parts.into(),
        })
    }

    /// Whether the target is a whole URL ([`RewriteTarget::parse_absolute`]).
    pub fn is_absolute(&self) -> bool {
        is_absolute(&self.text)
    }
}

fn is_absolute(text: &str) -> bool {
    text.starts_with("http://") || text.starts_with("https://")
}

impl FromStr for RewriteTarget {
    type Err = InvalidRewriteTarget;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let parts = parse_target(text, false).map_err(InvalidRewriteTarget)?;
        Ok(RewriteTarget {
            text: text.into(),
            parts: parts.into(),
        })
    }
}

impl fmt::Display for RewriteTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Serialize for RewriteTarget {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.text)
    }
}

// === impl InvalidRewriteTarget ===

impl fmt::Display for InvalidRewriteTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InvalidRewriteTarget {}

#[cfg(test)]
mod tests;
