use http::{StatusCode, Version, header};
use proptest::prelude::*;

use super::*;

fn mk_head(text: &str) -> Result<Option<Head>, H1Error> {
    parse_head(text.as_bytes(), false)
}

#[test]
fn a_complete_head_gives_status_fields_length_and_framing() {
    let text = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-Id: a b\r\n\r\nhello";
    let head = mk_head(text).unwrap().unwrap();
    assert_eq!(head.status, StatusCode::OK);
    assert_eq!(head.version, Version::HTTP_11);
    assert_eq!(head.len, text.len() - 5);
    assert_eq!(head.headers[header::CONTENT_LENGTH], "5");
    assert_eq!(head.headers["x-id"], "a b");
    assert_eq!(head.body, Decoder::length(5));
    assert!(head.keep_alive);
}

#[test]
fn an_incomplete_head_asks_for_more() {
    assert!(mk_head("HTTP/1.1 200 OK\r\nContent-Len").unwrap().is_none());
    assert!(mk_head("").unwrap().is_none());
}

#[test]
fn a_head_over_the_bound_is_an_error_complete_or_not() {
    let big = format!("HTTP/1.1 200 OK\r\nx-big: {}\r\n", "a".repeat(MAX_HEAD));
    assert!(matches!(mk_head(&big), Err(H1Error::HeadTooLarge)));
    let complete = format!("{big}\r\n");
    assert!(matches!(mk_head(&complete), Err(H1Error::HeadTooLarge)));
}

#[test]
fn more_fields_than_the_bound_are_an_error() {
    let fields: String = (0..=MAX_HEADERS).map(|i| format!("x-{i}: v\r\n")).collect();
    let text = format!("HTTP/1.1 200 OK\r\n{fields}\r\n");
    assert!(matches!(mk_head(&text), Err(H1Error::InvalidHeader(_))));
}

#[test]
fn obs_fold_and_invalid_names_are_rejected() {
    assert!(mk_head("HTTP/1.1 200 OK\r\nX-A: one\r\n two\r\n\r\n").is_err());
    assert!(mk_head("HTTP/1.1 200 OK\r\nX A: one\r\n\r\n").is_err());
    assert!(mk_head("HTTP/1.1 200 OK\r\nX-A : one\r\n\r\n").is_err());
    assert!(mk_head("HTTP/1.1 200 OK\r\nX-A: o\x00ne\r\n\r\n").is_err());
}

#[test]
fn differing_content_lengths_are_rejected_and_equal_ones_kept() {
    let differ = mk_head("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n");
    assert!(matches!(differ, Err(H1Error::Framing(_))));
    let list = mk_head("HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\n");
    assert!(matches!(list, Err(H1Error::Framing(_))));
    let same = mk_head("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n");
    assert_eq!(same.unwrap().unwrap().body, Decoder::length(5));
    for bad in ["-1", "+5", "5 5", "", "0x5", "99999999999999999999999"] {
        let text = format!("HTTP/1.1 200 OK\r\nContent-Length: {bad}\r\n\r\n");
        assert!(matches!(mk_head(&text), Err(H1Error::Framing(_))), "{bad}");
    }
}

#[test]
fn a_list_of_equal_content_lengths_is_passed_on_as_the_one_value() {
    for fields in [
        "Content-Length: 5, 5\r\n",
        "Content-Length: 5\r\nContent-Length: 5\r\n",
        "Content-Length: 5 ,5,  5\r\n",
    ] {
        let head = mk_head(&format!("HTTP/1.1 200 OK\r\n{fields}\r\n")).unwrap().unwrap();
        let lengths: Vec<_> = head.headers.get_all(header::CONTENT_LENGTH).iter().collect();
        assert_eq!(lengths, ["5"], "{fields:?}");
        assert_eq!(head.body, Decoder::length(5));
    }
}

#[test]
fn beside_transfer_encoding_content_length_is_ignored_and_the_connection_not_kept() {
    let text = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n";
    let head = mk_head(text).unwrap().unwrap();
    assert_eq!(head.body, Decoder::chunked());
    assert!(!head.keep_alive);
}

#[test]
fn transfer_encoding_ending_in_chunked_is_chunked_and_otherwise_read_until_close() {
    let chunked = mk_head("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, Chunked\r\n\r\n");
    assert_eq!(chunked.unwrap().unwrap().body, Decoder::chunked());
    let gzip = mk_head("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: x\r\n\r\n");
    assert!(matches!(gzip, Err(H1Error::Framing(_))));
    let head = mk_head("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n")
        .unwrap()
        .unwrap();
    assert!(head.body.is_close_delimited());
}

#[test]
fn no_framing_reads_until_close() {
    let head = mk_head("HTTP/1.1 200 OK\r\n\r\n").unwrap().unwrap();
    assert!(head.body.is_close_delimited());
}

#[test]
fn head_requests_1xx_204_and_304_have_no_body_whatever_the_fields_say() {
    let text = "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n";
    assert!(parse_head(text.as_bytes(), true).unwrap().unwrap().body.is_done());
    for status in ["100 Continue", "103 Early Hints", "204 No Content", "304 Not Modified"] {
        let text = format!("HTTP/1.1 {status}\r\nContent-Length: 10\r\n\r\n");
        assert!(mk_head(&text).unwrap().unwrap().body.is_done(), "{status}");
    }
}

#[test]
fn http_1_0_keeps_the_connection_only_when_the_pod_says_keep_alive() {
    let plain = mk_head("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n")
        .unwrap()
        .unwrap();
    assert_eq!(plain.version, Version::HTTP_10);
    assert!(!plain.keep_alive);
    let kept = mk_head("HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n");
    assert!(kept.unwrap().unwrap().keep_alive);
    let chunked = mk_head("HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
    assert!(matches!(chunked, Err(H1Error::Framing(_))));
}

#[test]
fn connection_close_from_the_pod_ends_keep_alive() {
    let head = mk_head("HTTP/1.1 200 OK\r\nConnection: foo, close\r\nContent-Length: 0\r\n\r\n");
    assert!(!head.unwrap().unwrap().keep_alive);
}

#[test]
fn fields_that_only_manage_this_connection_stay_out_of_the_map() {
    let head = mk_head(
        "HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\nX-A: 1\r\nContent-Length: 0\r\n\r\n",
    )
    .unwrap()
    .unwrap();
    assert!(head.keep_alive, "read before it was left out");
    let names: Vec<&str> = head.headers.keys().map(|name| name.as_str()).collect();
    assert_eq!(names, ["x-a", "content-length"]);
}

#[test]
fn connection_close_stays_so_that_a_field_named_close_is_stripped_with_it() {
    let closing = mk_head("HTTP/1.1 200 OK\r\nConnection: Close\r\nClose: x\r\nContent-Length: 0\r\n\r\n")
        .unwrap()
        .unwrap();
    assert!(!closing.keep_alive);
    assert_eq!(closing.headers["connection"], "Close");
    let mut headers = closing.headers;
    crate::headers::strip_hop_by_hop(&mut headers);
    assert!(!headers.contains_key("close"), "{headers:?}");
}

#[test]
fn a_connection_that_names_other_fields_stays_for_the_proxy_to_strip_them() {
    let head = mk_head("HTTP/1.1 200 OK\r\nConnection: close, X-Private\r\nX-Private: 1\r\nContent-Length: 0\r\n\r\n")
        .unwrap()
        .unwrap();
    assert!(!head.keep_alive);
    assert_eq!(head.headers["connection"], "close, X-Private");
    assert_eq!(head.headers["x-private"], "1");
}

#[test]
fn header_values_do_not_hold_the_read_buffer() {
    let text = b"HTTP/1.1 200 OK\r\nX-A: one\r\n\r\n".to_vec();
    let head = parse_head(&text, false).unwrap().unwrap();
    let value = head.headers["x-a"].as_bytes().as_ptr() as usize;
    let buf = text.as_ptr() as usize;
    assert!(
        value < buf || value >= buf + text.len(),
        "the value points into the read buffer"
    );
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512), head in any::<bool>()) {
        let _ = parse_head(&bytes, head);
    }

    #[test]
    fn arbitrary_fields_after_a_status_line_never_panic(fields in "[ -~\t\r\n]{0,300}") {
        let text = format!("HTTP/1.1 200 OK\r\n{fields}\r\n\r\n");
        let _ = parse_head(text.as_bytes(), false);
    }

    #[test]
    fn conflicting_framing_never_frames_by_length_nor_keeps_the_connection(
        a in 0u64..1_000_000,
        b in 0u64..1_000_000,
        coding in "(chunked|gzip|identity)",
        te_first in any::<bool>(),
    ) {
        let length = format!("Content-Length: {a}\r\n");
        let te = format!("Transfer-Encoding: {coding}\r\n");
        let fields = if te_first { format!("{te}{length}") } else { format!("{length}{te}") };
        let text = format!("HTTP/1.1 200 OK\r\n{fields}\r\n");
        let head = parse_head(text.as_bytes(), false).unwrap().unwrap();
        prop_assert!(!head.keep_alive);
        prop_assert!(head.body.remaining().is_none(), "framed by length: {:?}", head.body);
        if a != b {
            let text = format!("HTTP/1.1 200 OK\r\nContent-Length: {a}\r\nContent-Length: {b}\r\n\r\n");
            prop_assert!(matches!(parse_head(text.as_bytes(), false), Err(H1Error::Framing(_))));
        }
    }
}
