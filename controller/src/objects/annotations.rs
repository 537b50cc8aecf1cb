//! A stored object's annotations: a sorted boxed slice, read like the `BTreeMap` the API types
//! use.
//!
//! A `BTreeMap` allocates a whole leaf node (~540 B) for its first entry; almost every Ingress
//! carries one to a few annotations, so at 10,000 of them the maps' empty slots were ~5 MiB
//! of `shunt run`'s heap. The slice holds exactly its entries; lookups are a binary search.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(from = "BTreeMap<String, String>", into = "BTreeMap<String, String>")]
pub struct Annotations(Box<[(String, String)]>);

impl Annotations {
    pub fn get(&self, key: &str) -> Option<&String> {
        let at = self.0.binary_search_by(|(name, _)| name.as_str().cmp(key)).ok()?;
        Some(&self.0[at].1)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// In key order, as a `BTreeMap` iterates.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&String, &String)> {
        self.0.iter().map(|(key, value)| (key, value))
    }

    pub fn keys(&self) -> impl ExactSizeIterator<Item = &String> {
        self.0.iter().map(|(key, _)| key)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl From<BTreeMap<String, String>> for Annotations {
    fn from(map: BTreeMap<String, String>) -> Self {
        // A map iterates sorted and without duplicates: the slice's invariant.
        Annotations(map.into_iter().collect())
    }
}

impl From<Annotations> for BTreeMap<String, String> {
    fn from(annotations: Annotations) -> Self {
        annotations.0.into_vec().into_iter().collect()
    }
}

impl<const N: usize> From<[(String, String); N]> for Annotations {
    fn from(entries: [(String, String); N]) -> Self {
        BTreeMap::from(entries).into()
    }
}

impl FromIterator<(String, String)> for Annotations {
    fn from_iter<I: IntoIterator<Item = (String, String)>>(entries: I) -> Self {
        entries.into_iter().collect::<BTreeMap<_, _>>().into()
    }
}

impl<'a> IntoIterator for &'a Annotations {
    type Item = (&'a String, &'a String);
    type IntoIter = std::iter::Map<std::slice::Iter<'a, (String, String)>, fn(&'a (String, String)) -> Self::Item>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().map(|(key, value)| (key, value))
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// Every read answers as the map it was made from.
        #[test]
        fn reads_as_the_map(
            map in proptest::collection::btree_map("[a-z./-]{0,12}", "[a-z0-9]{0,6}", 0..12),
            probe in "[a-z./-]{0,12}",
        ) {
            let annotations = Annotations::from(map.clone());
            prop_assert_eq!(annotations.get(&probe), map.get(&probe));
            prop_assert_eq!(annotations.contains_key(&probe), map.contains_key(&probe));
            prop_assert_eq!(annotations.len(), map.len());
            prop_assert!(annotations.iter().eq(map.iter()));
            prop_assert!(annotations.keys().eq(map.keys()));
            for (key, value) in &map {
                prop_assert_eq!(annotations.get(key), Some(value));
            }
            prop_assert_eq!(BTreeMap::from(annotations), map);
        }
    }

    #[test]
    fn serialises_as_a_map() {
        let annotations = Annotations::from([("b".to_string(), "2".to_string()), ("a".to_string(), "1".to_string())]);
        let text = serde_json::to_string(&annotations).unwrap();
        assert_eq!(text, r#"{"a":"1","b":"2"}"#);
        assert_eq!(serde_json::from_str::<Annotations>(&text).unwrap(), annotations);
    }
}
