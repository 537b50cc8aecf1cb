//! The sign-in redirect's `Location`: the template's variables expanded as nginx expands them
//! in `return 302 ...` (see [`crate::spec::SigninPart`]).

use http::HeaderValue;

use crate::spec::{Signin, SigninPart, escaped_in_uri};

/// What the variables of a sign-in template read from the request.
pub struct SigninRequest<'a> {
    pub tls: bool,
    /// The `Host` field (or `:authority`) as sent.
    pub http_host: &'a str,
    /// The request target as sent.
    pub request_uri: &'a str,
}

/// The expanded template; `None` when it is no field value (a control byte of the target).
pub(super) fn location(signin: &Signin, request: &SigninRequest<'_>) -> Option<HeaderValue> {
    let mut out = Vec::with_capacity(256);
    for part in &signin.parts {
        match part {
            SigninPart::Text(text) => out.extend_from_slice(text.as_bytes()),
            SigninPart::Scheme => out.extend_from_slice(if request.tls { b"https" } else { b"http" }),
            SigninPart::Host => out.extend(host(request.http_host).bytes().map(|b| b.to_ascii_lowercase())),
            SigninPart::HttpHost => out.extend_from_slice(request.http_host.as_bytes()),
            SigninPart::RequestUri => out.extend_from_slice(request.request_uri.as_bytes()),
            SigninPart::EscapedRequestUri => escape(request.request_uri.as_bytes(), &mut out),
        }
    }
    HeaderValue::from_bytes(&out).ok()
}

/// `$host`: the Host without its port.
fn host(http_host: &str) -> &str {
    if http_host.starts_with('[') {
        return http_host
            .split_once(']')
            .map_or(http_host, |(v6, _)| &http_host[..=v6.len()]);
    }
    http_host.split_once(':').map_or(http_host, |(host, _)| host)
}

/// set-misc's `set_escape_uri`: `%XX`, uppercase, for every byte its table escapes.
pub(crate) fn escape(input: &[u8], out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for &byte in input {
        if escaped_in_uri(byte) {
            out.extend_from_slice(&[b'%', HEX[usize::from(byte >> 4)], HEX[usize::from(byte & 0xf)]]);
        } else {
            out.push(byte);
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn mk_signin(parts: Vec<SigninPart>) -> Signin {
        Signin { parts }
    }

    #[test]
    fn the_redirect_names_the_original_url_escaped_as_set_misc_escapes_it() {
        let signin = mk_signin(vec![
            SigninPart::Text("https://auth.example/start?rd=".into()),
            SigninPart::Scheme,
            SigninPart::Text("://".into()),
            SigninPart::HttpHost,
            SigninPart::EscapedRequestUri,
        ]);
        let request = SigninRequest {
            tls: true,
            http_host: "Shop.example:8443",
            request_uri: "/a b/c?x=1&y=[2]",
        };
        assert_eq!(
            location(&signin, &request).unwrap(),
            "https://auth.example/start?rd=https://Shop.example:8443%2Fa%20b%2Fc%3Fx%3D1%26y%3D%5B2%5D"
        );
    }

    #[test]
    fn host_is_lowercase_without_its_port() {
        let signin = mk_signin(vec![SigninPart::Text("http://".into()), SigninPart::Host]);
        let request = SigninRequest {
            tls: false,
            http_host: "Shop.Example:80",
            request_uri: "/",
        };
        assert_eq!(location(&signin, &request).unwrap(), "http://shop.example");
    }

    proptest! {
        #[test]
        fn an_escaped_target_keeps_only_bytes_that_need_no_escape(target in proptest::collection::vec(any::<u8>(), 0..64)) {
            let mut out = Vec::new();
            escape(&target, &mut out);
            // Every byte is either kept (and needs no escape) or written as %XX; decoding gives it back.
            let mut decoded = Vec::new();
            let mut at = 0;
            while at < out.len() {
                if out[at] == b'%' {
                    let hex = std::str::from_utf8(&out[at + 1..at + 3]).unwrap();
                    decoded.push(u8::from_str_radix(hex, 16).unwrap());
                    at += 3;
                } else {
                    prop_assert!(!escaped_in_uri(out[at]));
                    decoded.push(out[at]);
                    at += 1;
                }
            }
            prop_assert_eq!(decoded, target);
            prop_assert!(HeaderValue::from_bytes(&out).is_ok());
        }
    }
}
