//! The answers of auth services kept for `auth-cache-key` (nginx's `proxy_cache auth_cache`),
//! one store for the process: entries capped at [`MAX_ENTRIES`], the oldest evicted first;
//! each kept for its status's `proxy_cache_valid` time, and dropped once unused for 30 minutes
//! (the zone's `inactive=30m`). Only the hash of an expanded key is stored (`cache_key.rs`).
//!
//! As nginx, an answer with `Set-Cookie` is never kept; answers whose own fields would set
//! nginx's time (`Cache-Control`, `Expires`, `X-Accel-Expires`) or vary it (`Vary`) are not
//! kept either: shunt then asks the auth service again, where nginx might not.

use std::{
    collections::{HashMap, VecDeque, hash_map::RandomState},
    sync::{LazyLock, Mutex},
    time::{Duration, Instant},
};

use http::{HeaderMap, HeaderName, StatusCode, header};

use super::{
    cache_key::{self, KeyRequest},
    stats::{CacheEvent, STATS},
};
use crate::spec::{AuthCache, CacheValid};

/// Answers kept at most, for all routes.
pub const MAX_ENTRIES: usize = 10_000;
/// Bytes of an answer's kept fields at most; a larger answer is not kept.
const MAX_ENTRY_BYTES: usize = 4096;
/// The template's `keys_zone ... inactive=30m`.
const INACTIVE: Duration = Duration::from_secs(30 * 60);

/// A route's cache rule.
#[derive(Debug)]
pub struct CacheRule {
    spec: AuthCache,
}

/// An answer as kept: its status and the fields the request path reads from it.
#[derive(Clone, Debug)]
pub struct Kept {
    pub status: StatusCode,
    pub headers: HeaderMap,
}

impl CacheRule {
    pub fn new(spec: &AuthCache) -> Self {
        CacheRule { spec: spec.clone() }
    }

    /// The hash of this request's key.
    pub fn key(&self, request: &KeyRequest<'_>) -> u128 {
        cache_key::hash(&self.spec.scope, &self.spec.key, request, &STORE.hashers)
    }

    /// How long an answer is kept; `None`: not at all.
    pub fn ttl(&self, status: StatusCode, headers: &HeaderMap) -> Option<Duration> {
        let own_time = ["cache-control", "expires", "x-accel-expires", "vary"];
        if headers.contains_key(header::SET_COOKIE) || own_time.iter().any(|name| headers.contains_key(*name)) {
            return None;
        }
        ttl_for(&self.spec.valid, status.as_u16())
    }
}

/// The first `proxy_cache_valid` line naming `status` (or every status) decides.
pub(crate) fn ttl_for(valid: &[CacheValid], status: u16) -> Option<Duration> {
    let line = valid
        .iter()
        .find(|line| line.codes.is_empty() || line.codes.contains(&status))?;
    Some(line.ttl).filter(|ttl| !ttl.is_zero())
}

/// The fields of an answer worth keeping: those copied onto the request, and the challenge.
pub fn keep(status: StatusCode, headers: &HeaderMap, names: &[HeaderName]) -> Option<Kept> {
    let mut kept = HeaderMap::new();
    let mut bytes = 0;
    for name in names.iter().chain([&header::WWW_AUTHENTICATE]) {
        for value in headers.get_all(name) {
            bytes += name.as_str().len() + value.len();
            kept.append(name.clone(), value.clone());
        }
    }
    (bytes <= MAX_ENTRY_BYTES).then_some(Kept { status, headers: kept })
}

struct Entry {
    kept: Kept,
    stored: Instant,
    expires: Instant,
    used: Instant,
}

/// Entries by key hash, and the keys in the order they were stored (with the time, so a key
/// stored again is not evicted for its older copy).
#[derive(Default)]
pub struct Store {
    entries: HashMap<u128, Entry>,
    order: VecDeque<(u128, Instant)>,
}

pub(crate) struct Shared {
    store: Mutex<Store>,
    hashers: [RandomState; 2],
}

pub(crate) static STORE: LazyLock<Shared> = LazyLock::new(|| Shared {
    store: Mutex::default(),
    hashers: [RandomState::new(), RandomState::new()],
});

/// The kept answer for `key`, counted as a hit or a miss.
pub fn get(key: u128) -> Option<Kept> {
    let found = STORE
        .store
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(key, Instant::now());
    STATS.cache(if found.is_some() {
        CacheEvent::Hit
    } else {
        CacheEvent::Miss
    });
    found
}

/// Keeps `kept` under `key` for `ttl`.
pub fn put(key: u128, kept: Kept, ttl: Duration) {
    let evicted =
        (STORE.store.lock().unwrap_or_else(|e| e.into_inner())).put(key, kept, ttl, Instant::now(), MAX_ENTRIES);
    STATS.cache(CacheEvent::Store);
    for _ in 0..evicted {
        STATS.cache(CacheEvent::Eviction);
    }
}

impl Store {
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn get(&mut self, key: u128, now: Instant) -> Option<Kept> {
        let entry = self.entries.get_mut(&key)?;
        if now >= entry.expires || now.duration_since(entry.used) >= INACTIVE {
            self.entries.remove(&key);
            return None;
        }
        entry.used = now;
        Some(entry.kept.clone())
    }

    /// Stores, evicting the oldest entries down to `cap`; returns how many were evicted.
    pub fn put(&mut self, key: u128, kept: Kept, ttl: Duration, now: Instant, cap: usize) -> usize {
        let mut evicted = 0;
        while self.entries.len() >= cap && !self.entries.contains_key(&key) {
            let Some((old, stored)) = self.order.pop_front() else {
                break;
            };
            if self.entries.get(&old).is_some_and(|entry| entry.stored == stored) {
                self.entries.remove(&old);
                evicted += 1;
            }
        }
        let entry = Entry {
            kept,
            stored: now,
            expires: now + ttl,
            used: now,
        };
        self.entries.insert(key, entry);
        self.order.push_back((key, now));
        // Keys stored again or expired leave stale places behind: dropped before they pile up.
        if self.order.len() > 2 * cap.max(1) {
            let entries = &self.entries;
            self.order
                .retain(|(key, stored)| entries.get(key).is_some_and(|e| e.stored == *stored));
        }
        evicted
    }
}

#[cfg(test)]
mod tests;
