//! Redirect answers for routes that carry a [`RedirectSpec`]: the request's URL with some parts
//! replaced (the whole path, or the prefix the route matched), query string kept.

use http::{HeaderValue, Response, StatusCode, header, uri::PathAndQuery};

use crate::{
    response_body::ResponseBody,
    routes::{authority_host, replace_prefix},
    spec::{RedirectSpec, Scheme},
};

/// `ssl-redirect`: 308 (method and body kept) to the same URL over HTTPS on the standard port,
/// which the Service maps to our HTTPS listener.
pub fn to_https() -> RedirectSpec {
    RedirectSpec {
        code: StatusCode::PERMANENT_REDIRECT.as_u16(),
        scheme: Some(Scheme::Https),
        host: None,
        port: None,
        path: None,
        drop_query: false,
        location: None,
        replace_prefix: None,
        rewritten: false,
        www: false,
    }
}

/// ingress-nginx's redirect to HTTPS (`lua_ingress.lua`): `https://` + the host without its port
/// + the target as sent with one `/` at its end removed, so `/` goes to `https://host`.
pub fn to_https_trimmed(code: u16, authority: &str, target: &PathAndQuery) -> Response<ResponseBody> {
    let target = target.as_str();
    let target = target.strip_suffix('/').unwrap_or(target);
    let location = format!("https://{}{target}", authority_host(authority));
    with_location(code, &location)
}

/// Where a request arrived: over TLS or not, and on which extra Gateway listener port
/// (`--gateway-port`; `None` on the HTTP and HTTPS listeners, whose ports are the schemes').
#[derive(Clone, Copy, Debug)]
pub struct Arrival {
    pub tls: bool,
    pub port: Option<u16>,
}

/// The redirect for a request for `target` that arrived with `authority` (Host) at `arrival`.
pub fn respond(
    redirect: &RedirectSpec,
    arrival: Arrival,
    authority: &str,
    target: &PathAndQuery,
) -> Response<ResponseBody> {
    match &redirect.location {
        Some(fixed) => with_location(redirect.code, fixed),
        None if redirect.www => with_location(redirect.code, &www_location(redirect, arrival.tls, target)),
        None => with_location(redirect.code, &location(redirect, arrival, authority, target)),
    }
}

/// ingress-nginx's redirect server's `Location` (see [`RedirectSpec::www`]): its pod listens on
/// 80 and 443, and writes the port whatever it is.
fn www_location(redirect: &RedirectSpec, tls: bool, target: &PathAndQuery) -> String {
    let scheme = if tls { Scheme::Https } else { Scheme::Http };
    let host = redirect.host.as_deref().unwrap_or_default();
    let target = target.as_str();
    let target = target.strip_suffix('/').unwrap_or(target);
    format!("{}://{host}:{}{target}", scheme.as_str(), scheme.default_port())
}

fn with_location(code: u16, location: &str) -> Response<ResponseBody> {
    with_location_value(code, HeaderValue::from_str(location).ok())
}

/// A redirect to `location` (none when it could not be a field value), also for a `Location`
/// made elsewhere (a rewrite to a URL).
pub fn with_location_value(code: u16, location: Option<HeaderValue>) -> Response<ResponseBody> {
    let mut response = Response::new(ResponseBody::empty());
    *response.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::FOUND);
    if let Some(value) = location {
        response.headers_mut().insert(header::LOCATION, value);
    }
    response
}

/// `Location` for `redirect`: see [`RedirectSpec`] for which parts are kept. Without a scheme
/// or port of its own the port is the listener's (Gateway API's `RequestRedirect`): an extra
/// port's is written, 80 and 443 are the schemes' own.
pub fn location(redirect: &RedirectSpec, arrival: Arrival, authority: &str, target: &PathAndQuery) -> String {
    let requested = if arrival.tls { Scheme::Https } else { Scheme::Http };
    let scheme = redirect.scheme.unwrap_or(requested);
    let keep_authority = redirect.host.is_none() && redirect.port.is_none() && scheme == requested;
    let authority = if keep_authority {
        authority.to_string()
    } else {
        let host = redirect.host.as_deref().unwrap_or_else(|| authority_host(authority));
        let listener_port = arrival.port.filter(|_| redirect.scheme.is_none());
        match redirect.port.or(listener_port) {
            Some(port) if port != scheme.default_port() => format!("{host}:{port}"),
            _ => host.to_string(),
        }
    };
    let replaced;
    let path = match (&redirect.path, &redirect.replace_prefix) {
        (Some(path), _) => path.as_str(),
        (None, Some(prefix)) => {
            replaced = replace_prefix(prefix, target.path());
            &*replaced
        }
        (None, None) => target.path(),
    };
    let path = if path.is_empty() { "/" } else { path };
    match target.query().filter(|_| !redirect.drop_query) {
        Some(query) => format!("{}://{authority}{path}?{query}", scheme.as_str()),
        None => format!("{}://{authority}{path}", scheme.as_str()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLAIN: Arrival = Arrival { tls: false, port: None };

    fn mk_redirect(scheme: Option<Scheme>, host: Option<&str>, port: Option<u16>, path: Option<&str>) -> RedirectSpec {
        RedirectSpec {
            code: 302,
            scheme,
            host: host.map(str::to_string),
            port,
            path: path.map(str::to_string),
            drop_query: false,
            location: None,
            replace_prefix: None,
            rewritten: false,
            www: false,
        }
    }

    fn at(redirect: &RedirectSpec, tls: bool, authority: &str, uri: &str) -> String {
        at_port(redirect, tls, None, authority, uri)
    }

    fn at_port(redirect: &RedirectSpec, tls: bool, port: Option<u16>, authority: &str, uri: &str) -> String {
        let target = uri.parse().expect("a valid path and query");
        location(redirect, Arrival { tls, port }, authority, &target)
    }

    #[test]
    fn without_scheme_or_port_an_extra_listeners_port_is_written() {
        let host_only = mk_redirect(None, Some("example.org"), None, None);
        assert_eq!(
            at_port(&host_only, false, Some(8080), "a.example.com:8080", "/p"),
            "http://example.org:8080/p"
        );
        assert_eq!(at(&host_only, false, "a.example.com", "/p"), "http://example.org/p");
        // A scheme of its own takes that scheme's port; a port of its own is kept.
        let https = mk_redirect(Some(Scheme::Https), Some("example.org"), None, None);
        assert_eq!(
            at_port(&https, false, Some(8080), "a.example.com:8080", "/p"),
            "https://example.org/p"
        );
        let to_80 = mk_redirect(None, Some("example.org"), Some(80), None);
        assert_eq!(
            at_port(&to_80, false, Some(8080), "a.example.com:8080", "/p"),
            "http://example.org/p"
        );
    }

    #[test]
    fn a_scheme_change_keeps_host_path_and_query_and_drops_the_port() {
        let to_https = mk_redirect(Some(Scheme::Https), None, None, None);
        assert_eq!(
            at(&to_https, false, "shop.example.com:8080", "/a/b?x=1&y"),
            "https://shop.example.com/a/b?x=1&y"
        );
        assert_eq!(
            at(&to_https, false, "shop.example.com", "/"),
            "https://shop.example.com/"
        );
    }

    #[test]
    fn a_path_only_redirect_keeps_the_authority_as_sent() {
        let slash = mk_redirect(None, None, None, Some("/abc/"));
        assert_eq!(
            at(&slash, true, "a.example.com:8443", "/abc?q"),
            "https://a.example.com:8443/abc/?q"
        );
    }

    #[test]
    fn host_and_port_replace_the_requests_and_a_default_port_is_omitted() {
        let elsewhere = mk_redirect(Some(Scheme::Https), Some("b.example.com"), Some(443), Some("/new"));
        assert_eq!(
            at(&elsewhere, false, "a.example.com", "/old?k=v"),
            "https://b.example.com/new?k=v"
        );
        let odd_port = mk_redirect(Some(Scheme::Http), Some("b.example.com"), Some(8080), None);
        assert_eq!(
            at(&odd_port, false, "a.example.com", "/p"),
            "http://b.example.com:8080/p"
        );
    }

    #[test]
    fn the_www_redirect_writes_the_pods_port_and_drops_one_slash_ending_the_target() {
        let mut www = mk_redirect(None, Some("www.example.com"), None, None);
        www.www = true;
        www.code = 308;
        let cases = [
            (false, "/", "http://www.example.com:80"),
            (true, "/a/?q=1", "https://www.example.com:443/a/?q=1"),
            (false, "/a/?q=/", "http://www.example.com:80/a/?q="),
        ];
        for (tls, target, expected) in cases {
            let response = respond(
                &www,
                Arrival { tls, port: None },
                "example.com:8080",
                &target.parse().expect("uri"),
            );
            assert_eq!(response.headers()[header::LOCATION], expected, "{target}");
        }
    }

    #[test]
    fn the_code_is_the_routes() {
        let mut moved = mk_redirect(None, None, None, Some("/x/"));
        moved.code = 307;
        let response = respond(&moved, PLAIN, "h", &"/x".parse().expect("uri"));
        assert_eq!(response.status(), StatusCode::TEMPORARY_REDIRECT);
        assert_eq!(response.headers()[header::LOCATION], "http://h/x/");
    }

    #[test]
    fn the_trimmed_https_redirect_drops_the_port_and_one_slash_ending_the_target() {
        let cases = [
            ("/", "https://h.example"),
            ("/a/", "https://h.example/a"),
            ("/a//", "https://h.example/a/"),
            ("/a/?x=/", "https://h.example/a/?x="),
            ("/a?x=1", "https://h.example/a?x=1"),
        ];
        for (target, expected) in cases {
            let response = to_https_trimmed(301, "h.example:8080", &target.parse().expect("uri"));
            assert_eq!(response.status(), StatusCode::MOVED_PERMANENTLY);
            assert_eq!(response.headers()[header::LOCATION], expected, "{target}");
        }
    }

    #[test]
    fn a_replaced_prefix_keeps_the_rest_of_the_path_and_the_query() {
        // conformance/tests/httproute-redirect-path.go (Gateway API v1.6.1).
        let mut prefix = mk_redirect(None, None, None, None);
        prefix.replace_prefix = Some(crate::spec::PrefixReplacement {
            matched: "/original-prefix".into(),
            replacement: "/replacement-prefix".into(),
        });
        assert_eq!(
            at(&prefix, false, "gw.example", "/original-prefix/lemon?x=1"),
            "http://gw.example/replacement-prefix/lemon?x=1"
        );
        prefix.host = Some("example.org".into());
        prefix.replace_prefix = Some(crate::spec::PrefixReplacement {
            matched: "/path-and-host".into(),
            replacement: "/replacement-prefix".into(),
        });
        assert_eq!(
            at(&prefix, false, "gw.example", "/path-and-host"),
            "http://example.org/replacement-prefix"
        );
    }

    #[test]
    fn a_fixed_location_is_sent_verbatim_and_drop_query_leaves_the_query_out() {
        let mut fixed = mk_redirect(Some(Scheme::Https), Some("ignored"), None, Some("/ignored"));
        fixed.location = Some("https://new.example/landing?from=old".to_string());
        let response = respond(&fixed, PLAIN, "h", &"/p?q=1".parse().expect("uri"));
        assert_eq!(
            response.headers()[header::LOCATION],
            "https://new.example/landing?from=old"
        );
        let mut app_root = mk_redirect(None, None, None, Some("/app"));
        app_root.drop_query = true;
        assert_eq!(at(&app_root, true, "h:8443", "/?q=1"), "https://h:8443/app");
    }
}
