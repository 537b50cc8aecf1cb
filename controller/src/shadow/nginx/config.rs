//! ingress-nginx's ConfigMap (`--nginx-configmap`): the keys that change every host's answer.
//! Missing means ingress-nginx's defaults; a key shunt does not reproduce refuses every host
//! (docs/user-guide/nginx-configuration/configmap.md lists them with their defaults).

use std::{collections::BTreeMap, sync::Arc};

use k8s_openapi::api::core::v1::ConfigMap;

/// ingress-nginx's Helm chart names its ConfigMap after the release and controller.
pub fn default_configmap() -> (String, String) {
    ("ingress-nginx".to_string(), "ingress-nginx-controller".to_string())
}

/// Keys that change only logging, buffering, workers or upstream connection reuse.
const NO_EFFECT: [&str; 14] = [
    "allow-snippet-annotations",
    "annotations-risk-level",
    "enable-access-log-for-default-backend",
    "disable-access-log",
    "error-log-level",
    "log-format-escape-json",
    "log-format-upstream",
    "max-worker-connections",
    "proxy-buffer-size",
    "proxy-buffering",
    "upstream-keepalive-connections",
    "upstream-keepalive-requests",
    "upstream-keepalive-timeout",
    "worker-processes",
];

/// What the ConfigMap makes of every nginx host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NginxConfig {
    /// `ssl-redirect`: the default of the annotation (true).
    pub ssl_redirect: bool,
    /// `no-tls-redirect-locations`: paths starting with one never redirect to HTTPS, even
    /// with `force-ssl-redirect` (template.go, `isLocationInLocationList`).
    pub no_tls_redirect: Vec<String>,
    /// `UnsupportedConfigMapKey: KEY` or `InvalidConfigMapKey: KEY`, for every host.
    pub refusals: Vec<String>,
    /// The ConfigMap exists (else the defaults are assumed, and said once in the log).
    pub found: bool,
}

impl Default for NginxConfig {
    fn default() -> Self {
        NginxConfig {
            ssl_redirect: true,
            no_tls_redirect: vec!["/.well-known/acme-challenge".to_string()],
            refusals: Vec::new(),
            found: false,
        }
    }
}

impl NginxConfig {
    /// The configuration `config_maps` hold for `(namespace, name)`.
    pub fn find(config_maps: &[Arc<ConfigMap>], (namespace, name): &(String, String)) -> Self {
        let found = config_maps.iter().find(|map| {
            map.metadata.namespace.as_deref() == Some(namespace.as_str())
                && map.metadata.name.as_deref() == Some(name.as_str())
        });
        match found {
            None => NginxConfig::default(),
            Some(map) => NginxConfig::parse(map.data.as_ref().unwrap_or(&BTreeMap::new())),
        }
    }

    pub fn parse(data: &BTreeMap<String, String>) -> Self {
        let mut config = NginxConfig {
            found: true,
            ..NginxConfig::default()
        };
        for (key, value) in data {
            let value = value.trim();
            match key.as_str() {
                "ssl-redirect" => match value {
                    "true" => config.ssl_redirect = true,
                    "false" => config.ssl_redirect = false,
                    _ => config.refusals.push(format!("InvalidConfigMapKey: {key}")),
                },
                "no-tls-redirect-locations" => {
                    let locations = value.split(',').map(str::trim).filter(|l| !l.is_empty());
                    config.no_tls_redirect = locations.map(str::to_string).collect();
                }
                // The proxy's ssl-redirect answers 308, ingress-nginx's default.
                "http-redirect-code" if value == "308" => {}
                "use-forwarded-headers" | "compute-full-forwarded-for" if value == "false" => {}
                key if NO_EFFECT.contains(&key) => {}
                _ => config.refusals.push(format!("UnsupportedConfigMapKey: {key}")),
            }
        }
        config
    }
}
