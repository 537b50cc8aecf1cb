//! ingress-nginx's cookie affinity (`affinity: cookie`): the backend's endpoint is named by a
//! cookie the proxy sets, with nginx's cookie name and attributes (balancer/sticky.lua). The
//! cookie's value is shunt's own.
//!
//! ```text
//! request ─ cookie `name` ─▶ Balanced: its key hashed onto the endpoints (sticky_balanced.lua)
//!                          ▶ Persistent: the endpoint whose token it is (sticky_persistent.lua)
//!         ─ none, unknown (persistent), or a failed try with change_on_failure ─▶ a new pick,
//!           and `Set-Cookie` on the pod's answer where `set_cookie`
//! ```

use serde::Serialize;

/// The largest `Max-Age` or `Expires` offset, in seconds (about 317 years): nginx prints any
/// number, bounded here so a date stays a date.
pub const MAX_COOKIE_SECONDS: i64 = 9_999_999_999;

/// A route's cookie affinity. Replaces a hash key on the same backend (balancer.lua,
/// `get_implementation`: `sticky_*` before `chash`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CookieAffinity {
    pub mode: AffinityMode,
    /// The cookie's name: a valid cookie name of at most [`crate::MAX_NAME_LEN`] bytes.
    pub name: String,
    /// Whether answers on this route set the cookie: only the locations an `affinity: cookie`
    /// Ingress names do (sticky.lua, `should_set_cookie`); the others read it.
    pub set_cookie: bool,
    /// The `Path` attribute: `session-cookie-path`, or the location's path as written.
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// `Max-Age`, written as the number it is (negative included).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_age: Option<i64>,
    /// `Expires`: this many seconds after the answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub same_site: Option<SameSite>,
    /// `SameSite=None` is left out for browsers known to reject it (util/same_site.lua).
    pub conditional_same_site_none: bool,
    /// `Secure` on every answer; `false`: on answers given over TLS only.
    pub secure: bool,
    /// A failed try picks a new endpoint (and cookie) instead of trying the cookie's again.
    pub change_on_failure: bool,
}

/// How the cookie names its endpoint (`affinity-mode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AffinityMode {
    /// A random key hashed onto the endpoints: adding endpoints moves some clients.
    #[default]
    Balanced,
    /// A token for one endpoint: a client keeps it while it exists.
    Persistent,
}

/// The `SameSite` attribute, as lua-resty-cookie writes it (only these exact spellings).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum SameSite {
    Strict,
    Lax,
    None,
}

impl SameSite {
    pub fn as_str(self) -> &'static str {
        match self {
            SameSite::Strict => "Strict",
            SameSite::Lax => "Lax",
            SameSite::None => "None",
        }
    }
}
