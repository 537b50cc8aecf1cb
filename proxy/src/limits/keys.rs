//! One zone's per-address states, capped as nginx's 5 MB zone caps them: at the cap, states
//! nginx would have freed go first, then the least recently used quarter.

use std::{collections::HashMap, net::IpAddr};

type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// States per caller address; `last` orders them for eviction.
pub(super) struct Keys<V> {
    map: FastMap<IpAddr, V>,
    cap: usize,
}

impl<V> Keys<V> {
    pub fn new(cap: usize) -> Self {
        Keys {
            map: FastMap::default(),
            cap,
        }
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn get_mut(&mut self, addr: &IpAddr) -> Option<&mut V> {
        self.map.get_mut(addr)
    }

    /// Inserts `value` for a new `addr`, making room first; returns how many states were
    /// evicted. `expired` says which states answer as new ones would; `last` when each was used.
    pub fn insert(&mut self, addr: IpAddr, value: V, expired: impl Fn(&V) -> bool, last: impl Fn(&V) -> u64) -> usize {
        let before = self.map.len();
        if before >= self.cap {
            self.map.retain(|_, state| !expired(state));
            if self.map.len() >= self.cap {
                self.evict_oldest_quarter(&last);
            }
        }
        let evicted = before - self.map.len();
        self.map.insert(addr, value);
        evicted
    }

    /// A sweep per quarter of the cap keeps an insert's cost constant on average.
    fn evict_oldest_quarter(&mut self, last: &impl Fn(&V) -> u64) {
        let mut ages: Vec<u64> = self.map.values().map(last).collect();
        let quarter = (self.cap / 4).max(1).min(ages.len() - 1);
        let (_, cutoff, _) = ages.select_nth_unstable(quarter);
        let cutoff = *cutoff;
        self.map.retain(|_, state| last(state) > cutoff);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_of_addresses_never_grows_past_the_cap() {
        let mut keys: Keys<u64> = Keys::new(64);
        let mut evicted = 0;
        for i in 0..10_000u32 {
            let addr = IpAddr::from(i.to_be_bytes());
            evicted += keys.insert(addr, u64::from(i), |_| false, |last| *last);
            assert!(keys.len() <= 64);
        }
        assert_eq!(evicted, 10_000 - keys.len());
        // The most recent stay.
        assert!(keys.get_mut(&IpAddr::from(9_999u32.to_be_bytes())).is_some());
    }

    #[test]
    fn expired_states_go_before_live_ones() {
        let mut keys: Keys<(bool, u64)> = Keys::new(4);
        for i in 0..4u32 {
            // Old but live states, except one expired newest.
            keys.insert(IpAddr::from(i.to_be_bytes()), (i == 3, u64::from(i)), |s| s.0, |s| s.1);
        }
        keys.insert(IpAddr::from(9u32.to_be_bytes()), (false, 9), |s| s.0, |s| s.1);
        assert!(keys.get_mut(&IpAddr::from(0u32.to_be_bytes())).is_some());
        assert!(keys.get_mut(&IpAddr::from(3u32.to_be_bytes())).is_none());
    }
}
