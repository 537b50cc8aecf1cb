//! A ranked host answers as trying each path in rank order would, then falls through as a
//! host whose paths do not match does.

use std::{collections::BTreeMap, sync::Arc};

use http::{HeaderMap, HeaderName, HeaderValue, Method};
use proptest::prelude::*;

use super::super::{BuildWarning, RequestFacts, RouteTable};
use crate::{
    metrics::{RouteStats, UpstreamStats},
    spec::{
        BackendSpec, FieldCondition, HostMatch, PathKind, PathSpec, RequestConditions, RouteOptions, TableSpec,
        UpstreamProtocol, ValueMatch, VirtualHostSpec,
    },
    upstream::Upstream,
};

const HOST: &str = "gw.example.com";

/// A path of the ranked host, with the source naming it (`ns/r{index}`).
#[derive(Clone, Debug)]
struct Rule {
    path: &'static str,
    exact: bool,
    rank: u32,
    conditions: Option<RequestConditions>,
}

#[derive(Clone, Debug)]
struct Req {
    path: &'static str,
    method: &'static str,
    fields: Vec<(&'static str, &'static str)>,
    query: Option<&'static str>,
}

fn mk_path(index: usize, rule: &Rule) -> PathSpec {
    PathSpec {
        path: rule.path.into(),
        kind: if rule.exact { PathKind::Exact } else { PathKind::Prefix },
        backend: "ns/svc:80".into(),
        source: format!("ns/r{index}"),
        ssl_redirect: false,
        options: Arc::new(RouteOptions {
            rank: rule.rank,
            conditions: rule.conditions.clone(),
            ..Default::default()
        }),
    }
}

/// The ranked host and a host-less `Prefix /` behind it (source `ns/fallback`).
fn mk_table_spec(paths: Vec<PathSpec>, exclusive: bool) -> TableSpec {
    let fallback = PathSpec {
        source: "ns/fallback".into(),
        ..mk_path(
            0,
            &Rule {
                path: "/",
                exact: false,
                rank: 0,
                conditions: None,
            },
        )
    };
    let hosts = vec![
        Arc::new(VirtualHostSpec {
            host: HostMatch::Exact(HOST.into()),
            paths,
            exclusive,
        }),
        Arc::new(VirtualHostSpec {
            host: HostMatch::Any,
            paths: vec![fallback],
            exclusive: false,
        }),
    ];
    let backend = BackendSpec {
        protocol: UpstreamProtocol::Http1,
        endpoints: [].into(),
        topology: Default::default(),
        tls: None,
    };
    TableSpec {
        hosts,
        backends: BTreeMap::from([("ns/svc:80".to_string(), backend)]),
        ..Default::default()
    }
}

fn mk_upstream(id: &str) -> Arc<Upstream> {
    Arc::new(Upstream::new(
        id,
        UpstreamProtocol::Http1,
        vec![],
        UpstreamStats::default(),
    ))
}

/// [`mk_table_spec`]'s table and warnings.
fn build(paths: Vec<PathSpec>, exclusive: bool) -> (RouteTable, Vec<BuildWarning>) {
    RouteTable::build(
        Arc::new(mk_table_spec(paths, exclusive)),
        |id| mk_upstream(id),
        |_, _| RouteStats::detached(),
    )
}

fn lookup(table: &RouteTable, req: &Req) -> Option<String> {
    let mut headers = HeaderMap::new();
    for (name, value) in &req.fields {
        headers.append(HeaderName::from_static(name), HeaderValue::from_static(value));
    }
    let method = Method::from_bytes(req.method.as_bytes()).unwrap();
    let facts = RequestFacts {
        method: &method,
        headers: &headers,
        query: req.query,
    };
    let route = table.lookup_with(HOST, req.path, false, &facts)?;
    Some(route.source.to_string())
}

/// The reference: each rule in rank order (stable), its path by segments, its conditions read
/// the plainest way.
fn reference(rules: &[Rule], req: &Req) -> Option<String> {
    let mut order: Vec<usize> = (0..rules.len()).collect();
    order.sort_by_key(|&i| rules[i].rank);
    let segments = |path: &str| {
        path.split('/')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let path_matches = |rule: &Rule| match rule.exact {
        true => rule.path == req.path,
        false => segments(req.path).starts_with(&segments(rule.path)),
    };
    let value_matches = |test: &ValueMatch, value: &str| match test {
        ValueMatch::Exact(exact) => exact == value,
        ValueMatch::Regex(pattern) => regex::Regex::new(&format!("^(?:{pattern})$")).unwrap().is_match(value),
    };
    let field = |name: &str| {
        let values: Vec<&str> = req.fields.iter().filter(|(n, _)| *n == name).map(|(_, v)| *v).collect();
        (!values.is_empty()).then(|| values.join(","))
    };
    let param = |name: &str| {
        let query = req.query?;
        let pairs = query.split('&').map(|pair| pair.split_once('=').unwrap_or((pair, "")));
        pairs.into_iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string())
    };
    let holds = |c: &RequestConditions| {
        c.method.as_deref().is_none_or(|m| m == req.method)
            && c.headers
                .iter()
                .all(|h| field(&h.name).is_some_and(|v| value_matches(&h.value, &v)))
            && c.query
                .iter()
                .all(|q| param(&q.name).is_some_and(|v| value_matches(&q.value, &v)))
            && c.path.as_ref().is_none_or(|p| value_matches(p, req.path))
    };
    let first = order
        .into_iter()
        .find(|&i| path_matches(&rules[i]) && rules[i].conditions.as_ref().is_none_or(holds));
    Some(first.map_or("ns/fallback".to_string(), |i| format!("ns/r{i}")))
}

fn arb_value() -> impl Strategy<Value = ValueMatch> {
    prop_oneof![
        prop::sample::select(vec!["1", "2", "1,2"]).prop_map(|v| ValueMatch::Exact(v.into())),
        prop::sample::select(vec!["[12]", "1,.*", "2?"]).prop_map(|v| ValueMatch::Regex(v.into())),
    ]
}

/// Whole-path tests, as GRPCRoute method matches write them.
fn arb_path_value() -> impl Strategy<Value = ValueMatch> {
    prop_oneof![
        prop::sample::select(PATHS.to_vec()).prop_map(|v| ValueMatch::Exact(v.into())),
        prop::sample::select(vec!["/[^/]+/b", "/a(/.*)?", "/a/b|/"]).prop_map(|v| ValueMatch::Regex(v.into())),
    ]
}

fn arb_conditions() -> impl Strategy<Value = RequestConditions> {
    let field = |names: Vec<&'static str>| {
        (prop::sample::select(names), arb_value()).prop_map(|(name, value)| FieldCondition {
            name: name.into(),
            value,
        })
    };
    (
        prop::option::of(prop::sample::select(vec!["GET", "POST"])),
        prop::collection::vec(field(vec!["x-v", "x-w"]), 0..2),
        prop::collection::vec(field(vec!["q", "Q"]), 0..2),
        prop::option::of(arb_path_value()),
    )
        .prop_map(|(method, headers, query, path)| RequestConditions {
            method: method.map(str::to_string),
            headers,
            query,
            path,
        })
}

const PATHS: [&str; 6] = ["/", "/a", "/a/", "/a/b", "/ab", "/b"];

fn arb_rule() -> impl Strategy<Value = Rule> {
    (
        prop::sample::select(PATHS.to_vec()),
        any::<bool>(),
        0u32..4,
        prop::option::of(arb_conditions()),
    )
        .prop_map(|(path, exact, rank, conditions)| Rule {
            path: if exact {
                path
            } else {
                path.trim_end_matches('/').max("/")
            },
            exact,
            rank,
            conditions,
        })
}

fn arb_req() -> impl Strategy<Value = Req> {
    let fields = prop::collection::vec(
        (
            prop::sample::select(vec!["x-v", "x-w"]),
            prop::sample::select(vec!["1", "2", "3"]),
        ),
        0..3,
    );
    let query = prop::option::of(prop::sample::select(vec!["q=1", "q=2&q=1", "Q=2", "q", "x=1&q=2"]));
    (
        prop::sample::select(PATHS.to_vec()),
        prop::sample::select(vec!["GET", "POST"]),
        fields,
        query,
    )
        .prop_map(|(path, method, fields, query)| Req {
            path,
            method,
            fields,
            query,
        })
}

proptest! {
    #[test]
    fn the_ranked_lookup_is_the_first_rule_in_rank_order_that_matches(
        rules in prop::collection::vec(arb_rule(), 1..8),
        reqs in prop::collection::vec(arb_req(), 1..8),
    ) {
        // At least one carries conditions, so the host is ranked.
        let mut rules = rules;
        rules[0].conditions.get_or_insert_with(RequestConditions::default);
        let paths = rules.iter().enumerate().map(|(i, rule)| mk_path(i, rule)).collect();
        let (table, warnings) = build(paths, false);
        prop_assert_eq!(warnings, vec![]);
        prop_assert!(table.has_ranked());
        for req in &reqs {
            prop_assert_eq!(lookup(&table, req), reference(&rules, req), "{:?}", req);
        }
    }
}

#[test]
fn no_match_falls_through_unless_the_host_is_exclusive() {
    let post = RequestConditions {
        method: Some("POST".into()),
        ..Default::default()
    };
    let rule = Rule {
        path: "/",
        exact: false,
        rank: 0,
        conditions: Some(post),
    };
    let get = Req {
        path: "/x",
        method: "GET",
        fields: vec![],
        query: None,
    };
    let (open, _) = build(vec![mk_path(0, &rule)], false);
    assert_eq!(lookup(&open, &get).as_deref(), Some("ns/fallback"));
    assert_eq!(
        lookup(
            &open,
            &Req {
                method: "POST",
                ..get.clone()
            }
        )
        .as_deref(),
        Some("ns/r0")
    );
    let (exclusive, _) = build(vec![mk_path(0, &rule)], true);
    assert_eq!(lookup(&exclusive, &get), None);
}

#[test]
fn a_bad_regex_or_a_path_kind_without_a_place_in_the_ranking_is_dropped_with_a_warning() {
    let bad = RequestConditions {
        headers: vec![FieldCondition {
            name: "x".into(),
            value: ValueMatch::Regex("(".into()),
        }],
        ..Default::default()
    };
    let good = Rule {
        path: "/",
        exact: false,
        rank: 1,
        conditions: Some(RequestConditions::default()),
    };
    let broken = Rule {
        path: "/",
        exact: false,
        rank: 0,
        conditions: Some(bad),
    };
    let mut regex_path = mk_path(2, &good);
    regex_path.kind = PathKind::Regex;
    let (table, warnings) = build(vec![mk_path(0, &broken), mk_path(1, &good), regex_path], false);
    let reasons: Vec<&str> = warnings.iter().map(|w| w.reason.as_str()).collect();
    assert_eq!(warnings.len(), 2, "{reasons:?}");
    assert!(reasons[0].contains("regex"), "{reasons:?}");
    assert!(
        reasons[1].contains("Regex path, on a host with request conditions"),
        "{reasons:?}"
    );
    let any = Req {
        path: "/",
        method: "GET",
        fields: vec![("x", "(")],
        query: None,
    };
    assert_eq!(lookup(&table, &any).as_deref(), Some("ns/r1"));
}

#[test]
fn a_rebuild_of_some_hosts_keeps_count_of_the_ranked_ones() {
    let rule = |conditions| Rule {
        path: "/",
        exact: false,
        rank: 0,
        conditions,
    };
    let ranked = Arc::new(mk_table_spec(
        vec![mk_path(0, &rule(Some(RequestConditions::default())))],
        false,
    ));
    let plain = Arc::new(mk_table_spec(vec![mk_path(0, &rule(None))], false));
    let (table, _) = RouteTable::build(ranked.clone(), |id| mk_upstream(id), |_, _| RouteStats::detached());
    assert!(table.has_ranked());
    let changed = std::collections::BTreeSet::from([HostMatch::Exact(HOST.into())]);
    let rebuild = |spec: &Arc<TableSpec>, previous: &RouteTable| {
        let callbacks = (
            |id: &String| mk_upstream(id),
            |_: &Arc<str>, _: Option<&Arc<str>>| RouteStats::detached(),
        );
        let none = (Default::default(), Default::default());
        RouteTable::rebuild_changed(spec.clone(), previous, &changed, &none.0, &none.1, callbacks)
            .unwrap()
            .table
    };
    let without = rebuild(&plain, &table);
    assert!(!without.has_ranked());
    assert!(rebuild(&ranked, &without).has_ranked());
}
