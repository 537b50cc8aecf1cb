//! `--manage-coredns` on the real API server: shunt's Corefile edits race another writer of the
//! same ConfigMap under optimistic concurrency (resourceVersion conflicts), and neither loses.

use std::time::Duration;

use kube::api::{DynamicObject, PostParams};
use serde_json::json;

use super::{OURS, envtest::Real, eventually, mk_ingress, mk_service};

const COREFILE: &str = ".:53 {\n    errors\n    forward . /etc/resolv.conf\n    cache 30\n    reload\n}\n";
const WITHIN: Duration = Duration::from_secs(20);
/// The other writer's updates, each read-modify-write with the resourceVersion it read.
const WRITES: usize = 40;

/// Sets `data.other` to `value` as kubectl edit would: read, change, replace; again on 409.
async fn other_writer_sets(real: &Real, value: usize) -> usize {
    let api = real.kube.api("ConfigMap");
    let mut conflicts = 0;
    loop {
        let mut map: DynamicObject = api.get("coredns").await.expect("the ConfigMap");
        map.data["data"]["other"] = json!(value.to_string());
        match api.replace("coredns", &PostParams::default(), &map).await {
            Ok(_) => return conflicts,
            Err(kube::Error::Api(status)) if status.code == 409 => conflicts += 1,
            Err(error) => panic!("replacing the ConfigMap: {error}"),
        }
    }
}

#[tokio::test]
async fn managed_corefile_edits_and_another_writer_both_land_despite_conflicts() {
    let Some(real) = Real::start("coredns").await else {
        return;
    };
    let ns = &real.ns;
    real.apply(
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"namespace": ns, "name": "coredns"},
        "data": {"Corefile": COREFILE, "other": "start"}}),
    )
    .await;
    real.apply(mk_service(ns, "shunt")).await;
    real.apply(mk_service(ns, "web")).await;
    let (publish, coredns) = (format!("{ns}/shunt"), format!("{ns}/coredns"));
    let args = [
        "--publish-service",
        &publish,
        "--manage-coredns",
        "--coredns-configmap",
        &coredns,
        "--coredns-version",
        "1.13.1",
    ];
    let shunt = real.shunt("shunt-0", &args).await;

    let mut conflicts = 0;
    for i in 0..WRITES {
        if i % 4 == 0 {
            let name = format!("app-{i:02}");
            real.apply(mk_ingress(ns, &name, OURS, &format!("{name}.example"), "web"))
                .await;
        }
        conflicts += other_writer_sets(&real, i).await;
    }
    let hosts: Vec<String> = (0..WRITES).step_by(4).map(|i| format!("app-{i:02}.example")).collect();
    let map = eventually("every host in the Corefile", WITHIN, async || {
        let map = real.kube.get("ConfigMap", "coredns").await?;
        let corefile = map["data"]["Corefile"].as_str()?;
        hosts.iter().all(|h| corefile.contains(h.as_str())).then_some(map)
    })
    .await;
    assert_eq!(
        map["data"]["other"],
        (WRITES - 1).to_string(),
        "the other writer's last value stays"
    );
    let corefile = map["data"]["Corefile"].as_str().expect("a Corefile");
    assert!(corefile.contains("forward . /etc/resolv.conf"), "{corefile}");
    eprintln!("the other writer met {conflicts} conflicts");
    let logs = shunt.logs().join("\n");
    assert!(!logs.contains("\"level\":\"ERROR\""), "{logs}");
}
