//! Conflicts between Ingresses: the oldest wins, then namespace and name; the rest are told.

use super::*;

/// An Ingress in `namespace` routing `/` on [`HOST`] to `service` (which must exist there).
fn claimant(namespace: &str, name: &str, service: &str) -> Ingress {
    let port: Port = if service == "web" { 80.into() } else { "http".into() };
    mk_ingress(
        namespace,
        name,
        vec![mk_rule(HOST, vec![mk_prefix("/", service, port)])],
    )
}

const HOST: &str = "shop.example.com";

fn conflict(namespace: &str, name: &str, winner: &str) -> Diagnostic {
    let message = format!(r#"prefix path "/" on host "shop.example.com" is already routed by ingress "{winner}""#);
    Diagnostic::new(namespace, name, Reason::Conflict, message)
}

fn winner_table(backend: &str, source: &str) -> TableSpec {
    let spec = if backend == WEB { web_pods() } else { api_pods() };
    table(
        vec![(host(HOST), vec![prefix("/", backend, source)])],
        vec![(backend, spec)],
    )
}

#[test]
fn the_oldest_ingress_wins_whatever_its_name_or_position() {
    for ingresses in [
        vec![
            created_at(claimant("shop", "zz-old", "web"), 100),
            created_at(claimant("shop", "aa-new", "api"), 200),
        ],
        vec![
            created_at(claimant("shop", "aa-new", "api"), 200),
            created_at(claimant("shop", "zz-old", "web"), 100),
        ],
    ] {
        let compiled = compile_default(&world_with(ingresses));
        assert_eq!(compiled.table, winner_table(WEB, "shop/zz-old"));
        assert_eq!(compiled.diagnostics, vec![conflict("shop", "aa-new", "shop/zz-old")]);
    }
}

#[test]
fn equal_creation_times_fall_back_to_namespace_then_name() {
    let mut state = world_with(vec![
        created_at(claimant("shop", "b", "api"), 100),
        created_at(claimant("shop", "a", "web"), 100),
    ]);
    let compiled = compile_default(&state);
    assert_eq!(compiled.table, winner_table(WEB, "shop/a"));
    assert_eq!(compiled.diagnostics, vec![conflict("shop", "b", "shop/a")]);

    // Namespace before name: "blog/z" beats "shop/a".
    state
        .ingresses
        .push(Arc::new(created_at(claimant("blog", "z", "web"), 100).into()));
    state.services.push(mk_service("blog", "web", &[("http", 80)]).into());
    state
        .endpoint_slices
        .push(mk_slice("blog", "web-a", "web", &[("http", 8080)], vec![mk_ready("10.1.0.1")]).into());
    let compiled = compile_default(&state);
    let expected = table(
        vec![(host(HOST), vec![prefix("/", "blog/web:80", "blog/z")])],
        vec![("blog/web:80", pods(&["10.1.0.1:8080"]))],
    );
    assert_eq!(compiled.table, expected);
    assert_eq!(
        compiled.diagnostics,
        vec![conflict("shop", "a", "blog/z"), conflict("shop", "b", "blog/z")]
    );
}

#[test]
fn ingresses_without_a_creation_time_come_last() {
    let ingresses = vec![
        claimant("shop", "a-undated", "web"),
        created_at(claimant("shop", "z-dated", "api"), 5),
    ];
    let compiled = compile_default(&world_with(ingresses));
    assert_eq!(compiled.table, winner_table(API, "shop/z-dated"));
    assert_eq!(
        compiled.diagnostics,
        vec![conflict("shop", "a-undated", "shop/z-dated")]
    );
}

#[test]
fn a_broken_older_path_does_not_block_a_working_newer_one() {
    let ingresses = vec![
        created_at(claimant("shop", "old", "gone"), 1),
        created_at(claimant("shop", "new", "web"), 2),
    ];
    let compiled = compile_default(&world_with(ingresses));
    assert_eq!(compiled.table, winner_table(WEB, "shop/new"));
    assert_eq!(
        compiled.diagnostics.iter().map(|d| d.reason).collect::<Vec<_>>(),
        vec![Reason::MissingService]
    );
}

#[test]
fn losers_keep_their_other_paths() {
    let ingresses = vec![
        created_at(claimant("shop", "old", "web"), 1),
        created_at(
            mk_ingress(
                "shop",
                "new",
                vec![mk_rule(
                    HOST,
                    vec![mk_prefix("/", "api", "http"), mk_prefix("/api", "api", "http")],
                )],
            ),
            2,
        ),
    ];
    let compiled = compile_default(&world_with(ingresses));
    let expected = table(
        vec![(
            host(HOST),
            vec![prefix("/", WEB, "shop/old"), prefix("/api", API, "shop/new")],
        )],
        vec![(API, api_pods()), (WEB, web_pods())],
    );
    assert_eq!(compiled.table, expected);
    assert_eq!(compiled.diagnostics, vec![conflict("shop", "new", "shop/old")]);
}

#[test]
fn the_first_default_backend_wins_and_later_ones_conflict() {
    let ingresses = vec![
        with_default_backend(
            created_at(mk_ingress("shop", "second", vec![]), 20),
            mk_backend("api", "http"),
        ),
        with_default_backend(
            created_at(mk_ingress("shop", "first", vec![]), 10),
            mk_backend("web", 80),
        ),
    ];
    let compiled = compile_default(&world_with(ingresses));
    let expected = TableSpec {
        hosts: vec![],
        default_backend: Some(WEB.into()),
        backends: [(WEB.to_string(), web_pods())].into(),
        tls: Default::default(),
        documents: Default::default(),
        ports: Default::default(),
    };
    assert_eq!(compiled.table, expected);
    assert_eq!(
        compiled.diagnostics,
        vec![diagnostic(
            "second",
            Reason::Conflict,
            r#"default backend is already set by ingress "shop/first""#,
        )]
    );
}

#[test]
fn the_same_path_on_different_hosts_or_kinds_does_not_conflict() {
    let ingresses = vec![
        claimant("shop", "a", "web"),
        mk_ingress(
            "shop",
            "b",
            vec![mk_rule("other.example.com", vec![mk_prefix("/", "api", "http")])],
        ),
        mk_ingress(
            "shop",
            "c",
            vec![mk_rule(HOST, vec![mk_path("/", "Exact", mk_backend("api", "http"))])],
        ),
    ];
    let compiled = compile_default(&world_with(ingresses));
    assert_eq!(compiled.diagnostics, vec![]);
    assert_eq!(compiled.table.hosts.iter().map(|h| h.paths.len()).sum::<usize>(), 3);
}
