use http::HeaderValue;

use super::*;

fn mk_headers(names: &[&str]) -> HeaderMap {
    let mut headers = HeaderMap::new();
    for name in names {
        headers.append(
            HeaderName::from_bytes(name.as_bytes()).unwrap(),
            HeaderValue::from_static("v"),
        );
    }
    headers
}

fn left(headers: &HeaderMap) -> Vec<&str> {
    let mut names: Vec<_> = headers.keys().map(HeaderName::as_str).collect();
    names.sort();
    names
}

#[test]
fn framing_routing_and_credentials_never_cross_as_trailers() {
    let trailers = mk_headers(&[
        "content-length",
        "transfer-encoding",
        "host",
        "authorization",
        "cookie",
        "trailer",
        "content-type",
        "x-forwarded-for",
        "x-real-ip",
        "proxy-authorization",
        "if-match",
        "x_checksum",
        "x-checksum",
        "grpc-status",
    ]);
    let kept = TrailerFilter::default().apply(trailers).unwrap();
    assert_eq!(left(&kept), ["grpc-status", "x-checksum"]);
}

#[test]
fn a_trailer_the_head_already_had_is_dropped() {
    let head = mk_headers(&["host", "x-user", "content-length"]);
    let kept = TrailerFilter::new(&head)
        .apply(mk_headers(&["x-user", "x-digest"]))
        .unwrap();
    assert_eq!(left(&kept), ["x-digest"]);
}

#[test]
fn a_section_with_nothing_allowed_left_is_no_section() {
    assert!(
        TrailerFilter::default()
            .apply(mk_headers(&["host", "content-length"]))
            .is_none()
    );
}
