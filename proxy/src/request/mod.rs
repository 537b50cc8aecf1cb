//! Checks a request's shape before routing: method, request target, Host, and the path that is
//! both matched and forwarded.
//!
//! ```text
//! request ─▶ method (CONNECT/TRACE: 405) ─▶ authority vs Host, userinfo (400) ─▶ path (400 or normalised)
//! ```

mod path;
mod target;

pub use path::normalize_path;
pub use target::{ALLOWED_METHODS, TargetError, check_method, check_target, normalized_path_and_query};
