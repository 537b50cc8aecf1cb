//! Whole-table tests of `compile`, built from `mk_*` fixtures. Shared world and expectations
//! here; one submodule per concern.

mod backend;
mod claims;
mod class;
mod diagnostics;
mod incremental;
mod precedence;
mod tls;

use shunt_spec::{BackendSpec, HostMatch, PathKind, PathSpec, TableSpec, UpstreamProtocol, VirtualHostSpec};

// Fixtures build k8s-openapi's Ingress (as the API and manifests spell it); `mk_shared` stores
// it converted, as the watchers do.
use k8s_openapi::api::networking::v1::Ingress;

use super::*;
use crate::fixtures::*;

// === the shared world: namespace "shop", Services web and api ===

const WEB: &str = "shop/web:80";
const API: &str = "shop/api:http";

/// Services `web` (port 80 "http") and `api` (port 80 "http"), each with ready pods on 8080.
fn world() -> ClusterState {
    ClusterState {
        services: mk_shared([
            mk_service("shop", "web", &[("http", 80)]),
            mk_service("shop", "api", &[("http", 80)]),
        ]),
        endpoint_slices: mk_shared([
            mk_slice(
                "shop",
                "web-a",
                "web",
                &[("http", 8080)],
                vec![mk_ready("10.0.0.2"), mk_ready("10.0.0.1")],
            ),
            mk_slice("shop", "api-a", "api", &[("http", 8080)], vec![mk_ready("10.0.1.1")]),
        ]),
        ..Default::default()
    }
}

fn world_with(ingresses: Vec<Ingress>) -> ClusterState {
    ClusterState {
        ingresses: mk_shared(ingresses),
        ..world()
    }
}

fn web_pods() -> BackendSpec {
    pods(&["10.0.0.1:8080", "10.0.0.2:8080"])
}

fn api_pods() -> BackendSpec {
    pods(&["10.0.1.1:8080"])
}

// === expectations ===

fn pods(endpoints: &[&str]) -> BackendSpec {
    let endpoints = endpoints
        .iter()
        .map(|e| e.parse().expect("test addresses are valid"))
        .collect();
    BackendSpec {
        protocol: UpstreamProtocol::Http1,
        endpoints,
        topology: Default::default(),
        tls: None,
    }
}

fn host(name: &str) -> HostMatch {
    HostMatch::Exact(name.to_string())
}

fn prefix(path: &str, backend: &str, source: &str) -> PathSpec {
    PathSpec {
        path: path.into(),
        kind: PathKind::Prefix,
        backend: backend.into(),
        source: source.into(),
        ssl_redirect: false,
        options: Default::default(),
    }
}

fn exact(path: &str, backend: &str, source: &str) -> PathSpec {
    PathSpec {
        kind: PathKind::Exact,
        ..prefix(path, backend, source)
    }
}

fn table(hosts: Vec<(HostMatch, Vec<PathSpec>)>, backends: Vec<(&str, BackendSpec)>) -> TableSpec {
    TableSpec {
        hosts: hosts
            .into_iter()
            .map(|(host, paths)| {
                Arc::new(VirtualHostSpec {
                    host,
                    paths,
                    exclusive: false,
                })
            })
            .collect(),
        default_backend: None,
        backends: backends.into_iter().map(|(id, spec)| (id.to_string(), spec)).collect(),
        tls: Default::default(),
        documents: Default::default(),
        ports: Default::default(),
    }
}

fn served(namespace: &str, name: &str) -> ServedIngress {
    ServedIngress {
        namespace: namespace.into(),
        name: name.into(),
        shadow: false,
    }
}

fn diagnostic(name: &str, reason: Reason, message: &str) -> Diagnostic {
    Diagnostic::new("shop", name, reason, message.to_string())
}

fn compile_default(state: &ClusterState) -> Compiled {
    compile(state, &CompileOptions::default())
}

// === tests ===

#[test]
fn an_ingress_compiles_to_hosts_paths_and_backends() {
    let ingress = mk_ingress(
        "shop",
        "front",
        vec![mk_rule(
            "shop.example.com",
            vec![mk_prefix("/", "web", 80), mk_prefix("/api", "api", "http")],
        )],
    );
    let compiled = compile_default(&world_with(vec![ingress]));
    let expected = table(
        vec![(
            host("shop.example.com"),
            vec![prefix("/", WEB, "shop/front"), prefix("/api", API, "shop/front")],
        )],
        vec![(API, api_pods()), (WEB, web_pods())],
    );
    assert_eq!(compiled.table, expected);
    assert_eq!(compiled.diagnostics, vec![]);
    assert_eq!(compiled.served, vec![served("shop", "front")]);
}

#[test]
fn an_empty_state_compiles_to_an_empty_table() {
    let compiled = compile_default(&ClusterState::default());
    assert_eq!(
        compiled,
        Compiled {
            table: TableSpec::default(),
            diagnostics: vec![],
            served: vec![],
            default_certificate_error: None,
            shadow: Arc::from([]),
            shadow_ingresses: Arc::from([]),
            gateway: None,
            shadow_gateway: Arc::from([]),
        }
    );
}

#[test]
fn prefix_paths_lose_trailing_slashes_and_exact_paths_stay_verbatim() {
    let mut no_path = mk_prefix("", "web", 80);
    no_path.path = None;
    let paths = vec![
        mk_prefix("/docs/", "web", 80),
        mk_prefix("//", "web", 80),
        mk_path("/exact/", "Exact", mk_backend("web", 80)),
        mk_path("/impl///", "ImplementationSpecific", mk_backend("web", 80)),
    ];
    let ingresses = vec![
        mk_ingress("shop", "a", vec![mk_rule("a.example.com", paths)]),
        mk_ingress("shop", "b", vec![mk_rule("b.example.com", vec![no_path])]),
    ];
    let compiled = compile_default(&world_with(ingresses));
    let expected = table(
        vec![
            (
                host("a.example.com"),
                vec![
                    prefix("/", WEB, "shop/a"),
                    prefix("/docs", WEB, "shop/a"),
                    exact("/exact/", WEB, "shop/a"),
                    prefix("/impl", WEB, "shop/a"),
                ],
            ),
            (host("b.example.com"), vec![prefix("/", WEB, "shop/b")]),
        ],
        vec![(WEB, web_pods())],
    );
    assert_eq!(compiled.table, expected);
    assert_eq!(compiled.diagnostics, vec![]);
}

#[test]
fn exact_and_prefix_on_the_same_path_are_distinct_routes() {
    let paths = vec![
        mk_path("/api", "Exact", mk_backend("api", "http")),
        mk_prefix("/api", "web", 80),
    ];
    let compiled = compile_default(&world_with(vec![mk_ingress("shop", "a", vec![mk_rule("", paths)])]));
    let expected = table(
        vec![(
            HostMatch::Any,
            vec![exact("/api", API, "shop/a"), prefix("/api", WEB, "shop/a")],
        )],
        vec![(API, api_pods()), (WEB, web_pods())],
    );
    assert_eq!(compiled.table, expected);
}

#[test]
fn wildcard_any_and_uppercase_hosts_are_sorted_exact_then_wildcard_then_any() {
    let rules = vec![
        mk_rule("", vec![mk_prefix("/", "web", 80)]),
        mk_rule("*.Example.com", vec![mk_prefix("/", "web", 80)]),
        mk_rule("*.com", vec![mk_prefix("/", "web", 80)]),
        mk_rule("WWW.Example.COM", vec![mk_prefix("/", "api", "http")]),
        mk_rule("localhost", vec![mk_prefix("/", "api", "http")]),
    ];
    let compiled = compile_default(&world_with(vec![mk_ingress("shop", "a", rules)]));
    let expected = table(
        vec![
            (host("localhost"), vec![prefix("/", API, "shop/a")]),
            (host("www.example.com"), vec![prefix("/", API, "shop/a")]),
            (HostMatch::Wildcard("com".into()), vec![prefix("/", WEB, "shop/a")]),
            (
                HostMatch::Wildcard("example.com".into()),
                vec![prefix("/", WEB, "shop/a")],
            ),
            (HostMatch::Any, vec![prefix("/", WEB, "shop/a")]),
        ],
        vec![(API, api_pods()), (WEB, web_pods())],
    );
    assert_eq!(compiled.table, expected);
    assert_eq!(compiled.diagnostics, vec![]);
}

#[test]
fn rules_for_the_same_host_merge_across_ingresses() {
    let ingresses = vec![
        mk_ingress(
            "shop",
            "a",
            vec![mk_rule("shop.example.com", vec![mk_prefix("/", "web", 80)])],
        ),
        mk_ingress(
            "shop",
            "b",
            vec![mk_rule("shop.example.com", vec![mk_prefix("/api", "api", "http")])],
        ),
    ];
    let compiled = compile_default(&world_with(ingresses));
    let expected = table(
        vec![(
            host("shop.example.com"),
            vec![prefix("/", WEB, "shop/a"), prefix("/api", API, "shop/b")],
        )],
        vec![(API, api_pods()), (WEB, web_pods())],
    );
    assert_eq!(compiled.table, expected);
}

#[test]
fn a_default_backend_becomes_the_table_default() {
    let ingress = with_default_backend(mk_ingress("shop", "fallback", vec![]), mk_backend("web", "http"));
    let compiled = compile_default(&world_with(vec![ingress]));
    let expected = TableSpec {
        hosts: vec![],
        default_backend: Some("shop/web:http".into()),
        backends: [("shop/web:http".to_string(), web_pods())].into(),
        tls: Default::default(),
        documents: Default::default(),
        ports: Default::default(),
    };
    assert_eq!(compiled.table, expected);
    assert_eq!(compiled.diagnostics, vec![]);
}

#[test]
fn a_rule_with_a_host_but_no_http_adds_nothing() {
    let mut rule = mk_rule("tls-only.example.com", vec![]);
    rule.http = None;
    let ingress = mk_ingress(
        "shop",
        "a",
        vec![rule, mk_rule("shop.example.com", vec![mk_prefix("/", "web", 80)])],
    );
    let compiled = compile_default(&world_with(vec![ingress]));
    let expected = table(
        vec![(host("shop.example.com"), vec![prefix("/", WEB, "shop/a")])],
        vec![(WEB, web_pods())],
    );
    assert_eq!(compiled.table, expected);
    assert_eq!(compiled.diagnostics, vec![]);
    assert_eq!(compiled.served, vec![served("shop", "a")]);
}

#[test]
fn an_ingress_without_spec_or_rules_is_served_but_routes_nothing() {
    let mut bare = mk_ingress("shop", "bare", vec![]);
    bare.spec.as_mut().expect("fixture has a spec").rules = None;
    let compiled = compile_default(&world_with(vec![bare]));
    assert_eq!(compiled.table, TableSpec::default());
    assert_eq!(compiled.served, vec![served("shop", "bare")]);
}

#[test]
fn an_ingress_without_namespace_is_in_default() {
    let mut ingress = mk_ingress("x", "a", vec![mk_rule("", vec![mk_prefix("/", "web", 80)])]);
    ingress.metadata.namespace = None;
    let mut state = world_with(vec![ingress]);
    state.services.push(mk_service("default", "web", &[("", 80)]).into());
    let compiled = compile_default(&state);
    let expected = table(
        vec![(HostMatch::Any, vec![prefix("/", "default/web:80", "default/a")])],
        vec![("default/web:80", pods(&[]))],
    );
    assert_eq!(compiled.table, expected);
    assert_eq!(compiled.served, vec![served("default", "a")]);
}

#[test]
fn backends_hold_exactly_what_surviving_paths_and_the_default_use() {
    let ingresses = vec![
        created_at(
            mk_ingress("shop", "old", vec![mk_rule("", vec![mk_prefix("/", "web", 80)])]),
            1,
        ),
        // Loses "/" to `old`, so `api` must not appear in the backends.
        created_at(
            mk_ingress("shop", "new", vec![mk_rule("", vec![mk_prefix("/", "api", "http")])]),
            2,
        ),
    ];
    let compiled = compile_default(&world_with(ingresses));
    assert_eq!(compiled.table.backends.keys().collect::<Vec<_>>(), vec![WEB]);
}

#[test]
fn equal_input_in_any_order_gives_an_equal_result() {
    let mut state = world_with(vec![
        mk_ingress(
            "shop",
            "a",
            vec![mk_rule("a.example.com", vec![mk_prefix("/", "web", 80)])],
        ),
        mk_ingress(
            "shop",
            "b",
            vec![mk_rule("a.example.com", vec![mk_prefix("/", "api", "http")])],
        ),
        created_at(
            mk_ingress("blog", "c", vec![mk_rule("", vec![mk_prefix("/", "missing", 80)])]),
            5,
        ),
        mk_ingress(
            "blog",
            "d",
            vec![mk_rule("*.example.com", vec![mk_prefix("/x", "web", 80)])],
        ),
        with_default_backend(mk_ingress("shop", "e", vec![]), mk_backend("api", "http")),
    ]);
    state
        .endpoint_slices
        .push(mk_slice("shop", "web-b", "web", &[("http", 8080)], vec![mk_ready("10.0.0.3")]).into());
    let first = compile_default(&state);
    assert!(
        !first.diagnostics.is_empty(),
        "the scenario includes conflicts and a missing service"
    );
    for rotation in 0..state.ingresses.len() {
        let mut shuffled = state.clone();
        shuffled.ingresses.rotate_left(rotation);
        shuffled.services.reverse();
        shuffled.endpoint_slices.rotate_left(rotation % 3);
        for slice in &mut shuffled.endpoint_slices {
            Arc::make_mut(slice).endpoints.reverse();
        }
        if rotation % 2 == 1 {
            shuffled.ingresses.reverse();
        }
        assert_eq!(compile_default(&shuffled), first, "rotation {rotation}");
    }
}

#[test]
fn default_options_name_shunt() {
    let options = CompileOptions::default();
    assert_eq!(options.controller_name, "shunt.dev/ingress-controller");
    assert_eq!(options.ingress_classes, vec!["shunt".to_string()]);
    assert!(!options.watch_ingress_without_class);
    assert!(options.shadow_classes.is_empty());
}
