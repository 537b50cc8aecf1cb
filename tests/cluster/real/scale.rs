//! `shunt run` at scale on the real API server: 10,000 Ingresses, 10,000 Services and 50,000
//! endpoints in one namespace, as the server stores them (managedFields, allocated ClusterIPs).
//! Start to ready; resident memory after the first publish, once the leader has written every
//! Ingress's status, and after 12 edits (at the last publish, once its writes are done, and then
//! sampled over a second); one Ingress edit's time to traffic over 20 edits. A measurement,
//! ignored by default; `RUN=1 benches/scale.sh` runs it in a network namespace, and `CLASS`
//! (`SCALE_CLASS` here) picks whose Ingresses they are: shunt's own class, `qcloud` shadowed, or
//! `nginx` under its profile.

use std::time::{Duration, Instant};

use futures::{StreamExt, stream};
use serde_json::{Value, json};

use super::{
    OURS,
    envtest::{Real, mk_pod_slice},
    eventually, memory, mk_ingress, mk_service, publishes,
};

/// `SCALE_INGRESSES` overrides it, for a quicker look.
const INGRESSES: usize = 10_000;
const ENDPOINTS_PER_SERVICE: usize = 5;
const EDITS: usize = 12;
const TRAFFIC_EDITS: usize = 20;
/// Requests in flight while creating the objects.
const CONCURRENCY: usize = 16;
const READY_WITHIN: Duration = Duration::from_secs(600);
/// After a publish the leader still writes (status, Events), then hands back the code it ran:
/// resident memory is read again this long after, once that work is done.
const SETTLE: Duration = Duration::from_secs(2);
/// Then resident memory is sampled this often over a second: a lease round (every 2 s) maps
/// several MiB of client code back for the 50 ms until the main thread's tidy, so one reading
/// may land on it; the range shows what is held between bursts.
const SAMPLES: usize = 5;
const SAMPLE_EVERY: Duration = Duration::from_millis(200);

/// Whose Ingresses the objects are, and the flags that make shunt serve them.
struct Class {
    name: &'static str,
    args: &'static [&'static str],
}

impl Class {
    fn from_env() -> Class {
        let (name, args): (_, &[_]) = match std::env::var("SCALE_CLASS").as_deref() {
            Err(_) | Ok("shunt") => (OURS, &[]),
            Ok("qcloud") => ("qcloud", &["--shadow-class", "qcloud"]),
            Ok("nginx") => ("nginx", &["--ingress-class", "nginx", "--class-profile", "nginx=nginx"]),
            Ok(other) => panic!("SCALE_CLASS={other}: shunt, qcloud or nginx"),
        };
        Class { name, args }
    }

    /// Whether shunt writes the Ingresses' status: for classes it serves as its own, not for a
    /// shadowed one.
    fn writes_status(&self) -> bool {
        self.name != "qcloud"
    }

    fn ingress(&self, ns: &str, name: &str, host: &str, service: &str) -> Value {
        let mut ingress = mk_ingress(ns, name, self.name, host, service);
        if self.name == "qcloud" {
            // TKE refuses a ClusterIP backend unless the CLB reaches pods directly (E4047).
            ingress["metadata"]["annotations"] = json!({"ingress.cloud.tencent.com/direct-access": "true"});
        }
        ingress
    }
}

/// Ingress, Service and EndpointSlice (5 endpoints) of app `index`.
fn mk_app(class: &Class, ns: &str, index: usize) -> [Value; 3] {
    let name = format!("app-{index}");
    let addresses: Vec<Value> = (1..=ENDPOINTS_PER_SERVICE)
        .map(|k| json!({"addresses": [format!("10.{}.{}.{k}", index / 250 % 250, index % 250)], "conditions": {"ready": true}}))
        .collect();
    let slice = json!({
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"namespace": ns, "name": format!("{name}-abcde"), "labels": {"kubernetes.io/service-name": name}},
        "addressType": "IPv4", "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}], "endpoints": addresses,
    });
    let host = format!("{name}.example.com");
    [class.ingress(ns, &name, &host, &name), mk_service(ns, &name), slice]
}

fn percentile(sorted: &[Duration], p: usize) -> Duration {
    sorted[(sorted.len() * p).div_ceil(100).max(1) - 1]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement of 70,000 objects on the real API server; RUN=1 benches/scale.sh"]
async fn shunt_run_at_scale_on_the_real_api_server() {
    let Some(real) = Real::start("scale").await else { return };
    let Some(origin) = real.pod_backend("origin").await else {
        return;
    };
    let ns = real.ns.clone();
    let ingresses = std::env::var("SCALE_INGRESSES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(INGRESSES);
    let class = &Class::from_env();
    let created = Instant::now();
    let objects = (0..ingresses).flat_map(|i| mk_app(class, &ns, i));
    let kube = &real.kube;
    stream::iter(objects)
        .for_each_concurrent(CONCURRENCY, move |mut object| async move {
            if let Some(spec) = object["spec"].as_object_mut() {
                spec.remove("clusterIP");
            }
            kube.create(&object).await;
        })
        .await;
    println!("created {} objects in {:.0?}", ingresses * 3, created.elapsed());
    real.apply(mk_service(&ns, "probe")).await;
    real.apply(mk_pod_slice(&ns, "probe-1", "probe", &origin)).await;

    let started = Instant::now();
    let shunt = real.spawn_shunt(real.kubeconfig(), "scale", class.args).await;
    let pid = shunt.pid();
    eventually("the first table", READY_WITHIN, async || {
        (publishes(&shunt) >= 1).then_some(())
    })
    .await;
    println!(
        "shunt run, {ingresses} Ingresses of class {} / Services, {} endpoints",
        class.name,
        ingresses * ENDPOINTS_PER_SERVICE
    );
    println!("start -> first publish {:.2?}", started.elapsed());
    println!("after the first publish: {}", memory(pid));
    if class.writes_status() {
        // The leader then writes every Ingress's status, one request each; the edits below are
        // measured once that is done, and the figure while it runs is the one just printed.
        let writing = Instant::now();
        eventually("the first publish's status writes", READY_WITHIN, async || {
            shunt
                .logs()
                .iter()
                .any(|line| line.contains("Status synced"))
                .then_some(())
        })
        .await;
        println!("status of {ingresses} Ingresses written in {:.1?}", writing.elapsed());
        tokio::time::sleep(SETTLE).await;
        println!("after the status writes, {SETTLE:?} later: {}", memory(pid));
        println!("  then {}", sampled(pid).await);
    }
    for edit in 0..EDITS {
        let [_, _, mut slice] = mk_app(class, &ns, edit * 97 % ingresses);
        slice["endpoints"][0]["addresses"][0] = json!(format!("10.251.0.{edit}"));
        let before = publishes(&shunt);
        real.apply(slice).await;
        eventually("the edit's publish", READY_WITHIN, async || {
            (publishes(&shunt) > before).then_some(())
        })
        .await;
    }
    println!("after {EDITS} edits: {}", memory(pid));
    tokio::time::sleep(SETTLE).await;
    println!("after {EDITS} edits, {SETTLE:?} later: {}", memory(pid));
    println!("  then {}", sampled(pid).await);

    let mut delays = Vec::new();
    for edit in 0..TRAFFIC_EDITS {
        let host = format!("probe-{edit}.example.com");
        let written = Instant::now();
        real.apply(class.ingress(&ns, &format!("probe-{edit}"), &host, "probe"))
            .await;
        eventually("the new host to serve", READY_WITHIN, async || {
            (shunt.backend_for(&host).await.as_deref() == Ok("origin")).then_some(())
        })
        .await;
        delays.push(written.elapsed());
    }
    delays.sort();
    println!(
        "one Ingress edit -> traffic, {TRAFFIC_EDITS} edits: p50 {:.0?}, p99 {:.0?}",
        percentile(&delays, 50),
        percentile(&delays, 99)
    );
    println!("after the traffic edits: {}", memory(pid));
    tokio::time::sleep(SETTLE).await;
    println!("after the traffic edits, {SETTLE:?} later: {}", memory(pid));
    println!("  then {}", sampled(pid).await);
}

/// VmRSS and RssAnon, lowest to highest, over [`SAMPLES`] readings [`SAMPLE_EVERY`] apart.
async fn sampled(pid: u32) -> String {
    let mut readings: [Vec<u64>; 2] = [Vec::new(), Vec::new()];
    for _ in 0..SAMPLES {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("reading /proc/PID/status");
        for (field, values) in ["VmRSS:", "RssAnon:"].iter().zip(&mut readings) {
            let kib = status
                .lines()
                .find_map(|line| line.strip_prefix(field))
                .and_then(|rest| rest.split_whitespace().next()?.parse::<u64>().ok())
                .expect("a /proc/PID/status field in kB");
            values.push(kib / 1024);
        }
        tokio::time::sleep(SAMPLE_EVERY).await;
    }
    let range = |values: &[u64]| {
        let (low, high) = (values.iter().min(), values.iter().max());
        format!("{}–{}", low.unwrap_or(&0), high.unwrap_or(&0))
    };
    format!(
        "{SAMPLES} readings {SAMPLE_EVERY:?} apart: VmRSS {} MiB, RssAnon {} MiB",
        range(&readings[0]),
        range(&readings[1])
    )
}
