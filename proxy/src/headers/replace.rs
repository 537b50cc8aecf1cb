//! The replaced set of forwarding fields: ours only, whoever the caller is, its own kept as
//! X-Original-Forwarded-For/-Host. The set ingress-nginx's template writes on every proxied
//! request (`nginx.tmpl`, the location block's `proxy_set_header` lines) with its defaults
//! (`use-forwarded-headers: false`, so the caller's own fields never stand in for ours); routes
//! of the nginx profile ask for it, so the pod gets the fields it got behind ingress-nginx.

use std::net::IpAddr;

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue};

use super::{
    AddedFields, ForwardingKeys,
    forwarded::{
        X_FORWARDED_FOR, X_FORWARDED_HOST, X_FORWARDED_PORT, X_FORWARDED_PROTO, X_REAL_IP, X_REQUEST_ID, appended,
        canonical, joined, push_request_id,
    },
    ip_text::{MAX_LEN, peer_value, push_ip},
};

static X_FORWARDED_SCHEME: HeaderName = HeaderName::from_static("x-forwarded-scheme");
static X_SCHEME: HeaderName = HeaderName::from_static("x-scheme");
static X_ORIGINAL_URI: HeaderName = HeaderName::from_static("x-original-uri");
static X_ORIGINAL_FORWARDED_FOR: HeaderName = HeaderName::from_static("x-original-forwarded-for");
static X_ORIGINAL_FORWARDED_HOST: HeaderName = HeaderName::from_static("x-original-forwarded-host");
static PROXY: HeaderName = HeaderName::from_static("proxy");

/// Every field a `proxy_set_header` line of the template names: the client's values never pass,
/// even where ours is empty and so not sent.
const REPLACED: [&HeaderName; 11] = [
    &X_REQUEST_ID,
    &X_REAL_IP,
    &X_FORWARDED_FOR,
    &X_FORWARDED_HOST,
    &X_FORWARDED_PORT,
    &X_FORWARDED_PROTO,
    &X_FORWARDED_SCHEME,
    &X_SCHEME,
    &X_ORIGINAL_FORWARDED_FOR,
    &X_ORIGINAL_FORWARDED_HOST,
    &PROXY,
];

/// The request as the replaced set describes it to the pod.
pub struct ReplaceContext<'a> {
    /// `$remote_addr`: the caller, as the route's realip rule (if any) found it.
    pub peer: IpAddr,
    /// `$realip_remote_addr` when the realip rule changed the caller: the connection's peer.
    pub via: Option<IpAddr>,
    pub tls: bool,
    /// `$best_http_host`: the Host as the client sent it (port included), or its
    /// X-Forwarded-Host under `use-forwarded-headers`.
    pub host: &'a HeaderValue,
    /// `$request_uri` when the ConfigMap asks for X-Original-URI.
    pub original_uri: Option<&'a str>,
    /// The route's ConfigMap forwarding keys, when not ingress-nginx's defaults.
    pub keys: Option<&'a ForwardingKeys>,
}

/// The caller's values ours are made of, read before its fields go.
struct Passed {
    /// `$http_x_forwarded_for` (or the `forwarded-for-header` field's) for
    /// X-Original-Forwarded-For.
    original_for: Option<String>,
    /// The chain `compute-full-forwarded-for` extends.
    chain: Option<String>,
    proto: Option<HeaderValue>,
    port: Option<HeaderValue>,
}

impl Passed {
    fn read(headers: &HeaderMap, keys: Option<&ForwardingKeys>) -> Self {
        let Some(keys) = keys else {
            return Passed {
                original_for: joined(headers, &X_FORWARDED_FOR),
                chain: None,
                proto: None,
                port: None,
            };
        };
        let chain = keys
            .full_forwarded_for
            .then(|| joined(headers, &X_FORWARDED_FOR))
            .flatten();
        Passed {
            original_for: joined(headers, &keys.original_for),
            chain: chain.filter(|chain| !chain.is_empty()),
            proto: keys.passed_proto(headers),
            port: keys.passed_port(headers),
        }
    }
}

/// Replaces the client's forwarding fields with ours; returns the X-Request-ID.
pub fn replace_forwarded(
    headers: &mut HeaderMap,
    request: &ReplaceContext<'_>,
    added: &mut AddedFields,
) -> HeaderValue {
    // `$http_x_*` variables: every value the client sent, joined as nginx joins repeats.
    let passed = Passed::read(headers, request.keys);
    let original_host = joined(headers, &X_FORWARDED_HOST);
    // `map $http_x_request_id $req_id`: the client's, unless empty.
    let client_id = headers.get(&X_REQUEST_ID).filter(|id| !id.is_empty()).cloned();
    for name in REPLACED {
        headers.remove(name);
    }
    if request.original_uri.is_some() {
        headers.remove(&X_ORIGINAL_URI);
    }

    let chain_len = passed.chain.as_ref().map_or(0, |chain| chain.len() + 2 + MAX_LEN);
    let mut text = Vec::with_capacity(MAX_LEN + 32 + chain_len);
    let peer = peer_value(canonical(request.peer));
    // nginx.tmpl's `$full_x_forwarded_for`: the caller's chain, then the connection's peer.
    let full_for = request.keys.filter(|keys| keys.full_forwarded_for).map(|_| {
        appended(&mut text, |out| {
            if let Some(chain) = &passed.chain {
                out.extend_from_slice(chain.as_bytes());
                out.extend_from_slice(b", ");
            }
            push_ip(out, canonical(request.via.unwrap_or(request.peer)));
        })
    });
    let new_id = client_id.is_none().then(|| appended(&mut text, push_request_id));
    let text = Bytes::from(text);
    let value = |range: std::ops::Range<usize>| {
        HeaderValue::from_maybe_shared(text.slice(range)).expect("addresses and hex digits are field values")
    };
    let request_id = client_id.unwrap_or_else(|| value(new_id.expect("made when the client sent none")));
    let (scheme, port) = if request.tls { ("https", "443") } else { ("http", "80") };

    added.push(X_REQUEST_ID.clone(), request_id.clone());
    let forwarded_for = full_for.map_or_else(|| peer.clone(), value);
    added.push(X_REAL_IP.clone(), peer);
    added.push(X_FORWARDED_FOR.clone(), forwarded_for);
    added.push(X_FORWARDED_HOST.clone(), request.host.clone());
    // ingress-nginx listens on 80 and 443 (`pass_port` in lua_ingress.lua).
    let port = passed.port.unwrap_or(HeaderValue::from_static(port));
    let scheme = passed.proto.unwrap_or(HeaderValue::from_static(scheme));
    push_nonempty(added, &X_FORWARDED_PORT, &port);
    push_nonempty(added, &X_FORWARDED_PROTO, &scheme);
    push_nonempty(added, &X_FORWARDED_SCHEME, &scheme);
    if let Some(uri) = request.original_uri.and_then(|uri| HeaderValue::from_str(uri).ok()) {
        added.push(X_ORIGINAL_URI.clone(), uri);
    }
    push_nonempty(added, &X_SCHEME, &scheme);
    for (name, original) in [
        (&X_ORIGINAL_FORWARDED_FOR, passed.original_for),
        (&X_ORIGINAL_FORWARDED_HOST, original_host),
    ] {
        if let Some(original) = original.and_then(|text| HeaderValue::from_str(&text).ok()) {
            added.push(name.clone(), original);
        }
    }
    request_id
}

/// nginx leaves a field out when its value is empty (a caller's empty X-Forwarded-Proto).
fn push_nonempty(added: &mut AddedFields, name: &HeaderName, value: &HeaderValue) {
    if !value.is_empty() {
        added.push(name.clone(), value.clone());
    }
}

#[cfg(test)]
mod tests;
