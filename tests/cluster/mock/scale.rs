//! `shunt run` at scale. A first list of several pages (kube-runtime asks for 500 objects a page)
//! serves every page. Resident memory at 10,000 Ingresses, 10,000 Services and 50,000 endpoints,
//! each object carrying what a real API server and kubectl add (`managedFields`, the last-applied
//! copy, status, pod references): a measurement, not a check, ignored by default.
//!
//! ```text
//! cargo test -p shunt-controller --test cluster scale:: -- --ignored --nocapture
//! SHUNT_BIN=target/release/shunt cargo test ... (the same against a release build)
//! ```

use std::time::Duration;

use serde_json::{Value, json};

use super::*;

const INGRESSES: usize = 10_000;
const ENDPOINTS_PER_SERVICE: usize = 5;
const EDITS: usize = 12;
/// The first list and compile of 70,000 objects by a debug build: generous, still bounded.
const READY_WITHIN: Duration = Duration::from_secs(300);

/// What the API server's field manager records for one object (one manager, as after an apply).
fn mk_managed_fields(object: &Value) -> Value {
    json!([{
        "manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": object["apiVersion"],
        "time": "2026-11-23T10:00:00Z", "fieldsType": "FieldsV1",
        "fieldsV1": {"f:metadata": {"f:annotations": {".": {}, "f:kubectl.kubernetes.io/last-applied-configuration": {}}},
                     "f:spec": object["spec"].clone()},
    }])
}

/// `object` as `kubectl apply` leaves it: the last-applied copy and managedFields.
fn applied(mut object: Value) -> Value {
    let copy = object.to_string();
    object["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] = Value::String(copy);
    object["metadata"]["managedFields"] = mk_managed_fields(&object);
    object["metadata"]["uid"] = json!(format!("uid-{}", object["metadata"]["name"]));
    object
}

fn mk_app(index: usize) -> [Value; 3] {
    let (namespace, name) = (format!("team-{}", index % 100), format!("app-{index}"));
    let mut ingress = applied(mk_ingress(
        &namespace,
        &name,
        OURS,
        &format!("{name}.example.com"),
        &name,
    ));
    ingress["status"] = json!({"loadBalancer": {"ingress": [{"ip": STATUS_ADDRESS}]}});
    let mut service = applied(mk_service(&namespace, &name));
    service["spec"]["selector"] = json!({"app": name});
    let mut slice = applied(mk_slice(&namespace, &format!("{name}-abcde"), &name, 8080));
    slice["endpoints"] = (1..=ENDPOINTS_PER_SERVICE)
        .map(|k| {
            json!({
                "addresses": [format!("10.{}.{}.{k}", index / 250 % 250, index % 250)],
                "conditions": {"ready": true, "serving": true, "terminating": false},
                "nodeName": format!("node-{}", index % 50), "zone": "zone-a",
                "targetRef": {"kind": "Pod", "namespace": namespace, "name": format!("{name}-pod-{k}"), "uid": format!("pod-{index}-{k}")},
            })
        })
        .collect();
    [ingress, service, slice]
}

#[tokio::test]
async fn a_first_list_of_several_pages_serves_objects_from_its_last_page() {
    let cluster = Cluster::start(&["web"]).await;
    // Namespace `a-filler` sorts before `shop`: `shop/web`'s Service and slice come on the third page.
    for index in 0..1_000 {
        let name = format!("filler-{index:04}");
        cluster.api.apply(mk_service("a-filler", &name));
        cluster
            .api
            .apply(mk_slice("a-filler", &format!("{name}-1"), &name, 8080));
    }
    let shunt = cluster.shunt("shunt-0", &[]).await;
    until_served_by(&shunt, &host("web"), "web", Duration::from_secs(10)).await;
    let requests = cluster.api.requests();
    let pages = |plural: &str| requests.iter().filter(|r| r.is_list_of(plural) && r.ok()).count();
    assert_eq!(
        (pages("services"), pages("endpointslices")),
        (3, 3),
        "1,001 objects at 500 a page"
    );
}

#[tokio::test]
#[ignore = "a measurement of 70,000 objects; run it by name with --ignored --nocapture"]
async fn shunt_run_memory_with_ten_thousand_ingresses() {
    let api = ApiServer::start();
    api.apply(mk_ingress_class(OURS, "shunt.dev/ingress-controller"));
    let mut slices = Vec::new();
    for index in 0..INGRESSES {
        let [ingress, service, slice] = mk_app(index);
        api.apply(ingress);
        api.apply(service);
        slices.push(api.apply(slice));
    }
    let dir = tempfile::tempdir().expect("a scratch directory");
    let shunt = Shunt::spawn(&api, dir.path(), "scale", &[]).await;
    let pid = shunt.pid();
    eventually("the first table", READY_WITHIN, async || {
        (publishes(&shunt) >= 1).then_some(())
    })
    .await;
    println!(
        "shunt run, {INGRESSES} Ingresses / Services, {} endpoints",
        INGRESSES * ENDPOINTS_PER_SERVICE
    );
    println!("after the first publish: {}", memory(pid));
    for edit in 0..EDITS {
        let mut slice = slices[edit * 97].clone();
        slice["endpoints"][0]["addresses"][0] = json!(format!("10.251.0.{edit}"));
        api.apply(slice);
        let want = edit + 2;
        eventually("the edit's publish", READY_WITHIN, async || {
            (publishes(&shunt) >= want).then_some(())
        })
        .await;
    }
    println!("after {EDITS} edits: {}", memory(pid));
}
