//! Host normalisation for lookups: lowercase, no port, no trailing dot.

use std::borrow::Cow;

/// Strips a `:port` suffix (IPv6 literals keep their brackets).
pub fn authority_host(authority: &str) -> &str {
    if authority.starts_with('[') {
        return match authority.find(']') {
            Some(end) => &authority[..=end],
            None => authority,
        };
    }
    match authority.rfind(':') {
        Some(colon) => &authority[..colon],
        None => authority,
    }
}

/// Lowercases a host for lookup without allocating in the common, already-lowercase case.
pub fn normalize_host(authority: &str) -> Cow<'_, str> {
    let host = authority_host(authority);
    let host = host.strip_suffix('.').unwrap_or(host);
    if host.bytes().any(|b| b.is_ascii_uppercase()) {
        Cow::Owned(host.to_ascii_lowercase())
    } else {
        Cow::Borrowed(host)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_case_and_trailing_dots_are_ignored() {
        assert_eq!(normalize_host("Shop.Example.COM:8080"), "shop.example.com");
        assert_eq!(normalize_host("shop.example.com."), "shop.example.com");
        assert_eq!(normalize_host("shop.example.com.:80"), "shop.example.com");
        assert_eq!(normalize_host("[::1]:8080"), "[::1]");
        assert_eq!(normalize_host("[::1]"), "[::1]");
        assert_eq!(normalize_host("plain"), "plain");
        assert!(matches!(normalize_host("lower.case"), Cow::Borrowed(_)));
    }
}
