//! Header rewriting on the way through: hop-by-hop removal, the X-Forwarded-* family and
//! `Forwarded`, cookies for HTTP/1.1 backends, response framing, and the fields and trailers
//! a pod could read another way than shunt did.

mod added;
mod client_ip;
mod cookie;
mod fields;
mod forwarded;
mod framing;
mod hop;
mod ip_text;
mod lookup;
mod passed;
mod real_ip;
mod replace;
mod rfc7239;
mod trailers;
mod upgrade;

pub use added::AddedFields;
pub use cookie::join_cookies;
pub use fields::drop_underscored;
pub use forwarded::{ForwardedContext, new_request_id, set_forwarded};
pub use framing::drop_length_beside_transfer_encoding;
pub use hop::{is_connection_or_framing_field, strip_hop_by_hop, upgrade_protocol};
pub use lookup::has_field;
pub use passed::ForwardingKeys;
pub use replace::{ReplaceContext, replace_forwarded};
pub use trailers::TrailerFilter;
pub use upgrade::{AllowedUpgrades, forwarded_upgrade};
