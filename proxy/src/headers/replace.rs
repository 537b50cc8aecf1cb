//! The replaced set of forwarding fields: ours only, whoever the caller is, its own kept as
//! X-Original-Forwarded-For/-Host. The set ingress-nginx's template writes on every proxied
//! request (`nginx.tmpl`, the location block's `proxy_set_header` lines) with its defaults
//! (`use-forwarded-headers: false`, so the caller's own fields never stand in for ours); routes
//! of the nginx profile ask for it, so the pod gets the fields it got behind ingress-nginx.

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue};

use super::{
    AddedFields,
    forwarded::{
        X_FORWARDED_FOR, X_FORWARDED_HOST, X_FORWARDED_PORT, X_FORWARDED_PROTO, X_REAL_IP, X_REQUEST_ID, appended,
        canonical, joined, push_request_id,
    },
    ip_text::{MAX_LEN, push_ip},
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
    pub peer: std::net::IpAddr,
    pub tls: bool,
    /// `$best_http_host`: the Host as the client sent it (port included).
    pub host: &'a HeaderValue,
    /// `$request_uri` when the ConfigMap asks for X-Original-URI.
    pub original_uri: Option<&'a str>,
}

/// Replaces the client's forwarding fields with ours; returns the X-Request-ID.
pub fn replace_forwarded(
    headers: &mut HeaderMap,
    request: &ReplaceContext<'_>,
    added: &mut AddedFields,
) -> HeaderValue {
    // `$http_x_*` variables: every value the client sent, joined as nginx joins repeats.
    let original_for = joined(headers, &X_FORWARDED_FOR);
    let original_host = joined(headers, &X_FORWARDED_HOST);
    // `map $http_x_request_id $req_id`: the client's, unless empty.
    let client_id = headers.get(&X_REQUEST_ID).filter(|id| !id.is_empty()).cloned();
    for name in REPLACED {
        headers.remove(name);
    }
    if request.original_uri.is_some() {
        headers.remove(&X_ORIGINAL_URI);
    }

    let mut text = Vec::with_capacity(MAX_LEN + 32);
    let peer = appended(&mut text, |out| push_ip(out, canonical(request.peer)));
    let new_id = client_id.is_none().then(|| appended(&mut text, push_request_id));
    let text = Bytes::from(text);
    let value = |range: std::ops::Range<usize>| {
        HeaderValue::from_maybe_shared(text.slice(range)).expect("addresses and hex digits are field values")
    };
    let request_id = client_id.unwrap_or_else(|| value(new_id.expect("made when the client sent none")));
    let (scheme, port) = if request.tls { ("https", "443") } else { ("http", "80") };

    added.push(X_REQUEST_ID.clone(), request_id.clone());
    added.push(X_REAL_IP.clone(), value(peer.clone()));
    added.push(X_FORWARDED_FOR.clone(), value(peer));
    added.push(X_FORWARDED_HOST.clone(), request.host.clone());
    // ingress-nginx listens on 80 and 443 (`pass_port` in lua_ingress.lua).
    added.push(X_FORWARDED_PORT.clone(), HeaderValue::from_static(port));
    for name in [&X_FORWARDED_PROTO, &X_FORWARDED_SCHEME] {
        added.push(name.clone(), HeaderValue::from_static(scheme));
    }
    if let Some(uri) = request.original_uri.and_then(|uri| HeaderValue::from_str(uri).ok()) {
        added.push(X_ORIGINAL_URI.clone(), uri);
    }
    added.push(X_SCHEME.clone(), HeaderValue::from_static(scheme));
    // nginx leaves a field out when its value is empty.
    for (name, original) in [
        (&X_ORIGINAL_FORWARDED_FOR, original_for),
        (&X_ORIGINAL_FORWARDED_HOST, original_host),
    ] {
        if let Some(original) = original.and_then(|text| HeaderValue::from_str(&text).ok()) {
            added.push(name.clone(), original);
        }
    }
    request_id
}

#[cfg(test)]
mod tests;
