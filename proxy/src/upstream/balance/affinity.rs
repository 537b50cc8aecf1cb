//! Cookie affinity, as ingress-nginx's balancer/sticky.lua `balance` decides each try:
//!
//! ```text
//! cookie key ─ Balanced: hashed onto all endpoints (resty.chash's `find`, here rendezvous)
//!            ─ Persistent: the endpoint whose token it is (util/nodemap.lua's `find`)
//! new pick when there is no such endpoint, or a try failed and change_on_failure is set:
//!   Balanced: up to 20 random keys until one lands on an endpoint not failed on
//!   Persistent: a random endpoint not failed on (`random_except`)
//!   ─▶ its cookie is set on the answer, where the route sets cookies
//! ```
//! Values are shunt's own. A balanced key is random text, so it names no pod; any text a
//! client sends (an nginx key too) hashes to an endpoint, as resty.chash finds one for any
//! key, and keeps it while that endpoint stays. A persistent token is 16 hex digits of a
//! keyed hash of the endpoint's address, keyed by the backend's name as nodemap.lua salts
//! its MD5 with it: every replica and restart names an endpoint alike, so a client keeps its
//! pod whichever replica answers; like nginx's, it hides the address only as well as a hash
//! over a guessable key can.

use http::HeaderValue;

use super::{
    hash::{score, text_hash},
    vars::RequestVars,
};
use crate::{
    spec::{AffinityMode, CookieAffinity, SameSite},
    upstream::Upstream,
};

pub mod cookie;

/// sticky_balanced.lua's `MAX_UPSTREAM_CHECKS_COUNT`: random keys drawn for one whose endpoint
/// was not failed on.
const NEW_KEY_DRAWS: usize = 20;

/// What the request brings to the choice, read once before the tries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sticky {
    /// The cookie's key: its hash (balanced) or its token (persistent); `None` without one.
    key: Option<u64>,
    /// The request came over TLS: `Secure` even without `session-cookie-secure`.
    tls: bool,
    /// The client takes `SameSite=None` (util/same_site.lua).
    same_site_none: bool,
}

impl Sticky {
    pub fn read(affinity: &CookieAffinity, vars: &RequestVars<'_>, tls: bool) -> Sticky {
        let value = cookie::read(vars.headers, &affinity.name);
        // sticky.lua `get_cookie_parsed`: the part before the first `|` (nginx's own values
        // end in `|` and the backend's key).
        let part = value
            .as_deref()
            .and_then(|v| v.split(|&b| b == b'|').find(|p| !p.is_empty()));
        let key = part.and_then(|part| match affinity.mode {
            AffinityMode::Balanced => Some(text_hash(part)),
            AffinityMode::Persistent => parse_token(part),
        });
        // The User-Agent is read only where it can change the cookie.
        let conditional = affinity.conditional_same_site_none && affinity.same_site == Some(SameSite::None);
        let same_site_none = !conditional
            || vars
                .header("user-agent")
                .is_none_or(|agent| cookie::takes_same_site_none(&agent));
        Sticky {
            key,
            tls,
            same_site_none,
        }
    }

    /// The endpoint this try goes to, not `None` while `upstream` has endpoints untried (or the
    /// cookie's, tried or not). A new pick's cookie is pushed on `cookies` where the route sets it.
    pub fn pick(
        &self,
        affinity: &CookieAffinity,
        upstream: &Upstream,
        tried: &[usize],
        cookies: &mut Vec<HeaderValue>,
    ) -> Option<usize> {
        let salt = text_hash(upstream.id.as_bytes());
        let from_cookie = self.key.and_then(|key| match affinity.mode {
            AffinityMode::Balanced => upstream.pick_hashed(key, &[]),
            AffinityMode::Persistent => (0..upstream.endpoints.len()).find(|&i| token(salt, upstream, i) == key),
        });
        let failed = !tried.is_empty();
        match from_cookie {
            Some(index) if !(failed && affinity.change_on_failure) => return Some(index),
            _ => {}
        }
        let (index, value) = match affinity.mode {
            AffinityMode::Balanced => new_key(upstream, tried)?,
            AffinityMode::Persistent => {
                let untried: Vec<usize> = (0..upstream.endpoints.len()).filter(|i| !tried.contains(i)).collect();
                let index = *untried.get(fastrand::usize(..untried.len().max(1)))?;
                (index, format!("{:016x}", token(salt, upstream, index)))
            }
        };
        if affinity.set_cookie
            && let Some(field) = cookie::field(affinity, self, &value, std::time::SystemTime::now())
            && !cookies.contains(&field)
        {
            // lua-resty-cookie's `set` adds each new value once, after those already set.
            cookies.push(field);
        }
        Some(index)
    }
}

/// A random key whose endpoint was not failed on, and that endpoint; `None` after
/// [`NEW_KEY_DRAWS`] misses, as sticky_balanced.lua gives up.
fn new_key(upstream: &Upstream, tried: &[usize]) -> Option<(usize, String)> {
    for _ in 0..NEW_KEY_DRAWS {
        let key = format!("{:016x}", fastrand::u64(..));
        let index = upstream.pick_hashed(text_hash(key.as_bytes()), &[])?;
        if !tried.contains(&index) {
            return Some((index, key));
        }
    }
    None
}

/// Endpoint `index`'s persistent token: its address hashed under the backend's `salt`.
fn token(salt: u64, upstream: &Upstream, index: usize) -> u64 {
    score(salt, upstream.endpoints[index].addr)
}

/// A token as written: exactly 16 lowercase hex digits.
fn parse_token(text: &[u8]) -> Option<u64> {
    let digits = |b: &u8| b.is_ascii_digit() || (b'a'..=b'f').contains(b);
    if text.len() != 16 || !text.iter().all(digits) {
        return None;
    }
    u64::from_str_radix(std::str::from_utf8(text).ok()?, 16).ok()
}

#[cfg(test)]
#[path = "affinity/tests.rs"]
mod tests;
