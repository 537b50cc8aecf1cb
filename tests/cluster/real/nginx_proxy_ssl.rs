//! The nginx profile's `proxy-ssl-secret` in a real cluster: the CA Secret made the usual way
//! (`kubectl create secret generic NAME --from-file=ca.crt`, type Opaque) is watched, as
//! ingress-nginx reads a Secret of any type, so the pod is verified against it.

use std::time::Duration;

use serde_json::{Value, json};

use super::{envtest::Real, eventually, mk_ingress, mk_service};

const WITHIN: Duration = Duration::from_secs(20);
const HOST: &str = "verified.example.com";
/// The name the pods' certificates must carry: only the verification written into the table
/// holds it.
const POD_NAME: &str = "pods.shop.svc";

/// A self-signed CA certificate, PEM.
fn mk_ca_pem() -> String {
    let key = rcgen::KeyPair::generate().expect("a fresh key");
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("no names to check");
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    params.self_signed(&key).expect("a self-signed CA").pem()
}

/// `HOST`'s verdict in `/shadow`, once listed.
async fn verdict(shunt: &crate::support::Shunt) -> Option<String> {
    let reply = shunt.admin_get("/shadow").await.ok()?;
    let document: Value = serde_json::from_str(&reply.body).ok()?;
    let host = document["hosts"].as_array()?.iter().find(|h| h["host"] == HOST)?;
    Some(host["verdict"].as_str()?.to_string())
}

#[tokio::test]
async fn an_opaque_ca_secret_verifies_the_pod() {
    let Some(real) = Real::start("nginx-proxy-ssl").await else {
        return;
    };
    let ns = &real.ns;
    real.apply(mk_service(ns, "app")).await;
    real.apply(json!({
        "apiVersion": "v1", "kind": "Secret", "type": "Opaque",
        "metadata": {"namespace": ns, "name": "pods-ca"},
        "stringData": {"ca.crt": mk_ca_pem()},
    }))
    .await;
    let mut ingress = mk_ingress(ns, "secure", "nginx", HOST, "app");
    ingress["metadata"]["annotations"] = json!({
        "nginx.ingress.kubernetes.io/backend-protocol": "HTTPS",
        "nginx.ingress.kubernetes.io/proxy-ssl-secret": format!("{ns}/pods-ca"),
        "nginx.ingress.kubernetes.io/proxy-ssl-verify": "on",
        "nginx.ingress.kubernetes.io/proxy-ssl-name": POD_NAME,
    });
    real.apply(ingress).await;
    let shunt = real.shunt("shunt-0", &["--shadow-class", "nginx"]).await;

    eventually("the host to be identical", WITHIN, async || {
        verdict(&shunt).await.filter(|v| v == "identical")
    })
    .await;
    let routes = shunt.admin_get("/routes").await.expect("the route table");
    assert!(
        routes.body.contains(POD_NAME),
        "the pod's name is verified: {}",
        routes.body
    );
}
