//! How a route chooses where a request goes beyond "p2c among the backend's endpoints":
//! a canary backend that takes some requests (ingress-nginx's `canary*`), and a key hashed
//! onto the endpoints (`upstream-hash-by`). Both `None` on a route change nothing.
//!
//! ```text
//! request ─ CanaryRule (header, then cookie, then weight) ─▶ route's backend or the canary's
//!         ─ HashKey, when the chosen side has one ─────────▶ the endpoint the key hashes to
//! ```

use serde::Serialize;

use crate::{BackendId, PathSpec};

/// The longest header or cookie name a rule may read, the longest header value it compares and
/// the most parts a hash key has: tenant-written, so bounded.
pub const MAX_NAME_LEN: usize = 256;
pub const MAX_VALUE_LEN: usize = 1024;
pub const MAX_KEY_PARTS: usize = 16;
/// The largest `canary-weight-total`: weights stay far from overflow.
pub const MAX_WEIGHT_TOTAL: u32 = 1_000_000;

/// A second backend some requests of the route go to (ingress-nginx's alternative backend).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CanarySpec {
    /// Must be in the table's `backends`, like the route's own.
    pub backend: BackendId,
    pub rule: CanaryRule,
    /// How the canary's endpoint is chosen, as the route's `hash` is for its own backend.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hash: Option<HashKey>,
}

/// Which requests go to the canary, decided in balancer.lua's order
/// (`route_to_alternative_balancer`): the header, then the cookie, then the weight.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CanaryRule {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub header: Option<CanaryHeader>,
    /// A cookie of this name set to `always` sends the request to the canary, `never` keeps it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cookie: Option<String>,
    /// The request goes to the canary when a draw in `1..=weight_total` is at most `weight`.
    pub weight: u32,
    /// At least 100 and at most [`MAX_WEIGHT_TOTAL`].
    pub weight_total: u32,
}

/// A request header naming the canary.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CanaryHeader {
    /// Lowercase, a valid field name.
    pub name: String,
    /// `Some`: this exact value sends the request to the canary, any other goes on to the cookie.
    /// `None`: `always` sends it, `never` keeps it, any other goes on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

/// What is hashed to choose an endpoint (nginx's complex value in `upstream-hash-by`): parts
/// joined in order. Must not be empty; at most [`MAX_KEY_PARTS`] parts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HashKey {
    pub parts: Vec<KeyPart>,
}

/// One part of a [`HashKey`]: text, or an nginx variable's value for the request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyPart {
    Text(String),
    /// `$request_uri`: the target as the client sent it, query included.
    RequestUri,
    /// `$uri`: the path (normalised), without the query.
    Uri,
    /// `$args`: the query, without `?`.
    Args,
    /// `$host`: the request's host, lowercase, without port.
    Host,
    /// `$remote_addr`: the caller's address as text.
    RemoteAddr,
    /// `$binary_remote_addr`: the caller's address as 4 or 16 bytes.
    BinaryRemoteAddr,
    /// `$http_NAME`: a request field's value, the name lowercase with `_` for `-`.
    Header(String),
    /// `$cookie_NAME`: a cookie's value.
    Cookie(String),
}

// === impl PathSpec ===

impl PathSpec {
    /// The canary backend the route names besides its own, if any.
    pub fn canary_backend(&self) -> Option<&BackendId> {
        self.options.canary.as_ref().map(|canary| &canary.backend)
    }
}
