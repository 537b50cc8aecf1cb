//! What a route adds to the choice of upstream and endpoint, decided once per request before
//! the tries: the canary or the route's own backend, then the hash key's endpoint or the
//! affinity cookie's (which replaces the key, as balancer.lua's `get_implementation` does).

use std::sync::Arc;

use super::{
    affinity::Sticky,
    canary::{self, Canary},
    hash::key_hash,
    vars::RequestVars,
};
use crate::{
    spec::{CookieAffinity, HashKey},
    upstream::Upstream,
};

/// A route's canary, hash key and cookie affinity; routes without any carry no `RouteBalance`.
#[derive(Debug)]
pub struct RouteBalance {
    pub canary: Option<Canary>,
    /// The route's own backend's key (`upstream-hash-by`).
    pub hash: Option<HashKey>,
    /// `affinity: cookie` on the route's own backend.
    pub affinity: Option<CookieAffinity>,
}

/// Where one request goes: the canary or not, and its key's hash for the endpoint choice.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Choice {
    pub canary: bool,
    pub key: Option<u64>,
    /// The affinity cookie as sent, on a route with affinity.
    pub sticky: Option<Sticky>,
}

impl RouteBalance {
    /// `tls`: the request came over TLS (the cookie's `Secure`).
    pub fn choose(&self, vars: &RequestVars<'_>, tls: bool) -> Choice {
        let canary = self
            .canary
            .as_ref()
            .filter(|canary| canary::takes(&canary.rule, vars, |total| fastrand::u32(1..=total)));
        let hash = match canary {
            Some(canary) => canary.hash.as_ref(),
            None => self.hash.as_ref(),
        };
        let sticky = match (&self.affinity, canary) {
            (Some(affinity), None) => Some(Sticky::read(affinity, vars, tls)),
            _ => None,
        };
        Choice {
            canary: canary.is_some(),
            key: hash.filter(|_| sticky.is_none()).map(|key| key_hash(key, vars)),
            sticky,
        }
    }

    /// The upstream `choice` names: the canary's, or `main`.
    pub fn upstream<'a>(&'a self, main: &'a Arc<Upstream>, choice: Choice) -> &'a Arc<Upstream> {
        match &self.canary {
            Some(canary) if choice.canary => &canary.upstream,
            _ => main,
        }
    }
}
