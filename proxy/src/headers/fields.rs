//! Field names a pod could read another way than shunt did: names with `_`, which CGI/WSGI-style
//! backends map to `-` (so `Content_Length` becomes a second `Content-Length` behind our back).
//! Names that are not tokens never get this far: both HTTP/1.1 parsers answer them with 400.

use http::{HeaderMap, HeaderName};

#[cfg(test)]
mod tests;

/// Whether a request field name holds `_`.
#[inline]
pub fn has_underscore(name: &HeaderName) -> bool {
    name.as_str().as_bytes().contains(&b'_')
}

/// Removes every field whose name holds `_`; returns how many names went. Most requests have
/// none, so a first pass only looks, and the map is touched only when there is one.
pub fn drop_underscored(headers: &mut HeaderMap) -> usize {
    if !headers.keys().any(has_underscore) {
        return 0;
    }
    let names: Vec<HeaderName> = headers.keys().filter(|name| has_underscore(name)).cloned().collect();
    for name in &names {
        headers.remove(name);
    }
    names.len()
}

/// A `token` of RFC 9110 §5.6.2: what a field name must be (the tests' oracle for the parser).
#[cfg(test)]
pub fn is_token(bytes: &[u8]) -> bool {
    !bytes.is_empty()
        && bytes
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}
