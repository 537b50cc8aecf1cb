//! Warning Events on the ConfigMaps managed DNS edits (or would), for what an operator must act
//! on: a CoreDNS too old for the rules, a Corefile without `reload`, node-local-dns left alone.

use k8s_openapi::{
    api::{core::v1::ObjectReference, events::v1::Event},
    apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta},
    jiff::Timestamp,
};
use kube::{Api, Client, api::PostParams};
use tracing::warn;

/// One Warning Event on ConfigMap `namespace/configmap`; a failure to record it is logged, the
/// caller's own log line remains either way.
pub async fn warn_on_configmap(client: &Client, (namespace, configmap): (&str, &str), reason: &str, note: String) {
    let now = Timestamp::now();
    let event = Event {
        metadata: ObjectMeta {
            // A ConfigMap name (at most 253) plus the hex suffix can exceed an Event name's
            // 253 only for absurd names; the create then fails and the log line remains.
            name: Some(format!("{configmap}.{:x}", now.as_nanosecond())),
            namespace: Some(namespace.to_string()),
            ..Default::default()
        },
        event_time: Some(MicroTime(now)),
        type_: Some("Warning".into()),
        reason: Some(reason.into()),
        note: Some(note),
        action: Some("ManageCoreDNS".into()),
        regarding: Some(ObjectReference {
            api_version: Some("v1".into()),
            kind: Some("ConfigMap".into()),
            namespace: Some(namespace.to_string()),
            name: Some(configmap.to_string()),
            ..Default::default()
        }),
        reporting_controller: Some("shunt".into()),
        reporting_instance: Some("shunt".into()),
        ..Default::default()
    };
    let created = Api::<Event>::namespaced(client.clone(), namespace)
        .create(&PostParams::default(), &event)
        .await;
    if let Err(error) = created {
        warn!(%error, reason, "Event not recorded");
    }
}
