//! Cookies toward HTTP/1.1 backends: one `Cookie` line (RFC 9113 §8.2.3).
//!
//! HTTP/2 and HTTP/3 clients may send each cookie as its own `cookie` field, for better header
//! compression. An HTTP/1.1 request must carry one `Cookie` line, and many servers read only
//! the first, so the fields are joined with `; ` before such a request leaves. h2c backends
//! get them as they came.

use http::{HeaderMap, HeaderValue, header};

/// Joins repeated `cookie` fields into one, in order. A single field is left alone.
pub fn join_cookies(headers: &mut HeaderMap) {
    if !super::has_field(headers, &header::COOKIE) {
        return;
    }
    let mut values = headers.get_all(header::COOKIE).iter();
    let (Some(_), Some(_)) = (values.next(), values.next()) else {
        return;
    };
    let mut joined = Vec::new();
    for value in headers.get_all(header::COOKIE) {
        if !joined.is_empty() {
            joined.extend_from_slice(b"; ");
        }
        joined.extend_from_slice(value.as_bytes());
    }
    // Joining valid field values with "; " gives a valid field value.
    if let Ok(value) = HeaderValue::from_bytes(&joined) {
        headers.insert(header::COOKIE, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mk_headers(cookies: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for cookie in cookies {
            headers.append(header::COOKIE, HeaderValue::from_str(cookie).unwrap());
        }
        headers
    }

    #[test]
    fn split_cookie_fields_become_one_line_in_order() {
        let mut headers = mk_headers(&["a=1", "b=2", "c=3; d=4"]);
        join_cookies(&mut headers);
        let all: Vec<_> = headers.get_all(header::COOKIE).iter().collect();
        assert_eq!(all, ["a=1; b=2; c=3; d=4"]);
    }

    #[test]
    fn one_or_no_cookie_field_is_left_alone() {
        let mut headers = mk_headers(&["a=1"]);
        join_cookies(&mut headers);
        assert_eq!(headers.get(header::COOKIE).unwrap(), "a=1");
        let mut empty = HeaderMap::new();
        join_cookies(&mut empty);
        assert!(empty.is_empty());
    }
}
