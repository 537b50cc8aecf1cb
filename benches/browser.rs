//! A browser-like request's fields, shared by the header benches (`headers`, `h1codec`).

use http::{HeaderMap, HeaderName, HeaderValue};

/// What a browser sends for a page, plus `extra` fields after it.
pub fn browser_request(extra: &[(&'static str, &'static str)]) -> HeaderMap {
    let mut headers = HeaderMap::new();
    let browser = [
        ("host", "shop.example.com"),
        (
            "user-agent",
            "Mozilla/5.0 (X11; Linux x86_64) Gecko/20100101 Firefox/128.0",
        ),
        (
            "accept",
            "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
        ),
        ("accept-language", "en-US,en;q=0.5"),
        ("accept-encoding", "gzip, deflate, br"),
    ];
    for (name, value) in browser.iter().chain(extra) {
        headers.append(HeaderName::from_static(name), HeaderValue::from_static(value));
    }
    headers
}
