//! The sorted vector against a map: any sequence of bulk loads and updates answers alike.

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;

use super::SliceServices;
use crate::compile::incremental::Key;

fn key(namespace: usize, name: usize) -> Key {
    (format!("ns-{namespace}"), format!("slice-{name}"))
}

#[test]
fn a_duplicate_name_is_reported_and_one_service_kept() {
    let slices = [(("a", "s"), "one"), (("a", "s"), "two"), (("b", "s"), "three")];
    let (kept, duplicate) = SliceServices::new(slices.into_iter());
    assert!(duplicate);
    assert!(matches!(kept.get(&("a".into(), "s".into())), Some("one" | "two")));
    assert_eq!(kept.get(&("b".into(), "s".into())), Some("three"));
    let (_, duplicate) = SliceServices::new(slices[1..].iter().copied());
    assert!(!duplicate);
}

#[test]
fn an_update_forgets_changed_slices_and_records_them_as_they_are_now() {
    let (mut kept, _) = SliceServices::new([(("a", "s1"), "one"), (("a", "s2"), "two")].into_iter());
    let changed: BTreeSet<Key> = [key(0, 0), ("a".into(), "s1".into())].into();
    kept.update(&changed, &[(("a".into(), "s3".into()), "three".into())]);
    assert_eq!(kept.get(&("a".into(), "s1".into())), None);
    assert_eq!(kept.get(&("a".into(), "s2".into())), Some("two"));
    assert_eq!(kept.get(&("a".into(), "s3".into())), Some("three"));
}

proptest! {
    #[test]
    fn any_updates_answer_as_a_map_does(
        initial in prop::collection::btree_map((0..3usize, 0..8usize), 0..4usize, 0..12),
        steps in prop::collection::vec(
            (
                prop::collection::btree_set((0..3usize, 0..8usize), 0..6),
                prop::collection::vec(0..4usize, 0..6),
            ),
            0..8,
        ),
    ) {
        let mut model: BTreeMap<Key, String> = initial
            .iter()
            .map(|(&(ns, name), &service)| (key(ns, name), format!("svc-{service}")))
            .collect();
        let (mut kept, duplicate) =
            SliceServices::new(model.iter().map(|((ns, name), service)| ((ns.as_str(), name.as_str()), service.as_str())));
        prop_assert!(!duplicate);
        for (changed, services) in steps {
            let changed: BTreeSet<Key> = changed.into_iter().map(|(ns, name)| key(ns, name)).collect();
            // The changed slices present now: some of them, each with a Service.
            let labelled: Vec<(Key, String)> = changed
                .iter()
                .zip(&services)
                .map(|(key, service)| (key.clone(), format!("svc-{service}")))
                .collect();
            for key in &changed {
                model.remove(key);
            }
            model.extend(labelled.iter().cloned());
            kept.update(&changed, &labelled);
            for ns in 0..3 {
                for name in 0..8 {
                    let key = key(ns, name);
                    prop_assert_eq!(kept.get(&key), model.get(&key).map(String::as_str));
                }
            }
        }
    }
}
