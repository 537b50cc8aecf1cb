//! The bundled demo manifests (`examples/demo/`) parse and compile to the routes the README
//! promises. Their pods are 127.0.0.11-14, which a test cannot bind reliably, so no request
//! reaches them.

use std::path::Path;

use http::StatusCode;

use crate::support::*;

#[tokio::test]
async fn the_bundled_demo_manifests_parse_and_route() {
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/demo");
    let shunt = Shunt::start(&demo, &[]).await;
    let routes = shunt.routes().await;
    let hosts: Vec<&str> = routes["hosts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|h| h["host"].as_str())
        .collect();
    assert!(hosts.contains(&"shop.example.com"), "{routes}");
    assert!(hosts.contains(&"*.blog.example.com"), "{routes}");
    assert_eq!(
        routes["backends"]["shop/web:80"]["endpoints"],
        serde_json::json!(["127.0.0.11:3000", "127.0.0.12:3000"])
    );

    assert_eq!(
        routes["tls"]["hosts"]["shop.example.com"], "shop/shop-tls",
        "the demo certificate loads"
    );

    let rejected = shunt.json_logs().into_iter().find(|line| line["level"] == "WARN");
    assert!(rejected.is_none(), "the demo loads without warnings: {rejected:?}");
    let reply = shunt.get("nowhere.example.org", "/").await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND);
}
