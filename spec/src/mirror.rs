//! Request mirroring (Gateway API's `RequestMirror` filter): a copy of each request the route
//! forwards is also sent to other backends, a fraction of the requests to each, their answers
//! discarded. What is copied and what is dropped is the proxy's (`proxy/src/mirror.rs`).

use serde::Serialize;

use crate::BackendId;

/// The most mirrors one route sends a copy to.
pub const MAX_MIRRORS: usize = 8;

/// Where a route's requests are mirrored. Must hold 1 to [`MAX_MIRRORS`] targets.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct RequestMirrors {
    pub targets: Vec<MirrorTarget>,
}

/// One mirror: its backend, and the share of requests copied to it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct MirrorTarget {
    pub backend: BackendId,
    /// `numerator / denominator` of the requests; `numerator <= denominator`, `denominator > 0`.
    pub numerator: u32,
    pub denominator: u32,
}

impl MirrorTarget {
    /// Every request to `backend`.
    pub fn all(backend: BackendId) -> Self {
        MirrorTarget {
            backend,
            numerator: 1,
            denominator: 1,
        }
    }

    /// `numerator / denominator` of the requests, or `None` when that is no fraction (a zero
    /// denominator, a numerator above it).
    pub fn share(backend: BackendId, numerator: u32, denominator: u32) -> Option<Self> {
        (denominator > 0 && numerator <= denominator).then_some(MirrorTarget {
            backend,
            numerator,
            denominator,
        })
    }
}
