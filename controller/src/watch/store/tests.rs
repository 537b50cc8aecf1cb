//! The store follows watcher events as kube's reflector store does.

use std::time::Duration;

use kube::runtime::watcher::Event;

use super::*;
use crate::{fixtures::mk_service, objects::Service};

fn names(store: &Store<Service>) -> Vec<String> {
    let mut names: Vec<String> = store
        .state()
        .iter()
        .map(|service| {
            let meta = &service.metadata;
            format!(
                "{}/{}",
                meta.namespace.as_deref().unwrap_or(""),
                meta.name.as_deref().unwrap_or("")
            )
        })
        .collect();
    names.sort();
    names
}

fn mk_ports(service: &Service) -> Vec<i32> {
    let ports = service.spec.as_ref().and_then(|spec| spec.ports.as_ref());
    ports.into_iter().flatten().map(|port| port.port).collect()
}

#[test]
fn a_first_list_shows_once_complete_then_changes_apply_by_namespace_and_name() {
    let (store, mut writer) = store(Service::clone);
    writer.apply(&Event::Init);
    writer.apply(&Event::InitApply(mk_service("shop", "web", &[("http", 80)])));
    writer.apply(&Event::InitApply(mk_service("blog", "web", &[("http", 80)])));
    assert_eq!(names(&store), Vec::<String>::new(), "nothing before InitDone");
    writer.apply(&Event::InitDone);
    assert_eq!(names(&store), ["blog/web", "shop/web"]);

    writer.apply(&Event::Apply(mk_service("shop", "web", &[("http", 8080)])));
    writer.apply(&Event::Apply(mk_service("shop", "api", &[("http", 80)])));
    writer.apply(&Event::Delete(mk_service("blog", "web", &[])));
    assert_eq!(names(&store), ["shop/api", "shop/web"]);
    let web = store
        .state()
        .into_iter()
        .find(|s| s.metadata.name.as_deref() == Some("web"));
    assert_eq!(
        web.as_deref().map(mk_ports),
        Some(vec![8080]),
        "an Apply replaces the object"
    );
}

#[test]
fn a_relist_keeps_the_old_objects_until_it_completes_and_drops_the_missing_ones() {
    let (store, mut writer) = store(Service::clone);
    for event in [
        Event::Init,
        Event::InitApply(mk_service("shop", "old", &[])),
        Event::InitApply(mk_service("shop", "kept", &[])),
        Event::InitDone,
        Event::Init,
        Event::InitApply(mk_service("shop", "kept", &[])),
        Event::InitApply(mk_service("shop", "new", &[])),
    ] {
        writer.apply(&event);
    }
    assert_eq!(
        names(&store),
        ["shop/kept", "shop/old"],
        "the last good objects while relisting"
    );
    writer.apply(&Event::InitDone);
    assert_eq!(names(&store), ["shop/kept", "shop/new"]);
}

#[tokio::test]
async fn readiness_waits_for_the_first_list_and_fails_when_the_writer_goes() {
    let (store, mut writer) = store(Service::clone);
    let waiting = tokio::time::timeout(Duration::from_millis(50), store.wait_until_ready()).await;
    assert!(waiting.is_err(), "not ready before a list");
    writer.apply(&Event::Init);
    writer.apply(&Event::InitDone);
    let ready = tokio::time::timeout(Duration::from_secs(1), store.wait_until_ready()).await;
    assert!(matches!(ready, Ok(Ok(()))), "ready once listed: {ready:?}");

    let (unlisted, writer) = super::store(Service::clone);
    drop(writer);
    let stopped = tokio::time::timeout(Duration::from_secs(1), unlisted.wait_until_ready()).await;
    assert!(matches!(stopped, Ok(Err(WatcherStopped))), "{stopped:?}");
}

#[test]
fn objects_are_held_once_each() {
    let (store, mut writer) = store(Service::clone);
    writer.apply(&Event::Init);
    writer.apply(&Event::InitDone);
    writer.apply(&Event::Apply(mk_service("shop", "web", &[])));
    writer.apply(&Event::Apply(mk_service("shop", "web", &[])));
    assert_eq!(store.state().len(), 1);
}

#[test]
fn watched_objects_are_stored_in_their_compact_form_and_found_by_it() {
    use crate::objects::ApiService;
    let (store, mut writer) = store(super::super::slim::stored::<ApiService, Service>);
    let mut watched = ApiService {
        metadata: crate::fixtures::mk_meta("shop", "web"),
        spec: mk_service("shop", "web", &[("http", 80)]).spec,
    };
    watched.metadata.resource_version = Some("4711".into());
    watched.metadata.annotations = Some([("a".to_string(), "b".to_string())].into());
    writer.apply(&Event::Init);
    writer.apply(&Event::InitApply(watched.clone()));
    writer.apply(&Event::InitDone);
    let stored = store.state();
    assert_eq!(stored.len(), 1);
    assert_eq!(
        (
            stored[0].metadata.name.as_deref(),
            stored[0].metadata.annotations.as_ref()
        ),
        (Some("web"), None),
        "converted and slimmed: {stored:?}"
    );
    assert_eq!(mk_ports(&stored[0]), vec![80]);
    writer.apply(&Event::Delete(watched));
    assert_eq!(
        names(&store),
        Vec::<String>::new(),
        "deleted by its compact form's name"
    );
}

#[tokio::test]
async fn events_sent_to_the_store_thread_apply_there_in_order_each_then_signalled() {
    let (store, writer) = store(Service::clone);
    let (signal, mut signalled) = tokio::sync::mpsc::unbounded_channel();
    let writer = writer.on_store_thread(move || {
        let _ = signal.send(std::thread::current().name().map(str::to_string));
    });
    let events = [
        Event::Init,
        Event::InitApply(mk_service("shop", "web", &[("http", 80)])),
        Event::InitDone,
        Event::Apply(mk_service("shop", "web", &[("http", 8080)])),
        Event::Apply(mk_service("shop", "api", &[("http", 80)])),
        Event::Delete(mk_service("shop", "api", &[])),
    ];
    let sent = events.len();
    for event in events {
        writer.apply(event).await;
    }
    for _ in 0..sent {
        let thread = tokio::time::timeout(Duration::from_secs(10), signalled.recv()).await;
        assert_eq!(
            thread.expect("signalled in time"),
            Some(Some("shunt-stores".to_string()))
        );
    }
    store.wait_until_ready().await.expect("listed");
    assert_eq!(names(&store), ["shop/web"]);
    assert_eq!(store.state().first().map(|web| mk_ports(web)), Some(vec![8080]));
}
