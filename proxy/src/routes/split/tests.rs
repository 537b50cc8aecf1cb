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
