//! What a route adds to the choice of upstream and endpoint, decided once per request before
//! the tries: the canary or the route's own backend, then the hash key's endpoint if any.

use std::sync::Arc;

use super::{
    canary::{self, Canary},
    hash::key_hash,
    vars::RequestVars,
};
use crate::{spec::HashKey, upstream::Upstream};

/// A route's canary and hash key; routes without either carry no `RouteBalance` at all.
#[derive(Debug)]
pub struct RouteBalance {
    pub canary: Option<Canary>,
    /// The route's own backend's key (`upstream-hash-by`).
    pub hash: Option<HashKey>,
}

/// Where one request goes: the canary or not, and its key's hash for the endpoint choice.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Choice {
    pub canary: bool,
    pub key: Option<u64>,
}

impl RouteBalance {
    pub fn choose(&self, vars: &RequestVars<'_>) -> Choice {
        let canary = self
            .canary
            .as_ref()
            .filter(|canary| canary::takes(&canary.rule, vars, |total| fastrand::u32(1..=total)));
        let hash = match canary {
            Some(canary) => canary.hash.as_ref(),
            None => self.hash.as_ref(),
        };
        Choice {
            canary: canary.is_some(),
            key: hash.map(|key| key_hash(key, vars)),
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
