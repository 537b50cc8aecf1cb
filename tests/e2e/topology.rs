//! Topology-aware choice from a manifest with EndpointSlice hints (`shunt serve --zone`): the
//! pods hinted for shunt's zone get every request while they are ready, and the others answer
//! when none of them is.

use serde_json::{Value, json};

use crate::support::*;

const HOST: &str = "near.example.com";

/// A slice of Service `web/app` with one endpoint `127.0.0.1:<port>` in `zone`, hinted for that
/// zone, ready or not.
fn mk_zoned_slice(port: u16, zone: &str, ready: bool) -> Value {
    json!({
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {
            "name": format!("app-{port}"),
            "namespace": "web",
            "labels": {"kubernetes.io/service-name": "app"},
        },
        "addressType": "IPv4",
        "ports": [{"name": "http", "port": port, "protocol": "TCP"}],
        "endpoints": [{
            "addresses": ["127.0.0.1"],
            "conditions": {"ready": ready, "serving": ready, "terminating": false},
            "nodeName": format!("node-{port}"),
            "zone": zone,
            "hints": {"forZones": [{"name": zone}]},
        }],
    })
}

/// Pods `near-1`, `near-2` in zone `a` (ready as `near_ready`) and `far` in zone `b`; shunt in zone `a`.
async fn serve_zones(near: &[&Backend], far: &Backend, near_ready: bool) -> (Manifests, Shunt) {
    let ingress = mk_ingress("web", "app").rule(HOST, [mk_path("/", "Prefix", "app", 80)]);
    let service = mk_service("web", "app").port(Some("http"), 80, None);
    let mut slices: Vec<Value> = near.iter().map(|b| mk_zoned_slice(b.port(), "a", near_ready)).collect();
    slices.push(mk_zoned_slice(far.port(), "b", true));
    serve(
        &[&ingress, &service, &slices],
        &["--zone", "a", "--node-name", "elsewhere"],
    )
    .await
}

#[tokio::test]
async fn pods_hinted_for_our_zone_get_every_request_while_ready() {
    let (near_1, near_2) = (Backend::start("near-1").await, Backend::start("near-2").await);
    let far = Backend::start("far").await;
    let (_manifests, shunt) = serve_zones(&[&near_1, &near_2], &far, true).await;
    const REQUESTS: usize = 60;
    for _ in 0..REQUESTS {
        let backend = shunt.get(HOST, "/").await.backend();
        assert!(backend.starts_with("near-"), "{backend}");
    }
    assert_eq!(far.hits(), 0);
    assert!(near_1.hits() > 0 && near_2.hits() > 0, "both near pods share the load");
    let metrics = shunt.metrics().await;
    let same_zone = sample(
        &metrics,
        "shunt_upstream_requests_by_locality_total",
        &[("locality", "same_zone")],
    );
    assert_eq!(same_zone, Some(REQUESTS as f64), "{metrics}");
}

#[tokio::test]
async fn with_no_ready_pod_in_our_zone_the_others_answer() {
    let near = Backend::start("near-1").await;
    let far = Backend::start("far").await;
    let (_manifests, shunt) = serve_zones(&[&near], &far, false).await;
    for _ in 0..10 {
        assert_eq!(shunt.get(HOST, "/").await.backend(), "far");
    }
}
