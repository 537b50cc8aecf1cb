//! Route selection: the immutable [`RouteTable`] and its lookup by (host, path). No I/O.
//!
//! ```text
//! TableSpec ──build──▶ RouteTable { exact, wildcard, deep wildcard, any-host hosts; default }
//!                                   └─ each a PathTable (matchit tree of Exact/Prefix slots,
//!                                      plus a longest-first CharPrefix list where a host has them)
//! ```
//! When some route is limited to one listener, the table holds a second set of hosts for the
//! TLS listener; otherwise one set serves both at no extra cost.
//!
//! A host where some path carries request conditions (Gateway API's method, header and query
//! matches) is ranked: its paths are tried in rank order, each one's conditions read from the
//! request (`ranked.rs`). So the lookup is generic over what it knows of the request
//! ([`Facts`]): [`RouteTable::lookup_with`] takes a [`RequestFacts`] (method, fields, query,
//! all borrowed), [`RouteTable::lookup_on`] none. The route phase asks for the first only when
//! the table has a ranked host ([`RouteTable::has_ranked`], one load and branch per request);
//! otherwise the standard lookup runs as it always did, and a standard host never reads the
//! facts even when they are given.

mod conditions;
mod edits;
mod error_pages;
mod host;
mod paths;
mod ranked;
mod regex;
mod replace;
mod rewrite;
mod rules;
mod split;
mod table;

pub use conditions::RequestFacts;
pub use edits::HeaderEdits;
pub use error_pages::ErrorRoute;
pub use host::{authority_host, normalize_host};
pub use regex::location_regex;
pub use replace::{replace_path, replace_prefix};
pub use split::{Split, SplitTarget};
pub use table::{BuildWarning, Rebuilt, Route, RouteTable};
