//! Route selection: the immutable [`RouteTable`] and its lookup by (host, path). No I/O.
//!
//! ```text
//! TableSpec ──build──▶ RouteTable { exact hosts, wildcard hosts, any-host, default }
//!                                   └─ each a PathTable (matchit tree of Exact/Prefix slots)
//! ```

mod host;
mod paths;
pub mod spec;
mod table;

pub use host::{authority_host, normalize_host};
pub use table::{BuildWarning, Route, RouteTable};
