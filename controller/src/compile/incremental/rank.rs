//! An Ingress's [`precedence`] as the incremental compile keeps it, shared by every claim and
//! Service use of the Ingress, and the kept entries' map key that borrows its name from it.

use std::{
    borrow::Borrow,
    cmp::Ordering,
    hash::{Hash, Hasher},
    sync::Arc,
};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::Key;
use crate::{
    compile::{Precedence, precedence},
    objects::IngressMeta,
};

/// An Ingress's [`precedence`], owned so the kept claims can be ordered by it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Rank {
    missing: bool,
    created: Option<Time>,
    pub key: Key,
}

/// The kept entries' key: the Ingress's namespace and name, read from its rank, so the map
/// holds a pointer where it held two more strings and a 48-byte key per bucket.
#[derive(Clone, Debug)]
pub(super) struct ByKey(pub Arc<Rank>);

// === impl Rank ===

impl Rank {
    /// Orders before every other rank: where a range over one host's claims or one Service's
    /// users starts. Not a real Ingress's rank: one without a timestamp has `missing` set.
    pub(super) const FIRST: Rank = Rank {
        missing: false,
        created: None,
        key: (String::new(), String::new()),
    };

    pub(super) fn new(meta: &IngressMeta) -> Rank {
        let (missing, created, (namespace, name)) = precedence(meta);
        Rank {
            missing,
            created: created.cloned(),
            key: (namespace.to_string(), name.to_string()),
        }
    }

    fn precedence(&self) -> Precedence<'_> {
        (self.missing, self.created.as_ref(), (&self.key.0, &self.key.1))
    }
}

impl Ord for Rank {
    fn cmp(&self, other: &Self) -> Ordering {
        self.precedence().cmp(&other.precedence())
    }
}

impl PartialOrd for Rank {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

// === impl ByKey ===

impl Borrow<Key> for ByKey {
    fn borrow(&self) -> &Key {
        &self.0.key
    }
}

/// Hashes and compares as the [`Key`] it borrows, as [`Borrow`] requires.
impl Hash for ByKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.key.hash(state);
    }
}

impl PartialEq for ByKey {
    fn eq(&self, other: &Self) -> bool {
        self.0.key == other.0.key
    }
}

impl Eq for ByKey {}
