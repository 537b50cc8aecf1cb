//! Listener and route hostnames, and the spec's intersection of the two: which hosts a route
//! attached to a listener serves. A wildcard (`*.example.com`) matches one or more labels in
//! front of its suffix, never the suffix itself, so it is a [`HostMatch::DeepWildcard`].
//!
//! ```text
//! listener  none        │ *.example.com              │ foo.example.com
//! route     none ─▶ Any │ none ─▶ *.example.com       │ none ─▶ foo.example.com
//!           h    ─▶ h   │ h under it (or equal) ─▶ h  │ h equal, or a wildcard over it ─▶ foo.example.com
//!                       │ *.com (wider) ─▶ *.example.com
//! ```

use shunt_spec::HostMatch;

use crate::compile::parse_host;

/// A listener's or route's hostname as a host pattern; `None` for what is not one (an IP
/// address, a bad name, a wildcard anywhere but the first label). The CRDs refuse those too.
pub fn parse(raw: &str) -> Option<HostMatch> {
    if raw.is_empty() || raw.len() > 253 || raw.ends_with('.') || raw.parse::<std::net::IpAddr>().is_ok() {
        return None;
    }
    match parse_host(raw).ok()? {
        HostMatch::Wildcard(suffix) => Some(HostMatch::DeepWildcard(suffix)),
        HostMatch::Exact(name) => Some(HostMatch::Exact(name)),
        _ => None,
    }
}

/// The hosts a route with `route` hostnames serves through a listener with `listener`'s;
/// empty when none intersects (the route's parent then says `NoMatchingListenerHostname`).
/// Duplicates are dropped; the order is the route's.
pub fn intersect(listener: Option<&HostMatch>, route: &[HostMatch]) -> Vec<HostMatch> {
    let mut hosts: Vec<HostMatch> = match (listener, route) {
        (None, []) => vec![HostMatch::Any],
        (None, route) => route.to_vec(),
        (Some(listener), []) => vec![listener.clone()],
        (Some(listener), route) => route.iter().filter_map(|host| meet(listener, host)).collect(),
    };
    let mut seen = std::collections::BTreeSet::new();
    hosts.retain(|host| seen.insert(host.clone()));
    hosts
}

/// The narrower of two patterns when one lies within the other.
fn meet(a: &HostMatch, b: &HostMatch) -> Option<HostMatch> {
    if within(a, b) {
        Some(a.clone())
    } else if within(b, a) {
        Some(b.clone())
    } else {
        None
    }
}

/// Whether every name `inner` matches is matched by `outer`.
fn within(inner: &HostMatch, outer: &HostMatch) -> bool {
    match (inner, outer) {
        (inner, outer) if inner == outer => true,
        (HostMatch::Exact(name) | HostMatch::DeepWildcard(name), HostMatch::DeepWildcard(suffix)) => name
            .strip_suffix(suffix.as_str())
            .is_some_and(|labels| labels.len() > 1 && labels.ends_with('.')),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn hosts(raw: &[&str]) -> Vec<HostMatch> {
        raw.iter().map(|host| parse(host).expect("a valid hostname")).collect()
    }

    #[test]
    fn a_listener_without_hostname_serves_the_routes_hostnames_or_any() {
        assert_eq!(intersect(None, &[]), vec![HostMatch::Any]);
        assert_eq!(intersect(None, &hosts(&["a.example.com"])), hosts(&["a.example.com"]));
    }

    #[test]
    fn a_route_without_hostnames_takes_the_listeners() {
        let listener = parse("*.example.com");
        assert_eq!(intersect(listener.as_ref(), &[]), hosts(&["*.example.com"]));
    }

    #[test]
    fn intersections_follow_the_spec_table() {
        // The spec's examples (HTTPRouteSpec.hostnames, Listener.hostname).
        let wildcard = parse("*.example.com");
        let exact = parse("very.specific.com");
        let route = hosts(&[
            "non.matching.com",
            "*.nonmatchingwildcard.io",
            "foo.example.com",
            "*.bar.example.com",
        ]);
        assert_eq!(
            intersect(wildcard.as_ref(), &route),
            hosts(&["foo.example.com", "*.bar.example.com"])
        );
        assert_eq!(intersect(exact.as_ref(), &route), vec![]);
        let wider = hosts(&["*.specific.com"]);
        assert_eq!(intersect(exact.as_ref(), &wider), hosts(&["very.specific.com"]));
        assert_eq!(
            intersect(wildcard.as_ref(), &hosts(&["*.com"])),
            hosts(&["*.example.com"])
        );
        assert_eq!(intersect(wildcard.as_ref(), &hosts(&["example.com"])), vec![]);
    }

    #[test]
    fn ip_addresses_and_inner_wildcards_are_no_hostnames() {
        for raw in ["10.0.0.1", "a.*.example.com", "", "example.com.", "*"] {
            assert_eq!(parse(raw), None, "{raw}");
        }
    }

    fn name() -> impl Strategy<Value = String> {
        prop::collection::vec(prop::sample::select(vec!["a", "b", "example", "com"]), 1..4)
            .prop_map(|labels| labels.join("."))
    }

    fn pattern() -> impl Strategy<Value = HostMatch> {
        (any::<bool>(), name()).prop_filter_map("a valid hostname", |(wild, name)| {
            parse(&if wild { format!("*.{name}") } else { name })
        })
    }

    /// Whether `pattern` matches the concrete name `host`.
    fn matches(pattern: &HostMatch, host: &str) -> bool {
        within(&HostMatch::Exact(host.to_string()), pattern)
    }

    proptest! {
        /// An intersected host matches only names both the listener and the route match, and
        /// the intersection is symmetric.
        #[test]
        fn an_intersection_matches_only_what_both_match(
            listener in pattern(), route in pattern(), host in name(), prefix in name(),
        ) {
            let host = format!("{prefix}.{host}");
            for met in intersect(Some(&listener), std::slice::from_ref(&route)) {
                if matches(&met, &host) {
                    prop_assert!(matches(&listener, &host) && matches(&route, &host));
                }
            }
            prop_assert_eq!(meet(&listener, &route), meet(&route, &listener));
            if matches(&listener, &host) && matches(&route, &host) {
                prop_assert!(meet(&listener, &route).is_some_and(|met| matches(&met, &host)));
            }
        }
    }
}
