use http::{Method, Request, Uri};
use proptest::prelude::*;

use super::*;

fn mk_request(uri: &str, host: Option<&str>) -> Request<()> {
    let mut builder = Request::get(uri);
    if let Some(host) = host {
        builder = builder.header(header::HOST, host);
    }
    builder.body(()).expect("a valid request")
}

#[test]
fn connect_and_trace_are_refused_and_the_rest_allowed() {
    for method in [Method::CONNECT, Method::TRACE] {
        assert_eq!(
            check_method(&method),
            Err(TargetError::MethodNotAllowed(method.clone()))
        );
        assert!(!ALLOWED_METHODS.contains(method.as_str()));
    }
    for method in [
        Method::GET,
        Method::POST,
        Method::OPTIONS,
        Method::PATCH,
        Method::DELETE,
    ] {
        assert_eq!(check_method(&method), Ok(()));
        assert!(ALLOWED_METHODS.contains(method.as_str()));
    }
}

#[test]
fn a_second_host_field_is_refused_even_when_it_repeats_the_first() {
    for second in ["b.example", "a.example"] {
        let mut req = mk_request("/x", Some("a.example"));
        req.headers_mut().append(header::HOST, HeaderValue::from_static(second));
        assert_eq!(check_target(&req), Err(TargetError::DuplicateHost), "{second}");
    }
    assert_eq!(check_target(&mk_request("/x", Some("a.example"))), Ok(()));
}

#[test]
fn an_absolute_target_must_name_the_host_header() {
    assert_eq!(
        check_target(&mk_request("http://a.example/x", Some("a.example"))),
        Ok(())
    );
    assert_eq!(
        check_target(&mk_request("http://A.Example:80/x", Some("a.example"))),
        Ok(())
    );
    assert_eq!(
        check_target(&mk_request("https://a.example/x", Some("a.example:443"))),
        Ok(())
    );
    assert_eq!(
        check_target(&mk_request("http://[::1]:8080/x", Some("[::1]:8080"))),
        Ok(())
    );
    assert_eq!(check_target(&mk_request("http://a.example/x", None)), Ok(()));
    for (uri, host) in [
        ("http://b.example/x", "a.example"),
        ("http://a.example:8080/x", "a.example"),
        ("https://a.example/x", "a.example:80"),
        ("http://[::1]/x", "[::2]"),
        ("http://a.example.evil/x", "a.example"),
    ] {
        assert!(
            matches!(
                check_target(&mk_request(uri, Some(host))),
                Err(TargetError::AuthorityMismatch { .. })
            ),
            "{uri} with Host {host}"
        );
    }
}

#[test]
fn userinfo_is_refused_in_the_target_and_in_host() {
    assert_eq!(
        check_target(&mk_request("http://user:pw@a.example/x", Some("a.example"))),
        Err(TargetError::Userinfo)
    );
    assert_eq!(
        check_target(&mk_request("http://u@a.example/", None)),
        Err(TargetError::Userinfo)
    );
    assert_eq!(
        check_target(&mk_request("/x", Some("u@a.example"))),
        Err(TargetError::Userinfo)
    );
}

#[test]
fn hosts_with_characters_no_authority_has_are_refused() {
    for host in ["a example", "a/b", "a\"b", "a\\b", "a<b>"] {
        assert!(
            matches!(
                check_target(&mk_request("/", Some(host))),
                Err(TargetError::InvalidHost(_))
            ),
            "{host:?}"
        );
    }
    assert_eq!(check_target(&mk_request("/", Some("shop-1.example.com:8080"))), Ok(()));
}

#[test]
fn every_byte_of_a_host_is_judged_as_rfc_3986_lists_it() {
    let allowed = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=%:[]";
    for b in 0..=u8::MAX {
        // Bytes a header value cannot hold at all never get this far.
        let Ok(host) = HeaderValue::from_bytes(&[b'a', b]) else {
            continue;
        };
        let expected = if allowed.as_bytes().contains(&b) {
            Ok(())
        } else if b == b'@' {
            Err(TargetError::Userinfo)
        } else {
            Err(TargetError::InvalidHost(
                String::from_utf8_lossy(&[b'a', b]).into_owned(),
            ))
        };
        assert_eq!(check_host_value(&host), expected, "byte {b:#04x}");
    }
}

#[test]
fn the_query_is_kept_byte_for_byte_when_the_path_is_rewritten() {
    let uri: Uri = "/x/../a%62c//d?q=%2F..//%61&r".parse().unwrap();
    let rewritten = normalized_path_and_query(&uri).unwrap().expect("a rewrite");
    assert_eq!(rewritten.as_str(), "/abc/d?q=%2F..//%61&r");
    let normal: Uri = "/abc/d?q=//".parse().unwrap();
    assert_eq!(normalized_path_and_query(&normal).unwrap(), None);
    let bad: Uri = "/a%2Fb?q".parse().unwrap();
    assert_eq!(
        normalized_path_and_query(&bad),
        Err(TargetError::Path(PathError::EncodedSlash))
    );
}

fn host_strategy() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9-]{1,10}(\\.[a-zA-Z0-9-]{1,10}){0,3}"
}

proptest! {
    #[test]
    fn an_authority_equals_itself_in_any_case_with_or_without_the_default_port(
        host in host_strategy(),
        port in prop::option::of(1u16..),
        upper in any::<bool>(),
    ) {
        let authority = match port {
            Some(port) => format!("{host}:{port}"),
            None => host.clone(),
        };
        let recased = if upper { authority.to_ascii_uppercase() } else { authority.to_ascii_lowercase() };
        prop_assert!(same_authority(&authority, &recased, 80));
        let with_port = format!("{host}:80");
        prop_assert!(same_authority(&host, &with_port, 80));
        if let Some(port) = port.filter(|&p| p != 80) {
            let other = format!("{host}:{port}");
            prop_assert!(!same_authority(&host, &other, 80));
        }
    }

    #[test]
    fn different_hosts_never_compare_equal(a in host_strategy(), b in host_strategy()) {
        prop_assume!(!a.eq_ignore_ascii_case(&b));
        prop_assert!(!same_authority(&a, &b, 80));
        let (a80, b80) = (format!("{a}:80"), format!("{b}:80"));
        prop_assert!(!same_authority(&a80, &b80, 80));
    }

    #[test]
    fn any_host_header_is_answered_without_panicking(host in "[ -~]{0,30}") {
        if let Ok(value) = HeaderValue::from_str(&host) {
            let mut req = mk_request("http://a.example/", None);
            req.headers_mut().insert(header::HOST, value);
            let _ = check_target(&req);
        }
    }
}
