//! The split's draw: each choice's share by weight, 500 for the rest.

use proptest::prelude::*;

use super::*;
use crate::spec::SplitChoice;

fn mk_upstream(id: &str) -> Arc<Upstream> {
    Arc::new(Upstream::new(id, Default::default(), Vec::new(), Default::default()))
}

fn mk_split(weights: &[(Option<&str>, u32)]) -> BackendSplit {
    BackendSplit {
        choices: weights
            .iter()
            .map(|(backend, weight)| SplitChoice {
                backend: backend.map(str::to_string),
                weight: *weight,
                request_headers: None,
                response_headers: None,
            })
            .collect(),
    }
}

fn known(id: &str) -> Option<Arc<Upstream>> {
    id.starts_with("ns/").then(|| mk_upstream(id))
}

fn drawn_id(target: Option<&SplitTarget>) -> Option<&str> {
    target
        .and_then(|target| target.upstream.as_ref())
        .map(|upstream| &*upstream.id)
}

#[test]
fn every_point_falls_in_the_choice_its_weight_covers() {
    let split = Split::new(
        &mk_split(&[(Some("ns/a:80"), 1), (Some("ns/b:80"), 0), (Some("ns/c:80"), 3)]),
        known,
    )
    .unwrap();
    assert_eq!(drawn_id(split.draw_with(|total| total - 4)), Some("ns/a:80"));
    for point in 1..4 {
        assert_eq!(drawn_id(split.draw_with(|_| point)), Some("ns/c:80"));
    }
    let unresolved = Split::new(&mk_split(&[(None, 1), (Some("ns/a:80"), 1)]), known).unwrap();
    let first = unresolved.draw_with(|_| 0).expect("a choice");
    assert!(
        first.upstream.is_none(),
        "the unresolved share is drawn, without a backend"
    );
}

#[test]
fn all_weights_zero_draws_nothing_and_a_named_backend_must_exist() {
    let zero = Split::new(&mk_split(&[(Some("ns/a:80"), 0), (Some("ns/b:80"), 0)]), known).unwrap();
    assert!(zero.draw().is_none());
    let missing = Split::new(&mk_split(&[(Some("ns/a:80"), 1), (Some("gone"), 1)]), known).unwrap_err();
    assert_eq!(missing, "split backend gone is not in the table");
    assert!(Split::new(&mk_split(&[]), known).is_err());
    let many = vec![(Some("ns/a:80"), 1); MAX_CHOICES + 1];
    assert!(Split::new(&mk_split(&many), known).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Each choice of weight w takes about w / sum of N draws: within five standard deviations
    /// of the binomial mean, drawn from a seeded generator so a failure replays.
    #[test]
    fn each_choice_takes_its_share_within_binomial_bounds(
        weights in prop::collection::vec(0u32..=100, 1..5),
        seed in any::<u64>(),
    ) {
        const N: usize = 4_000;
        let ids: Vec<String> = (0..weights.len()).map(|i| format!("ns/b{i}:80")).collect();
        let spec: Vec<(Option<&str>, u32)> = ids.iter().map(|id| Some(id.as_str())).zip(weights.iter().copied()).collect();
        let split = Split::new(&mk_split(&spec), known).unwrap();
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut counts = vec![0usize; ids.len()];
        let mut none = 0;
        for _ in 0..N {
            match drawn_id(split.draw_with(|total| rng.u64(..total))) {
                Some(id) => counts[ids.iter().position(|known| known == id).unwrap()] += 1,
                None => none += 1,
            }
        }
        let total: u32 = weights.iter().sum();
        if total == 0 {
            prop_assert_eq!(none, N);
            return Ok(());
        }
        prop_assert_eq!(none, 0);
        for (count, weight) in counts.iter().zip(&weights) {
            let p = f64::from(*weight) / f64::from(total);
            let (mean, sd) = (N as f64 * p, (N as f64 * p * (1.0 - p)).sqrt());
            prop_assert!((*count as f64 - mean).abs() <= 5.0 * sd + 1.0, "{count} of {N} at weight {weight} of {total}");
        }
    }
}

// === In the table ===

mod table {
    use std::collections::{BTreeMap, BTreeSet, HashSet};

    use super::*;
    use crate::{
        metrics::RouteStats,
        routes::RouteTable,
        spec::{BackendSpec, HostMatch, PathKind, PathSpec, RouteOptions, TableSpec, VirtualHostSpec},
    };

    fn mk_table_spec(backends: &[&str], split: &[(Option<&str>, u32)]) -> TableSpec {
        let path = PathSpec {
            path: "/".into(),
            kind: PathKind::Prefix,
            backend: "unused".into(),
            source: "ns/route".into(),
            ssl_redirect: false,
            options: Arc::new(RouteOptions {
                split: Some(mk_split(split)),
                ..Default::default()
            }),
        };
        let backend = BackendSpec {
            protocol: Default::default(),
            endpoints: [([10, 0, 0, 1], 80).into()].into(),
            topology: Default::default(),
            tls: None,
        };
        TableSpec {
            hosts: vec![Arc::new(VirtualHostSpec {
                host: HostMatch::Exact("h".into()),
                paths: vec![path],
                exclusive: false,
            })],
            backends: backends
                .iter()
                .map(|id| (id.to_string(), backend.clone()))
                .collect::<BTreeMap<_, _>>(),
            ..Default::default()
        }
    }

    fn split_ids(table: &RouteTable) -> Option<Vec<String>> {
        let route = table.lookup("h", "/")?;
        let split = route.rules.split.as_ref()?;
        Some(split.upstreams().map(|upstream| upstream.id.to_string()).collect())
    }

    #[test]
    fn a_split_naming_a_missing_backend_is_dropped_with_a_warning_and_routes_shows_it() {
        let spec = mk_table_spec(&["ns/a:80"], &[(Some("ns/a:80"), 1), (Some("ns/b:80"), 1)]);
        let (table, warnings) = RouteTable::build(Arc::new(spec), |id| mk_upstream(id), |_, _| RouteStats::detached());
        assert_eq!(warnings.len(), 1);
        assert_eq!(warnings[0].reason, "split backend ns/b:80 is not in the table");
        assert!(split_ids(&table).is_none());
        let shown = serde_json::to_string(&**table.spec()).unwrap();
        assert!(
            shown.contains(r#""split":{"choices":[{"backend":"ns/a:80","weight":1}"#),
            "{shown}"
        );
    }

    #[test]
    fn a_host_is_rebuilt_when_a_split_backend_appears_or_its_upstream_is_replaced() {
        let split = [(Some("ns/a:80"), 1), (Some("ns/b:80"), 1)];
        let before = mk_table_spec(&["ns/a:80"], &split);
        let (table, _) = RouteTable::build(Arc::new(before), |id| mk_upstream(id), |_, _| RouteStats::detached());
        let after = Arc::new(mk_table_spec(&["ns/a:80", "ns/b:80"], &split));
        let appeared = BTreeSet::from(["ns/b:80".to_string()]);
        let callbacks = (
            |id: &String| mk_upstream(id),
            |_: &Arc<str>, _: Option<&Arc<str>>| RouteStats::detached(),
        );
        let rebuilt = RouteTable::rebuild_changed(
            after.clone(),
            &table,
            &BTreeSet::new(),
            &appeared,
            &HashSet::new(),
            callbacks,
        )
        .expect("same listener split");
        assert_eq!(split_ids(&rebuilt.table).unwrap(), ["ns/a:80", "ns/b:80"]);
        // The same spec with a new upstream for one split backend: the host is not taken over.
        let fresh = mk_upstream("ns/b:80");
        let callbacks = (
            |id: &String| match id.as_str() {
                "ns/b:80" => fresh.clone(),
                _ => rebuilt
                    .table
                    .lookup("h", "/")
                    .unwrap()
                    .upstreams()
                    .find(|u| *u.id == **id)
                    .unwrap()
                    .clone(),
            },
            |_: &Arc<str>, _: Option<&Arc<str>>| RouteStats::detached(),
        );
        let again = RouteTable::rebuild(after, Some(&rebuilt.table), callbacks);
        let route = again.table.lookup("h", "/").unwrap();
        assert!(route.upstreams().any(|upstream| Arc::ptr_eq(upstream, &fresh)));
        assert_eq!(again.reused_hosts, 0);
    }
}
