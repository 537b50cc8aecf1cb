//! Trailer fields that may cross the proxy. A trailer is read after the body, so a recipient
//! that merges it into the head (RFC 9110 §6.5.2 allows that only for fields defined as safe)
//! would see framing, routing or credentials that no routing decision saw. Both directions get
//! the same filter: request trailers toward pods, response trailers toward clients.

use http::{HeaderMap, HeaderName, header};

use super::fields::has_underscore;

#[cfg(test)]
mod tests;

/// The names a trailer section may carry across: any but [`never_a_trailer`] and those the
/// message's head already had (a trailer must not restate or override a head field).
#[derive(Clone, Debug, Default)]
pub struct TrailerFilter {
    /// The head's field names, as the proxy received them.
    head: Box<[HeaderName]>,
}

impl TrailerFilter {
    pub fn new(head: &HeaderMap) -> Self {
        TrailerFilter {
            head: head.keys().cloned().collect(),
        }
    }

    /// Removes what may not cross; returns `None` when nothing is left.
    pub fn apply(&self, mut trailers: HeaderMap) -> Option<HeaderMap> {
        filter_trailers(&mut trailers, &self.head);
        (!trailers.is_empty()).then_some(trailers)
    }
}

/// Removes from `trailers` every field that may not be a trailer or that `head` names.
pub fn filter_trailers(trailers: &mut HeaderMap, head: &[HeaderName]) {
    let refused: Vec<HeaderName> = trailers
        .keys()
        .filter(|name| never_a_trailer(name) || head.contains(name))
        .cloned()
        .collect();
    for name in refused {
        trailers.remove(name);
    }
}

/// RFC 9110 §6.5.1: framing, routing, request modifiers, authentication, response control and
/// content fields; and the connection's own fields, the forwarding fields shunt sets, and names
/// with `_` (see `fields.rs`).
fn never_a_trailer(name: &HeaderName) -> bool {
    const NAMED: [HeaderName; 22] = [
        header::HOST,
        header::TRANSFER_ENCODING,
        header::TRAILER,
        header::TE,
        header::CONNECTION,
        header::UPGRADE,
        header::AUTHORIZATION,
        header::COOKIE,
        header::SET_COOKIE,
        header::WWW_AUTHENTICATE,
        header::CACHE_CONTROL,
        header::EXPECT,
        header::MAX_FORWARDS,
        header::PRAGMA,
        header::RANGE,
        header::AGE,
        header::EXPIRES,
        header::DATE,
        header::LOCATION,
        header::RETRY_AFTER,
        header::VARY,
        header::FORWARDED,
    ];
    let text = name.as_str();
    NAMED.contains(name)
        || ["content-", "if-", "proxy-", "x-forwarded-", "authentication-"]
            .iter()
            .any(|prefix| text.starts_with(prefix))
        || matches!(text, "keep-alive" | "x-real-ip" | "x-request-id" | "http2-settings")
        || has_underscore(name)
}
