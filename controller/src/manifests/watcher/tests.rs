//! The manifest loop end to end on a temporary directory: a compile that panics is counted,
//! keeps the last table, is not retried until a file changes, and the next change recovers.

use std::{path::Path, time::Duration};

use shunt_proxy::{dataplane::ProxyMetrics, publish::RoutePublisher};
use tokio::sync::oneshot;

use super::*;
use crate::{
    compile::{ClusterState, Compiled, compile},
    control::ControlPlane,
};

/// Poll this often: short, so the test waits little.
const POLL: Duration = Duration::from_millis(10);

/// Compile, except that an Ingress named `boom` panics it (the injected failure).
fn compile_or_panic(state: &ClusterState, options: &CompileOptions) -> Compiled {
    if state
        .ingresses
        .iter()
        .any(|i| i.metadata.name.as_deref() == Some("boom"))
    {
        panic!("injected compile failure");
    }
    compile(state, options)
}

/// An Ingress per name, `{name}.example.com/` to a Service with one ready endpoint.
fn mk_manifest(names: &[&str]) -> String {
    let mut yaml = String::new();
    for name in names {
        yaml.push_str(&format!(
            "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {{name: {name}, namespace: shop}}\n\
             spec:\n  ingressClassName: shunt\n  rules:\n    - host: {name}.example.com\n      http:\n        paths:\n\
             \x20         - {{path: /, pathType: Prefix, backend: {{service: {{name: web, port: {{number: 80}}}}}}}}\n---\n"
        ));
    }
    yaml.push_str(
        "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec: {ports: [{name: http, port: 80}]}\n---\n\
         apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\n\
         metadata: {name: web-1, namespace: shop, labels: {kubernetes.io/service-name: web}}\n\
         addressType: IPv4\nports: [{name: http, port: 8080}]\nendpoints: [{addresses: [\"127.0.0.1\"], conditions: {ready: true}}]\n",
    );
    yaml
}

/// Waits (bounded: 5 s) until `done` holds.
async fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    for _ in 0..500 {
        if done() {
            return;
        }
        tokio::time::sleep(POLL).await;
    }
    panic!("timed out waiting until {what}");
}

fn routes(reader: &shunt_proxy::publish::RouteReader, host: &str) -> bool {
    reader.load().lookup(host, "/").is_some()
}

fn write(path: &Path, names: &[&str]) {
    std::fs::write(path, mk_manifest(names)).expect("writing the manifest");
}

#[tokio::test]
async fn a_panicking_compile_is_counted_and_the_next_change_recovers() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let file = dir.path().join("apps.yaml");
    write(&file, &["web"]);
    let (publisher, reader) = RoutePublisher::new(ProxyMetrics::detached());
    let metrics = ControllerMetrics::default();
    let control = ControlPlane::new(publisher, metrics.clone()).with_compile(compile_or_panic);
    let watcher = ManifestWatcher::new(vec![dir.path().to_path_buf()]).expect("the directory exists");
    let (stop, stopped) = oneshot::channel::<()>();
    let source = ManifestSource::new(watcher, POLL);
    let task = tokio::spawn(crate::control::compile_loop(
        source,
        CompileOptions::default(),
        control,
        async {
            let _ = stopped.await;
        },
    ));
    eventually("the first table is published", || routes(&reader, "web.example.com")).await;

    write(&file, &["web", "boom"]);
    eventually("the compile panicked", || metrics.compile_panics.get() == 1).await;
    let compiles = metrics.compiles.get();
    // Twenty polls with nothing changed: no retry of the same input.
    tokio::time::sleep(POLL * 20).await;
    assert_eq!((metrics.compile_panics.get(), metrics.compiles.get()), (1, compiles));
    assert!(routes(&reader, "web.example.com"), "the last table keeps serving");

    write(&file, &["web", "fixed"]);
    eventually("the next change is published", || routes(&reader, "fixed.example.com")).await;
    assert_eq!(metrics.compile_panics.get(), 1);
    let _ = stop.send(());
    tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .expect("the loop stops on shutdown")
        .expect("the loop does not panic");
}

#[test]
fn a_poll_tells_the_compile_only_the_objects_a_file_changed() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let (apps, other) = (dir.path().join("apps.yaml"), dir.path().join("other.yaml"));
    write(&apps, &["web", "api"]);
    std::fs::write(
        &other,
        mk_manifest(&["blog"]).replace("namespace: shop", "namespace: news"),
    )
    .expect("writing");
    let metrics = ControllerMetrics::default();
    let mut watcher = ManifestWatcher::new(vec![dir.path().to_path_buf()]).expect("the directory exists");
    assert!(watcher.poll(&metrics));
    assert!(watcher.take_changes().everything, "the first compile does everything");

    // `api` gone, `admin` new, one endpoint more for web: one file rewritten.
    let edited = mk_manifest(&["web", "admin"]).replace("endpoints: [", "endpoints: [{addresses: [\"127.0.0.2\"]}, ");
    std::fs::write(&apps, edited).expect("writing");
    assert!(watcher.poll(&metrics));
    let key = |ns: &str, name: &str| (ns.to_string(), name.to_string());
    let changes = watcher.take_changes();
    assert_eq!(
        changes,
        Changes {
            ingresses: [key("shop", "api"), key("shop", "admin")].into(),
            endpoint_slices: [key("shop", "web-1")].into(),
            ..Default::default()
        }
    );

    std::fs::remove_file(&other).expect("removing");
    assert!(watcher.poll(&metrics));
    let changes = watcher.take_changes();
    assert_eq!(
        (changes.ingresses, changes.services, changes.endpoint_slices),
        (
            [key("news", "blog")].into(),
            [key("news", "web")].into(),
            [key("news", "web-1")].into()
        )
    );
    assert!(!watcher.poll(&metrics));
    assert_eq!(watcher.take_changes(), Changes::default());
}

/// `count` Ingresses `app-{i}` in `namespace`, each to its own Service `svc-{i}` with one ready
/// endpoint; `svc-{moved}`'s is 127.0.0.2 instead of 127.0.0.1.
fn mk_apps(namespace: &str, count: usize, moved: Option<usize>) -> String {
    (0..count)
        .map(|i| {
            let app = mk_manifest(&[&format!("app-{i}")])
                .replace("name: web", &format!("name: svc-{i}"))
                .replace("web-1", &format!("svc-{i}-1"))
                .replace("service-name: web", &format!("service-name: svc-{i}"))
                .replace("namespace: shop", &format!("namespace: {namespace}"));
            match moved == Some(i) {
                true => app.replace("127.0.0.1", "127.0.0.2"),
                false => app,
            }
        })
        .collect::<Vec<_>>()
        .join("---\n")
}

#[test]
fn after_the_first_compile_an_edit_decodes_only_the_objects_its_compile_reads() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let (apps, other) = (dir.path().join("apps.yaml"), dir.path().join("other.yaml"));
    std::fs::write(&apps, mk_apps("shop", 5, None)).expect("writing");
    std::fs::write(&other, mk_apps("news", 5, None)).expect("writing");
    let (publisher, reader) = RoutePublisher::new(ProxyMetrics::detached());
    let metrics = ControllerMetrics::default();
    let mut control = ControlPlane::new(publisher, metrics.clone());
    let mut watcher = ManifestWatcher::new(vec![dir.path().to_path_buf()]).expect("the directory exists");
    let options = CompileOptions::default();
    let compile_next = |watcher: &mut ManifestWatcher, control: &mut ControlPlane| {
        assert!(watcher.poll(&metrics));
        let (state, changes) = next_state(watcher, control, &options);
        let counts = (state.ingresses.len(), state.services.len(), state.endpoint_slices.len());
        let compiled = control.compile_changes_and_publish(state, &options, Some(&changes), |c| c.table.clone());
        let full = compile(&watcher.state(), &options).table;
        assert_eq!(compiled.expect("no panic"), full, "the same table as a full compile");
        counts
    };
    assert_eq!(
        compile_next(&mut watcher, &mut control),
        (10, 10, 10),
        "the first compile reads all"
    );
    assert!(routes(&reader, "app-3.example.com"));

    // news/svc-3's endpoint moved: its slice, its Service and the Ingress naming it.
    std::fs::write(&other, mk_apps("news", 5, Some(3))).expect("writing");
    assert_eq!(compile_next(&mut watcher, &mut control), (1, 1, 1));

    // A new Ingress (its document alone) naming an existing Service.
    let late = mk_manifest(&["late"]).replace("name: web", "name: svc-4");
    let late = late.split("---\n").next().expect("the Ingress document");
    std::fs::write(&apps, format!("{}---\n{late}", mk_apps("shop", 5, None))).expect("writing");
    assert_eq!(
        compile_next(&mut watcher, &mut control),
        (1, 1, 1),
        "the new Ingress and the Service it names, with its slice"
    );
    assert!(routes(&reader, "late.example.com"));
}

#[test]
fn an_ingress_in_two_files_is_compiled_from_the_file_that_wins_when_the_other_changes() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let (first, second) = (dir.path().join("a.yaml"), dir.path().join("b.yaml"));
    // Both files hold shop/app-0; b.yaml's (read last) is the one served, to svc-0.
    std::fs::write(&first, mk_apps("shop", 2, None)).expect("writing");
    std::fs::write(&second, mk_apps("shop", 1, None)).expect("writing");
    let (publisher, _reader) = RoutePublisher::new(ProxyMetrics::detached());
    let metrics = ControllerMetrics::default();
    let mut control = ControlPlane::new(publisher, metrics.clone());
    let mut watcher = ManifestWatcher::new(vec![dir.path().to_path_buf()]).expect("the directory exists");
    let options = CompileOptions::default();
    for step in 0..2 {
        assert!(watcher.poll(&metrics));
        let (state, changes) = next_state(&mut watcher, &control, &options);
        let compiled = control.compile_changes_and_publish(state, &options, Some(&changes), |c| c.table.clone());
        let full = compile(&watcher.state(), &options).table;
        assert_eq!(
            compiled.expect("no panic"),
            full,
            "step {step}: the same table as a full compile"
        );
        // a.yaml's shop/app-0 now names svc-1; b.yaml's still names svc-0.
        let edited = mk_apps("shop", 2, None).replacen("name: svc-0, port", "name: svc-1, port", 1);
        std::fs::write(&first, edited).expect("writing");
    }
}
