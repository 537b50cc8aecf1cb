//! One attempt's request head, borrowed from the forwarding loop: a retry copies nothing, and an
//! HTTP/1.1 pod gets the client's fields and the added ones written straight from where they are.

use http::{HeaderMap, Method, Request, Uri, Version, header};

use crate::{body::RequestBody, headers::AddedFields};

pub struct Outgoing<'a> {
    pub method: &'a Method,
    /// Origin-form for HTTP/1.1, absolute for h2c ([`super::UpstreamClients::request_uri`]).
    pub uri: Uri,
    /// The client's fields, hop-by-hop ones gone, `Host` set.
    pub headers: &'a HeaderMap,
    /// Written after `headers`; no name here is also in `headers` unless both are meant to go.
    pub added: &'a AddedFields,
    /// The caller's connection is over TLS: an `AutoHttp` pod is then spoken to over TLS.
    pub client_tls: bool,
}

impl Outgoing<'_> {
    /// The field lines in the order they go out.
    pub fn fields(&self) -> impl Iterator<Item = (&http::HeaderName, &http::HeaderValue)> {
        self.headers.iter().chain(self.added.iter())
    }

    /// The head as the `http::Request` hyper's HTTP/2 client takes: fields copied into one map.
    pub fn to_h2(&self, body: RequestBody) -> Request<RequestBody> {
        let mut request = Request::new(body);
        *request.method_mut() = self.method.clone();
        *request.uri_mut() = self.uri.clone();
        *request.version_mut() = Version::HTTP_2;
        let headers = request.headers_mut();
        headers.reserve(self.headers.len() + self.added.len());
        headers.extend(self.headers.iter().map(|(name, value)| (name.clone(), value.clone())));
        self.added.append_to(headers);
        let host_is_authority = match (self.uri.authority(), headers.get(header::HOST)) {
            (Some(authority), Some(host)) => authority.as_str().as_bytes() == host.as_bytes(),
            _ => false,
        };
        if host_is_authority {
            // `:authority` carries the host; RFC 9113 §8.3.1 prefers it over a duplicate Host.
            headers.remove(header::HOST);
        }
        request
    }
}

#[cfg(test)]
mod tests {
    use http::{HeaderName, HeaderValue};

    use super::*;

    #[test]
    fn the_h2_request_carries_every_field_once_and_the_host_as_authority() {
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_static("shop.example.com"));
        headers.append("accept", HeaderValue::from_static("a"));
        headers.append("accept", HeaderValue::from_static("b"));
        let mut added = AddedFields::default();
        added.push(
            HeaderName::from_static("x-forwarded-for"),
            HeaderValue::from_static("10.0.0.7"),
        );
        let head = Outgoing {
            method: &Method::POST,
            uri: "http://shop.example.com/a?b".parse().unwrap(),
            headers: &headers,
            added: &added,
            client_tls: false,
        };
        let request = head.to_h2(RequestBody::Empty);
        assert_eq!(request.version(), Version::HTTP_2);
        assert_eq!(request.method(), Method::POST);
        assert_eq!(request.uri(), "http://shop.example.com/a?b");
        let all = |name: &str| request.headers().get_all(name).iter().cloned().collect::<Vec<_>>();
        assert!(all("host").is_empty(), "the authority says it");
        assert_eq!(all("accept"), ["a", "b"]);
        assert_eq!(all("x-forwarded-for"), ["10.0.0.7"]);
    }

    #[test]
    fn a_host_other_than_the_authority_stays() {
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_static("shop.example.com"));
        let added = AddedFields::default();
        let head = Outgoing {
            method: &Method::GET,
            uri: "http://10.0.0.9:8080/".parse().unwrap(),
            headers: &headers,
            added: &added,
            client_tls: false,
        };
        assert_eq!(
            head.to_h2(RequestBody::Empty).headers()[header::HOST],
            "shop.example.com"
        );
    }
}
