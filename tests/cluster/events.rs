//! Compile diagnostics become Warning Events on their Ingress, from the leader, while the rest
//! of the table serves.

use std::time::Duration;

use http::Method;
use serde_json::{Value, json};

use crate::support::{Cluster, OURS, Recorded, eventually, host, mk_ingress, poll_until, until_served_by};

const WITHIN: Duration = Duration::from_secs(5);

/// The Events POSTed about Ingress `shop/name`, as sent.
fn events_about(requests: &[Recorded], name: &str) -> Vec<Value> {
    let posted = requests
        .iter()
        .filter(|r| r.method == Method::POST && r.path == "/apis/events.k8s.io/v1/namespaces/shop/events");
    posted
        .filter(|r| r.body["regarding"]["name"] == name)
        .map(|r| r.body.clone())
        .collect()
}

#[tokio::test]
async fn a_broken_ingress_gets_one_warning_event_while_other_routes_serve() {
    let cluster = Cluster::start(&["web"]).await;
    let api = &cluster.api;
    api.apply(mk_ingress("shop", "broken", OURS, &host("broken"), "missing"));
    let shunt = cluster.shunt("shunt-0", &[]).await;
    until_served_by(&shunt, &host("web"), "web", WITHIN).await;

    let event = eventually("an Event about shop/broken", WITHIN, async || {
        events_about(&api.requests(), "broken").pop()
    })
    .await;
    let uid = api.get("Ingress", "shop", "broken").expect("stored")["metadata"]["uid"].clone();
    assert_eq!(event["type"], "Warning");
    assert_eq!(event["reason"], "MissingService");
    assert!(
        event["note"]
            .as_str()
            .is_some_and(|note| note.contains("\"shop/missing\"")),
        "{event}"
    );
    assert_eq!(
        event["regarding"],
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "namespace": "shop", "name": "broken", "uid": uid})
    );
    assert_eq!(event["reportingController"], "shunt");
    assert_eq!(event["reportingInstance"], "shunt-0");

    // Later compiles (here: web's endpoints move) do not repeat it.
    let other = crate::support::Backend::start("web-2").await;
    cluster.point("web", &other);
    until_served_by(&shunt, &host("web"), "web-2", WITHIN).await;
    let requests = api.requests();
    assert_eq!(events_about(&requests, "broken").len(), 1);
    let patches = requests
        .iter()
        .filter(|r| r.method == Method::PATCH && r.path.contains("/events/"));
    assert_eq!(patches.count(), 0, "no repeats of the Event either");
}

/// Two paths of one Ingress name two missing Services: two diagnostics, two messages.
#[tokio::test]
async fn two_problems_of_one_ingress_are_both_reported() {
    let cluster = Cluster::start(&["web"]).await;
    let api = &cluster.api;
    let mut broken = mk_ingress("shop", "broken", OURS, &host("broken"), "missing-a");
    let mut second_path = broken["spec"]["rules"][0]["http"]["paths"][0].clone();
    second_path["path"] = json!("/b");
    second_path["backend"]["service"]["name"] = json!("missing-b");
    broken["spec"]["rules"][0]["http"]["paths"]
        .as_array_mut()
        .expect("paths")
        .push(second_path);
    api.apply(broken);
    let _shunt = cluster.shunt("shunt-0", &[]).await;

    let both = poll_until(WITHIN, async || {
        // What reached the API: a POST creates an Event, a PATCH rewrites one.
        let requests = api.requests();
        let written = requests
            .iter()
            .filter(|r| r.ok() && r.path.starts_with("/apis/events.k8s.io/v1/namespaces/shop/events"));
        let notes: Vec<&str> = written.filter_map(|r| r.body["note"].as_str()).collect();
        ["\"shop/missing-a\"", "\"shop/missing-b\""]
            .iter()
            .all(|service| notes.iter().any(|note| note.contains(service)))
            .then_some(())
    })
    .await;
    let writes = api.requests().into_iter().filter(|r| r.path.contains("/events"));
    let writes: Vec<String> = writes
        .map(|r| format!("{} {} -> {}: note {}", r.method, r.path, r.status, r.body["note"]))
        .collect();
    assert!(
        both.is_some(),
        "one of the two messages never reached the API; Event writes:\n{}",
        writes.join("\n")
    );
}
