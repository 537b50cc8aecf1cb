//! Diagnostics from compile become Kubernetes Events on their Ingress: deduplicated (each one
//! once per `repeat_after`), rate-limited (at most `per_round` per compile), leader only.

use crate::objects::Ingress;
use std::{
    collections::HashMap,
    time::{Duration, Instant},
};

use k8s_openapi::{
    api::{core::v1::ObjectReference, events::v1::Event, networking::v1 as api},
    apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta},
    jiff::Timestamp,
};
use kube::{Api, Client, Resource, api::PostParams};
use tracing::warn;

use crate::compile::Diagnostic;

/// Events are created, never patched: kube's `Recorder` folds a repeat into a series keyed
/// without the message, which would publish a changed message under the old note.
pub struct EventReporter {
    client: Client,
    instance: String,
    sent: HashMap<(String, String, &'static str, String), Instant>,
    repeat_after: Duration,
    per_round: usize,
    /// The time part of the last Event name, in nanoseconds: each new name's is greater, so two
    /// Events in one round never share a name.
    last_stamp: u64,
}

impl EventReporter {
    pub fn new(client: Client, instance: Option<String>) -> Self {
        EventReporter {
            client,
            instance: instance.unwrap_or_else(|| "shunt".to_string()),
            sent: HashMap::new(),
            repeat_after: Duration::from_secs(600),
            per_round: 20,
            last_stamp: 0,
        }
    }

    /// Publishes the diagnostics not sent recently; `uid_of` finds the Ingress's uid.
    pub async fn report(&mut self, diagnostics: &[Diagnostic], uid_of: impl Fn(&str, &str) -> Option<String>) {
        let now = Instant::now();
        self.sent.retain(|_, at| now.duration_since(*at) < self.repeat_after);
        let mut budget = self.per_round;
        for diagnostic in diagnostics {
            let key = (
                diagnostic.namespace.clone(),
                diagnostic.name.clone(),
                diagnostic.reason.as_str(),
                diagnostic.message.clone(),
            );
            if self.sent.contains_key(&key) {
                continue;
            }
            if budget == 0 {
                break;
            }
            budget -= 1;
            let reference = ObjectReference {
                api_version: Some(api::Ingress::api_version(&()).into_owned()),
                kind: Some(api::Ingress::kind(&()).into_owned()),
                namespace: Some(diagnostic.namespace.clone()),
                name: Some(diagnostic.name.clone()),
                uid: uid_of(&diagnostic.namespace, &diagnostic.name),
                ..Default::default()
            };
            let event = self.event(diagnostic, reference);
            let api: Api<Event> = Api::namespaced(self.client.clone(), &diagnostic.namespace);
            match api.create(&PostParams::default(), &event).await {
                Ok(_) => {
                    self.sent.insert(key, now);
                }
                Err(error) => {
                    warn!(%error, ingress = %format!("{}/{}", diagnostic.namespace, diagnostic.name), "Event not recorded")
                }
            }
        }
    }
}

impl EventReporter {
    fn event(&mut self, diagnostic: &Diagnostic, regarding: ObjectReference) -> Event {
        let now = Timestamp::now();
        let nanos = u64::try_from(now.as_nanosecond()).unwrap_or(0);
        self.last_stamp = nanos.max(self.last_stamp + 1);
        Event {
            metadata: ObjectMeta {
                name: Some(event_name(&diagnostic.name, self.last_stamp)),
                namespace: Some(diagnostic.namespace.clone()),
                ..Default::default()
            },
            event_time: Some(MicroTime(now)),
            type_: Some("Warning".into()),
            reason: Some(diagnostic.reason.as_str().to_string()),
            note: Some(truncate(&diagnostic.message, 1000)),
            action: Some("Route".into()),
            regarding: Some(regarding),
            reporting_controller: Some("shunt".into()),
            reporting_instance: Some(self.instance.clone()),
            ..Default::default()
        }
    }
}

/// The uid of a stored Ingress, for event references.
pub fn uid_in<'a>(ingresses: impl Iterator<Item = &'a Ingress>, namespace: &str, name: &str) -> Option<String> {
    ingresses
        .filter(|i| i.metadata.namespace.as_deref() == Some(namespace) && i.metadata.name.as_deref() == Some(name))
        .find_map(|i| i.metadata.uid.clone())
}

/// Longest name the API server accepts for an Event (a DNS subdomain).
const MAX_NAME: usize = 253;

/// `INGRESS.HEXTIME`, as client-go's recorders name Events: unique per write, and a valid DNS
/// subdomain for any Ingress name (itself one), cut so the whole stays within [`MAX_NAME`]. A
/// `generateName` of `INGRESS.` is refused: the prefix itself must be a valid name.
fn event_name(ingress: &str, stamp: u64) -> String {
    let suffix = format!("{stamp:x}");
    let room = MAX_NAME - 1 - suffix.len();
    let cut: String = ingress.chars().take(room).collect();
    // A cut may end a label early, on `-` or `.`, which no label may end with.
    let cut = cut.trim_end_matches(['-', '.']);
    if cut.is_empty() {
        return format!("shunt.{suffix}");
    }
    format!("{cut}.{suffix}")
}

fn truncate(message: &str, max: usize) -> String {
    if message.len() <= max {
        return message.to_string();
    }
    let mut end = max;
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &message[..end])
}
#[cfg(test)]
mod tests;
