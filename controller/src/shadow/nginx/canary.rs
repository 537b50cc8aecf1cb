//! `canary` and the `canary-*` keys. A canary Ingress serves no location of its own
//! (controller.go skips it in `createServers`); its backend joins the main Ingress's backend at
//! the same host, path and path type as an alternative (`mergeAlternativeBackends`), and every
//! route to that main backend then sends some requests to the canary (balancer.lua,
//! `route_to_alternative_balancer`). Without such a main location the canary is dropped.
//!
//! ```text
//! main Ingresses' (host, path, type) ─▶ primary backend ◀─ canary Ingress's same (host, path, type)
//!   first canary per primary wins (balancer.lua reads `alternative_backends[1]`)
//!   ─▶ every claim to that primary carries CanarySpec { canary backend, rule }
//! ```

use std::{collections::BTreeMap, sync::Arc};

use crate::objects::HTTPIngressPath;
use shunt_spec::{
    BackendId, CanaryHeader, CanaryRule, CanarySpec, HashKey, MAX_NAME_LEN, MAX_VALUE_LEN, MAX_WEIGHT_TOTAL,
};

use super::{
    Nginx,
    annotations::{PREFIX, Refusal, flag},
    regex::{host_paths, location_path},
};
use crate::{
    compile::{Resolved, Sink},
    shadow::HostVerdict,
};

/// The canary keys of one Ingress, as written; resolved once all are seen.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CanaryKeys {
    enabled: Option<String>,
    weight: Option<String>,
    weight_total: Option<String>,
    header: Option<String>,
    header_value: Option<String>,
    header_pattern: Option<String>,
    cookie: Option<String>,
}

impl CanaryKeys {
    /// Keeps `value` when `name` (without the prefix) is a canary key; `false` otherwise.
    pub fn set(&mut self, name: &str, value: &str) -> bool {
        let slot = match name {
            "canary" => &mut self.enabled,
            "canary-weight" => &mut self.weight,
            "canary-weight-total" => &mut self.weight_total,
            "canary-by-header" => &mut self.header,
            "canary-by-header-value" => &mut self.header_value,
            "canary-by-header-pattern" => &mut self.header_pattern,
            "canary-by-cookie" => &mut self.cookie,
            _ => return false,
        };
        *slot = Some(value.to_string());
        true
    }

    /// The Ingress's rule when it is a canary, or the key that refuses its hosts. Not enabled,
    /// the other keys change nothing: canary/main.go answers "configured but not enabled",
    /// which annotations.go skips.
    pub fn resolve(&self) -> Result<Option<CanaryRule>, (Refusal, &'static str)> {
        let Some(enabled) = self.enabled.as_deref() else {
            return Ok(None);
        };
        if !flag(enabled).map_err(|r| (r, "canary"))? {
            return Ok(None);
        }
        let weight = number(self.weight.as_deref(), 0).map_err(|r| (r, "canary-weight"))?;
        // balancer.lua: a total of 100 or less counts as 100.
        let total = number(self.weight_total.as_deref(), 100).map_err(|r| (r, "canary-weight-total"))?;
        let header = name(self.header.as_deref()).map_err(|r| (r, "canary-by-header"))?;
        let value = text(self.header_value.as_deref()).map_err(|r| (r, "canary-by-header-value"))?;
        // A PCRE pattern shunt's engine would not match alike; ignored behind a value
        // (balancer.lua tries headerValue first) or without a header.
        if header.is_some() && value.is_none() && self.header_pattern.as_deref().is_some_and(|p| !p.is_empty()) {
            return Err((Refusal::Unsupported, "canary-by-header-pattern"));
        }
        let cookie = name(self.cookie.as_deref()).map_err(|r| (r, "canary-by-cookie"))?;
        Ok(Some(CanaryRule {
            header: header.map(|name| CanaryHeader { name, value }),
            cookie,
            weight: weight.min(total.max(100)),
            weight_total: total.max(100),
        }))
    }
}

/// An integer key as `strconv.Atoi` reads it: missing is `default`, negative sends nothing.
fn number(value: Option<&str>, default: u32) -> Result<u32, Refusal> {
    let Some(value) = value else { return Ok(default) };
    let parsed: i64 = value.parse().map_err(|_| Refusal::Invalid)?;
    if parsed > i64::from(MAX_WEIGHT_TOTAL) {
        return Err(Refusal::Unsupported);
    }
    Ok(u32::try_from(parsed.max(0)).expect("bounded above"))
}

/// A header or cookie name as the rule reads it, `None` when empty (no variable is read then).
/// A header's `-` and `_` are one character to nginx's `$http_` variables; the lookup is made
/// on the `-` form, as fields with `_` are dropped before it.
fn name(value: Option<&str>) -> Result<Option<String>, Refusal> {
    let Some(value) = text(value)? else { return Ok(None) };
    let plain = |b: u8| b.is_ascii_alphanumeric() || b == b'-' || b == b'_';
    if value.len() > MAX_NAME_LEN || !value.bytes().all(plain) {
        return Err(Refusal::Unsupported);
    }
    Ok(Some(value.to_ascii_lowercase().replace('_', "-")))
}

/// A value main.go's `BasicCharsRegex` admits (it ignores spaces, which shunt refuses); empty
/// is none.
fn text(value: Option<&str>) -> Result<Option<String>, Refusal> {
    let Some(value) = value.filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    let basic = |b: u8| b.is_ascii_alphanumeric() || b"-._~/: ".contains(&b);
    if !value.bytes().all(basic) {
        return Err(Refusal::Invalid);
    }
    if value.len() > MAX_VALUE_LEN || value.contains(' ') {
        return Err(Refusal::Unsupported);
    }
    Ok(Some(value.to_string()))
}

/// Canary backends by the main backend they join, for the claims of one compile.
#[derive(Default)]
pub(super) struct Canaries {
    by_primary: BTreeMap<BackendId, (Arc<Resolved>, CanarySpec)>,
}

/// A location as `mergeAlternativeBackends` compares them: host, path (empty is `/`), type.
type LocationKey = (String, String, String);

impl Canaries {
    /// Joins each canary Ingress's backends to the main ones at the same locations. A canary
    /// backend that is also a main one on the host, or does not resolve, refuses the host.
    pub fn merge(
        mains: &[Nginx<'_>],
        canaries: &[Nginx<'_>],
        hashes: &BTreeMap<BackendId, Option<HashKey>>,
        sink: &mut Sink<'_>,
        verdicts: &mut BTreeMap<String, HostVerdict>,
    ) -> Canaries {
        let mut merged = Canaries::default();
        if canaries.is_empty() {
            return merged;
        }
        let primaries = primaries(mains, sink);
        for nginx in canaries {
            let Some(rule) = &nginx.annotations.canary else {
                continue;
            };
            for (host, path) in host_paths(nginx) {
                let Some((main, primary)) = primaries.get(&location_key(&host, path)) else {
                    continue;
                };
                let refuse = |verdicts: &mut BTreeMap<String, HostVerdict>, why: String| {
                    if let Some(verdict) = verdicts.get_mut(&host) {
                        verdict
                            .reasons
                            .push(format!("UnsupportedAnnotation: {PREFIX}canary: {why}"));
                    }
                };
                let protocol = main.annotations.backend_protocol;
                let alternative = match sink.backends.resolve(nginx.namespace, &path.backend, protocol) {
                    Ok(resolved) => resolved,
                    Err(error) => {
                        refuse(verdicts, error.to_string());
                        continue;
                    }
                };
                let on_host = |(key, (_, id)): (&LocationKey, &(&Nginx<'_>, Arc<Resolved>))| {
                    key.0 == host && id.id == alternative.id
                };
                if primaries.iter().any(on_host) {
                    refuse(verdicts, format!("backend {} is also a main backend", alternative.id));
                    continue;
                }
                let spec = CanarySpec {
                    backend: alternative.id.clone(),
                    rule: rule.clone(),
                    hash: hashes.get(&alternative.id).cloned().flatten(),
                };
                merged
                    .by_primary
                    .entry(primary.id.clone())
                    .or_insert((alternative, spec));
            }
        }
        merged
    }

    /// The canary joined to `primary`, and its backend for the table.
    pub fn get(&self, primary: &str) -> Option<&(Arc<Resolved>, CanarySpec)> {
        self.by_primary.get(primary)
    }
}

/// The main backend of each main location, the first Ingress's where two name one, with it.
fn primaries<'n>(mains: &'n [Nginx<'n>], sink: &mut Sink<'_>) -> BTreeMap<LocationKey, (&'n Nginx<'n>, Arc<Resolved>)> {
    let mut primaries = BTreeMap::new();
    for nginx in mains {
        for (host, path) in host_paths(nginx) {
            let key = location_key(&host, path);
            if primaries.contains_key(&key) {
                continue;
            }
            let protocol = nginx.annotations.backend_protocol;
            // One that does not resolve is reported where its path is claimed.
            if let Ok(resolved) = sink.backends.resolve(nginx.namespace, &path.backend, protocol) {
                primaries.insert(key, (nginx, resolved));
            }
        }
    }
    primaries
}

fn location_key(host: &str, path: &HTTPIngressPath) -> LocationKey {
    let kind = match &*path.path_type {
        "" | "ImplementationSpecific" => "Prefix",
        other => other,
    };
    (host.to_string(), location_path(path), kind.to_string())
}
