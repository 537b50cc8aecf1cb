//! Routes that look at more than host and path: request conditions (method, header, query
//! parameter), header edits on the way in and out, prefix-replacing rewrites, and a weighted
//! split over several backends. Gateway API's `HTTPRouteMatch`, `RequestHeaderModifier`,
//! `ResponseHeaderModifier`, `URLRewrite`/`RequestRedirect` with `ReplacePrefixMatch` and
//! weighted `backendRefs` are written as these; a profile that means the same thing uses them too.
//!
//! ```text
//! ranked host: paths tried by ascending `rank` ─ path matches? ─ conditions hold? ─▶ route
//!                                                 └──── no: next rank ──────────┘
//! route ─ split (weights) ─▶ backend, or 500 for an invalid backend's share
//! ```
//!
//! Names and values here are tenant-written: the compile bounds them ([`MAX_CONDITIONS`],
//! [`MAX_EDITS`], [`MAX_CHOICES`], and `MAX_NAME_LEN`/`MAX_VALUE_LEN` of `balance.rs`) and gives
//! only valid field names (lowercase tokens) and values (visible ASCII, space and tab).

use serde::Serialize;

use crate::BackendId;

/// The most header plus query conditions on one route (Gateway API allows 16 of each).
pub const MAX_CONDITIONS: usize = 32;
/// The most header edits of one kind (set, add or remove) in one [`HeaderEdits`].
pub const MAX_EDITS: usize = 16;
/// The most backends a [`BackendSplit`] chooses among.
pub const MAX_CHOICES: usize = 16;

/// What a request must carry, besides its host and path, for the route to take it. Every
/// condition must hold; none at all takes every request. A host where some path carries
/// conditions (`Some`, even empty) is ranked (see `RouteOptions::conditions`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RequestConditions {
    /// An uppercase method token (`GET`); `None` takes every method.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// Each names a request field (lowercase); a field sent several times is read as its values
    /// joined by `,` (RFC 9110 5.3).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<FieldCondition>,
    /// Each names a query parameter, case-sensitively, compared undecoded; a parameter given
    /// several times is judged by its first value.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub query: Vec<FieldCondition>,
    /// The whole request path, as sent (no query): GRPCRoute's method matches that a table path
    /// cannot say (`/{service}/{method}` by regular expression, or a method of any service).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<ValueMatch>,
}

/// A named request field or query parameter and what its value must be.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FieldCondition {
    pub name: String,
    pub value: ValueMatch,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ValueMatch {
    /// The whole value, byte for byte.
    Exact(String),
    /// A regular expression (the `regex` crate's syntax, size-limited by the proxy) that must
    /// match the whole value.
    Regex(String),
}

/// Header edits, applied in this order: `set` replaces every value of the field (or adds it),
/// `add` appends a value, `remove` deletes the field. Names are lowercase field names; a
/// hop-by-hop field, `host` and the proxy's own forwarding fields are refused by the compile.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct HeaderEdits {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub set: Vec<(String, String)>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub add: Vec<(String, String)>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub remove: Vec<String>,
}

/// A path rewrite that replaces the whole path, or the part of it the route's `Prefix` path
/// matched. The query string is kept.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PathReplacement {
    /// Starts with `/`.
    Full(String),
    Prefix(PrefixReplacement),
}

/// The request path's first elements that `matched` names (the route's own `Prefix` path,
/// element-wise, no trailing slash unless `/`) become `replacement` (starts with `/`): with
/// `/foo` to `/bar`, `/foo/x` becomes `/bar/x` and `/foo` becomes `/bar`; to `/`, `/foo/x`
/// becomes `/x`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PrefixReplacement {
    pub matched: String,
    pub replacement: String,
}

/// Several backends sharing a route's requests by weight: each request draws one choice, a
/// choice of weight `w` taking `w / sum` of them. A choice without a backend (a reference that
/// did not resolve) answers 500 for its share; a split whose weights are all 0 answers 500.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BackendSplit {
    /// At most [`MAX_CHOICES`]; every named backend is in the table's `backends`.
    pub choices: Vec<SplitChoice>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SplitChoice {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backend: Option<BackendId>,
    pub weight: u32,
    /// Edits of the request sent to this backend, after the route's own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_headers: Option<HeaderEdits>,
    /// Edits of the answer from this backend, after the route's own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_headers: Option<HeaderEdits>,
}

// === impl BackendSplit ===

impl BackendSplit {
    /// The backends the split names, for the table's `backends` and the publisher's checks.
    pub fn backends(&self) -> impl Iterator<Item = &BackendId> {
        self.choices.iter().filter_map(|choice| choice.backend.as_ref())
    }

    pub fn total_weight(&self) -> u64 {
        self.choices.iter().map(|choice| u64::from(choice.weight)).sum()
    }
}

// === impl RequestConditions ===

impl RequestConditions {
    pub fn is_empty(&self) -> bool {
        self.method.is_none() && self.headers.is_empty() && self.query.is_empty() && self.path.is_none()
    }
}
