//! ingress-nginx's ConfigMap (`--nginx-configmap`): the keys that change every host's answer.
//! Missing means ingress-nginx's defaults; a key shunt does not reproduce refuses every host
//! (docs/user-guide/nginx-configuration/configmap.md lists them with their defaults).
//!
//! PROXY protocol (`use-proxy-protocol`) is how the load balancer hands ingress-nginx the
//! caller's address; a caller shunt serves reaches it directly, and nginx would write that same
//! address (the PROXY source) into X-Forwarded-For and X-Real-IP, so alone it changes nothing.

use std::{collections::BTreeMap, sync::Arc};

use k8s_openapi::api::core::v1::ConfigMap;
use shunt_spec::{BodyLimit, NginxForwarding};

use super::{
    annotations::{Refusal, body_size, flag},
    auth::set_headers::ConfigMaps,
    errors::GlobalErrors,
    forwarding::{FORWARDING_KEYS, ForwardingKeys},
    global_auth::GlobalAuth,
    limits::{LimitStatus, status_code},
    next_upstream::{self, NextUpstreamKeys},
    pace::{self, PaceKeys},
    timeouts::TimeoutSeconds,
};

/// ingress-nginx's Helm chart names its ConfigMap after the release and controller.
pub fn default_configmap() -> (String, String) {
    ("ingress-nginx".to_string(), "ingress-nginx-controller".to_string())
}

/// Keys that change only logging, buffering, workers or upstream connection reuse.
const NO_EFFECT: [&str; 12] = [
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

/// Keys whose values match what shunt does when they hold ingress-nginx's default (and only then);
/// the timeouts and retries are read as the annotations of the same names, the forwarding
/// keys in `forwarding.rs`.
const AT_DEFAULT: [(&str, &str); 3] = [
    ("generate-request-id", "true"),
    ("server-tokens", "false"),
    ("enable-underscores-in-headers", "false"),
];

/// What happens to an Ingress carrying a `*-snippet` annotation (controller.go `CheckIngress`
/// and `dropSnippetDirectives`; snippets are `Critical` risk in annotations/*/main.go).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SnippetPolicy {
    /// `annotations-risk-level` below Critical (the default, High): the annotation extractor fails
    /// and ingress-nginx serves nothing of the Ingress.
    RejectIngress,
    /// Critical, but `allow-snippet-annotations` false: the snippet is dropped, the rest served.
    Drop,
    /// Both allow it: the snippet runs, which shunt cannot reproduce.
    Run,
}

/// What the ConfigMap makes of every nginx host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NginxConfig {
    /// `ssl-redirect`: the default of the annotation (true).
    pub ssl_redirect: bool,
    /// `http-redirect-code` (308).
    pub redirect_code: u16,
    /// `Strict-Transport-Security` on HTTPS answers, from `hsts`, `hsts-max-age`,
    /// `hsts-include-subdomains` and `hsts-preload`; `None` when `hsts` is false.
    pub hsts: Option<String>,
    /// `proxy-body-size` (1m).
    pub body_limit: BodyLimit,
    /// `proxy-add-original-uri-header` (false).
    pub original_uri: bool,
    pub snippets: SnippetPolicy,
    /// `no-tls-redirect-locations`: paths starting with one never redirect to HTTPS, even
    /// with `force-ssl-redirect` (template.go, `isLocationInLocationList`).
    pub no_tls_redirect: Vec<String>,
    /// `proxy-connect-timeout`, `proxy-read-timeout`, `proxy-send-timeout` (5, 60 and 60 s).
    pub timeouts: TimeoutSeconds,
    /// `proxy-next-upstream`, `-tries`, `-timeout` (`error timeout`, 3, 0), under the annotations.
    pub next_upstream: NextUpstreamKeys,
    /// `retry-non-idempotent` (false): POST, LOCK and PATCH go to another pod too.
    pub retry_non_idempotent: bool,
    /// `UnsupportedConfigMapKey: KEY` or `InvalidConfigMapKey: KEY`, for every host.
    pub refusals: Vec<String>,
    /// `limit-req-status-code`, `limit-conn-status-code` (503).
    pub limit_status: LimitStatus,
    /// `limit-rate`, `limit-rate-after`: every Ingress's pace unless its annotations set one.
    pub pace: PaceKeys,
    /// `custom-http-errors` (none), `disable-proxy-intercept-errors` (false).
    pub errors: GlobalErrors,
    /// The forwarding keys where not ingress-nginx's defaults (see `forwarding.rs`).
    pub forwarding: Option<NginxForwarding>,
    /// `global-auth-*` and `no-auth-locations` (see `global_auth.rs`).
    pub auth: GlobalAuth,
    /// The ConfigMap exists (else the defaults are assumed, and said once in the log).
    pub found: bool,
    /// Every ConfigMap the compile has, for `auth-proxy-set-headers`: a change to any compiles
    /// the nginx hosts again, as a change to ingress-nginx's own does.
    pub config_maps: ConfigMaps,
}

impl Default for NginxConfig {
    fn default() -> Self {
        NginxConfig {
            ssl_redirect: true,
            redirect_code: 308,
            hsts: Some(Hsts::default().value()),
            body_limit: BodyLimit::Bytes(1 << 20),
            original_uri: false,
            snippets: SnippetPolicy::RejectIngress,
            no_tls_redirect: vec!["/.well-known/acme-challenge".to_string()],
            timeouts: TimeoutSeconds::default(),
            next_upstream: NextUpstreamKeys::default(),
            retry_non_idempotent: false,
            refusals: Vec::new(),
            limit_status: LimitStatus::default(),
            pace: PaceKeys::default(),
            errors: GlobalErrors::default(),
            forwarding: None,
            auth: GlobalAuth::default(),
            found: false,
            config_maps: ConfigMaps::default(),
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
        let mut config = match found {
            None => NginxConfig::default(),
            Some(map) => NginxConfig::parse(map.data.as_ref().unwrap_or(&BTreeMap::new())),
        };
        config.config_maps = ConfigMaps::new(config_maps);
        config
    }

    /// `limit-req-status-code` or `limit-conn-status-code`.
    fn limit_status_key(&mut self, key: &str, value: &str) -> Result<(), KeyRefusal> {
        let code = status_code(value).ok_or(Invalid)?;
        match key {
            "limit-req-status-code" => self.limit_status.rate = code,
            _ => self.limit_status.connections = code,
        }
        Ok(())
    }

    /// `limit-rate` or `limit-rate-after`: a number nginx takes as KiB, or the key refuses;
    /// `proxy-buffering`, which decides what they pace: written as it is into
    /// `proxy_buffering`, a flag nginx reads in any case (another value changes nothing here).
    fn pace_key(&mut self, key: &str, value: &str) -> Result<(), KeyRefusal> {
        if key == "proxy-buffering" {
            let on = ["on", "off"].map(|flag| value.eq_ignore_ascii_case(flag));
            self.pace.buffering = on.contains(&true).then_some(on[0]).or(self.pace.buffering);
            return Ok(());
        }
        let kib = pace::atoi(value)
            .filter(|kib| kib.checked_mul(1024).is_some())
            .ok_or(Invalid)?;
        match key {
            "limit-rate" => self.pace.rate = Some(kib),
            _ => self.pace.after = Some(kib),
        }
        Ok(())
    }

    pub fn parse(data: &BTreeMap<String, String>) -> Self {
        let mut config = NginxConfig {
            found: true,
            ..NginxConfig::default()
        };
        let mut hsts = Hsts::default();
        let mut snippets = (false, "High");
        let mut forwarding = ForwardingKeys::default();
        for (key, value) in data {
            let value = value.trim();
            let applied = match key.as_str() {
                key if FORWARDING_KEYS.contains(&key) => forwarding.read(key, value).map_err(KeyRefusal::from),
                "ssl-redirect" => flag(value).map(|on| config.ssl_redirect = on).map_err(|_| Invalid),
                "no-tls-redirect-locations" => {
                    let locations = value.split(',').map(str::trim).filter(|l| !l.is_empty());
                    config.no_tls_redirect = locations.map(str::to_string).collect();
                    Ok(())
                }
                "http-redirect-code" => {
                    config.redirect_code = redirect_code(value);
                    Ok(())
                }
                "hsts" => flag(value).map(|on| hsts.on = on).map_err(|_| Invalid),
                "hsts-include-subdomains" => flag(value).map(|on| hsts.subdomains = on).map_err(|_| Invalid),
                "hsts-preload" => flag(value).map(|on| hsts.preload = on).map_err(|_| Invalid),
                "hsts-max-age" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                    hsts.max_age = value.to_string();
                    Ok(())
                }
                "proxy-body-size" => body_size(value)
                    .map(|limit| config.body_limit = limit)
                    .map_err(|_| Invalid),
                "proxy-add-original-uri-header" => flag(value).map(|on| config.original_uri = on).map_err(|_| Invalid),
                "allow-snippet-annotations" => flag(value).map(|on| snippets.0 = on).map_err(|_| Invalid),
                // Other levels reject Ingresses by annotations shunt does not rate.
                "annotations-risk-level" if matches!(value, "High" | "Critical") => {
                    snippets.1 = if value == "Critical" { "Critical" } else { "High" };
                    Ok(())
                }
                "limit-req-status-code" | "limit-conn-status-code" => config.limit_status_key(key, value),
                "limit-rate" | "limit-rate-after" | "proxy-buffering" => config.pace_key(key, value),
                "custom-http-errors" | "disable-proxy-intercept-errors" => {
                    config.errors.set(key, value).map_err(KeyRefusal::from)
                }
                // The key limits count by: the caller's address is the only one reproduced.
                "limit-conn-zone-variable" if value == "$binary_remote_addr" => Ok(()),
                "proxy-connect-timeout" => timeout(value).map(|s| config.timeouts.connect = Some(s)),
                "proxy-read-timeout" => timeout(value).map(|s| config.timeouts.read = Some(s)),
                "proxy-send-timeout" => timeout(value).map(|s| config.timeouts.send = Some(s)),
                key if AT_DEFAULT.iter().any(|(k, default)| *k == key && *default == value) => Ok(()),
                "proxy-next-upstream"
                | "proxy-next-upstream-tries"
                | "proxy-next-upstream-timeout"
                | "retry-non-idempotent" => config.retry_key(key, value),
                key if NO_EFFECT.contains(&key) => Ok(()),
                key if config.auth.set(key, value) => Ok(()),
                _ => Err(Unsupported),
            };
            match applied {
                Ok(()) => {}
                Err(Invalid) => config.refusals.push(format!("InvalidConfigMapKey: {key}")),
                Err(Unsupported) => config.refusals.push(format!("UnsupportedConfigMapKey: {key}")),
            }
        }
        match forwarding.contract() {
            Ok(contract) => config.forwarding = contract,
            Err(key) => config.refusals.push(format!("UnsupportedConfigMapKey: {key}")),
        }
        config.auth.resolve(&mut config.refusals);
        config.hsts = hsts.on.then(|| hsts.value());
        config.snippets = match snippets {
            (_, "High") => SnippetPolicy::RejectIngress,
            (false, _) => SnippetPolicy::Drop,
            (true, _) => SnippetPolicy::Run,
        };
        config
    }
}

impl NginxConfig {
    /// The retry keys, read as the annotations of the same names (`next_upstream.rs`).
    fn retry_key(&mut self, key: &str, value: &str) -> Result<(), KeyRefusal> {
        let rule = &mut self.next_upstream;
        match key {
            "proxy-next-upstream" => rule.conditions = Some(next_upstream::conditions(value)?),
            "proxy-next-upstream-tries" => rule.tries = Some(next_upstream::tries(value)?),
            "proxy-next-upstream-timeout" => rule.timeout = Some(next_upstream::timeout(value)?),
            _ => self.retry_non_idempotent = flag(value).map_err(|_| Invalid)?,
        }
        Ok(())
    }
}

/// Why a ConfigMap key refuses every host.
enum KeyRefusal {
    Invalid,
    Unsupported,
}
use KeyRefusal::{Invalid, Unsupported};

impl From<Refusal> for KeyRefusal {
    fn from(refusal: Refusal) -> Self {
        match refusal {
            Refusal::Invalid => Invalid,
            Refusal::Unsupported => Unsupported,
        }
    }
}

fn timeout(value: &str) -> Result<u32, KeyRefusal> {
    super::timeouts::seconds(value).map_err(KeyRefusal::from)
}

/// `http-redirect-code`: ingress-nginx takes 301, 302, 307 and 308 and keeps 308 for anything
/// else, numbers or not (internal/ingress/controller/template/configmap.go, `ReadConfig`).
fn redirect_code(value: &str) -> u16 {
    let valid = |code: &u16| matches!(code, 301 | 302 | 307 | 308);
    value.parse::<u16>().ok().filter(valid).unwrap_or(308)
}

/// The HSTS keys (config.go: on, max-age 31536000, includeSubDomains, no preload).
struct Hsts {
    on: bool,
    max_age: String,
    subdomains: bool,
    preload: bool,
}

impl Default for Hsts {
    fn default() -> Self {
        Hsts {
            on: true,
            max_age: "31536000".to_string(),
            subdomains: true,
            preload: false,
        }
    }
}

impl Hsts {
    /// As lua_ingress.lua's `header` writes it.
    fn value(&self) -> String {
        let mut value = format!("max-age={}", self.max_age);
        if self.subdomains {
            value.push_str("; includeSubDomains");
        }
        if self.preload {
            value.push_str("; preload");
        }
        value
    }
}
