//! Publishing next to a live table: what is reused, what is retired, and that the result
//! serves exactly what a table built from scratch serves.

use std::{net::SocketAddr, sync::Arc};

use proptest::prelude::*;

use super::*;
use crate::{
    routes::Route,
    spec::{
        BackendSpec, Document, HostMatch, Listeners, PathKind, PathSpec, RedirectSpec, RouteOptions, TableSpec,
        UpstreamProtocol, VirtualHostSpec,
    },
};

const HOSTS: [&str; 4] = ["a.example.com", "b.example.com", "example.com", ""];
const PATHS: [&str; 4] = ["/", "/api", "/api/", "/x{y}"];
const BACKENDS: [&str; 3] = ["ns/one:80", "ns/two:80", "ns/three:80"];

fn mk_addr(last: u8) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, last], 8080))
}

fn mk_backend(endpoints: &[u8]) -> BackendSpec {
    let mut endpoints: Vec<SocketAddr> = endpoints.iter().map(|last| mk_addr(*last)).collect();
    endpoints.sort_unstable();
    endpoints.dedup();
    BackendSpec {
        protocol: UpstreamProtocol::Http1,
        endpoints: endpoints.into(),
        topology: Default::default(),
        tls: None,
    }
}

fn mk_path(path: &str, kind: PathKind, backend: &str, source: &str) -> PathSpec {
    PathSpec {
        path: path.to_string(),
        kind,
        backend: backend.to_string(),
        source: source.to_string(),
        ssl_redirect: false,
        options: Default::default(),
    }
}

/// One host with one path to `backend`, plus that backend with `endpoints`.
fn mk_spec(hosts: &[(&str, &str)], endpoints: &[u8]) -> TableSpec {
    let mut spec = TableSpec::default();
    for (host, backend) in hosts {
        spec.hosts.push(Arc::new(VirtualHostSpec {
            host: HostMatch::from_rule_host(host),
            paths: vec![mk_path("/", PathKind::Prefix, backend, "ns/ing")],
            exclusive: false,
        }));
        spec.backends.insert(backend.to_string(), mk_backend(endpoints));
    }
    spec.hosts.sort_by(|a, b| a.host.cmp(&b.host));
    spec
}

fn route(reader: &RouteReader, host: &str) -> Arc<Route> {
    reader.load().lookup(host, "/").expect("the host is routed").clone()
}

#[test]
fn an_unchanged_host_keeps_its_routes_and_a_changed_backend_rebuilds_only_its_hosts() {
    let (mut publisher, reader) = RoutePublisher::new(ProxyMetrics::detached());
    let hosts = [("a.example.com", "ns/a:80"), ("b.example.com", "ns/b:80")];
    publisher.publish(mk_spec(&hosts, &[1, 2]));
    let (a, b) = (route(&reader, "a.example.com"), route(&reader, "b.example.com"));

    let mut next = mk_spec(&hosts, &[1, 2]);
    next.backends.insert("ns/b:80".into(), mk_backend(&[1, 3]));
    assert!(matches!(publisher.publish(next), Published::Swapped { .. }));

    assert!(Arc::ptr_eq(&a, &route(&reader, "a.example.com")));
    let rebuilt = route(&reader, "b.example.com");
    assert!(!Arc::ptr_eq(&b, &rebuilt));
    let addrs: Vec<SocketAddr> = rebuilt.upstream.endpoints.iter().map(|e| e.addr).collect();
    assert_eq!(addrs, vec![mk_addr(1), mk_addr(3)]);
    // The pod that stayed is the same `Endpoint`, so its in-flight count carries over.
    assert!(Arc::ptr_eq(&b.upstream.endpoints[0], &rebuilt.upstream.endpoints[0]));
}

/// A report made again with the same text is published (a swap taking every host over), not
/// compared by text: that would write both reports, on the compile's way to traffic.
#[test]
fn a_new_document_is_published_without_reading_either_text() {
    let (mut publisher, reader) = RoutePublisher::new(ProxyMetrics::detached());
    let hosts = [("a.example.com", "ns/a:80")];
    let with_report = |report: &Document| {
        let mut spec = mk_spec(&hosts, &[1]);
        spec.documents.insert("shadow".into(), report.clone());
        spec
    };
    let first = Document::deferred_json(vec!["a.example.com"]);
    publisher.publish(with_report(&first));
    let a = route(&reader, "a.example.com");
    assert!(matches!(publisher.publish(with_report(&first)), Published::Unchanged));

    let again = Document::deferred_json(vec!["a.example.com"]);
    assert!(matches!(
        publisher.publish(with_report(&again)),
        Published::Swapped { .. }
    ));
    let next = Document::deferred_json(vec!["a.example.com"]);
    let changes = SpecChanges::default();
    let published = publisher.publish_changed(with_report(&next), &changes);
    assert!(matches!(published, Published::Swapped { .. }));
    assert!(matches!(
        publisher.publish_changed(with_report(&next), &changes),
        Published::Unchanged
    ));

    assert!(![first, again, next].iter().any(Document::is_written));
    assert!(Arc::ptr_eq(&a, &route(&reader, "a.example.com")));

    // Documents made at once compare by their bytes, as before.
    publisher.publish(with_report(&Document::new("status")));
    assert!(matches!(
        publisher.publish(with_report(&Document::new("status"))),
        Published::Unchanged
    ));
}

#[test]
fn a_host_whose_path_changed_is_rebuilt_and_the_others_are_not() {
    let (mut publisher, reader) = RoutePublisher::new(ProxyMetrics::detached());
    let hosts = [("a.example.com", "ns/a:80"), ("b.example.com", "ns/b:80")];
    publisher.publish(mk_spec(&hosts, &[1]));
    let (a, b) = (route(&reader, "a.example.com"), route(&reader, "b.example.com"));

    let mut next = mk_spec(&hosts, &[1]);
    Arc::make_mut(&mut next.hosts[1])
        .paths
        .push(mk_path("/v2", PathKind::Exact, "ns/b:80", "ns/ing"));
    publisher.publish(next);

    assert!(Arc::ptr_eq(&a, &route(&reader, "a.example.com")));
    assert!(!Arc::ptr_eq(&b, &route(&reader, "b.example.com")));
    let table = reader.load();
    assert_eq!(
        &*table.lookup("b.example.com", "/v2").expect("the new path").name,
        "b.example.com/v2"
    );
    // Same upstream: the backend did not change.
    assert!(Arc::ptr_eq(&b.upstream, &route(&reader, "b.example.com").upstream));
}

/// What a lookup answers, in plain values: equal for equal routing whatever was reused.
fn answer(table: &RouteTable, host: &str, path: &str, tls: bool) -> Option<(String, String, String, Vec<SocketAddr>)> {
    table.lookup_on(host, path, tls).map(|route| {
        let endpoints = route.upstream.endpoints.iter().map(|e| e.addr).collect();
        let redirect = format!("{:?} {}", route.redirect, route.ssl_redirect);
        (
            format!("{} {}", route.name, route.source),
            route.upstream.id.to_string(),
            redirect,
            endpoints,
        )
    })
}

fn arb_path() -> impl Strategy<Value = PathSpec> {
    (
        0..PATHS.len(),
        prop_oneof![
            Just(PathKind::Exact),
            Just(PathKind::Prefix),
            Just(PathKind::CharPrefix)
        ],
        0..BACKENDS.len(),
        0..2usize,
        prop_oneof![Just(Listeners::Both), Just(Listeners::Plain), Just(Listeners::Tls)],
        any::<bool>(),
        prop::option::of(prop_oneof![Just("X-Proto"), Just("bad header")]),
    )
        .prop_map(|(path, kind, backend, source, listeners, redirect, header)| PathSpec {
            options: RouteOptions {
                listeners,
                redirect: redirect.then(|| RedirectSpec {
                    code: 302,
                    scheme: None,
                    host: Some("elsewhere.example".into()),
                    port: None,
                    path: None,
                    drop_query: false,
                    location: None,
                    replace_prefix: None,
                    rewritten: false,
                    www: false,
                }),
                client_protocol_header: header.map(str::to_string),
                ..RouteOptions::default()
            }
            .into(),
            ..mk_path(PATHS[path], kind, BACKENDS[backend], ["ns/one", "ns/two"][source])
        })
}

fn arb_spec() -> impl Strategy<Value = TableSpec> {
    let host = (prop::collection::vec(arb_path(), 0..4), any::<bool>());
    (
        prop::collection::vec(prop::option::of(host), HOSTS.len()),
        prop::collection::vec(prop::collection::vec(1u8..6, 0..3), BACKENDS.len()),
        prop::option::of(0..BACKENDS.len() + 1),
    )
        .prop_map(|(hosts, endpoints, default)| {
            let mut spec = TableSpec::default();
            for (host, found) in HOSTS.iter().zip(hosts) {
                if let Some((mut paths, exclusive)) = found {
                    // At most one entry per (path, kind, listeners), as compile guarantees.
                    paths.sort_by(|a, b| {
                        (&a.path, a.kind, a.options.listeners).cmp(&(&b.path, b.kind, b.options.listeners))
                    });
                    paths.dedup_by(|a, b| {
                        (&a.path, a.kind, a.options.listeners) == (&b.path, b.kind, b.options.listeners)
                    });
                    spec.hosts.push(Arc::new(VirtualHostSpec {
                        host: HostMatch::from_rule_host(host),
                        paths,
                        exclusive,
                    }));
                }
            }
            spec.hosts.sort_by(|a, b| a.host.cmp(&b.host));
            // The last backend is sometimes missing: paths naming it are warnings.
            for (index, (id, endpoints)) in BACKENDS.iter().zip(endpoints).enumerate() {
                if index + 1 < BACKENDS.len() || endpoints.len() != 1 {
                    spec.backends.insert(id.to_string(), mk_backend(&endpoints));
                }
            }
            spec.default_backend = default.map(|index| BACKENDS.get(index).unwrap_or(&"ns/none:80").to_string());
            spec
        })
}

/// `spec` with one part taken from `other`: one host's entry, one backend, or the default.
fn mk_edit(spec: &TableSpec, other: &TableSpec, part: usize) -> TableSpec {
    let mut next = spec.clone();
    match part % 3 {
        0 => {
            let host = HostMatch::from_rule_host(HOSTS[part / 3 % HOSTS.len()]);
            next.hosts.retain(|vhost| vhost.host != host);
            next.hosts
                .extend(other.hosts.iter().filter(|vhost| vhost.host == host).cloned());
            next.hosts.sort_by(|a, b| a.host.cmp(&b.host));
        }
        1 => {
            let id = BACKENDS[part / 3 % BACKENDS.len()];
            next.backends.remove(id);
            if let Some(backend) = other.backends.get(id) {
                next.backends.insert(id.to_string(), backend.clone());
            }
        }
        _ => next.default_backend = other.default_backend.clone(),
    }
    next
}

proptest! {
    #[test]
    fn publishing_one_edit_at_a_time_serves_what_a_table_built_from_scratch_serves(
        first in arb_spec(),
        edits in prop::collection::vec((arb_spec(), any::<usize>()), 1..8),
    ) {
        let (mut publisher, reader) = RoutePublisher::new(ProxyMetrics::detached());
        let mut spec = first;
        for (step, (other, part)) in std::iter::once((TableSpec::default(), usize::MAX)).chain(edits).enumerate() {
            if step > 0 {
                spec = mk_edit(&spec, &other, part);
            }
            let published = publisher.publish(spec.clone());
            let (mut fresh, _) = RoutePublisher::new(ProxyMetrics::detached());
            let fresh_warnings = match fresh.publish(spec.clone()) {
                Published::Swapped { warnings } => warnings,
                Published::Unchanged => unreachable!("a new publisher always builds"),
            };
            if let Published::Swapped { warnings } = published {
                prop_assert_eq!(warnings, fresh_warnings);
            }
            let (live, scratch) = (reader.load(), fresh.reader().load());
            for host in ["a.example.com", "b.example.com", "x.example.com", "example.com", "other.test"] {
                for path in ["/", "/api", "/api/", "/api/x", "/x{y}", "/xy", "/nope"] {
                    for tls in [false, true] {
                        let (got, want) = (answer(&live, host, path, tls), answer(&scratch, host, path, tls));
                        prop_assert_eq!(got, want, "{} {} tls={}", host, path, tls);
                    }
                }
            }
        }
    }
}

/// `spec` with every path on both listeners, unless `keep` is even.
fn on_both(mut spec: TableSpec, keep: usize) -> TableSpec {
    if keep.is_multiple_of(2) {
        return spec;
    }
    for vhost in &mut spec.hosts {
        let vhost = Arc::make_mut(vhost);
        for path in &mut vhost.paths {
            Arc::make_mut(&mut path.options).listeners = Listeners::Both;
        }
        vhost.paths.dedup_by(|a, b| (&a.path, a.kind) == (&b.path, b.kind));
    }
    spec
}

fn part_of_first(edits: &[(TableSpec, usize)]) -> usize {
    edits.first().map_or(1, |(_, part)| part / 7)
}

/// The hosts and backends that differ between `old` and `new`, plus `extra` hosts (a superset is allowed).
fn mk_changes(old: &TableSpec, new: &TableSpec, extra: usize) -> SpecChanges {
    let host = |spec: &TableSpec, name: &HostMatch| spec.hosts.iter().find(|vhost| vhost.host == *name).cloned();
    let mut changes = SpecChanges::default();
    for name in old.hosts.iter().chain(&new.hosts).map(|vhost| &vhost.host) {
        if host(old, name) != host(new, name) {
            changes.hosts.insert(name.clone());
        }
    }
    changes
        .hosts
        .insert(HostMatch::from_rule_host(HOSTS[extra % HOSTS.len()]));
    for id in old.backends.keys().chain(new.backends.keys()) {
        if old.backends.get(id) != new.backends.get(id) {
            changes.backends.insert(id.clone());
        }
    }
    changes
}

proptest! {
    #[test]
    fn publishing_only_the_changed_hosts_serves_what_a_table_built_from_scratch_serves(
        first in arb_spec(),
        edits in prop::collection::vec((arb_spec(), any::<usize>()), 1..8),
    ) {
        let (mut publisher, reader) = RoutePublisher::new(ProxyMetrics::detached());
        // Half split by listener: one split table after another is published from its changes too.
        let mut spec = on_both(first, part_of_first(&edits));
        publisher.publish(spec.clone());
        for (other, part) in edits {
            let next = mk_edit(&spec, &on_both(other, part), part);
            let changes = mk_changes(&spec, &next, part);
            let published = publisher.publish_changed(next.clone(), &changes);
            prop_assert_eq!(published == Published::Unchanged, next == spec);
            spec = next;
            let (mut fresh, _) = RoutePublisher::new(ProxyMetrics::detached());
            fresh.publish(spec.clone());
            let (live, scratch) = (reader.load(), fresh.reader().load());
            prop_assert_eq!(&**live.spec(), &spec);
            for host in ["a.example.com", "b.example.com", "x.example.com", "example.com", "other.test"] {
                for path in ["/", "/api", "/api/", "/api/x", "/x{y}", "/xy", "/nope"] {
                    for tls in [false, true] {
                        let (got, want) = (answer(&live, host, path, tls), answer(&scratch, host, path, tls));
                        prop_assert_eq!(got, want, "{} {} tls={}", host, path, tls);
                    }
                }
            }
        }
    }
}
