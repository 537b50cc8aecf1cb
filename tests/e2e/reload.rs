//! Live reload: manifest edits change routing within a bounded time without failing requests
//! in flight, and a file that does not parse is reported while its last good objects keep serving.

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use http::StatusCode;

use crate::support::*;

const HOST: &str = "live.example.com";
/// An edit must be live within this (the poll interval is 250 ms).
const RELOAD_WITHIN: Duration = Duration::from_secs(5);

fn mk_live_ingress(service: &str) -> Ingress {
    mk_ingress("live", "live").rule(HOST, [mk_path("/", "Prefix", service, 80)])
}

/// Backends `a` and `b` behind their Services in `services.yaml`, `ingress.yaml` routing to `a`.
async fn serve_a_then_b() -> (Backend, Backend, Manifests, Shunt) {
    let (a, b) = (Backend::start("a").await, Backend::start("b").await);
    let manifests = Manifests::new();
    let services = vec![
        mk_backend_service("live", "a", None, &[&a]),
        mk_backend_service("live", "b", None, &[&b]),
    ];
    manifests.write("services.yaml", &[&services]);
    manifests.write("ingress.yaml", &[&mk_live_ingress("a")]);
    let shunt = Shunt::start(manifests.path(), &[]).await;
    assert_eq!(shunt.get(HOST, "/").await.backend(), "a");
    (a, b, manifests, shunt)
}

async fn wait_for_backend(shunt: &Shunt, backend: &str) {
    eventually(&format!("{HOST} to route to {backend}"), RELOAD_WITHIN, async || {
        shunt
            .try_send(get(HOST, "/"))
            .await
            .ok()
            .filter(|reply| reply.status == StatusCode::OK && reply.backend() == backend)
    })
    .await;
}

#[tokio::test]
async fn editing_a_manifest_swaps_a_backend_under_load_without_failing_a_request() {
    let (_a, _b, manifests, shunt) = serve_a_then_b().await;
    let stop = Arc::new(AtomicBool::new(false));
    // Four clients, each bounded in count; `stop` ends them after the swap plus a little.
    let clients: Vec<_> = (0..4)
        .map(|_| {
            let (addr, stop) = (shunt.http, stop.clone());
            tokio::spawn(async move {
                let mut seen = Vec::new();
                while !stop.load(Ordering::Relaxed) && seen.len() < 5_000 {
                    let outcome = match async { collect(send_h1(addr, get(HOST, "/")).await?).await }.await {
                        Ok(reply) if reply.status == StatusCode::OK => reply.backend(),
                        Ok(reply) => format!("{} {}", reply.status, reply.text()),
                        Err(error) => format!("error: {error}"),
                    };
                    seen.push(outcome);
                }
                seen
            })
        })
        .collect();

    tokio::time::sleep(Duration::from_millis(500)).await;
    manifests.write("ingress.yaml", &[&mk_live_ingress("b")]);
    wait_for_backend(&shunt, "b").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    stop.store(true, Ordering::Relaxed);

    for client in clients {
        let seen = client.await.expect("a load client");
        assert!(!seen.is_empty(), "each client made requests");
        let failures: Vec<_> = seen
            .iter()
            .filter(|outcome| *outcome != "a" && *outcome != "b")
            .collect();
        assert!(
            failures.is_empty(),
            "{} of {} requests failed, e.g. {:?}",
            failures.len(),
            seen.len(),
            failures.first()
        );
        let first_b = seen
            .iter()
            .position(|outcome| outcome == "b")
            .expect("every client saw the new backend");
        assert!(
            seen[first_b..].iter().all(|outcome| outcome == "b"),
            "no client went back to the old table"
        );
    }
}

#[tokio::test]
async fn a_new_manifest_file_adds_routes_and_deleting_it_removes_them() {
    let (_a, _b, manifests, shunt) = serve_a_then_b().await;
    let extra = mk_ingress("live", "extra").rule("extra.example.com", [mk_path("/", "Prefix", "b", 80)]);
    manifests.write("extra.yaml", &[&extra]);
    eventually("extra.example.com to route to b", RELOAD_WITHIN, async || {
        (shunt.get("extra.example.com", "/").await.status == StatusCode::OK).then_some(())
    })
    .await;
    assert_eq!(shunt.get("extra.example.com", "/").await.backend(), "b");

    std::fs::remove_file(manifests.path().join("extra.yaml")).expect("removing a manifest");
    eventually("extra.example.com to be gone", RELOAD_WITHIN, async || {
        (shunt.get("extra.example.com", "/").await.status == StatusCode::NOT_FOUND).then_some(())
    })
    .await;
    assert_eq!(shunt.get(HOST, "/").await.backend(), "a", "other files keep serving");
}

#[tokio::test]
async fn a_malformed_manifest_is_reported_and_its_last_good_objects_keep_serving() {
    let (_a, _b, manifests, shunt) = serve_a_then_b().await;
    // Document 0 stays fine; document 1, the Ingress, breaks in two ways before it is fixed.
    let class = to_yaml(&mk_ingress_class("shunt", CONTROLLER).documents());
    let rejections = async |count: usize| {
        let what = format!("{count} warnings naming ingress.yaml and document 1");
        eventually(&what, RELOAD_WITHIN, async || {
            let warnings: Vec<_> = shunt
                .json_logs()
                .into_iter()
                .filter(|line| {
                    line["level"] == "WARN" && line["path"].as_str().is_some_and(|p| p.ends_with("ingress.yaml"))
                })
                .collect();
            (warnings.len() >= count).then_some(warnings)
        })
        .await
    };

    let bad_yaml = "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: live, namespace: live\nspec: [\n";
    manifests.write_text("ingress.yaml", &format!("{class}---\n{bad_yaml}"));
    let warnings = rejections(1).await;
    assert!(
        warnings[0].to_string().contains("document 1"),
        "the warning names the document: {}",
        warnings[0]
    );
    assert_eq!(
        shunt.get(HOST, "/").await.backend(),
        "a",
        "the last good Ingress keeps serving"
    );

    let mut wrong_type = mk_live_ingress("b").documents().remove(0);
    wrong_type["spec"]["rules"] = serde_json::json!("everything");
    manifests.write_text("ingress.yaml", &format!("{class}---\n{}", to_yaml(&[wrong_type])));
    let warnings = rejections(2).await;
    assert!(
        warnings[1].to_string().contains("document 1"),
        "the warning names the document: {}",
        warnings[1]
    );
    assert_eq!(
        shunt.get(HOST, "/").await.backend(),
        "a",
        "the last good Ingress keeps serving"
    );
    let errors = sample(&shunt.metrics().await, "shunt_source_errors_total", &[]);
    assert!(
        errors.is_some_and(|errors| errors >= 2.0),
        "both rejections are counted: {errors:?}"
    );

    manifests.write_text(
        "ingress.yaml",
        &format!("{class}---\n{}", to_yaml(&mk_live_ingress("b").documents())),
    );
    wait_for_backend(&shunt, "b").await;
}
