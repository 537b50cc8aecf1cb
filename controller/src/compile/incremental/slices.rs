//! The Service each EndpointSlice is labelled with, kept to tell which Service a changed slice
//! was labelled with before (a deleted slice is no longer in the state to ask).
//!
//! One sorted vector, not a hash map: at 10k slices the map's empty buckets and 72-byte
//! entries were ~1.2 MiB; here an entry is three boxed strings (48 B).

use std::collections::BTreeSet;

use super::Key;

#[derive(Debug, Default)]
pub(super) struct SliceServices(Vec<Labelled>);

/// A slice's namespace and name, and the name of the Service (in its namespace) it is labelled with.
type Labelled = (Box<str>, Box<str>, Box<str>);

// === impl SliceServices ===

impl SliceServices {
    /// Every labelled slice's entry; `true` with it when two slices share a namespace and name
    /// (manifests can hold both; this keeps one).
    pub fn new<'s>(labelled: impl Iterator<Item = ((&'s str, &'s str), &'s str)>) -> (Self, bool) {
        let mut all: Vec<Labelled> = labelled
            .map(|((namespace, name), service)| (namespace.into(), name.into(), service.into()))
            .collect();
        let count = all.len();
        let duplicate = sort(&mut all) != count;
        all.shrink_to_fit();
        (SliceServices(all), duplicate)
    }

    /// The Service the slice `key` is labelled with.
    pub fn get(&self, key: &Key) -> Option<&str> {
        self.position(key).ok().map(|at| &*self.0[at].2)
    }

    fn position(&self, (namespace, name): &Key) -> Result<usize, usize> {
        self.0
            .binary_search_by(|(ns, n, _)| (&**ns, &**n).cmp(&(namespace.as_str(), name.as_str())))
    }

    /// Forgets the slices `changed`, then records `labelled` (slices of `changed` as they are
    /// now): one pass and one sort of a nearly sorted vector, whatever the number of slices.
    pub fn update(&mut self, changed: &BTreeSet<Key>, labelled: &[(Key, String)]) {
        // Found by binary search, in ascending order (the set and the vector sort alike).
        let gone: Vec<usize> = changed.iter().filter_map(|key| self.position(key).ok()).collect();
        if !gone.is_empty() {
            let (mut at, mut gone) = (0, gone.iter().peekable());
            self.0.retain(|_| {
                let kept = gone.next_if_eq(&&at).is_none();
                at += 1;
                kept
            });
        }
        let added = labelled.iter().map(|((namespace, name), service)| {
            (namespace.as_str().into(), name.as_str().into(), service.as_str().into())
        });
        // Exactly: a slice added to 10k would otherwise double the vector.
        self.0.reserve_exact(labelled.len());
        self.0.extend(added);
        sort(&mut self.0);
    }
}

/// Sorts by namespace and name and keeps one entry of each; returns how many are left.
fn sort(all: &mut Vec<Labelled>) -> usize {
    // Stable: a sorted run with a few entries appended is merged in about one pass.
    all.sort_by(|(a_ns, a_name, _), (b_ns, b_name, _)| (a_ns, a_name).cmp(&(b_ns, b_name)));
    all.dedup_by(|(a_ns, a_name, _), (b_ns, b_name, _)| a_ns == b_ns && a_name == b_name);
    all.len()
}

#[cfg(test)]
mod tests;
