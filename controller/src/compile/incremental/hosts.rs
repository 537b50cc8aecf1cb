//! The table's hosts as the incremental compile keeps them between compiles: each host's
//! `Arc<VirtualHostSpec>` (shared with the table), found by the host it holds, so the set keeps
//! a pointer per host where a map by host kept a second copy of each name.

use std::{borrow::Borrow, cmp::Ordering, collections::BTreeSet, sync::Arc};

use shunt_spec::{HostMatch, VirtualHostSpec};

/// The kept hosts, sorted by host.
pub(super) type HostSpecs = BTreeSet<ByHost>;

#[derive(Clone, Debug)]
pub(super) struct ByHost(pub Arc<VirtualHostSpec>);

// === impl ByHost ===

impl Borrow<HostMatch> for ByHost {
    fn borrow(&self) -> &HostMatch {
        &self.0.host
    }
}

/// Ordered and compared as the host it borrows, as [`Borrow`] requires.
impl Ord for ByHost {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.host.cmp(&other.0.host)
    }
}

impl PartialOrd for ByHost {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for ByHost {
    fn eq(&self, other: &Self) -> bool {
        self.0.host == other.0.host
    }
}

impl Eq for ByHost {}
