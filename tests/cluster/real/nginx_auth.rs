//! The nginx profile in a real cluster: the ConfigMap an Ingress's `auth-proxy-set-headers`
//! names is watched like ingress-nginx watches it, so its creation and edits reach the verdict.

use std::time::Duration;

use serde_json::{Value, json};

use super::{envtest::Real, eventually, mk_ingress, mk_service};

const WITHIN: Duration = Duration::from_secs(20);
const HOST: &str = "gated.example.com";
const KEY: &str = "nginx.ingress.kubernetes.io/auth-proxy-set-headers";

/// `HOST`'s verdict and reasons in `/shadow`, once listed.
async fn verdict(shunt: &crate::support::Shunt) -> Option<(String, Vec<String>)> {
    let reply = shunt.admin_get("/shadow").await.ok()?;
    let document: Value = serde_json::from_str(&reply.body).ok()?;
    let host = document["hosts"].as_array()?.iter().find(|h| h["host"] == HOST)?;
    let reasons = host["reasons"]
        .as_array()?
        .iter()
        .filter_map(|r| r.as_str().map(str::to_string));
    Some((host["verdict"].as_str()?.to_string(), reasons.collect()))
}

fn mk_headers(ns: &str, data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"namespace": ns, "name": "auth-headers"}, "data": data})
}

#[tokio::test]
async fn the_configmap_auth_proxy_set_headers_names_is_watched_through_creation_and_edits() {
    let Some(real) = Real::start("nginx-auth").await else {
        return;
    };
    let ns = &real.ns;
    real.apply(mk_service(ns, "app")).await;
    let mut ingress = mk_ingress(ns, "gated", "nginx", HOST, "app");
    ingress["metadata"]["annotations"] = json!({
        "nginx.ingress.kubernetes.io/auth-url": "http://auth.example.com/check",
        KEY: format!("{ns}/auth-headers"),
    });
    real.apply(ingress).await;
    let shunt = real.shunt("shunt-0", &["--shadow-class", "nginx"]).await;

    let missing = eventually("the missing ConfigMap's refusal", WITHIN, async || {
        verdict(&shunt)
            .await
            .filter(|(_, r)| r.iter().any(|r| r.starts_with("MissingConfigMap: ")))
    })
    .await;
    assert_eq!(missing.0, "refused");

    real.apply(mk_headers(ns, json!({"X-Tenant": "blue"}))).await;
    eventually("the host to move once the ConfigMap exists", WITHIN, async || {
        verdict(&shunt).await.filter(|(v, _)| v == "identical")
    })
    .await;

    // A field name authreq's headerRegexp denies: ingress-nginx answers 503, shunt refuses.
    real.apply(mk_headers(ns, json!({"X.Tenant": "blue"}))).await;
    let invalid = eventually("the edit's refusal", WITHIN, async || {
        verdict(&shunt).await.filter(|(v, _)| v == "refused")
    })
    .await;
    assert!(invalid.1.iter().any(|r| r.contains(KEY)), "{invalid:?}");
}
