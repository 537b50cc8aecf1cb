//! Which rule the CLB serves on which listener, and its redirects: the protocol split
//! (TLS or not, `rule-mix`, `http-rules` / `https-rules`, `rule-mix-both`), `rewrite`
//! entries and `auto-rewrite`. Pure: raw hosts and paths out, validated by the caller.

use crate::objects::Ingress;
use crate::objects::{IngressBackend, IngressServiceBackend, ServiceBackendPort};
use shunt_spec::{Listeners, RedirectSpec, Scheme};

use super::annotations::{
    EntryBackend, HTTP_RULES, HTTPS_RULES, PortValue, QcloudAnnotations, REWRITE_SUPPORT, RuleEntry,
};

/// One CLB URL rule on the listeners it exists on.
#[derive(Clone, Debug, PartialEq)]
pub struct ClbRule {
    /// Lowercase; empty for the default domain.
    pub host: String,
    /// As written; `None` is `/`.
    pub path: Option<String>,
    /// `pathType`; annotation entries have none (`ImplementationSpecific`).
    pub path_type: String,
    pub listeners: Listeners,
    pub action: Action,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    Forward(IngressBackend),
    Redirect(Redirect),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Redirect {
    pub code: u16,
    pub scheme: Scheme,
    pub host: Option<String>,
    pub port: Option<u16>,
    pub path: Option<String>,
}

// === impl Redirect ===

impl Redirect {
    /// The redirect as the table answers it.
    pub fn spec(&self) -> RedirectSpec {
        RedirectSpec {
            code: self.code,
            scheme: Some(self.scheme),
            host: self.host.clone(),
            port: self.port,
            path: self.path.clone(),
            drop_query: false,
            location: None,
            replace_prefix: None,
            rewritten: false,
            www: false,
        }
    }
}

/// A rule identity: host (empty = default domain) and path (`/` when missing).
type Key = (String, String);

/// The Ingress's rules as the CLB lays them out, and reasons its hosts cannot be reproduced.
pub fn split(ingress: &Ingress, parsed: &QcloudAnnotations, default_code: u16) -> (Vec<ClbRule>, Vec<String>) {
    let mut problems = Vec::new();
    let mut rules = spec_rules(ingress);
    if parsed.rule_mix_both {
        // Every rule on both listeners: the default already.
    } else if parsed.rule_mix {
        mix(&mut rules, parsed, &mut problems);
    } else {
        let has_tls = (ingress.spec.as_ref())
            .and_then(|s| s.tls.as_ref())
            .is_some_and(|tls| !tls.is_empty());
        let listeners = if has_tls { Listeners::Tls } else { Listeners::Plain };
        for rule in &mut rules {
            rule.listeners = listeners;
        }
    }
    if parsed.rule_mix || parsed.rule_mix_both {
        rewrites(&mut rules, parsed, default_code, &mut problems);
        problems.extend(super::redirect_rules::conflicts(&rules));
    }
    if parsed.auto_rewrite {
        auto_rewrite(&mut rules, parsed, default_code);
    }
    (rules, problems)
}

/// The `spec.rules` paths, each a forward on both listeners.
fn spec_rules(ingress: &Ingress) -> Vec<ClbRule> {
    let mut rules = Vec::new();
    let spec_rules = ingress.spec.as_ref().and_then(|s| s.rules.as_ref());
    for rule in spec_rules.into_iter().flatten() {
        let host = rule.host.as_deref().unwrap_or_default().to_ascii_lowercase();
        for path in rule.http.iter().flat_map(|http| &http.paths) {
            rules.push(ClbRule {
                host: host.clone(),
                path: path.path.as_deref().map(Into::into),
                path_type: path.path_type.to_string(),
                listeners: Listeners::Both,
                action: Action::Forward(path.backend.clone()),
            });
        }
    }
    rules
}

/// `rule-mix`: each rule on the listeners whose list (`http-rules`, `https-rules`) forwards it;
/// entries the spec lacks are rules of their own.
fn mix(rules: &mut Vec<ClbRule>, parsed: &QcloudAnnotations, problems: &mut Vec<String>) {
    let http = parsed.http_rules.as_deref().unwrap_or_default();
    let https = parsed.https_rules.as_deref().unwrap_or_default();
    let forwards =
        |entries: &[RuleEntry], key: &Key| entries.iter().any(|e| e.rewrite.is_none() && entry_key(e) == *key);
    for rule in rules.iter_mut() {
        let key = rule_key(rule);
        rule.listeners = match (forwards(http, &key), forwards(https, &key)) {
            (true, true) => Listeners::Both,
            (true, false) => Listeners::Plain,
            // In neither list: HTTPS only, as TKE documents.
            (false, _) => Listeners::Tls,
        };
    }
    for (entries, listeners) in [(http, Listeners::Plain), (https, Listeners::Tls)] {
        for entry in entries.iter().filter(|e| e.rewrite.is_none()) {
            let key = entry_key(entry);
            if rules.iter().any(|rule| rule_key(rule) == key) {
                continue;
            }
            match &entry.backend {
                Some(backend) => rules.push(ClbRule {
                    host: key.0,
                    path: entry.path.clone(),
                    path_type: "ImplementationSpecific".to_string(),
                    listeners,
                    action: Action::Forward(ingress_backend(backend)),
                }),
                None => problems.push(format!(
                    "InvalidAnnotation: {} entry {key:?} has no backend",
                    list(listeners)
                )),
            }
        }
    }
}

/// `rewrite` entries of `http-rules` / `https-rules`: redirects configured by hand.
fn rewrites(rules: &mut Vec<ClbRule>, parsed: &QcloudAnnotations, default_code: u16, problems: &mut Vec<String>) {
    let http = parsed.http_rules.as_deref().unwrap_or_default();
    let https = parsed.https_rules.as_deref().unwrap_or_default();
    for (entries, listeners) in [(http, Listeners::Plain), (https, Listeners::Tls)] {
        for entry in entries {
            let Some(target) = &entry.rewrite else { continue };
            if !parsed.rewrite_support {
                problems.push(format!(
                    "UnsupportedAnnotation: {} rewrite without {REWRITE_SUPPORT}",
                    list(listeners)
                ));
                continue;
            }
            let Some(scheme) = target_scheme(parsed, target.port) else {
                problems.push(format!("ListenPortNotServed: rewrite to port {}", target.port));
                continue;
            };
            let (host, path) = entry_key(entry);
            rules.push(ClbRule {
                path: Some(path),
                path_type: "ImplementationSpecific".to_string(),
                listeners,
                action: Action::Redirect(Redirect {
                    code: rewrite_code(parsed, default_code, &host),
                    scheme,
                    host: target.host.as_ref().map(|h| h.to_ascii_lowercase()),
                    port: Some(target.port),
                    path: target.path.clone(),
                }),
                host,
            });
        }
    }
}

/// The scheme of a rewrite to `port`: 80 and 443 by convention, others by `listen-ports`.
fn target_scheme(parsed: &QcloudAnnotations, port: u16) -> Option<Scheme> {
    match port {
        80 => Some(Scheme::Http),
        443 => Some(Scheme::Https),
        port => parsed
            .listen_ports
            .iter()
            .flatten()
            .find(|(_, p)| *p == port)
            .map(|(protocol, _)| {
                if protocol == "HTTPS" {
                    Scheme::Https
                } else {
                    Scheme::Http
                }
            }),
    }
}

/// `auto-rewrite`: every HTTPS-only rule gets an HTTP twin redirecting to HTTPS.
fn auto_rewrite(rules: &mut Vec<ClbRule>, parsed: &QcloudAnnotations, default_code: u16) {
    let mut twins = Vec::new();
    for rule in rules.iter().filter(|rule| rule.listeners == Listeners::Tls) {
        let key = rule_key(rule);
        let on_http = rules
            .iter()
            .any(|other| other.listeners != Listeners::Tls && rule_key(other) == key);
        if on_http || twins.iter().any(|twin: &ClbRule| rule_key(twin) == key) {
            continue;
        }
        twins.push(ClbRule {
            host: rule.host.clone(),
            path: rule.path.clone(),
            path_type: rule.path_type.clone(),
            listeners: Listeners::Plain,
            action: Action::Redirect(Redirect {
                code: rewrite_code(parsed, default_code, &rule.host),
                scheme: Scheme::Https,
                host: None,
                port: None,
                path: None,
            }),
        });
    }
    rules.extend(twins);
}

/// The redirect code for `host`: its own, the annotation's default, else `--shadow-rewrite-code`.
fn rewrite_code(parsed: &QcloudAnnotations, default_code: u16, host: &str) -> u16 {
    parsed
        .rewrite_codes
        .hosts
        .get(host)
        .copied()
        .or(parsed.rewrite_codes.default)
        .unwrap_or(default_code)
}

/// Whether `host` has a rule of its own on listener `tls` (else the default domain's serve it).
pub fn known_on(rules: &[ClbRule], host: &str, tls: bool) -> bool {
    rules.iter().any(|r| r.host == host && r.listeners.serves(tls))
}

fn rule_key(rule: &ClbRule) -> Key {
    (
        rule.host.clone(),
        rule.path
            .clone()
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| "/".into()),
    )
}

fn entry_key(entry: &RuleEntry) -> Key {
    let host = entry.host.as_deref().unwrap_or_default().to_ascii_lowercase();
    let path = entry
        .path
        .clone()
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| "/".into());
    (host, path)
}

fn list(listeners: Listeners) -> &'static str {
    match listeners {
        Listeners::Plain => HTTP_RULES,
        _ => HTTPS_RULES,
    }
}

/// An annotation entry's backend as an Ingress backend: a numeric `servicePort` is a number.
fn ingress_backend(backend: &EntryBackend) -> IngressBackend {
    let port = match &backend.service_port {
        PortValue::Number(number) => ServiceBackendPort {
            number: Some(*number),
            name: None,
        },
        PortValue::Text(text) => match text.trim().parse::<i32>() {
            Ok(number) => ServiceBackendPort {
                number: Some(number),
                name: None,
            },
            Err(_) => ServiceBackendPort {
                number: None,
                name: Some(text.as_str().into()),
            },
        },
    };
    IngressBackend {
        service: Some(IngressServiceBackend {
            name: backend.service_name.as_str().into(),
            port: Some(port),
        }),
        resource: None,
    }
}
