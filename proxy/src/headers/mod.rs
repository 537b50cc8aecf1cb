//! Header rewriting on the way through: hop-by-hop removal and the X-Forwarded-* family.

mod forwarded;
mod hop;

pub use forwarded::{ForwardedContext, TrustedProxies, host_header, request_id, set_forwarded};
pub use hop::{strip_hop_by_hop, upgrade_protocol};
