//! The pages answer style: answers made here carry nginx's own pages (`ngx_http_special_response.c`,
//! with `server_tokens off` as ingress-nginx sets it), the `text/html` body nginx gives the
//! redirects and errors it makes itself; the pod's answers lose the fields nginx hides. Routes of
//! the nginx profile answer in this style where shunt makes the answer (a redirect, a 413, a 403,
//! a 502 or 503 of its own), so a caller reads the bytes ingress-nginx sent.

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Response, StatusCode, header};

use crate::response_body::ResponseBody;

/// The title nginx gives a status it makes a page for; `None` for statuses it sends bare (2xx,
/// 304) and those shunt never makes.
fn title(status: StatusCode) -> Option<&'static str> {
    Some(match status.as_u16() {
        301 => "301 Moved Permanently",
        302 => "302 Found",
        303 => "303 See Other",
        307 => "307 Temporary Redirect",
        308 => "308 Permanent Redirect",
        400 => "400 Bad Request",
        401 => "401 Authorization Required",
        403 => "403 Forbidden",
        404 => "404 Not Found",
        405 => "405 Not Allowed",
        408 => "408 Request Time-out",
        413 => "413 Request Entity Too Large",
        500 => "500 Internal Server Error",
        502 => "502 Bad Gateway",
        503 => "503 Service Temporarily Unavailable",
        504 => "504 Gateway Time-out",
        _ => return None,
    })
}

/// The page nginx sends with `status`.
fn page(status: StatusCode) -> Option<Bytes> {
    let title = title(status)?;
    Some(Bytes::from(format!(
        "<html>\r\n<head><title>{title}</title></head>\r\n<body>\r\n<center><h1>{title}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
    )))
}

/// Gives an answer made here nginx's page and type, when nginx has one for its status.
pub(super) fn as_page(response: &mut Response<ResponseBody>) {
    let Some(body) = page(response.status()) else {
        return;
    };
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html"));
    headers.remove(header::CONTENT_LENGTH);
    *response.body_mut() = ResponseBody::full(body);
}

/// The pod's fields nginx's proxy module hides from the client (`proxy_hide_header`'s defaults:
/// Date, Server, X-Pad, X-Accel-*), which ingress-nginx keeps hidden (`more_clear_headers
/// Server`); our servers then write their own Date, as nginx does.
pub(super) fn hide_server_fields(headers: &mut HeaderMap) {
    headers.remove(header::SERVER);
    headers.remove(header::DATE);
    headers.remove("x-pad");
    if headers.keys().any(|name| name.as_str().starts_with("x-accel-")) {
        let accel: Vec<HeaderName> = headers
            .keys()
            .filter(|name| name.as_str().starts_with("x-accel-"))
            .cloned()
            .collect();
        for name in accel {
            headers.remove(name);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_is_nginxs_bytes_for_its_status() {
        let page = page(StatusCode::PERMANENT_REDIRECT).expect("a page");
        assert_eq!(
            &page[..],
            b"<html>\r\n<head><title>308 Permanent Redirect</title></head>\r\n<body>\r\n<center><h1>308 Permanent Redirect</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
        );
        assert!(super::page(StatusCode::NO_CONTENT).is_none());
        assert!(super::page(StatusCode::OK).is_none());
    }

    #[test]
    fn an_answer_gets_the_page_and_text_html() {
        let mut response = Response::new(ResponseBody::full("request body exceeds 1048576 bytes"));
        *response.status_mut() = StatusCode::PAYLOAD_TOO_LARGE;
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        );
        as_page(&mut response);
        assert_eq!(response.headers()[header::CONTENT_TYPE], "text/html");
        let ResponseBody::Full(Some(body)) = response.body() else {
            panic!("a full body")
        };
        assert!(body.starts_with(b"<html>\r\n<head><title>413 Request Entity Too Large</title>"));
    }

    #[test]
    fn the_pods_server_pad_and_accel_fields_are_hidden() {
        let mut headers = HeaderMap::new();
        for name in [
            "server",
            "x-pad",
            "x-accel-buffering",
            "x-accel-expires",
            "x-accelerated",
            "content-type",
        ] {
            headers.insert(HeaderName::from_static(name), HeaderValue::from_static("v"));
        }
        hide_server_fields(&mut headers);
        let mut left: Vec<&str> = headers.keys().map(HeaderName::as_str).collect();
        left.sort();
        assert_eq!(left, ["content-type", "x-accelerated"]);
    }
}
