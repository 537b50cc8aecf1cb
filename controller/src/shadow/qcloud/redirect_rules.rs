//! The redirects the CLB refuses to configure, as TKE's redirect guide lists them: a rule
//! redirected to itself, one source redirected to two targets, and a target that is itself
//! redirected. TKE cannot set such an Ingress's redirects up, so what the CLB answers there is
//! not known: the Ingress's hosts are refused.

use std::collections::BTreeMap;

use shunt_spec::Listeners;

use super::rules::{Action, ClbRule};

/// `(port, host, path)`: one end of a redirect.
type End = (u16, String, String);

/// Why the CLB would refuse the `rewrite` redirects among `rules`, one reason per conflict.
pub fn conflicts(rules: &[ClbRule]) -> Vec<String> {
    let mut targets: BTreeMap<End, End> = BTreeMap::new();
    let mut reasons = Vec::new();
    let redirects = rules.iter().filter_map(|rule| match &rule.action {
        Action::Redirect(redirect) if redirect.port.is_some() => Some((rule, redirect)),
        _ => None,
    });
    for (rule, redirect) in redirects {
        let port = if rule.listeners == Listeners::Plain { 80 } else { 443 };
        let path = rule
            .path
            .clone()
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| "/".into());
        let from = (port, rule.host.clone(), path);
        let to = (
            redirect.port.unwrap_or(port),
            redirect.host.clone().unwrap_or_else(|| from.1.clone()),
            redirect.path.clone().unwrap_or_else(|| from.2.clone()),
        );
        if from == to {
            reasons.push(format!("TkeRejects: redirect of {} to itself", show(&from)));
        } else if targets.get(&from).is_some_and(|held| *held != to) {
            reasons.push(format!("TkeRejects: {} redirected to two targets", show(&from)));
        } else {
            targets.insert(from, to);
        }
    }
    for (from, to) in &targets {
        if targets.contains_key(to) {
            let (from, to) = (show(from), show(to));
            reasons.push(format!(
                "TkeRejects: redirect of {from} to {to}, which is redirected itself"
            ));
        }
    }
    reasons
}

fn show((port, host, path): &End) -> String {
    format!("{host}:{port}{path}")
}
