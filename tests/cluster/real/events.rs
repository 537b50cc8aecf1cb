//! Diagnostics reach the real API server as Events: readable through `events.k8s.io/v1` and core
//! `v1`, named so validation accepts them, one new Event per repeat, at most 20 per compile.

use std::time::Duration;

use serde_json::Value;

use super::{OURS, envtest::Real, eventually, mk_ingress, mk_service, poll_until};

const WITHIN: Duration = Duration::from_secs(15);

/// The `events.k8s.io/v1` Events about Ingress `name`.
async fn events_about(real: &Real, name: &str) -> Vec<Value> {
    let all = real.kube.list("Event", "").await;
    all.into_iter().filter(|e| e["regarding"]["name"] == name).collect()
}

#[tokio::test]
async fn a_broken_ingress_gets_a_warning_event_the_api_server_accepts() {
    let Some(real) = Real::start("events").await else {
        return;
    };
    let ns = &real.ns;
    let ingress = real
        .apply(mk_ingress(ns, "broken", OURS, "broken.example", "missing"))
        .await;
    let mut shunt = real.shunt("shunt-0", &["--retry-period", "500ms"]).await;

    let event = eventually("an Event about broken", WITHIN, async || {
        events_about(&real, "broken").await.pop()
    })
    .await;
    assert_eq!(event["type"], "Warning");
    assert_eq!(event["reason"], "MissingService");
    let note = event["note"].as_str().unwrap_or_default();
    assert!(note.contains(&format!("\"{ns}/missing\"")), "{event}");
    assert_eq!(event["regarding"]["kind"], "Ingress");
    assert_eq!(event["regarding"]["uid"], ingress["metadata"]["uid"]);
    assert_eq!(event["reportingController"], "shunt");
    assert_eq!(event["reportingInstance"], "shunt-0");
    let name = event["metadata"]["name"].as_str().expect("a name");
    assert!(name.starts_with("broken."), "client-go's NAME.HEXTIME: {name}");

    // The same Event through core v1, found with a field selector as `kubectl describe` does.
    let core = real.kube.list("v1.Event", "involvedObject.name=broken").await;
    assert_eq!(core.len(), 1, "{core:?}");
    assert_eq!(core[0]["reason"], "MissingService");
    assert_eq!(core[0]["type"], "Warning");
    assert_eq!(core[0]["involvedObject"]["kind"], "Ingress");
    assert_eq!(core[0]["message"], event["note"]);

    // Another compile (a Service appears) does not repeat it within the window.
    real.apply(mk_service(ns, "other")).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(events_about(&real, "broken").await.len(), 1);

    // A new leader has no memory of what was sent: the repeat is a new Event, never an edit.
    shunt.terminate();
    shunt.wait_exit(WITHIN).await;
    let _next = real.shunt("shunt-1", &["--retry-period", "500ms"]).await;
    let both = eventually("a second Event about broken", WITHIN, async || {
        let events = events_about(&real, "broken").await;
        (events.len() >= 2).then_some(events)
    })
    .await;
    assert_eq!(both.len(), 2, "{both:?}");
    assert_ne!(both[0]["metadata"]["name"], both[1]["metadata"]["name"]);
    let instances: Vec<&Value> = both.iter().map(|e| &e["reportingInstance"]).collect();
    assert!(instances.contains(&&Value::from("shunt-1")), "{instances:?}");
    let core = real
        .kube
        .list("v1.Event", "involvedObject.name=broken,reason=MissingService")
        .await;
    assert_eq!(core.len(), 2, "the count of Events about it went up: {core:?}");
}

#[tokio::test]
async fn a_longest_name_ingress_gets_its_event_too() {
    let Some(real) = Real::start("events-long").await else {
        return;
    };
    // 4 labels, 253 characters: NAME.HEXTIME must be cut to fit.
    let label = "a".repeat(63);
    let name = format!("{label}.{label}.{label}.{}", "b".repeat(61));
    real.apply(mk_ingress(&real.ns, &name, OURS, "long.example", "missing"))
        .await;
    let _shunt = real.shunt("shunt-0", &[]).await;
    let event = eventually("an Event about the long name", WITHIN, async || {
        events_about(&real, &name).await.pop()
    })
    .await;
    assert_eq!(event["reason"], "MissingService");
}

#[tokio::test]
async fn at_most_twenty_events_are_written_per_compile_and_the_rest_follow() {
    let Some(real) = Real::start("events-limit").await else {
        return;
    };
    let ns = &real.ns;
    real.apply(mk_service(ns, "web")).await;
    for i in 0..25 {
        let name = format!("app-{i:02}");
        real.apply(mk_ingress(ns, &name, OURS, &format!("{name}.example"), "web"))
            .await;
    }
    let shunt = real.shunt_without_status("shunt-0").await;
    eventually("shunt-0 to lead", WITHIN, async || {
        (shunt.metric("shunt_leader").await == Some(1.0)).then_some(())
    })
    .await;
    // Let the start-up compiles pass; then one change breaks all 25 Ingresses at once.
    tokio::time::sleep(Duration::from_millis(500)).await;
    real.kube.delete("Service", "web").await;

    // Services without endpoints gave NoEndpoints Events before: count the new reason only.
    let count = async || real.kube.list("v1.Event", "reason=MissingService").await.len();
    eventually("the first round's Events", WITHIN, async || {
        (count().await >= 20).then_some(())
    })
    .await;
    // Nothing else changes, so no compile runs and the limit holds.
    let more = poll_until(Duration::from_secs(2), async || (count().await > 20).then_some(())).await;
    assert!(
        more.is_none(),
        "more than 20 Events from one compile: {}",
        count().await
    );

    // The next compile sends the remaining five.
    real.apply(mk_service(ns, "other")).await;
    eventually("the remaining Events", WITHIN, async || {
        (count().await == 25).then_some(())
    })
    .await;
}

/// Two paths of one Ingress name two missing Services: two diagnostics, two Events.
#[tokio::test]
async fn two_problems_of_one_ingress_are_both_reported() {
    let Some(real) = Real::start("events-two").await else {
        return;
    };
    let ns = &real.ns;
    let mut broken = mk_ingress(ns, "broken", OURS, "broken.example", "missing-a");
    let mut second_path = broken["spec"]["rules"][0]["http"]["paths"][0].clone();
    second_path["path"] = serde_json::json!("/b");
    second_path["backend"]["service"]["name"] = serde_json::json!("missing-b");
    broken["spec"]["rules"][0]["http"]["paths"]
        .as_array_mut()
        .expect("paths")
        .push(second_path);
    real.apply(broken).await;
    let _shunt = real.shunt("shunt-0", &[]).await;

    eventually("both Events", WITHIN, async || {
        let events = events_about(&real, "broken").await;
        let notes: Vec<&str> = events.iter().filter_map(|e| e["note"].as_str()).collect();
        ["missing-a", "missing-b"]
            .iter()
            .all(|service| notes.iter().any(|note| note.contains(&format!("\"{ns}/{service}\""))))
            .then_some(())
    })
    .await;
}
