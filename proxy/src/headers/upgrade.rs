//! Which protocol upgrades reach a pod. A pod that accepts `h2c` turns the connection into a
//! tunnel that no later request on it is routed through; so only WebSocket, and what an
//! operator allows (`--allow-upgrade`), is forwarded. Anything else is dropped with `Upgrade`
//! and the pod answers the request itself (RFC 9110 §7.8: a server may ignore `Upgrade`).

use std::sync::Arc;

use http::{HeaderMap, HeaderValue, Version, header};

use super::hop::connection_has;

#[cfg(test)]
mod tests;

/// Upgrade protocols forwarded besides `websocket`, by name (`--allow-upgrade`), lowercase.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AllowedUpgrades(Arc<[Box<str>]>);

impl AllowedUpgrades {
    pub fn new<S: AsRef<str>>(names: impl IntoIterator<Item = S>) -> Self {
        AllowedUpgrades(
            names
                .into_iter()
                .map(|name| name.as_ref().to_ascii_lowercase().into())
                .collect(),
        )
    }

    /// Whether `protocol` (`name` or `name/version`) may be forwarded.
    pub fn allows(&self, protocol: &str) -> bool {
        let name = protocol.split('/').next().unwrap_or_default().trim();
        name.eq_ignore_ascii_case("websocket") || self.0.iter().any(|allowed| name.eq_ignore_ascii_case(allowed))
    }
}

/// The `Upgrade` value to forward for this request, or `None`: an HTTP/1.1 request that names
/// `upgrade` in `Connection`, keeping only the allowed protocols of its `Upgrade` list.
/// HTTP/1.0 has no upgrades (RFC 9110 §7.8), and HTTP/2 asks with extended CONNECT instead.
pub fn forwarded_upgrade(headers: &HeaderMap, version: Version, allowed: &AllowedUpgrades) -> Option<HeaderValue> {
    if version != Version::HTTP_11 || !connection_has(headers, "upgrade") {
        return None;
    }
    let mut values = headers.get_all(header::UPGRADE).iter();
    let first = values.next()?;
    let protocols: Vec<&str> = std::iter::once(first)
        .chain(values)
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(str::trim)
        .filter(|protocol| !protocol.is_empty())
        .collect();
    let kept: Vec<&str> = protocols.iter().copied().filter(|p| allowed.allows(p)).collect();
    if kept.is_empty() {
        return None;
    }
    if kept.len() == protocols.len() && headers.get_all(header::UPGRADE).iter().count() == 1 {
        return Some(first.clone());
    }
    HeaderValue::from_str(&kept.join(", ")).ok()
}
