//! The live table's per-route counters by `(route, backend)`, kept between builds: a route built
//! again under the same name and backend keeps its counters, and one gone retires its series.
//!
//! The counters carry their own key (shared with the route's name and its upstream's id), so the
//! index stores no key of its own and is searched with the borrowed names: a route whose counters
//! exist costs a hash and a compare, no allocation (a map keyed by owned `(String, String)` would
//! allocate for every route of every publish).

use std::{hash::BuildHasher, sync::Arc};

use hashbrown::HashTable;

use crate::metrics::{ProxyMetrics, RouteStats};

#[derive(Default)]
pub(super) struct RouteStatsIndex {
    entries: HashTable<Entry>,
    hasher: foldhash::fast::RandomState,
    /// Counts builds; an entry handed out during the current one carries its number.
    build: u64,
}

struct Entry {
    stats: RouteStats,
    /// The last build that handed these counters out.
    build: u64,
}

// === impl RouteStatsIndex ===

impl RouteStatsIndex {
    /// Starts a build that may hand out counters for up to `routes` routes: nothing is handed
    /// out in it yet.
    pub(super) fn begin(&mut self, routes: usize) {
        self.build += 1;
        let hasher = &self.hasher;
        self.entries
            .reserve(routes.saturating_sub(self.entries.len()), |entry| {
                hasher.hash_one(entry.stats.key())
            });
    }

    /// The counters of `route` forwarding to `backend`: the kept ones, else new ones from `metrics`.
    pub(super) fn claim(&mut self, metrics: &ProxyMetrics, route: &Arc<str>, backend: Option<&Arc<str>>) -> RouteStats {
        let key = (&**route, backend.map_or("", |backend| &**backend));
        let hash = self.hasher.hash_one(key);
        if let Some(entry) = self.entries.find_mut(hash, |entry| entry.stats.key() == key) {
            entry.build = self.build;
            return entry.stats.clone();
        }
        let stats = metrics.route_stats(route, backend);
        let entry = Entry {
            stats: stats.clone(),
            build: self.build,
        };
        let hasher = &self.hasher;
        self.entries
            .insert_unique(hash, entry, |entry| hasher.hash_one(entry.stats.key()));
        stats
    }

    /// A route of the previous table was not taken over: its counters leave (and their series
    /// leave /metrics) unless this build handed them out again to a route of the same key.
    pub(super) fn release(&mut self, stats: &RouteStats) {
        let key = stats.key();
        let hash = self.hasher.hash_one(key);
        if let Ok(entry) = self.entries.find_entry(hash, |entry| entry.stats.key() == key)
            && entry.get().build != self.build
        {
            let (entry, _) = entry.remove();
            entry.stats.retire();
        }
    }
}
