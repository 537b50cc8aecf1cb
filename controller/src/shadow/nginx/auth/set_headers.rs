//! `auth-proxy-set-headers` as authreq reads it (internal/ingress/annotations/authreq/main.go):
//! a ConfigMap `NAMESPACE/NAME` of the Ingress's own namespace whose data become
//! `proxy_set_header "NAME" "VALUE";` lines of the auth location (template.go,
//! `buildAuthProxySetHeaders`). Anything authreq denies (nginx then answers 503 on the
//! location) and anything shunt cannot send byte for byte refuses the hosts instead.

use std::{collections::BTreeMap, sync::Arc};

use k8s_openapi::api::core::v1::ConfigMap;
use shunt_spec::{MAX_AUTH_SET_HEADERS, MAX_AUTH_SET_HEADERS_BYTES};

use super::super::annotations::{PREFIX, Refusal};

/// The cluster's ConfigMaps by `(namespace, name)`, as the nginx profile sees them.
#[derive(Clone, Debug, Default)]
pub struct ConfigMaps(Arc<BTreeMap<(String, String), Arc<ConfigMap>>>);

impl ConfigMaps {
    pub fn new(config_maps: &[Arc<ConfigMap>]) -> Self {
        let by_key = config_maps.iter().filter_map(|map| {
            let meta = &map.metadata;
            Some(((meta.namespace.clone()?, meta.name.clone()?), map.clone()))
        });
        ConfigMaps(Arc::new(by_key.collect()))
    }
}

/// Equal when every ConfigMap has the same data: the compile compares configurations on every
/// change, so the same `Arc` is not looked into.
impl PartialEq for ConfigMaps {
    fn eq(&self, other: &Self) -> bool {
        let same = |(a, b): (&Arc<ConfigMap>, &Arc<ConfigMap>)| Arc::ptr_eq(a, b) || a.data == b.data;
        self.0.len() == other.0.len()
            && (self.0.keys()).eq(other.0.keys())
            && (self.0.values()).zip(other.0.values()).all(same)
    }
}

impl Eq for ConfigMaps {}

/// Fields the auth location sets itself (or nginx drops): a second line of the same name would
/// send the field twice, which the proxy does not reproduce.
const LOCATION_FIELDS: [&str; 16] = [
    "connection",
    "content-length",
    "expect",
    "host",
    "keep-alive",
    "te",
    "transfer-encoding",
    "upgrade",
    "x-auth-request-redirect",
    "x-forwarded-for",
    "x-original-method",
    "x-original-uri",
    "x-original-url",
    "x-real-ip",
    "x-request-id",
    "x-scheme",
];

/// The fields `reference` (the annotation's value) sets on the auth request of an Ingress in
/// `namespace`, or the refusal of its hosts.
pub fn resolve(reference: &str, namespace: &str, maps: &ConfigMaps) -> Result<Vec<(String, String)>, String> {
    let key = format!("{PREFIX}auth-proxy-set-headers");
    let refuse = |kind: &str| format!("{kind}: {key}");
    // parser's BasicCharsRegex (a value outside it is logged and dropped by ingress-nginx, which
    // then sets no fields: refused rather than serve the gate without the fields asked for),
    // then cache.SplitMetaNamespaceKey (at most one `/`, else the location is denied).
    let basic = |b: u8| b.is_ascii_alphanumeric() || b"-._~/:".contains(&b);
    if !reference.bytes().all(basic) || reference.matches('/').count() > 1 {
        return Err(refuse(&Refusal::Invalid.to_string()));
    }
    // authreq looks the value up as written: a bare name is never found, and another
    // namespace is denied (allow-cross-namespace-resources, which shunt does not read, is off).
    let (map_namespace, name) = reference.split_once('/').unwrap_or(("", reference));
    if !map_namespace.is_empty() && map_namespace != namespace {
        return Err(refuse(&Refusal::Unsupported.to_string()));
    }
    let Some(map) = maps.0.get(&(map_namespace.to_string(), name.to_string())) else {
        return Err(format!(
            "MissingConfigMap: {key}: {reference:?} does not exist (ingress-nginx answers 503 there)"
        ));
    };
    // Past the bounds `headers` refuses anyway: `shunt run` keeps no such data.
    let dropped = map.metadata.annotations.as_ref();
    if dropped.is_some_and(|a| a.contains_key(crate::watch::DATA_DROPPED)) {
        return Err(refuse(&Refusal::Unsupported.to_string()));
    }
    let empty = BTreeMap::new();
    headers(map.data.as_ref().unwrap_or(&empty)).map_err(|refusal| refuse(&refusal.to_string()))
}

/// The ConfigMap's data as fields, in key order; `Invalid` where authreq denies (a name
/// outside its `headerRegexp`), `Unsupported` where shunt could not send what nginx sends.
pub(in super::super) fn headers(data: &BTreeMap<String, String>) -> Result<Vec<(String, String)>, Refusal> {
    if data.len() > MAX_AUTH_SET_HEADERS {
        return Err(Refusal::Unsupported);
    }
    let mut bytes = 0;
    let mut lower: Vec<String> = Vec::with_capacity(data.len());
    for (name, value) in data {
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(Refusal::Invalid);
        }
        // `$` starts an nginx variable; other bytes would reach nginx escaped by Go's `%q`.
        if !value.bytes().all(|b| (b' '..=b'~').contains(&b) && b != b'$') {
            return Err(Refusal::Unsupported);
        }
        let name_lower = name.to_ascii_lowercase();
        if LOCATION_FIELDS.contains(&name_lower.as_str()) || lower.contains(&name_lower) {
            return Err(Refusal::Unsupported);
        }
        bytes += name.len() + value.len();
        lower.push(name_lower);
    }
    if bytes > MAX_AUTH_SET_HEADERS_BYTES {
        return Err(Refusal::Unsupported);
    }
    Ok(data.iter().map(|(name, value)| (name.clone(), value.clone())).collect())
}

#[cfg(test)]
mod tests;
