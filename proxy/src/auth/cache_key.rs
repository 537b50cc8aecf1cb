//! An auth cache key expanded for one request, as nginx expands `$tmp_cache_key`: the scope
//! (server name and auth location), then the template's text and variables, concatenated. The
//! text carries credentials (a token, a session cookie), so it is never kept: it is fed
//! straight into a keyed 128-bit hash, and only the hash is stored.

use std::{
    hash::{BuildHasher, Hasher},
    net::IpAddr,
};

use http::{HeaderMap, header};

use crate::spec::CacheKeyPart;

/// What the key's variables read from a request.
pub struct KeyRequest<'a> {
    pub headers: &'a HeaderMap,
    /// The `Host` as sent (`$http_host`); `$host` is it lowercase without port.
    pub http_host: &'a str,
    pub request_uri: &'a str,
    pub method: &'a str,
    pub tls: bool,
    pub peer: IpAddr,
}

/// The expanded key's hash under both `hashers` (keyed per process, so a caller cannot aim
/// for a collision).
pub fn hash<S: BuildHasher>(scope: &str, parts: &[CacheKeyPart], request: &KeyRequest<'_>, hashers: &[S; 2]) -> u128 {
    let mut hashers = hashers.each_ref().map(BuildHasher::build_hasher);
    // Streamed without separators: nginx's key is the plain concatenation.
    let mut feed = |bytes: &[u8]| hashers.iter_mut().for_each(|h| h.write(bytes));
    feed(scope.as_bytes());
    for part in parts {
        expand(part, request, &mut feed);
    }
    let [a, b] = hashers.map(|h| h.finish());
    (u128::from(a) << 64) | u128::from(b)
}

/// Feeds the value of one part.
pub(crate) fn expand(part: &CacheKeyPart, request: &KeyRequest<'_>, feed: &mut impl FnMut(&[u8])) {
    match part {
        CacheKeyPart::Text(text) => feed(text.as_bytes()),
        CacheKeyPart::RemoteUser => feed(remote_user(request.headers).as_deref().unwrap_or_default()),
        CacheKeyPart::Host => {
            let host = request.http_host;
            let host = host
                .rsplit_once(':')
                .filter(|(_, port)| port.bytes().all(|b| b.is_ascii_digit()));
            let host = host.map_or(request.http_host, |(name, _)| name);
            feed(host.to_ascii_lowercase().trim_end_matches('.').as_bytes());
        }
        CacheKeyPart::RequestUri => feed(request.request_uri.as_bytes()),
        CacheKeyPart::RequestMethod => feed(request.method.as_bytes()),
        CacheKeyPart::Scheme => feed(if request.tls { b"https" } else { b"http" }),
        CacheKeyPart::RemoteAddr => feed(request.peer.to_canonical().to_string().as_bytes()),
        CacheKeyPart::Header(name) => {
            // Repeats joined as ingress-nginx's nginx (1.23 and later) joins them.
            let separator: &[u8] = if name == "cookie" { b"; " } else { b", " };
            for (index, value) in request.headers.get_all(name.as_str()).iter().enumerate() {
                if index > 0 {
                    feed(separator);
                }
                feed(value.as_bytes());
            }
        }
        CacheKeyPart::Cookie(name) => feed(cookie(request.headers, name).unwrap_or_default()),
    }
}

/// `$cookie_NAME`: the first cookie of that name (compared without case, as nginx does).
pub(crate) fn cookie<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h [u8]> {
    let pairs = headers
        .get_all(header::COOKIE)
        .into_iter()
        .flat_map(|v| v.as_bytes().split(|b| *b == b';'));
    pairs.map(|pair| pair.trim_ascii_start()).find_map(|pair| {
        let (key, value) = pair.split_at(pair.iter().position(|b| *b == b'=')?);
        key.eq_ignore_ascii_case(name.as_bytes()).then_some(&value[1..])
    })
}

/// `$remote_user`: the user of a `Basic` Authorization (before the first `:`).
pub(crate) fn remote_user(headers: &HeaderMap) -> Option<Vec<u8>> {
    let value = headers.get(header::AUTHORIZATION)?.as_bytes();
    let (scheme, encoded) = value.split_at(value.iter().position(|b| *b == b' ')?);
    if !scheme.eq_ignore_ascii_case(b"basic") {
        return None;
    }
    let decoded = decode_base64(encoded.trim_ascii())?;
    let user = decoded.split(|b| *b == b':').next()?;
    Some(user.to_vec())
}

/// Standard base64, padding optional; `None` for any other byte.
fn decode_base64(text: &[u8]) -> Option<Vec<u8>> {
    let text = text
        .strip_suffix(b"==")
        .or_else(|| text.strip_suffix(b"="))
        .unwrap_or(text);
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut bits, mut count) = (0u32, 0u32);
    for &b in text {
        let value = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        bits = (bits << 6) | u32::from(value);
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
        }
    }
    Some(out)
}
