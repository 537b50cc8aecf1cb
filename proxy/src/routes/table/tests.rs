//! Lookup semantics, including every row of the Kubernetes Ingress path-matching table.

use std::{collections::BTreeMap, sync::Arc};

use super::*;
use crate::{
    metrics::{ProxyMetrics, RouteStats, UpstreamStats},
    spec::{
        BackendSpec, HostMatch, Listeners, PathKind, PathSpec, RouteOptions, TableSpec, UpstreamProtocol,
        VirtualHostSpec,
    },
    upstream::Upstream,
};

/// A table whose backends are named after the path that routes to them, so a lookup's
/// answer says which rule matched: `"Exact /foo"`, `"Prefix /"`.
fn mk_table(hosts: &[(&str, &[(PathKind, &str)])], default: Option<&str>) -> RouteTable {
    let mut backends = BTreeMap::new();
    let mut vhosts = Vec::new();
    for (host, paths) in hosts {
        let host = HostMatch::from_rule_host(host);
        let paths = paths
            .iter()
            .map(|(kind, path)| {
                let backend = format!("{host} {kind:?} {path}");
                backends.insert(
                    backend.clone(),
                    BackendSpec {
                        protocol: UpstreamProtocol::Http1,
                        endpoints: [].into(),
                        topology: Default::default(),
                        tls: None,
                    },
                );
                PathSpec {
                    path: path.to_string(),
                    kind: *kind,
                    backend,
                    source: "ns/ing".into(),
                    ssl_redirect: false,
                    options: Default::default(),
                }
            })
            .collect();
        vhosts.push(Arc::new(VirtualHostSpec {
            host,
            paths,
            exclusive: false,
        }));
    }
    let default_backend = default.map(|d| {
        backends.insert(
            d.to_string(),
            BackendSpec {
                protocol: UpstreamProtocol::Http1,
                endpoints: [].into(),
                topology: Default::default(),
                tls: None,
            },
        );
        d.to_string()
    });
    let spec = TableSpec {
        hosts: vhosts,
        default_backend,
        backends,
        tls: Default::default(),
        documents: Default::default(),
        ports: Default::default(),
    };
    let metrics = ProxyMetrics::detached();
    let (table, warnings) = RouteTable::build(
        Arc::new(spec),
        |id| {
            Arc::new(Upstream::new(
                id,
                UpstreamProtocol::Http1,
                vec![],
                UpstreamStats::default(),
            ))
        },
        |route, backend| metrics.route_stats(route, backend),
    );
    assert_eq!(warnings, vec![]);
    table
}

fn hit(table: &RouteTable, host: &str, path: &str) -> Option<String> {
    table.lookup(host, path).map(|route| route.upstream.id.to_string())
}

/// Paths on the host-less vhost; returns which rule matched `path`.
fn matched(paths: &[(PathKind, &str)], path: &str) -> Option<String> {
    let table = mk_table(&[("", paths)], None);
    hit(&table, "any.host", path).map(|id| id.trim_start_matches("* ").to_string())
}

use PathKind::{Exact, Prefix};

#[test]
fn prefix_root_matches_every_path() {
    for path in ["/", "/foo", "/foo/bar/", "/a/b/c/d"] {
        assert_eq!(matched(&[(Prefix, "/")], path).as_deref(), Some("Prefix /"), "{path}");
    }
}

proptest::proptest! {
    /// A host with only `Prefix /` skips the matchit tree; one with a tree beside it (an extra
    /// `Exact` path no request here takes) must answer every other path the same way.
    #[test]
    fn a_root_only_host_answers_every_path_as_a_host_with_a_tree_does(path in "[/a-z{}*.%]{0,12}") {
        proptest::prop_assume!(path != "/zz");
        let table = mk_table(&[("root.example", &[(Prefix, "/")]), ("tree.example", &[(Prefix, "/"), (Exact, "/zz")])], None);
        let root = hit(&table, "root.example", &path).map(|id| id.replace("root.example ", ""));
        let tree = hit(&table, "tree.example", &path).map(|id| id.replace("tree.example ", ""));
        proptest::prop_assert_eq!(root.as_deref(), Some("Prefix /"));
        proptest::prop_assert_eq!(tree, root);
    }
}

#[test]
fn exact_matches_only_the_identical_path() {
    let paths = [(Exact, "/foo")];
    assert_eq!(matched(&paths, "/foo").as_deref(), Some("Exact /foo"));
    assert_eq!(matched(&paths, "/bar"), None);
    assert_eq!(matched(&paths, "/foo/"), None);
    assert_eq!(matched(&paths, "/Foo"), None, "case-sensitive");
}

#[test]
fn exact_with_trailing_slash_does_not_match_without() {
    assert_eq!(matched(&[(Exact, "/foo/")], "/foo"), None);
    assert_eq!(matched(&[(Exact, "/foo/")], "/foo/").as_deref(), Some("Exact /foo/"));
}

#[test]
fn a_trailing_slash_goes_to_the_longer_prefix_not_the_root_catch_all() {
    let paths = [(Prefix, "/"), (Prefix, "/api")];
    assert_eq!(matched(&paths, "/api/").as_deref(), Some("Prefix /api"));
    assert_eq!(matched(&paths, "/api/x/").as_deref(), Some("Prefix /api"));
    assert_eq!(matched(&paths, "/apix/").as_deref(), Some("Prefix /"));
    let with_exact = [(Prefix, "/"), (Prefix, "/api"), (Exact, "/api/")];
    assert_eq!(matched(&with_exact, "/api/").as_deref(), Some("Exact /api/"));
}

#[test]
fn prefix_with_or_without_trailing_slash_matches_both_forms() {
    // Compile normalises `/foo/` to `/foo`; the table must cope with either spelling.
    for rule in ["/foo", "/foo/"] {
        for path in ["/foo", "/foo/"] {
            assert!(
                matched(&[(Prefix, rule)], path).is_some(),
                "Prefix {rule} should match {path}"
            );
        }
    }
}

#[test]
fn prefix_matches_whole_path_elements_only() {
    assert_eq!(matched(&[(Prefix, "/aaa/bb")], "/aaa/bbb"), None);
    assert!(matched(&[(Prefix, "/aaa/bbb/")], "/aaa/bbb").is_some());
    let paths = [(Prefix, "/aaa/bbb")];
    for path in ["/aaa/bbb/", "/aaa/bbb/ccc", "/aaa/bbb"] {
        assert!(matched(&paths, path).is_some(), "{path}");
    }
    assert_eq!(matched(&paths, "/aaa/bbbxyz"), None);
    assert_eq!(matched(&[(Prefix, "/foo")], "/foobar"), None);
}

#[test]
fn longest_prefix_wins() {
    let paths = [(Prefix, "/"), (Prefix, "/aaa"), (Prefix, "/aaa/bbb")];
    assert_eq!(matched(&paths, "/aaa/bbb").as_deref(), Some("Prefix /aaa/bbb"));
    assert_eq!(matched(&paths, "/aaa/bbb/c").as_deref(), Some("Prefix /aaa/bbb"));
    assert_eq!(matched(&paths, "/aaa/bbbc").as_deref(), Some("Prefix /aaa"));
    assert_eq!(matched(&paths, "/aaa/bx").as_deref(), Some("Prefix /aaa"));
    assert_eq!(matched(&paths, "/aaa").as_deref(), Some("Prefix /aaa"));
    assert_eq!(matched(&paths, "/ccc").as_deref(), Some("Prefix /"));
    assert_eq!(matched(&paths, "/aaax").as_deref(), Some("Prefix /"));
}

#[test]
fn exact_beats_prefix_of_equal_length() {
    let paths = [(Prefix, "/foo"), (Exact, "/foo")];
    assert_eq!(matched(&paths, "/foo").as_deref(), Some("Exact /foo"));
    assert_eq!(matched(&paths, "/foo/").as_deref(), Some("Prefix /foo"));
    assert_eq!(matched(&paths, "/foo/x").as_deref(), Some("Prefix /foo"));
}

#[test]
fn longer_exact_beats_shorter_prefix_and_misses_fall_back() {
    let paths = [(Prefix, "/api"), (Exact, "/api/v1/health"), (Exact, "/api/")];
    assert_eq!(
        matched(&paths, "/api/v1/health").as_deref(),
        Some("Exact /api/v1/health")
    );
    assert_eq!(matched(&paths, "/api/v1/healthz").as_deref(), Some("Prefix /api"));
    assert_eq!(matched(&paths, "/api/v1").as_deref(), Some("Prefix /api"));
    assert_eq!(matched(&paths, "/api/").as_deref(), Some("Exact /api/"));
}

#[test]
fn query_strings_never_reach_the_matcher_and_braces_are_literal() {
    let paths = [(Exact, "/a{b}"), (Prefix, "/{*x}")];
    assert_eq!(matched(&paths, "/a{b}").as_deref(), Some("Exact /a{b}"));
    assert_eq!(matched(&paths, "/ab"), None);
    assert_eq!(matched(&paths, "/{*x}/deeper").as_deref(), Some("Prefix /{*x}"));
    assert_eq!(matched(&paths, "/other"), None);
}

#[test]
fn hosts_cascade_exact_then_wildcard_then_any_then_default() {
    let table = mk_table(
        &[
            ("shop.example.com", &[(Prefix, "/cart")]),
            ("*.example.com", &[(Prefix, "/")]),
            ("", &[(Prefix, "/status")]),
        ],
        Some("default"),
    );
    let h = |host, path| hit(&table, host, path);
    assert_eq!(
        h("shop.example.com", "/cart/1").as_deref(),
        Some("shop.example.com Prefix /cart")
    );
    assert_eq!(
        h("shop.example.com", "/other").as_deref(),
        Some("*.example.com Prefix /"),
        "falls to the wildcard"
    );
    assert_eq!(h("blog.example.com", "/x").as_deref(), Some("*.example.com Prefix /"));
    assert_eq!(
        h("a.b.example.com", "/x").as_deref(),
        Some("default"),
        "wildcards cover exactly one label"
    );
    assert_eq!(
        h("example.com", "/x").as_deref(),
        Some("default"),
        "the bare suffix is not a wildcard match"
    );
    assert_eq!(h("a.b.example.com", "/status").as_deref(), Some("* Prefix /status"));
    assert_eq!(h("elsewhere.org", "/nothing").as_deref(), Some("default"));
}

#[test]
fn an_empty_first_label_is_not_covered_by_a_wildcard() {
    let table = mk_table(&[("*.example.com", &[(Prefix, "/")])], None);
    assert_eq!(hit(&table, ".example.com", "/"), None);
    assert_eq!(
        hit(&table, "a.example.com", "/").as_deref(),
        Some("*.example.com Prefix /")
    );
}

#[test]
fn no_match_and_no_default_is_none() {
    let table = mk_table(&[("shop.example.com", &[(Exact, "/")])], None);
    assert_eq!(hit(&table, "shop.example.com", "/x"), None);
    assert_eq!(hit(&table, "other", "/"), None);
    assert_eq!(hit(&RouteTable::empty(), "x", "/"), None);
}

#[test]
fn paths_naming_unknown_backends_are_reported_not_built() {
    let spec = TableSpec {
        hosts: vec![Arc::new(VirtualHostSpec {
            host: HostMatch::Any,
            paths: vec![PathSpec {
                path: "/".into(),
                kind: Prefix,
                backend: "missing".into(),
                source: "ns/ing".into(),
                ssl_redirect: false,
                options: Default::default(),
            }],
            exclusive: false,
        })],
        default_backend: None,
        backends: BTreeMap::new(),
        tls: Default::default(),
        documents: Default::default(),
        ports: Default::default(),
    };
    let (table, warnings) = RouteTable::build(
        Arc::new(spec),
        |_| unreachable!("no backend exists"),
        |_, _| RouteStats::detached(),
    );
    assert_eq!(warnings.len(), 1);
    assert_eq!(hit(&table, "x", "/"), None);
}

#[test]
fn a_client_protocol_header_naming_a_connection_or_framing_field_is_reported_not_built() {
    let built = |name: &str| {
        let mut path = mk_path("/", Prefix, "web", Listeners::default());
        Arc::make_mut(&mut path.options).client_protocol_header = Some(name.into());
        let (table, warnings) = build_profile_table(vec![(HostMatch::Any, false, vec![path])]);
        (hit(&table, "x", "/"), warnings.len())
    };
    for name in [
        "Content-Length",
        "transfer-encoding",
        "Host",
        "connection",
        "upgrade",
        "te",
        "trailer",
        "keep-alive",
        "proxy-authorization",
    ] {
        assert_eq!(built(name), (None, 1), "{name}");
    }
    for name in ["X-Client-Proto", "x-forwarded-proto"] {
        assert_eq!(built(name), (Some("web".into()), 0), "{name}");
    }
}

/// A table from full path specs that must build without warnings.
fn mk_profile_table(hosts: Vec<(HostMatch, bool, Vec<PathSpec>)>) -> RouteTable {
    let (table, warnings) = build_profile_table(hosts);
    assert_eq!(warnings, vec![]);
    table
}

/// A table from full path specs, each backend an HTTP/1 one without endpoints, and what the
/// build reported.
fn build_profile_table(hosts: Vec<(HostMatch, bool, Vec<PathSpec>)>) -> (RouteTable, Vec<BuildWarning>) {
    let mut backends = BTreeMap::new();
    let hosts = hosts
        .into_iter()
        .map(|(host, exclusive, paths)| {
            for path in &paths {
                backends.insert(
                    path.backend.clone(),
                    BackendSpec {
                        protocol: UpstreamProtocol::Http1,
                        endpoints: [].into(),
                        topology: Default::default(),
                        tls: None,
                    },
                );
            }
            Arc::new(VirtualHostSpec { host, paths, exclusive })
        })
        .collect();
    let spec = TableSpec {
        hosts,
        default_backend: None,
        backends,
        tls: Default::default(),
        documents: Default::default(),
        ports: Default::default(),
    };
    RouteTable::build(
        Arc::new(spec),
        |id| {
            Arc::new(Upstream::new(
                id,
                UpstreamProtocol::Http1,
                vec![],
                UpstreamStats::default(),
            ))
        },
        |_, _| RouteStats::detached(),
    )
}

fn mk_path(path: &str, kind: PathKind, backend: &str, listeners: Listeners) -> PathSpec {
    PathSpec {
        path: path.into(),
        kind,
        backend: backend.into(),
        source: "ns/ing".into(),
        ssl_redirect: false,
        options: RouteOptions {
            listeners,
            ..Default::default()
        }
        .into(),
    }
}

/// Which backend (or `redirect LOCATION-PATH`) answers on the plain (`tls = false`) or TLS listener.
fn hit_on(table: &RouteTable, host: &str, path: &str, tls: bool) -> Option<String> {
    let route = table.lookup_on(host, path, tls)?;
    Some(match &route.redirect {
        Some(redirect) => format!("redirect {}", redirect.path.as_deref().unwrap_or("")),
        None => route.upstream.id.to_string(),
    })
}

#[test]
fn character_prefixes_match_inside_segments_and_the_longest_wins() {
    let host = HostMatch::Exact("a.example.com".into());
    let table = mk_profile_table(vec![(
        host,
        true,
        vec![
            mk_path("/", PathKind::CharPrefix, "root", Listeners::Both),
            mk_path("/foo", PathKind::CharPrefix, "foo", Listeners::Both),
            mk_path("/foobar/x", PathKind::CharPrefix, "foobar-x", Listeners::Both),
            mk_path("/foo", PathKind::Exact, "exact-foo", Listeners::Both),
        ],
    )]);
    let h = |path| hit_on(&table, "a.example.com", path, false);
    assert_eq!(h("/foobar").as_deref(), Some("foo"));
    assert_eq!(h("/foo/bar").as_deref(), Some("foo"));
    assert_eq!(h("/foobar/xy").as_deref(), Some("foobar-x"));
    assert_eq!(h("/foo").as_deref(), Some("exact-foo"), "Exact is nginx's `=` and wins");
    assert_eq!(h("/fo").as_deref(), Some("root"));
}

#[test]
fn a_rule_ending_in_a_slash_answers_the_bare_path_with_a_redirect_unless_a_rule_is_exactly_it() {
    let table = mk_profile_table(vec![
        (
            HostMatch::Exact("a.example.com".into()),
            true,
            vec![
                mk_path("/", PathKind::CharPrefix, "root", Listeners::Both),
                mk_path("/abc/", PathKind::CharPrefix, "abc", Listeners::Both),
            ],
        ),
        (
            HostMatch::Exact("b.example.com".into()),
            true,
            vec![
                mk_path("/abc/", PathKind::CharPrefix, "abc", Listeners::Both),
                mk_path("/abc", PathKind::CharPrefix, "bare", Listeners::Both),
            ],
        ),
    ]);
    assert_eq!(
        hit_on(&table, "a.example.com", "/abc", false).as_deref(),
        Some("redirect /abc/")
    );
    assert_eq!(hit_on(&table, "a.example.com", "/abc/d", false).as_deref(), Some("abc"));
    assert_eq!(hit_on(&table, "a.example.com", "/abcd", false).as_deref(), Some("root"));
    let redirect = table.lookup_on("a.example.com", "/abc", true).expect("a route");
    assert_eq!(redirect.redirect.as_ref().map(|r| r.code), Some(301));
    assert_eq!(hit_on(&table, "b.example.com", "/abc", false).as_deref(), Some("bare"));
}

#[test]
fn a_deep_wildcard_matches_any_number_of_labels_and_exact_hosts_win() {
    let table = mk_profile_table(vec![
        (
            HostMatch::DeepWildcard("example.com".into()),
            true,
            vec![mk_path("/", PathKind::CharPrefix, "wild", Listeners::Both)],
        ),
        (
            HostMatch::Exact("a.b.example.com".into()),
            true,
            vec![mk_path("/", PathKind::CharPrefix, "exact", Listeners::Both)],
        ),
        (
            HostMatch::DeepWildcard("b.example.com".into()),
            true,
            vec![mk_path("/", PathKind::CharPrefix, "deeper", Listeners::Both)],
        ),
    ]);
    assert_eq!(hit_on(&table, "x.example.com", "/", false).as_deref(), Some("wild"));
    assert_eq!(hit_on(&table, "x.y.z.example.com", "/", false).as_deref(), Some("wild"));
    assert_eq!(hit_on(&table, "a.b.example.com", "/", false).as_deref(), Some("exact"));
    assert_eq!(
        hit_on(&table, "c.b.example.com", "/", false).as_deref(),
        Some("deeper"),
        "longest suffix"
    );
    assert_eq!(hit_on(&table, "example.com", "/", false), None);
    assert_eq!(hit_on(&table, "xexample.com", "/", false), None);
}

#[test]
fn an_exclusive_host_stops_at_404_while_unknown_hosts_fall_to_host_less_rules() {
    let table = mk_profile_table(vec![
        (
            HostMatch::Exact("a.example.com".into()),
            true,
            vec![mk_path("/app", PathKind::CharPrefix, "app", Listeners::Both)],
        ),
        (
            HostMatch::Any,
            false,
            vec![mk_path("/", PathKind::CharPrefix, "default-domain", Listeners::Both)],
        ),
    ]);
    assert_eq!(hit_on(&table, "a.example.com", "/other", false), None);
    assert_eq!(
        hit_on(&table, "unknown.test", "/other", false).as_deref(),
        Some("default-domain")
    );
}

#[test]
fn routes_scoped_to_one_listener_are_unknown_on_the_other() {
    let table = mk_profile_table(vec![
        (
            HostMatch::Exact("tls-only.example.com".into()),
            false,
            vec![mk_path("/", PathKind::CharPrefix, "secure", Listeners::Tls)],
        ),
        (
            HostMatch::Exact("exclusive.example.com".into()),
            true,
            vec![mk_path("/", PathKind::CharPrefix, "secure", Listeners::Tls)],
        ),
        (
            HostMatch::Exact("mixed.example.com".into()),
            true,
            vec![
                mk_path("/", PathKind::CharPrefix, "plain", Listeners::Plain),
                mk_path("/", PathKind::CharPrefix, "secure", Listeners::Tls),
                mk_path("/both", PathKind::CharPrefix, "both", Listeners::Both),
            ],
        ),
        (
            HostMatch::Any,
            false,
            vec![mk_path("/", PathKind::CharPrefix, "default-domain", Listeners::Plain)],
        ),
    ]);
    assert_eq!(
        hit_on(&table, "tls-only.example.com", "/", true).as_deref(),
        Some("secure")
    );
    assert_eq!(
        hit_on(&table, "tls-only.example.com", "/", false).as_deref(),
        Some("default-domain"),
        "the plain listener does not know the host"
    );
    assert_eq!(
        hit_on(&table, "exclusive.example.com", "/", false),
        None,
        "an exclusive host is known on both listeners"
    );
    assert_eq!(
        hit_on(&table, "mixed.example.com", "/x", false).as_deref(),
        Some("plain")
    );
    assert_eq!(
        hit_on(&table, "mixed.example.com", "/x", true).as_deref(),
        Some("secure")
    );
    assert_eq!(
        hit_on(&table, "mixed.example.com", "/both", true).as_deref(),
        Some("both")
    );
    assert_eq!(
        hit_on(&table, "mixed.example.com", "/both", false).as_deref(),
        Some("both")
    );
}

#[test]
fn a_route_is_named_its_host_as_displayed_then_its_path() {
    let mut scratch = String::from("left over from the previous route");
    for host in ["app.example.com", "*.example.com", "**.example.com", ""] {
        let host = HostMatch::from_rule_host(host);
        assert_eq!(&*route_name(&mut scratch, &host, "/api"), format!("{host}/api"));
    }
}

#[test]
fn a_route_and_its_counters_share_one_name_and_name_its_upstream_as_backend() {
    let table = mk_table(&[("app.example.com", &[(Prefix, "/api")])], None);
    let route = table.lookup("app.example.com", "/api").expect("a route");
    let (name, backend) = route.stats.key();
    assert_eq!((name, backend), (&*route.name, &*route.upstream.id));
    assert_eq!(name, "app.example.com/api");
}

#[test]
fn routes_without_options_share_one_set_of_rules() {
    let table = mk_table(
        &[
            ("a.example.com", &[(Prefix, "/")]),
            ("b.example.com", &[(Prefix, "/x")]),
        ],
        None,
    );
    let a = table.lookup("a.example.com", "/").expect("a route");
    let b = table.lookup("b.example.com", "/x").expect("a route");
    assert!(Arc::ptr_eq(&a.rules, &b.rules));
    assert!(Arc::ptr_eq(&a.rules, &RouteRules::unchanged()));
}

#[test]
fn routes_with_equal_options_share_rules_unless_they_balance_on_their_own() {
    let plain = |host: &str, path: &str| {
        let path = mk_path(path, PathKind::Prefix, &format!("ns/{host}:80"), Listeners::Plain);
        (HostMatch::from_rule_host(host), false, vec![path])
    };
    let hashed = |host: &str| {
        let (host, exclusive, mut paths) = plain(host, "/");
        paths[0].options = RouteOptions {
            hash: Some(crate::spec::HashKey { parts: Vec::new() }),
            ..(*paths[0].options).clone()
        }
        .into();
        (host, exclusive, paths)
    };
    let both = (
        HostMatch::from_rule_host("c.example.com"),
        false,
        vec![mk_path("/", PathKind::Prefix, "ns/c:80", Listeners::Both)],
    );
    let table = mk_profile_table(vec![
        plain("a.example.com", "/"),
        plain("b.example.com", "/b"),
        both,
        plain("d.example.com", "/"),
        hashed("e.example.com"),
        hashed("f.example.com"),
    ]);
    let rules = |host: &str, path: &str| table.lookup_on(host, path, false).expect("a route").rules.clone();
    assert!(Arc::ptr_eq(&rules("a.example.com", "/"), &rules("b.example.com", "/b")));
    assert!(Arc::ptr_eq(&rules("c.example.com", "/"), &RouteRules::unchanged()));
    assert!(!Arc::ptr_eq(&rules("a.example.com", "/"), &rules("c.example.com", "/")));
    assert!(!Arc::ptr_eq(&rules("e.example.com", "/"), &rules("f.example.com", "/")));
    assert!(rules("e.example.com", "/").balance.is_some());
    assert!(rules("d.example.com", "/").balance.is_none());
}

#[test]
fn a_host_whose_canary_upstream_was_replaced_is_built_again_not_reused() {
    use crate::spec::{CanaryRule, CanarySpec};
    let mut path = mk_path("/", PathKind::Prefix, "ns/main:80", Listeners::Both);
    path.options = RouteOptions {
        canary: Some(CanarySpec {
            backend: "ns/canary:80".into(),
            rule: CanaryRule {
                header: None,
                cookie: None,
                weight: 10,
                weight_total: 100,
            },
            hash: None,
        }),
        ..Default::default()
    }
    .into();
    let backend = BackendSpec {
        protocol: UpstreamProtocol::Http1,
        endpoints: [].into(),
        topology: Default::default(),
        tls: None,
    };
    let spec = Arc::new(TableSpec {
        hosts: vec![Arc::new(VirtualHostSpec {
            host: HostMatch::Exact("a.example.com".into()),
            paths: vec![path],
            exclusive: false,
        })],
        backends: [("ns/main:80", &backend), ("ns/canary:80", &backend)]
            .map(|(id, spec)| (id.to_string(), spec.clone()))
            .into(),
        ..Default::default()
    });
    let mk = |id: &BackendId| {
        Arc::new(Upstream::new(
            id,
            UpstreamProtocol::Http1,
            vec![],
            UpstreamStats::default(),
        ))
    };
    let main = mk(&"ns/main:80".to_string());
    let (first, second) = (mk(&"ns/canary:80".to_string()), mk(&"ns/canary:80".to_string()));
    let canary_of = |table: &RouteTable| {
        let route = table.lookup("a.example.com", "/").expect("a route").clone();
        let canary = route
            .rules
            .balance
            .as_ref()
            .and_then(|b| b.canary.as_ref())
            .expect("a canary");
        canary.upstream.clone()
    };
    let pick = |canary: &Arc<Upstream>| {
        let (main, canary) = (main.clone(), canary.clone());
        move |id: &BackendId| if *id == *main.id { main.clone() } else { canary.clone() }
    };
    let (built, _) = RouteTable::build(spec.clone(), pick(&first), |_, _| RouteStats::detached());
    assert!(Arc::ptr_eq(&canary_of(&built), &first));
    let rebuilt = RouteTable::rebuild(
        spec,
        Some(&built),
        (pick(&second), |_: &Arc<str>, _: Option<&Arc<str>>| {
            RouteStats::detached()
        }),
    );
    assert!(Arc::ptr_eq(&canary_of(&rebuilt.table), &second));
    assert_eq!(rebuilt.reused_hosts, 0);
}
