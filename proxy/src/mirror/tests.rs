use proptest::prelude::*;

use super::*;
use crate::{
    metrics::UpstreamStats,
    spec::{MirrorTarget as TargetSpec, UpstreamProtocol},
};

fn upstream(id: &str) -> Option<Arc<Upstream>> {
    Some(Arc::new(Upstream::new(
        id,
        UpstreamProtocol::Http1,
        vec![],
        UpstreamStats::default(),
    )))
}

fn mk_mirror(shares: &[(u32, u32)]) -> Result<Mirror, String> {
    let targets = (shares.iter().enumerate())
        .map(|(at, &(numerator, denominator))| TargetSpec {
            backend: format!("ns/m{at}:80"),
            numerator,
            denominator,
        })
        .collect();
    Mirror::new(&RequestMirrors { targets }, upstream)
}

#[test]
fn every_request_goes_to_a_whole_share_and_a_draw_decides_the_others() {
    let mirror = mk_mirror(&[(1, 1), (20, 100), (25, 50)]).unwrap();
    let ids = |draw: u32| -> Vec<String> {
        (mirror.drawn_with(move |_| draw))
            .map(|target| target.upstream.id.to_string())
            .collect()
    };
    // A draw below the numerator takes the target; at it or above, not.
    assert_eq!(ids(0), ["ns/m0:80", "ns/m1:80", "ns/m2:80"]);
    assert_eq!(ids(20), ["ns/m0:80", "ns/m2:80"]);
    assert_eq!(ids(25), ["ns/m0:80"]);
}

#[test]
fn a_share_that_is_no_fraction_or_too_many_mirrors_are_refused() {
    assert!(mk_mirror(&[(1, 0)]).is_err());
    assert!(mk_mirror(&[(3, 2)]).is_err());
    assert!(mk_mirror(&[]).is_err());
    assert!(mk_mirror(&[(1, 1); crate::spec::MAX_MIRRORS + 1]).is_err());
    let missing = RequestMirrors {
        targets: vec![TargetSpec::all("ns/gone:80".into())],
    };
    assert!(Mirror::new(&missing, |_| None).is_err());
}

#[test]
fn slots_run_out_at_the_bound_and_come_back_when_dropped() {
    let held: Vec<Slot> = std::iter::from_fn(Slot::take).take(MAX_IN_FLIGHT + 1).collect();
    assert_eq!(held.len(), MAX_IN_FLIGHT);
    assert!(Slot::take().is_none());
    drop(held);
    assert!(Slot::take().is_some());
}

proptest! {
    #[test]
    fn a_share_takes_exactly_its_numerator_of_the_draws(numerator in 0u32..=64, extra in 0u32..=64) {
        let denominator = (numerator + extra).max(1);
        let mirror = mk_mirror(&[(numerator.min(denominator), denominator)]).unwrap();
        let taken = (0..denominator).filter(|&draw| mirror.drawn_with(move |_| draw).count() == 1).count();
        prop_assert_eq!(taken as u32, numerator.min(denominator));
    }
}
