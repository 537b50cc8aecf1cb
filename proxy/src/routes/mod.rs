//! Route selection: the immutable [`RouteTable`] and its lookup by (host, path). No I/O.
//!
//! ```text
//! TableSpec ──build──▶ RouteTable { exact, wildcard, deep wildcard, any-host hosts; default }
//!                                   └─ each a PathTable (matchit tree of Exact/Prefix slots,
//!                                      plus a longest-first CharPrefix list where a host has them)
//! ```
//! When some route is limited to one listener, the table holds a second set of hosts for the
//! TLS listener; otherwise one set serves both at no extra cost.

mod error_pages;
mod host;
mod paths;
mod regex;
mod rewrite;
mod rules;
mod table;

pub use error_pages::ErrorRoute;
pub use host::{authority_host, normalize_host};
pub use regex::location_regex;
pub use table::{BuildWarning, Rebuilt, Route, RouteTable};
