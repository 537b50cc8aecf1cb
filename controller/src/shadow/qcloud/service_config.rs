//! The TkeServiceConfig a qcloud Ingress names (`tke-service-config`, or the one TKE creates for
//! `tke-service-config-auto`), read for what changes an answer. TKE applies a config segment to
//! the CLB rule with the same listener (protocol and port), domain (empty: the default domain)
//! and URL; a rule without a segment, or a field a segment leaves out, keeps the CLB's default.
//!
//! ```text
//! spec.loadBalancer.l7Listeners[] ─ protocol+port ─ domains[].domain ─ rules[].url ─▶ reasons per rule
//!   session.enable with WRR (cookie insertion): the rule's cookie stickiness ─▶ Sessions
//!   forwardType other than HTTP, a field not known: refused
//!   healthCheck, scheduler, keepaliveEnable, defaultServer: which pod and when, not what it answers
//! ```

use std::{collections::BTreeMap, sync::Arc};

use serde_json::{Map, Value};

use super::rules::{Action, ClbRule, known_on};
use crate::objects::{Annotations, TkeServiceConfig};

pub const TKE_SERVICE_CONFIG: &str = "ingress.cloud.tencent.com/tke-service-config";
pub const TKE_SERVICE_CONFIG_AUTO: &str = "ingress.cloud.tencent.com/tke-service-config-auto";
/// The config TKE creates for `tke-service-config-auto` is `<Ingress name>` plus this.
pub const AUTO_SUFFIX: &str = "-auto-ingress-config";
/// TKE refuses a named config with these suffixes (they are its own).
const RESERVED_SUFFIXES: [&str; 2] = ["-auto-service-config", AUTO_SUFFIX];
/// Fields that change which pod answers or when, never the answer; `/shadow` lists them.
pub const NO_EFFECT_FIELDS: [&str; 7] = [
    "TkeServiceConfig l7Listeners[].keepaliveEnable",
    "TkeServiceConfig l7Listeners[].defaultServer (only requests for unknown hosts, which DNS never moves)",
    "TkeServiceConfig rules[].healthCheck",
    "TkeServiceConfig rules[].scheduler WRR, LEAST_CONN, IP_HASH",
    "TkeServiceConfig rules[].session with scheduler IP_HASH (by source address: no cookie)",
    "TkeServiceConfig rules[].session with scheduler LEAST_CONN (the CLB keeps no session then)",
    "TkeServiceConfig rules[].forwardType HTTP",
];
/// Rules read from one config at most: a hostile one is refused, not walked.
const MAX_RULES: usize = 4096;
/// The session durations the CLB takes, in seconds (214/6154).
const SESSION_SECONDS: std::ops::RangeInclusive<u64> = 30..=3600;

/// A listener shunt serves: `false` for HTTP:80, `true` for HTTPS:443.
type Tls = bool;

/// Every TkeServiceConfig, by (namespace, name): what it says, or why it cannot be read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServiceConfigs(BTreeMap<(String, String), Result<ServiceConfig, String>>);

/// Reasons a config gives, by where they apply.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServiceConfig {
    /// Every rule of the Ingress.
    all: Vec<String>,
    /// Every rule on a listener.
    listeners: BTreeMap<Tls, Vec<String>>,
    /// Every rule of a domain on a listener (domain lowercase, empty for the default domain).
    domains: BTreeMap<(Tls, String), Vec<String>>,
    /// One rule: listener, domain, URL.
    rules: BTreeMap<(Tls, String, String), Vec<String>>,
    sessions: Sessions,
}

/// The CLB rules with cookie session persistence: (listener, domain, URL) to its duration in
/// seconds. The CLB inserts a cookie naming the pod (214/6154, "based on cookie insertion").
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sessions(BTreeMap<(Tls, String, String), u32>);

/// What an Ingress's annotations make of the configs.
pub enum Named<'c> {
    None,
    /// Reasons every host of the Ingress is refused (TKE rejects, missing, unreadable).
    Refused(String),
    Config(&'c ServiceConfig),
}

// === impl ServiceConfigs ===

impl ServiceConfigs {
    pub fn parse(configs: &[Arc<TkeServiceConfig>]) -> Self {
        let parsed = configs.iter().map(|config| {
            let (namespace, name) = crate::compile::namespace_name(&config.metadata);
            let source = format!("{namespace}/{name}");
            let parsed = parse_spec(config.spec.as_ref(), &source);
            ((namespace.to_string(), name.to_string()), parsed)
        });
        ServiceConfigs(parsed.collect())
    }

    /// The config `annotations` of Ingress `namespace/name` name.
    pub fn named(&self, namespace: &str, name: &str, annotations: &Annotations) -> Named<'_> {
        let named = annotations
            .get(TKE_SERVICE_CONFIG)
            .map(|n| n.trim())
            .filter(|n| !n.is_empty());
        let auto = annotations
            .get(TKE_SERVICE_CONFIG_AUTO)
            .is_some_and(|v| v.trim() == "true");
        let config = match (named, auto) {
            (None, false) => return Named::None,
            (Some(_), true) => {
                return Named::Refused(format!(
                    "TkeRejects: {TKE_SERVICE_CONFIG} and {TKE_SERVICE_CONFIG_AUTO} together (TKE allows one)"
                ));
            }
            (Some(config), false) => {
                if let Some(suffix) = RESERVED_SUFFIXES.iter().find(|s| config.ends_with(*s)) {
                    return Named::Refused(format!(
                        "TkeRejects: {TKE_SERVICE_CONFIG} {config:?} ends with {suffix:?}, reserved for TKE's own"
                    ));
                }
                match self.0.get(&(namespace.to_string(), config.to_string())) {
                    Some(found) => found,
                    None => {
                        return Named::Refused(format!(
                            "TkeServiceConfigNotFound: {TKE_SERVICE_CONFIG} names {namespace}/{config}, which does not exist: what the CLB then keeps is unknown"
                        ));
                    }
                }
            }
            // TKE creates it from the listeners' settings, which shunt reproduces, until edited.
            (None, true) => match self.0.get(&(namespace.to_string(), format!("{name}{AUTO_SUFFIX}"))) {
                Some(found) => found,
                None => return Named::None,
            },
        };
        match config {
            Ok(config) => Named::Config(config),
            Err(error) => Named::Refused(format!("InvalidTkeServiceConfig: {error}")),
        }
    }
}

// === impl Sessions ===

impl Sessions {
    /// The session duration of the CLB rule `domain` + `url` on listener `tls`, if it keeps one.
    pub fn get(&self, tls: Tls, domain: &str, url: &str) -> Option<u32> {
        self.0
            .get(&(tls, domain.to_ascii_lowercase(), url.to_string()))
            .copied()
    }
}

// === impl ServiceConfig ===

impl ServiceConfig {
    pub fn sessions(&self) -> &Sessions {
        &self.sessions
    }

    /// Reasons for the CLB rule `domain` + `url` on listener `tls`.
    pub fn reasons(&self, tls: Tls, domain: &str, url: &str) -> Vec<String> {
        let domain = domain.to_ascii_lowercase();
        let mut reasons = self.all.clone();
        reasons.extend(self.listeners.get(&tls).into_iter().flatten().cloned());
        reasons.extend(self.domains.get(&(tls, domain.clone())).into_iter().flatten().cloned());
        reasons.extend(
            self.rules
                .get(&(tls, domain, url.to_string()))
                .into_iter()
                .flatten()
                .cloned(),
        );
        reasons
    }
}

fn parse_spec(spec: Option<&Value>, source: &str) -> Result<ServiceConfig, String> {
    let mut config = ServiceConfig::default();
    let Some(spec) = spec else { return Ok(config) };
    let spec = object(spec, source, "spec")?;
    for (key, value) in spec {
        if key != "loadBalancer" {
            config.all.push(unknown(source, &format!("spec.{key}")));
            continue;
        }
        for (key, value) in object(value, source, "spec.loadBalancer")? {
            match key.as_str() {
                "l7Listeners" => listeners(value, source, &mut config)?,
                // A Service's listeners: nothing an Ingress's CLB rule reads.
                "l4Listeners" => {}
                other => config.all.push(unknown(source, &format!("loadBalancer.{other}"))),
            }
        }
    }
    Ok(config)
}

fn listeners(value: &Value, source: &str, config: &mut ServiceConfig) -> Result<(), String> {
    let mut count = 0usize;
    for listener in array(value, source, "l7Listeners")? {
        let listener = object(listener, source, "l7Listeners[]")?;
        let protocol = listener.get("protocol").and_then(Value::as_str).unwrap_or_default();
        let port = listener.get("port").and_then(Value::as_u64);
        let tls = match (protocol.to_ascii_uppercase().as_str(), port) {
            ("HTTP", Some(80)) => false,
            ("HTTPS", Some(443)) => true,
            // A listener shunt does not serve (`listen-ports` other than these is refused).
            _ => continue,
        };
        for (key, value) in listener {
            match key.as_str() {
                "protocol" | "port" | "keepaliveEnable" | "defaultServer" => {}
                "domains" => {
                    for domain in array(value, source, "domains")? {
                        count += domain_rules(domain, tls, source, config)?;
                        if count > MAX_RULES {
                            return Err(format!("{source}: more than {MAX_RULES} rules"));
                        }
                    }
                }
                other => {
                    let reason = unknown(source, &format!("l7Listeners[].{other}"));
                    config.listeners.entry(tls).or_default().push(reason);
                }
            }
        }
    }
    Ok(())
}

/// Reads one `domains[]` entry; returns its number of rules.
fn domain_rules(value: &Value, tls: Tls, source: &str, config: &mut ServiceConfig) -> Result<usize, String> {
    let domain = object(value, source, "domains[]")?;
    let name = domain
        .get("domain")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_ascii_lowercase();
    let mut count = 0;
    for (key, value) in domain {
        match key.as_str() {
            "domain" => {}
            "rules" => {
                for rule in array(value, source, "rules")? {
                    let rule = object(rule, source, "rules[]")?;
                    let url = rule.get("url").and_then(Value::as_str).unwrap_or("/").to_string();
                    let (reasons, session) = rule_segment(rule, source, &name, &url);
                    if let Some(seconds) = session {
                        config.sessions.0.insert((tls, name.clone(), url.clone()), seconds);
                    }
                    config
                        .rules
                        .entry((tls, name.clone(), url))
                        .or_default()
                        .extend(reasons);
                    count += 1;
                }
            }
            other => {
                let reason = unknown(source, &format!("domains[].{other}"));
                config.domains.entry((tls, name.clone())).or_default().push(reason);
            }
        }
    }
    Ok(count)
}

/// What one rule segment sets that changes an answer: reasons shunt cannot reproduce it, and
/// its cookie session's duration.
fn rule_segment(rule: &Map<String, Value>, source: &str, domain: &str, url: &str) -> (Vec<String>, Option<u32>) {
    let at = bounded(&format!("{source} {domain}{url}"));
    let mut reasons = Vec::new();
    let mut session_seconds = None;
    let scheduler = rule.get("scheduler").and_then(Value::as_str).unwrap_or("WRR");
    for (key, value) in rule {
        match key.as_str() {
            "url" | "healthCheck" => {}
            "scheduler" if matches!(scheduler, "WRR" | "LEAST_CONN" | "IP_HASH") => {}
            "forwardType" if value.as_str() == Some("HTTP") => {}
            "forwardType" => reasons.push(format!(
                "TkeServiceConfig: forwardType {} ({at}): the CLB speaks it to the backend, shunt speaks HTTP",
                bounded(&value.to_string())
            )),
            // Cookie insertion under WRR only; IP_HASH keeps sessions by source address and
            // LEAST_CONN keeps none (214/6154): neither shows in an answer.
            "session" if scheduler == "WRR" => match session(value) {
                Ok(seconds) => session_seconds = seconds,
                Err(error) => reasons.push(format!("TkeServiceConfig: session ({at}): {error}")),
            },
            "session" => {}
            other => reasons.push(unknown(source, &format!("rules[].{other} {value}"))),
        }
    }
    (reasons, session_seconds)
}

/// A rule's `session`: its duration when enabled; an error where the CLB's behaviour is unknown.
fn session(value: &Value) -> Result<Option<u32>, String> {
    // TKE reads a missing `enable` as false.
    let enabled = value.get("enable").or_else(|| value.get("enabled"));
    match enabled.map_or(Some(false), Value::as_bool) {
        Some(false) => return Ok(None),
        Some(true) => {}
        None => return Err(format!("enable {} is not a boolean", bounded(&value.to_string()))),
    }
    match value.get("sessionExpireTime").map(Value::as_u64) {
        Some(Some(seconds)) if SESSION_SECONDS.contains(&seconds) => Ok(u32::try_from(seconds).ok()),
        Some(_) => Err(format!(
            "sessionExpireTime is not a number of seconds from {} to {}, all the CLB takes",
            SESSION_SECONDS.start(),
            SESSION_SECONDS.end()
        )),
        None => Err("enabled without sessionExpireTime: the CLB's default duration is not documented".into()),
    }
}

fn unknown(source: &str, field: &str) -> String {
    let field = bounded(field);
    format!("TkeServiceConfig: {field} ({source}) is not known to shunt: a newer TKE may read it")
}

/// Tenant-written text as a reason quotes it: at most 120 characters.
fn bounded(text: &str) -> String {
    text.chars().take(120).collect()
}

fn object<'v>(value: &'v Value, source: &str, at: &str) -> Result<&'v Map<String, Value>, String> {
    value
        .as_object()
        .ok_or_else(|| format!("{source}: {at} is not an object"))
}

fn array<'v>(value: &'v Value, source: &str, at: &str) -> Result<&'v Vec<Value>, String> {
    value.as_array().ok_or_else(|| format!("{source}: {at} is not a list"))
}

/// The reasons `config` gives each named host of `rules`, and the default domain's. A host with
/// no rule on a listener is served there by the default domain's rules, and so by their reasons.
pub(super) fn by_host(rules: &[ClbRule], config: &ServiceConfig) -> (BTreeMap<String, Vec<String>>, Vec<String>) {
    let mut hosts: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut default_domain = Vec::new();
    for rule in rules.iter().filter(|rule| matches!(rule.action, Action::Forward(_))) {
        let url = rule.path.as_deref().filter(|p| !p.is_empty()).unwrap_or("/");
        for tls in [false, true].into_iter().filter(|tls| rule.listeners.serves(*tls)) {
            let reasons = config.reasons(tls, &rule.host, url);
            if reasons.is_empty() {
                continue;
            }
            let add = |to: &mut Vec<String>| {
                for reason in &reasons {
                    if !to.contains(reason) {
                        to.push(reason.clone());
                    }
                }
            };
            if !rule.host.is_empty() {
                add(hosts.entry(rule.host.clone()).or_default());
                continue;
            }
            add(&mut default_domain);
            let named = rules.iter().map(|r| r.host.as_str()).filter(|h| !h.is_empty());
            for host in named.collect::<std::collections::BTreeSet<_>>() {
                if !known_on(rules, host, tls) {
                    add(hosts.entry(host.to_string()).or_default());
                }
            }
        }
    }
    (hosts, default_domain)
}
