//! Every `nginx.ingress.kubernetes.io/*` annotation classified: reproduced (parsed here into
//! what the routes need), no effect on the answer a caller gets, or refused with its key named.
//! A key the table does not know is refused: nginx may know it.

use std::collections::BTreeMap;

use k8s_openapi::api::networking::v1::Ingress;
use shunt_proxy::routes::spec::UpstreamProtocol;

pub const PREFIX: &str = "nginx.ingress.kubernetes.io/";

/// Keys (without [`PREFIX`]) that change buffering, logging, tracing or endpoint choice, never
/// the status, headers or body a caller or pod sees.
pub const NO_EFFECT: [&str; 15] = [
    "client-body-buffer-size",
    "enable-access-log",
    "enable-opentelemetry",
    "enable-opentracing",
    "enable-rewrite-log",
    "load-balance",
    "opentelemetry-trust-incoming-span",
    "opentracing-trust-incoming-span",
    "proxy-buffer-size",
    "proxy-buffering",
    "proxy-buffers-number",
    "proxy-busy-buffers-size",
    "proxy-max-temp-file-size",
    "proxy-request-buffering",
    "service-upstream",
];

/// The source ranges that admit every address (what cert-manager's HTTP-01 solver sets).
const ALLOW_ALL: [&str; 2] = ["0.0.0.0/0", "::/0"];

/// What one Ingress's annotations ask of its routes, and the keys its hosts are refused for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NginxAnnotations {
    /// `ssl-redirect`: `None` keeps the ConfigMap's default (on, for hosts with a certificate).
    pub ssl_redirect: Option<bool>,
    /// `force-ssl-redirect: "true"`: redirect plain HTTP even without a certificate.
    pub force_ssl_redirect: bool,
    pub backend_protocol: Option<UpstreamProtocol>,
    /// `UnsupportedAnnotation: KEY` or `InvalidAnnotation: KEY`, one per offending key.
    pub refusals: Vec<String>,
}

/// Classifies every annotation of `ingress`.
pub fn parse(ingress: &Ingress) -> NginxAnnotations {
    let empty = BTreeMap::new();
    let annotations = ingress.metadata.annotations.as_ref().unwrap_or(&empty);
    let mut parsed = NginxAnnotations::default();
    for (key, value) in annotations {
        let Some(name) = key.strip_prefix(PREFIX) else { continue };
        if let Err(refusal) = apply(&mut parsed, name, value) {
            parsed.refusals.push(format!("{refusal}: {key}"));
        }
    }
    parsed
}

/// Why a key makes its hosts refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Refusal {
    Unsupported,
    Invalid,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Refusal::Unsupported => "UnsupportedAnnotation",
            Refusal::Invalid => "InvalidAnnotation",
        })
    }
}

fn apply(parsed: &mut NginxAnnotations, name: &str, value: &str) -> Result<(), Refusal> {
    match name {
        "ssl-redirect" => parsed.ssl_redirect = Some(flag(value)?),
        "force-ssl-redirect" => parsed.force_ssl_redirect = flag(value)?,
        "backend-protocol" => parsed.backend_protocol = backend_protocol(value)?,
        // Only 1.1 is what shunt speaks upstream; 1.0 closes every connection and changes framing.
        "proxy-http-version" if value.trim() == "1.1" => {}
        "whitelist-source-range" | "allowlist-source-range" if allows_all(value) => {}
        name if NO_EFFECT.contains(&name) => {}
        _ => return Err(Refusal::Unsupported),
    }
    Ok(())
}

/// ingress-nginx parses booleans with Go's `strconv.ParseBool`
/// (internal/ingress/annotations/parser/main.go, `GetBoolAnnotation`).
fn flag(value: &str) -> Result<bool, Refusal> {
    match value {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Ok(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Ok(false),
        _ => Err(Refusal::Invalid),
    }
}

/// `HTTP` and `GRPC` (cleartext HTTP/2) are forwarded as nginx forwards them; `HTTPS` and
/// `GRPCS` are not, because nginx neither verifies the pod's certificate nor sends SNI by
/// default and shunt's TLS client does both; `AUTO_HTTP` and `FCGI` have no counterpart.
fn backend_protocol(value: &str) -> Result<Option<UpstreamProtocol>, Refusal> {
    match value.trim().to_ascii_uppercase().as_str() {
        "HTTP" => Ok(None),
        "GRPC" => Ok(Some(UpstreamProtocol::H2c)),
        "HTTPS" | "GRPCS" | "AUTO_HTTP" | "FCGI" => Err(Refusal::Unsupported),
        _ => Err(Refusal::Invalid),
    }
}

/// A range list that admits every address: then the annotation changes nothing. Any narrower
/// list is refused: the address nginx judges behind the load balancer is a node's or the NAT's,
/// not the one shunt sees.
fn allows_all(value: &str) -> bool {
    let ranges: Vec<&str> = value.split(',').map(str::trim).filter(|r| !r.is_empty()).collect();
    ranges.iter().all(|range| range.parse::<ipnet::IpNet>().is_ok()) && ALLOW_ALL.iter().all(|all| ranges.contains(all))
}
