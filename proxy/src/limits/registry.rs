//! One limiter per zone spec for the life of the process: the next table's equal spec gets the
//! same limiter, so a publish resets no caller's count. Limiters no table holds are forgotten.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, Weak},
};

use super::{Limiter, lock};
use crate::spec::RateLimits;

static LIMITERS: Mutex<Option<HashMap<RateLimits, Weak<Limiter>>>> = Mutex::new(None);

/// The live limiter for `spec`, or a new one.
pub fn limiter_for(spec: &RateLimits) -> Arc<Limiter> {
    let mut limiters = lock(&LIMITERS);
    let limiters = limiters.get_or_insert_with(HashMap::new);
    if let Some(live) = limiters.get(spec).and_then(Weak::upgrade) {
        return live;
    }
    // Forget dead zones once they could be half of the map: amortised constant per call.
    if limiters.len() >= 64 && limiters.len().is_power_of_two() {
        limiters.retain(|_, limiter| limiter.strong_count() > 0);
    }
    let limiter = Arc::new(Limiter::new(spec));
    limiters.insert(spec.clone(), Arc::downgrade(&limiter));
    limiter
}
