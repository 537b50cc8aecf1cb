//! What the real API server does to objects on their way in, and how it selects them: the
//! DefaultIngressClass admission plugin fills in a class, and the field selector shunt watches
//! Secrets with (`type=kubernetes.io/tls`) is served as a cluster serves it.

use std::time::Duration;

use base64::{Engine as _, engine::general_purpose::STANDARD as BASE64};
use serde_json::{Value, json};

use super::{
    OURS, STATUS_ADDRESS,
    envtest::{CONTROLLER, Real},
    eventually, lb_status, mk_ingress, mk_service,
};

const WITHIN: Duration = Duration::from_secs(15);

#[tokio::test]
async fn an_ingress_without_a_class_gets_the_default_class_and_is_ours() {
    let Some(real) = Real::start("admission").await else {
        return;
    };
    let ns = &real.ns;
    // Cluster-scoped and named for the test; other tests always name their class.
    let class = format!("default-{ns}");
    real.apply(json!({
        "apiVersion": "networking.k8s.io/v1", "kind": "IngressClass",
        "metadata": {"name": class, "annotations": {"ingressclass.kubernetes.io/is-default-class": "true"}},
        "spec": {"controller": CONTROLLER},
    }))
    .await;
    real.apply(mk_service(ns, "web")).await;
    let mut classless = mk_ingress(ns, "classless", OURS, "classless.example", "web");
    classless["spec"]
        .as_object_mut()
        .expect("a spec")
        .remove("ingressClassName");
    let stored = real.apply(classless).await;
    assert_eq!(stored["spec"]["ingressClassName"], class.as_str(), "admission set it");

    let _shunt = real.shunt("shunt-0", &[]).await;
    eventually("the classless Ingress's status", WITHIN, async || {
        let ingress = real.kube.get("Ingress", "classless").await?;
        (lb_status(&ingress) == json!([{"ip": STATUS_ADDRESS}])).then_some(())
    })
    .await;
    real.kube.delete("IngressClass", &class).await;
}

fn mk_secret(ns: &str, name: &str, type_: &str, data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"namespace": ns, "name": name}, "type": type_, "data": data})
}

fn mk_tls_ingress(ns: &str, name: &str, host: &str, secret: &str) -> Value {
    let mut ingress = mk_ingress(ns, name, OURS, host, "web");
    ingress["spec"]["tls"] = json!([{"hosts": [host], "secretName": secret}]);
    ingress
}

#[tokio::test]
async fn only_tls_secrets_are_watched_through_the_field_selector() {
    let Some(real) = Real::start("fields").await else {
        return;
    };
    let ns = &real.ns;
    let key = rcgen::KeyPair::generate().expect("a key");
    let params = rcgen::CertificateParams::new(vec!["tls.example".to_string()]).expect("names");
    let cert = params.self_signed(&key).expect("a certificate");
    let pem = |text: String| Value::from(BASE64.encode(text));
    let tls_data = json!({"tls.crt": pem(cert.pem()), "tls.key": pem(key.serialize_pem())});
    real.apply(mk_secret(ns, "real-tls", "kubernetes.io/tls", tls_data.clone()))
        .await;
    // The same keys in an Opaque Secret: outside the selector, so shunt never sees it.
    real.apply(mk_secret(ns, "opaque", "Opaque", tls_data)).await;
    real.apply(mk_service(ns, "web")).await;
    real.apply(mk_tls_ingress(ns, "good", "tls.example", "real-tls")).await;
    real.apply(mk_tls_ingress(ns, "bad", "tls.example", "opaque")).await;
    let _shunt = real.shunt("shunt-0", &[]).await;

    let reasons = async |name: &str| -> Vec<String> {
        let events = real.kube.list("Event", "").await;
        let about = events.into_iter().filter(|e| e["regarding"]["name"] == name);
        about.filter_map(|e| e["reason"].as_str().map(str::to_string)).collect()
    };
    eventually("MissingTlsSecret about bad", WITHIN, async || {
        reasons("bad")
            .await
            .contains(&"MissingTlsSecret".to_string())
            .then_some(())
    })
    .await;
    let good = reasons("good").await;
    assert!(!good.iter().any(|r| r.contains("Tls")), "{good:?}");
}
