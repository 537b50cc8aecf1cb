//! Host normalisation for lookups: lowercase, no port, no trailing dot.

use std::borrow::Cow;

/// Strips a `:port` suffix (IPv6 literals keep their brackets).
///
/// Byte scans rather than `str::find`/`rfind`: a `char` search goes through `memrchr` and its
/// setup, several times the cost of walking a host name's few bytes (it runs on every request).
pub fn authority_host(authority: &str) -> &str {
    let bytes = authority.as_bytes();
    if bytes.first() == Some(&b'[') {
        return match bytes.iter().position(|&b| b == b']') {
            Some(end) => &authority[..=end],
            None => authority,
        };
    }
    match bytes.iter().rposition(|&b| b == b':') {
        Some(colon) => &authority[..colon],
        None => authority,
    }
}

/// Lowercases a host for lookup without allocating in the common, already-lowercase case.
pub fn normalize_host(authority: &str) -> Cow<'_, str> {
    let host = authority_host(authority);
    let host = match host.as_bytes().last() {
        Some(b'.') => &host[..host.len() - 1],
        _ => host,
    };
    if host.bytes().any(|b| b.is_ascii_uppercase()) {
        Cow::Owned(host.to_ascii_lowercase())
    } else {
        Cow::Borrowed(host)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::spec::HostMatch;

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

    /// What `authority_host` means, written with `str` searches.
    fn host_by_search(authority: &str) -> &str {
        if authority.starts_with('[') {
            return authority.find(']').map_or(authority, |end| &authority[..=end]);
        }
        authority.rfind(':').map_or(authority, |colon| &authority[..colon])
    }

    proptest! {
        #[test]
        fn the_host_scan_finds_what_a_search_finds(authority in "[A-Za-z0-9:\\[\\].é]{0,16}") {
            prop_assert_eq!(authority_host(&authority), host_by_search(&authority));
            let stripped = host_by_search(&authority);
            let stripped = stripped.strip_suffix('.').unwrap_or(stripped);
            let normal = normalize_host(&authority).into_owned();
            prop_assert_eq!(normal, stripped.to_ascii_lowercase());
        }

        #[test]
        fn normalised_hosts_are_lowercase_portless_and_stable(
            host in "[a-zA-Z0-9-]{0,8}(\\.[a-zA-Z0-9-]{1,8}){0,3}\\.?",
            port in prop::option::of(any::<u16>()),
        ) {
            let authority = match port {
                Some(port) => format!("{host}:{port}"),
                None => host.clone(),
            };
            let normal = normalize_host(&authority);
            prop_assert_eq!(normal.as_ref(), host.trim_end_matches('.').to_ascii_lowercase());
            prop_assert!(!normal.contains(':'));
            let again = normalize_host(&normal).into_owned();
            prop_assert_eq!(again.as_str(), normal.as_ref());
        }

        #[test]
        fn ipv6_literals_keep_their_brackets(segments in prop::collection::vec(any::<u16>(), 8), port in any::<u16>()) {
            let ip = std::net::Ipv6Addr::from(<[u16; 8]>::try_from(segments).unwrap());
            let literal = format!("[{ip}]");
            let authority = format!("{literal}:{port}");
            let normal = normalize_host(&authority).into_owned();
            prop_assert_eq!(normal, literal);
        }

        #[test]
        fn a_wildcard_covers_a_host_exactly_when_lookup_would_try_it(host in "[a-z.]{0,12}", suffix in "[a-z]{1,4}\\.[a-z]{1,3}") {
            let pattern = HostMatch::Wildcard(suffix.clone());
            let covered = pattern.covers(&HostMatch::Exact(host.clone()));
            prop_assert_eq!(covered, HostMatch::wildcard_suffix(&host) == Some(suffix.as_str()));
            if covered {
                prop_assert!(!host.starts_with('.'));
            }
        }
    }
}
