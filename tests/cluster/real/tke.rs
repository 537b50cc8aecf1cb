//! The qcloud profile in a real cluster: TKE's certificate Secrets are Opaque (a
//! `qcloud_cert_id`), whose data shunt never reads, yet a `spec.tls` Secret that does not exist
//! is TKE's E4010. A metadata-only watch of every Secret's name tells the two apart.

use std::time::Duration;

use serde_json::{Value, json};

use super::{envtest::Real, eventually, mk_ingress, mk_service};

const WITHIN: Duration = Duration::from_secs(20);
const HOST: &str = "pay.example.com";

/// The reasons `/shadow` gives `HOST`, once it lists the host.
async fn reasons(shunt: &crate::support::Shunt) -> Option<Vec<String>> {
    let reply = shunt.admin_get("/shadow").await.ok()?;
    let document: Value = serde_json::from_str(&reply.body).ok()?;
    let hosts = document["hosts"].as_array()?;
    let host = hosts.iter().find(|h| h["host"] == HOST)?;
    let reasons = host["reasons"].as_array()?;
    Some(reasons.iter().filter_map(|r| r.as_str().map(str::to_string)).collect())
}

#[tokio::test]
async fn a_qcloud_tls_secret_that_does_not_exist_is_tkes_e4010_and_an_opaque_one_is_not() {
    let Some(real) = Real::start("tke").await else {
        return;
    };
    let ns = &real.ns;
    let mut service = mk_service(ns, "pay");
    service["spec"]["type"] = json!("NodePort");
    real.apply(service).await;
    let mut ingress = mk_ingress(ns, "pay", "qcloud", HOST, "pay");
    ingress["spec"]["tls"] = json!([{"hosts": [HOST], "secretName": "pay-cert"}]);
    real.apply(ingress).await;
    let shunt = real.shunt("shunt-0", &["--shadow-class", "qcloud"]).await;

    let e4010 = format!("TkeRejects: E4010 Secret {ns}/pay-cert not found: the CLB has no HTTPS for \"{HOST}\"");
    eventually("E4010 for the missing Secret", WITHIN, async || {
        reasons(&shunt).await.filter(|r| r.contains(&e4010))
    })
    .await;

    // TKE's own kind of Secret: Opaque, a certificate id. The host now waits for the operator's
    // certificate instead, as any qcloud HTTPS host does.
    real.apply(json!({
        "apiVersion": "v1", "kind": "Secret", "type": "Opaque",
        "metadata": {"namespace": ns, "name": "pay-cert"},
        "stringData": {"qcloud_cert_id": "Xxh1WJ3k"},
    }))
    .await;
    let waiting = eventually("the certificate wait", WITHIN, async || {
        reasons(&shunt).await.filter(|r| !r.contains(&e4010))
    })
    .await;
    assert!(
        waiting.iter().all(|r| r.starts_with("CertificateUnavailable: ")),
        "{waiting:?}"
    );
}
