//! Redirect answers for routes that carry a [`RedirectSpec`]: the request's URL with some parts
//! replaced, query string kept.

use http::{HeaderValue, Response, StatusCode, header, uri::PathAndQuery};

use crate::{
    body::ResponseBody,
    routes::{
        authority_host,
        spec::{RedirectSpec, Scheme},
    },
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
    }
}

/// The redirect for a request for `target` that arrived with `authority` (Host) on the TLS
/// listener or not.
pub fn respond(redirect: &RedirectSpec, tls: bool, authority: &str, target: &PathAndQuery) -> Response<ResponseBody> {
    let mut response = Response::new(ResponseBody::empty());
    *response.status_mut() = StatusCode::from_u16(redirect.code).unwrap_or(StatusCode::FOUND);
    if let Ok(value) = HeaderValue::from_str(&location(redirect, tls, authority, target)) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    response
}

/// `Location` for `redirect`: see [`RedirectSpec`] for which parts are kept.
pub fn location(redirect: &RedirectSpec, tls: bool, authority: &str, target: &PathAndQuery) -> String {
    let requested = if tls { Scheme::Https } else { Scheme::Http };
    let scheme = redirect.scheme.unwrap_or(requested);
    let keep_authority = redirect.host.is_none() && redirect.port.is_none() && scheme == requested;
    let authority = if keep_authority {
        authority.to_string()
    } else {
        let host = redirect.host.as_deref().unwrap_or_else(|| authority_host(authority));
        match redirect.port {
            Some(port) if port != scheme.default_port() => format!("{host}:{port}"),
            _ => host.to_string(),
        }
    };
    let path = redirect.path.as_deref().unwrap_or_else(|| target.path());
    let path = if path.is_empty() { "/" } else { path };
    match target.query() {
        Some(query) => format!("{}://{authority}{path}?{query}", scheme.as_str()),
        None => format!("{}://{authority}{path}", scheme.as_str()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mk_redirect(scheme: Option<Scheme>, host: Option<&str>, port: Option<u16>, path: Option<&str>) -> RedirectSpec {
        RedirectSpec {
            code: 302,
            scheme,
            host: host.map(str::to_string),
            port,
            path: path.map(str::to_string),
        }
    }

    fn at(redirect: &RedirectSpec, tls: bool, authority: &str, uri: &str) -> String {
        location(redirect, tls, authority, &uri.parse().expect("a valid path and query"))
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
    fn the_code_is_the_routes() {
        let mut moved = mk_redirect(None, None, None, Some("/x/"));
        moved.code = 307;
        let response = respond(&moved, false, "h", &"/x".parse().expect("uri"));
        assert_eq!(response.status(), StatusCode::TEMPORARY_REDIRECT);
        assert_eq!(response.headers()[header::LOCATION], "http://h/x/");
    }
}
