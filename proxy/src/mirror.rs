//! Request mirroring (Gateway API `RequestMirror`, `spec::RequestMirrors`): a copy of a
//! forwarded request sent to each mirror backend, for the share of requests it takes; its answer
//! is read and thrown away, and nothing about it reaches the client's answer.
//!
//! ```text
//! prepared request ─ body? ──yes──▶ not mirrored (skipped: a copy without its body would be another request)
//!                  └ no ─ per target: draw share ─ slot free? ─no─▶ dropped
//!                                                  └ yes ─▶ spawned send, MIRROR_TIMEOUT, answer discarded
//! ```
//!
//! Bounds: only requests without a body are copied (no buffering for a copy, and a bodiless
//! head is the whole request); at most [`MAX_IN_FLIGHT`] copies in flight per process, past
//! which copies are dropped, never queued; each copy gets [`MIRROR_TIMEOUT`].

use std::{
    sync::{
        Arc, LazyLock,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use prometheus_client::{
    encoding::EncodeLabelSet,
    metrics::{counter::Counter, family::Family},
    registry::Registry,
};

use crate::{spec::RequestMirrors, upstream::Upstream};

/// Copies in flight at once, all routes and workers together.
pub const MAX_IN_FLIGHT: usize = 1024;
/// From a copy's start to its answer's head.
pub const MIRROR_TIMEOUT: Duration = Duration::from_secs(10);

static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);
static MIRRORED: LazyLock<Family<Outcome, Counter>> = LazyLock::new(Family::default);

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Outcome {
    outcome: &'static str,
}

/// What became of a copy.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub enum Fate {
    /// Sent; its answer (or failure) discarded.
    Sent,
    /// [`MAX_IN_FLIGHT`] copies were in flight.
    Dropped,
    /// The request has a body.
    Skipped,
}

/// Adds the mirrors' series to `registry`.
pub fn register(registry: &mut Registry) {
    registry.register(
        "shunt_mirrored_requests",
        "Request copies for mirror backends (HTTPRoute RequestMirror), by outcome: sent, dropped (too many in flight), skipped (a request with a body)",
        MIRRORED.clone(),
    );
}

/// Counts one copy's fate.
pub fn count(fate: Fate) {
    let outcome = match fate {
        Fate::Sent => "sent",
        Fate::Dropped => "dropped",
        Fate::Skipped => "skipped",
    };
    MIRRORED.get_or_create(&Outcome { outcome }).inc();
}

/// A route's mirrors, with their upstreams.
#[derive(Debug)]
pub struct Mirror {
    /// Must not be empty.
    targets: Box<[MirrorTarget]>,
}

#[derive(Debug)]
pub struct MirrorTarget {
    pub upstream: Arc<Upstream>,
    numerator: u32,
    denominator: u32,
}

impl Mirror {
    /// The mirrors of `spec`, each backend's upstream from `upstream`, or why not.
    pub fn new(spec: &RequestMirrors, mut upstream: impl FnMut(&str) -> Option<Arc<Upstream>>) -> Result<Self, String> {
        if spec.targets.is_empty() || spec.targets.len() > crate::spec::MAX_MIRRORS {
            return Err(format!(
                "{} mirrors (1 to {})",
                spec.targets.len(),
                crate::spec::MAX_MIRRORS
            ));
        }
        let targets = (spec.targets.iter())
            .map(|target| {
                if target.denominator == 0 || target.numerator > target.denominator {
                    return Err(format!("mirror share {}/{}", target.numerator, target.denominator));
                }
                Ok(MirrorTarget {
                    upstream: upstream(&target.backend)
                        .ok_or_else(|| format!("mirror backend {} is not in the table", target.backend))?,
                    numerator: target.numerator,
                    denominator: target.denominator,
                })
            })
            .collect::<Result<_, String>>()?;
        Ok(Mirror { targets })
    }

    pub fn upstreams(&self) -> impl Iterator<Item = &Arc<Upstream>> {
        self.targets.iter().map(|target| &target.upstream)
    }

    /// The targets this request is copied to, each drawn by its share with `draw(denominator)`
    /// (uniform in `0..denominator`).
    pub fn drawn_with<'m>(&'m self, mut draw: impl FnMut(u32) -> u32 + 'm) -> impl Iterator<Item = &'m MirrorTarget> {
        (self.targets.iter())
            .filter(move |target| target.numerator == target.denominator || draw(target.denominator) < target.numerator)
    }

    /// [`Mirror::drawn_with`] a random draw.
    pub fn drawn(&self) -> impl Iterator<Item = &MirrorTarget> {
        self.drawn_with(|denominator| fastrand::u32(..denominator))
    }
}

/// A copy's place among the [`MAX_IN_FLIGHT`]; freed when dropped.
#[derive(Debug)]
pub struct Slot(());

impl Slot {
    /// A place, or `None` when every one is taken.
    pub fn take() -> Option<Slot> {
        let taken = IN_FLIGHT.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
            (n < MAX_IN_FLIGHT).then_some(n + 1)
        });
        taken.ok().map(|_| Slot(()))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        IN_FLIGHT.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests;
