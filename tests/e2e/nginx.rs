//! The nginx profile end to end: `examples/nginx` served by `shunt serve --shadow-class nginx`
//! in front of echo backends, real HTTP requests, `/shadow`, and `shunt shadow report` and
//! `shunt dns` over the same files.

use std::{path::Path, process::Output};

use http::{StatusCode, header};
use serde_json::Value;

use crate::support::*;

struct Nginx {
    _backends: Vec<Backend>,
    manifests: Manifests,
    shunt: Shunt,
}

async fn start_nginx() -> Nginx {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/nginx");
    let manifests = Manifests::new();
    for entry in std::fs::read_dir(&examples).expect("examples/nginx exists") {
        let path = entry.expect("a directory entry").path();
        if path.extension().is_some_and(|e| e == "yaml") {
            let name = path.file_name().and_then(|n| n.to_str()).expect("a file name");
            manifests.write_text(name, &std::fs::read_to_string(&path).expect("readable example"));
        }
    }
    let backends = vec![Backend::start("web").await, Backend::start("api").await];
    let services: Vec<_> = backends
        .iter()
        .map(|b| mk_backend_service("shop", &b.name, None, &[b]))
        .collect();
    // Replaces the example's Services with ones whose endpoints are the echo backends.
    manifests.write("services.yaml", &[&services]);
    let shunt = Shunt::start(manifests.path(), &["--shadow-class", "nginx"]).await;
    Nginx {
        _backends: backends,
        manifests,
        shunt,
    }
}

async fn run_shunt(manifests: &Manifests, args: &[&str]) -> String {
    let output: Output = tokio::process::Command::from(crate::support::launch::shunt())
        .args(args)
        .arg("--manifests")
        .arg(manifests.path())
        .args(["--shadow-class", "nginx"])
        .output()
        .await
        .expect("shunt runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).expect("UTF-8")
}

#[tokio::test]
async fn nginx_paths_and_the_ssl_redirect_answer_as_ingress_nginx_does() {
    let nginx = start_nginx().await;
    let redirected = nginx.shunt.get("shop.example.com", "/api/v1?x=1").await;
    assert_eq!(redirected.status, StatusCode::PERMANENT_REDIRECT);
    let location = redirected.headers.get(header::LOCATION).and_then(|v| v.to_str().ok());
    assert_eq!(location, Some("https://shop.example.com/api/v1?x=1"));
    // cert-manager's solver path is exempt (no-tls-redirect-locations).
    let solver = nginx
        .shunt
        .get("shop.example.com", "/.well-known/acme-challenge/abc")
        .await;
    assert_eq!(solver.status, StatusCode::OK);
    assert_eq!(solver.backend(), "web");
    // A host without a certificate is served over plain HTTP.
    assert_eq!(nginx.shunt.get("admin.example.com", "/").await.backend(), "web");
}

#[tokio::test]
async fn shadow_and_the_report_say_why_each_nginx_host_stays_on_the_load_balancer() {
    let nginx = start_nginx().await;
    let shadow: Value = nginx.shunt.admin("/shadow").await.json();
    assert_eq!(shadow["profile"], "nginx");
    assert_eq!(shadow["summary"]["hosts"], 3);
    assert_eq!(shadow["summary"]["refused"], 3);
    let report = run_shunt(&nginx.manifests, &["shadow", "report"]).await;
    assert!(
        report.contains("4 Ingresses, 3 hosts: 0 identical, 3 refused"),
        "{report}"
    );
    assert!(
        report.contains("| 1 | UnsupportedAnnotation: nginx.ingress.kubernetes.io/auth-url |"),
        "{report}"
    );
    let json: Value = serde_json::from_str(&run_shunt(&nginx.manifests, &["shadow", "report", "--json"]).await)
        .expect("a JSON document");
    assert_eq!(json["summary"], shadow["summary"]);
    let dns = run_shunt(&nginx.manifests, &["dns", "--publish-service", "shunt-system/shunt"]).await;
    assert!(dns.contains("# refused admin.example.com: ShadowRefused:"), "{dns}");
    assert!(!dns.contains("rewrite name exact admin.example.com"), "{dns}");
}
