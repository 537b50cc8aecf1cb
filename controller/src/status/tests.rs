//! `plan` case by case, then `StatusWriter::sync` against a mocked API server: which Ingresses
//! get a status write, with exactly what body.

use std::sync::Arc;

use http::{Method, StatusCode};
use k8s_openapi::api::networking::v1::{self as api, IngressLoadBalancerStatus, IngressStatus};
use serde_json::json;

use super::*;
use crate::fixtures::{mk_ingress, mk_prefix, mk_rule};

const OURS: &str = "203.0.113.7";
const PUBLISH_SERVICE_PATH: &str = "/api/v1/namespaces/shunt-system/services/shunt";
/// What a cloud load balancer wrote into the status of its own Ingresses.
const CLB: &str = "198.51.100.1";

fn mk_web(name: &str, status: &[&str]) -> Ingress {
    let mut ingress = mk_ingress(
        "shop",
        name,
        vec![mk_rule("shop.example", vec![mk_prefix("/", "web", 80)])],
    );
    ingress.metadata.resource_version = Some("42".to_string());
    if !status.is_empty() {
        let entries = status.iter().map(|address| entry(address)).collect();
        ingress.status = Some(IngressStatus {
            load_balancer: Some(IngressLoadBalancerStatus { ingress: Some(entries) }),
        });
    }
    ingress.into()
}

fn mk_served(name: &str, shadow: bool) -> ServedIngress {
    ServedIngress {
        namespace: "shop".to_string(),
        name: name.to_string(),
        shadow,
    }
}

fn fixed() -> PublishAddress {
    PublishAddress::Fixed(vec![OURS.to_string()])
}

/// One sync by a writer that drops its client when done.
async fn sync(
    client: Client,
    address: PublishAddress,
    ingresses: Vec<Ingress>,
    served: &[ServedIngress],
) -> SyncReport {
    StatusWriter::new(client, address)
        .sync(ingresses.into_iter().map(Arc::new), served)
        .await
}

fn mk_report(written: usize, cleared: usize, failed: usize) -> SyncReport {
    SyncReport {
        written,
        cleared,
        failed,
    }
}

fn publish_service() -> PublishAddress {
    PublishAddress::ServiceIp {
        namespace: "shunt-system".to_string(),
        name: "shunt".to_string(),
    }
}

/// One sync of Ingress `shop/web`, ours, with these addresses in its status.
async fn sync_web(client: Client, address: PublishAddress, status: &[&str]) -> SyncReport {
    sync(client, address, vec![mk_web("web", status)], &[mk_served("web", false)]).await
}

fn status_path(name: &str) -> String {
    format!("/apis/networking.k8s.io/v1/namespaces/shop/ingresses/{name}/status")
}

fn ip(address: &str) -> IngressLoadBalancerIngress {
    IngressLoadBalancerIngress {
        ip: Some(address.to_string()),
        ..Default::default()
    }
}

// === plan ===

#[test]
fn an_owned_ingress_without_our_address_gets_it() {
    assert_eq!(plan(&mk_web("web", &[]), true, &[ip(OURS)]), Some(vec![ip(OURS)]));
    assert_eq!(
        plan(&mk_web("web", &[CLB]), true, &[ip(OURS)]),
        Some(vec![ip(OURS)]),
        "an owned Ingress's status is ours"
    );
}

#[test]
fn an_owned_ingress_that_already_has_our_address_is_not_written() {
    assert_eq!(plan(&mk_web("web", &[OURS]), true, &[ip(OURS)]), None);
}

#[test]
fn an_owned_ingress_whose_addresses_differ_only_in_order_is_rewritten_in_ours() {
    let desired = [ip(OURS), ip("203.0.113.8")];
    assert_eq!(
        plan(&mk_web("web", &["203.0.113.8", OURS]), true, &desired),
        Some(desired.to_vec())
    );
}

#[test]
fn an_ingress_we_no_longer_own_loses_exactly_our_address() {
    assert_eq!(plan(&mk_web("web", &[OURS]), false, &[ip(OURS)]), Some(Vec::new()));
}

#[test]
fn an_ingress_we_do_not_own_keeps_another_controllers_address() {
    assert_eq!(plan(&mk_web("web", &[CLB]), false, &[ip(OURS)]), None);
    assert_eq!(
        plan(&mk_web("web", &[CLB, OURS]), false, &[ip(OURS)]),
        None,
        "a list we did not write alone is not ours"
    );
    assert_eq!(plan(&mk_web("web", &[]), false, &[ip(OURS)]), None);
}

#[test]
fn hostnames_and_addresses_become_the_matching_status_fields() {
    assert_eq!(entry(OURS), ip(OURS));
    assert_eq!(entry("2001:db8::7"), ip("2001:db8::7"));
    let hostname = IngressLoadBalancerIngress {
        hostname: Some("lb.example.com".to_string()),
        ..Default::default()
    };
    assert_eq!(entry("lb.example.com"), hostname);
}

// === sync ===

#[tokio::test]
async fn sync_writes_our_address_with_the_version_it_read() {
    let (client, mut api) = mk_client();
    let web = mk_web("web", &[]);
    let mut expected = web.clone();
    expected.status = Some(IngressStatus {
        load_balancer: Some(IngressLoadBalancerStatus {
            ingress: Some(vec![ip(OURS)]),
        }),
    });
    let scenario = async move {
        let body = api.echo(Method::PUT, &status_path("web"), StatusCode::OK).await;
        assert_eq!(
            body,
            serde_json::to_value(api::Ingress::from(expected.clone())).expect("serializable")
        );
        assert_eq!(body["metadata"]["resourceVersion"], "42");
        assert_eq!(body["status"], json!({"loadBalancer": {"ingress": [{"ip": OURS}]}}));
        api
    };
    let report = verify(scenario, sync(client, fixed(), vec![web], &[mk_served("web", false)])).await;
    assert_eq!(report, mk_report(1, 0, 0));
}

#[tokio::test]
async fn a_written_status_is_not_written_again_until_the_store_holds_a_newer_version() {
    let (client, mut api) = mk_client();
    let scenario = async move {
        api.echo(Method::PUT, &status_path("web"), StatusCode::OK).await;
        // Only for the newer version, which someone else emptied.
        let body = api.echo(Method::PUT, &status_path("web"), StatusCode::OK).await;
        assert_eq!(body["metadata"]["resourceVersion"], "43");
        api
    };
    let code = async move {
        let mut writer = StatusWriter::new(client, fixed());
        let served = [mk_served("web", false)];
        let stale = Arc::new(mk_web("web", &[]));
        let first = writer.sync([stale.clone()].into_iter(), &served).await;
        // The watch has not delivered our write yet: the store still has version 42.
        let second = writer.sync([stale].into_iter(), &served).await;
        let mut emptied = mk_web("web", &[]);
        emptied.metadata.resource_version = Some("43".to_string());
        let third = writer.sync([Arc::new(emptied)].into_iter(), &served).await;
        [first, second, third]
    };
    let reports = verify(scenario, code).await;
    assert_eq!(reports, [mk_report(1, 0, 0), mk_report(0, 0, 0), mk_report(1, 0, 0)]);
}

/// What was written is remembered per Ingress, per version read and per entries written: a
/// write from the same stale version is made again for another Ingress or other entries.
#[tokio::test]
async fn a_write_in_flight_holds_back_only_the_same_entries_for_the_same_ingress() {
    let (client, mut api) = mk_client();
    let scenario = async move {
        api.echo(Method::PUT, &status_path("web"), StatusCode::OK).await;
        api.echo(Method::PUT, &status_path("shop"), StatusCode::OK).await;
        // The publish address changed while the store still holds version 42.
        let body = api.echo(Method::PUT, &status_path("web"), StatusCode::OK).await;
        assert_eq!(
            body["status"],
            json!({"loadBalancer": {"ingress": [{"hostname": "shunt.example"}]}})
        );
        api
    };
    let code = async move {
        let mut writer = StatusWriter::new(client, fixed());
        let (web, shop) = (Arc::new(mk_web("web", &[])), Arc::new(mk_web("shop", &[])));
        let served = [mk_served("web", false), mk_served("shop", false)];
        let first = writer.sync([web.clone()].into_iter(), &served).await;
        let second = writer.sync([web.clone(), shop].into_iter(), &served).await;
        writer.address = PublishAddress::Fixed(vec!["shunt.example".to_string()]);
        let third = writer.sync([web].into_iter(), &served).await;
        [first, second, third]
    };
    let reports = verify(scenario, code).await;
    assert_eq!(reports, [mk_report(1, 0, 0), mk_report(1, 0, 0), mk_report(1, 0, 0)]);
}

/// Writes do not wait for each other: all three are sent before the first is answered.
#[tokio::test]
async fn status_writes_are_in_flight_together() {
    let (client, mut api) = mk_client();
    let names = ["a", "b", "c"];
    let scenario = async move {
        let mut unanswered = Vec::new();
        for name in names {
            unanswered.push(api.expect(Method::PUT, &status_path(name)).await);
        }
        for (body, send) in unanswered {
            reply(send, StatusCode::OK, body);
        }
        api
    };
    let ingresses = names.iter().map(|name| mk_web(name, &[])).collect();
    let served: Vec<_> = names.iter().map(|name| mk_served(name, false)).collect();
    let report = verify(scenario, sync(client, fixed(), ingresses, &served)).await;
    assert_eq!(report, mk_report(3, 0, 0));
}

#[tokio::test]
async fn sync_writes_only_our_class_and_clears_only_our_own_address() {
    let (client, mut api) = mk_client();
    let ingresses = vec![
        mk_web("ours", &[]),
        mk_web("up-to-date", &[OURS]),
        mk_web("shadowed", &[CLB]),
        mk_web("shadowed-new", &[]),
        mk_web("foreign", &[CLB]),
        mk_web("left-our-class", &[OURS]),
    ];
    let served = [
        mk_served("ours", false),
        mk_served("up-to-date", false),
        mk_served("shadowed", true),
        mk_served("shadowed-new", true),
    ];
    let scenario = async move {
        let body = api.echo(Method::PUT, &status_path("ours"), StatusCode::OK).await;
        assert_eq!(body["status"], json!({"loadBalancer": {"ingress": [{"ip": OURS}]}}));
        let body = api
            .echo(Method::PUT, &status_path("left-our-class"), StatusCode::OK)
            .await;
        assert_eq!(
            body["status"],
            json!({"loadBalancer": {}}),
            "the address we wrote is removed"
        );
        api
    };
    let report = verify(scenario, sync(client, fixed(), ingresses, &served)).await;
    assert_eq!(report, mk_report(1, 1, 0));
}

#[tokio::test]
async fn sync_publishes_the_cluster_ip_of_the_publish_service() {
    let (client, mut api) = mk_client();
    let scenario = async move {
        let service = json!({
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "shunt", "namespace": "shunt-system", "resourceVersion": "3"},
            "spec": {"clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10", "fd00::10"], "ports": [{"port": 80}]},
        });
        api.answer(Method::GET, PUBLISH_SERVICE_PATH, StatusCode::OK, service)
            .await;
        let body = api.echo(Method::PUT, &status_path("web"), StatusCode::OK).await;
        assert_eq!(
            body["status"],
            json!({"loadBalancer": {"ingress": [{"ip": "10.96.0.10"}, {"ip": "fd00::10"}]}})
        );
        api
    };
    let address = publish_service();
    let report = verify(scenario, sync_web(client, address, &[])).await;
    assert_eq!(report, mk_report(1, 0, 0));
}

#[tokio::test]
async fn sync_writes_the_service_hostname_without_asking_the_api() {
    let (client, mut api) = mk_client();
    let scenario = async move {
        let body = api.echo(Method::PUT, &status_path("web"), StatusCode::OK).await;
        let hostname = "shunt.shunt-system.svc.corp.example";
        assert_eq!(
            body["status"],
            json!({"loadBalancer": {"ingress": [{"hostname": hostname}]}})
        );
        api
    };
    let address = PublishAddress::ServiceHostname {
        hostname: "shunt.shunt-system.svc.corp.example".to_string(),
    };
    let report = verify(scenario, sync_web(client, address, &[])).await;
    assert_eq!(report.written, 1);
}

#[tokio::test]
async fn sync_leaves_status_alone_when_the_publish_service_is_missing() {
    let (client, mut api) = mk_client();
    let scenario = async move {
        api.answer(
            Method::GET,
            PUBLISH_SERVICE_PATH,
            StatusCode::NOT_FOUND,
            mk_status(404, "NotFound"),
        )
        .await;
        api
    };
    let address = publish_service();
    let report = verify(scenario, sync_web(client, address, &[OURS])).await;
    assert_eq!(report, mk_report(0, 0, 1));
}

#[tokio::test]
async fn a_conflicting_write_is_counted_and_the_next_ingress_is_still_written() {
    let (client, mut api) = mk_client();
    let scenario = async move {
        api.answer(
            Method::PUT,
            &status_path("changed-meanwhile"),
            StatusCode::CONFLICT,
            mk_status(409, "Conflict"),
        )
        .await;
        api.echo(Method::PUT, &status_path("web"), StatusCode::OK).await;
        api
    };
    let ingresses = vec![mk_web("changed-meanwhile", &[]), mk_web("web", &[])];
    let served = [mk_served("changed-meanwhile", false), mk_served("web", false)];
    let report = verify(scenario, sync(client, fixed(), ingresses, &served)).await;
    assert_eq!(report, mk_report(1, 0, 1));
}

// === mocked API server ===

crate::mock_api_server!();
