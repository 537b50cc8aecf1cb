//! The Ingress annotations shunt understands. Ours (`shunt.dev/…`) win; the ingress-nginx
//! spellings are honoured because users migrating from it carry them.

use crate::objects::{Annotations, Ingress};
use shunt_spec::UpstreamProtocol;

pub const SSL_REDIRECT: &str = "shunt.dev/ssl-redirect";
pub const BACKEND_PROTOCOL: &str = "shunt.dev/backend-protocol";
const NGINX_SSL_REDIRECT: &str = "nginx.ingress.kubernetes.io/ssl-redirect";
const NGINX_FORCE_SSL_REDIRECT: &str = "nginx.ingress.kubernetes.io/force-ssl-redirect";
const NGINX_BACKEND_PROTOCOL: &str = "nginx.ingress.kubernetes.io/backend-protocol";

/// What an Ingress's annotations ask of every path it routes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IngressAnnotations {
    /// Plain-HTTP requests get a 308 to HTTPS. Off unless asked for: internal callers that
    /// use plain HTTP must keep working (ingress-nginx turns it on with TLS; we do not).
    pub ssl_redirect: bool,
    /// Overrides the protocol the Service port's `appProtocol` implies.
    pub backend_protocol: Option<UpstreamProtocol>,
}

/// An annotation with a value we do not understand: reported, then ignored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadAnnotation {
    pub key: &'static str,
    pub value: String,
    pub expected: &'static str,
}

pub fn parse(ingress: &Ingress) -> (IngressAnnotations, Vec<BadAnnotation>) {
    let empty = Annotations::default();
    let annotations = ingress.metadata.annotations.as_ref().unwrap_or(&empty);
    let mut bad = Vec::new();
    let mut flag = |key: &'static str| {
        let value = annotations.get(key)?;
        match value.trim().to_ascii_lowercase().as_str() {
            "true" => Some(true),
            "false" => Some(false),
            _ => {
                bad.push(BadAnnotation {
                    key,
                    value: value.clone(),
                    expected: "\"true\" or \"false\"",
                });
                None
            }
        }
    };
    let ssl_redirect = match flag(SSL_REDIRECT) {
        Some(ours) => ours,
        None => flag(NGINX_SSL_REDIRECT) == Some(true) || flag(NGINX_FORCE_SSL_REDIRECT) == Some(true),
    };
    let mut protocol = |key: &'static str| {
        let value = annotations.get(key)?;
        let parsed = backend_protocol(value);
        if parsed.is_none() {
            bad.push(BadAnnotation {
                key,
                value: value.clone(),
                expected: "HTTP, HTTPS, H2C, GRPC or GRPCS",
            });
        }
        parsed
    };
    let backend_protocol = protocol(BACKEND_PROTOCOL).or_else(|| protocol(NGINX_BACKEND_PROTOCOL));
    (
        IngressAnnotations {
            ssl_redirect,
            backend_protocol,
        },
        bad,
    )
}

fn backend_protocol(value: &str) -> Option<UpstreamProtocol> {
    match value.trim().to_ascii_uppercase().as_str() {
        "HTTP" => Some(UpstreamProtocol::Http1),
        "HTTPS" => Some(UpstreamProtocol::Https),
        "H2C" | "GRPC" => Some(UpstreamProtocol::H2c),
        // HTTP/2 over TLS, unverified as the `HTTPS` pods are (docs/tls.md).
        "GRPCS" => Some(UpstreamProtocol::H2Tls),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn annotated(pairs: &[(&str, &str)]) -> Ingress {
        let mut ingress = Ingress::default();
        ingress.metadata.annotations = Some(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect());
        ingress
    }

    #[test]
    fn no_annotation_means_no_redirect_and_the_services_protocol() {
        assert_eq!(parse(&Ingress::default()), (IngressAnnotations::default(), Vec::new()));
    }

    #[test]
    fn each_redirect_spelling_turns_it_on_and_ours_wins() {
        for key in [SSL_REDIRECT, NGINX_SSL_REDIRECT, NGINX_FORCE_SSL_REDIRECT] {
            assert!(parse(&annotated(&[(key, "true")])).0.ssl_redirect, "{key}");
            assert!(!parse(&annotated(&[(key, "false")])).0.ssl_redirect, "{key}");
        }
        let ours_off = annotated(&[(SSL_REDIRECT, "false"), (NGINX_FORCE_SSL_REDIRECT, "true")]);
        assert!(!parse(&ours_off).0.ssl_redirect);
    }

    #[test]
    fn backend_protocol_values_map_and_unknown_ones_are_reported() {
        let https = parse(&annotated(&[(BACKEND_PROTOCOL, "HTTPS")])).0;
        assert_eq!(https.backend_protocol, Some(UpstreamProtocol::Https));
        let grpc = parse(&annotated(&[(NGINX_BACKEND_PROTOCOL, "grpc")])).0;
        assert_eq!(grpc.backend_protocol, Some(UpstreamProtocol::H2c));
        let grpcs = parse(&annotated(&[(BACKEND_PROTOCOL, "GRPCS")])).0;
        assert_eq!(grpcs.backend_protocol, Some(UpstreamProtocol::H2Tls));
        let (parsed, bad) = parse(&annotated(&[(BACKEND_PROTOCOL, "FCGI"), (SSL_REDIRECT, "yes")]));
        assert_eq!(parsed, IngressAnnotations::default());
        let keys: Vec<_> = bad.iter().map(|b| b.key).collect();
        assert_eq!(keys, [SSL_REDIRECT, BACKEND_PROTOCOL]);
    }
}
