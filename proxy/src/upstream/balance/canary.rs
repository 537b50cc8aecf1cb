//! Main backend or canary, decided as ingress-nginx's balancer.lua decides
//! (`route_to_alternative_balancer`, lines 232-276): the header, then the cookie, then a draw.

use std::sync::Arc;

use super::vars::RequestVars;
use crate::{
    spec::{CanaryRule, HashKey},
    upstream::Upstream,
};

/// A route's canary: its backend, which requests go there and how its endpoint is chosen.
#[derive(Debug)]
pub struct Canary {
    pub upstream: Arc<Upstream>,
    pub rule: CanaryRule,
    pub hash: Option<HashKey>,
}

/// Whether the request goes to the canary. `draw(total)` is uniform in `1..=total`
/// (Lua's `math.random(weightTotal)`).
pub fn takes(rule: &CanaryRule, vars: &RequestVars<'_>, draw: impl FnOnce(u32) -> u32) -> bool {
    if let Some(header) = &rule.header
        && let Some(sent) = vars.header(&header.name)
    {
        match header.value.as_deref() {
            // A value set: only it counts; any other goes on to the cookie (lines 236-240).
            Some(value) if sent == value => return true,
            Some(_) => {}
            None if sent == "always" => return true,
            None if sent == "never" => return false,
            None => {}
        }
    }
    if let Some(name) = &rule.cookie {
        match vars.cookie(name) {
            Some("always") => return true,
            Some("never") => return false,
            _ => {}
        }
    }
    rule.weight > 0 && draw(rule.weight_total) <= rule.weight
}

#[cfg(test)]
#[path = "canary/tests.rs"]
mod tests;
