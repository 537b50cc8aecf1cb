//! Whether a request's Origin is allowed: ingress-nginx's suffix regex, or Gateway API's whole
//! Origin against `<scheme>://<host>(:<port>)` patterns.

use crate::spec::{OriginHost, OriginPattern};

/// One origin as `buildOriginRegex` (template.go) turns it into a regex: the text quoted, its
/// first `*` replaced by `[A-Za-z0-9\-]+`, matched case-insensitively at the end of the Origin.
#[derive(Clone, Debug)]
pub(super) struct NginxPattern {
    /// The text before the first `*`, or all of it when there is none.
    before: Box<[u8]>,
    /// After the first `*`; `None` when the origin has no `*`.
    after: Option<Box<[u8]>>,
}

// === impl NginxPattern ===

impl NginxPattern {
    pub(super) fn new(origin: &str) -> Self {
        match origin.split_once('*') {
            Some((before, after)) => NginxPattern {
                before: before.as_bytes().into(),
                after: Some(after.as_bytes().into()),
            },
            None => NginxPattern {
                before: origin.as_bytes().into(),
                after: None,
            },
        }
    }

    /// Whether `origin` ends with a match (the regex is anchored at the end only).
    pub(super) fn ends(&self, origin: &[u8]) -> bool {
        let Some(after) = &self.after else {
            return ends_with_ignore_case(origin, &self.before);
        };
        if !ends_with_ignore_case(origin, after) {
            return false;
        }
        let rest = &origin[..origin.len() - after.len()];
        // `[A-Za-z0-9\-]+` takes one or more of the characters just before `after`.
        let run = rest.iter().rev().take_while(|b| is_label_byte(**b)).count();
        (1..=run).any(|taken| ends_with_ignore_case(&rest[..rest.len() - taken], &self.before))
    }
}

/// Whether the whole of `origin` is one `pattern` allows: the scheme and host compared without
/// case, the port as a number (absent: the scheme's default), a `*.` host taking one or more
/// DNS labels, a `*` host any host.
pub(super) fn whole_matches(pattern: &OriginPattern, origin: &[u8]) -> bool {
    let Some((scheme, rest)) = split_once(origin, b"://") else {
        return false;
    };
    if !scheme.eq_ignore_ascii_case(pattern.scheme().as_str().as_bytes()) {
        return false;
    }
    let (host, port) = match rest.iter().rposition(|&b| b == b':') {
        // `[::1]` alone ends with `]`, not with a port.
        Some(at) if !rest.ends_with(b"]") => (&rest[..at], port_number(&rest[at + 1..])),
        _ => (rest, Some(pattern.scheme().default_port())),
    };
    if port != Some(pattern.port()) || host.is_empty() {
        return false;
    }
    match pattern.host() {
        OriginHost::Any => host
            .iter()
            .all(|&b| is_label_byte(b) || matches!(b, b'.' | b'[' | b']' | b':')),
        OriginHost::Suffix(suffix) => {
            host.len() > suffix.len()
                && ends_with_ignore_case(host, suffix.as_bytes())
                && is_labels(&host[..host.len() - suffix.len()])
        }
        OriginHost::Exact(exact) => host.eq_ignore_ascii_case(exact.as_bytes()),
    }
}

/// 1 to 5 digits, as the CRD writes a port.
fn port_number(digits: &[u8]) -> Option<u16> {
    if !(1..=5).contains(&digits.len()) || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(digits).ok()?.parse().ok()
}

fn split_once<'a>(text: &'a [u8], separator: &[u8]) -> Option<(&'a [u8], &'a [u8])> {
    let at = text.windows(separator.len()).position(|window| window == separator)?;
    Some((&text[..at], &text[at + separator.len()..]))
}

/// `([A-Za-z0-9-]+\.)*[A-Za-z0-9-]+`.
fn is_labels(text: &[u8]) -> bool {
    text.split(|&b| b == b'.')
        .all(|label| !label.is_empty() && label.iter().all(|&b| is_label_byte(b)))
}

fn is_label_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-'
}

fn ends_with_ignore_case(text: &[u8], suffix: &[u8]) -> bool {
    text.len() >= suffix.len() && text[text.len() - suffix.len()..].eq_ignore_ascii_case(suffix)
}

#[cfg(test)]
mod tests;
