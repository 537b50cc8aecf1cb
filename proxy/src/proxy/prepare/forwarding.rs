//! The set of forwarding fields a route's pod gets, the behaviour its [`Forwarding`] names, and
//! the request fields that go with the set. Each decision about a forwarding field is made here.

use http::{HeaderMap, HeaderName, HeaderValue, header, uri::PathAndQuery};

use crate::{
    headers::{AddedFields, ForwardedContext, ReplaceContext, replace_forwarded, set_forwarded},
    proxy::ProxyOptions,
    routes::Route,
    server::ConnInfo,
    spec::{Forwarding, TrustedProxies},
};

/// Which forwarding fields the pod sees.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum FieldSet {
    /// `Forwarded` and X-Forwarded-*, the caller's chain kept only behind `--trusted-proxies`
    /// (`headers::set_forwarded`), and the route's protocol field.
    Chained,
    /// Ours alone, the caller's kept as X-Original-Forwarded-For/-Host, no `Forwarded`
    /// (`headers::replace_forwarded`); neither `Expect` nor `TE` is sent, as nginx's proxy module
    /// sends neither (`ngx_http_proxy_headers`; its gRPC module writes `te: trailers` itself).
    Replaced {
        /// Also X-Original-URI: the request target as the client sent it.
        original_uri: bool,
    },
}

/// The request as the forwarding fields describe it.
pub(super) struct Hop<'a> {
    pub conn: ConnInfo,
    /// The Host as the client sent it, port included.
    pub host: &'a HeaderValue,
    pub host_str: &'a str,
    /// The request target as the client sent it.
    pub target: Option<&'a PathAndQuery>,
}

// === impl FieldSet ===

impl FieldSet {
    #[inline(always)]
    pub(super) fn of(forwarding: Forwarding) -> Self {
        match forwarding {
            Forwarding::Standard => FieldSet::Chained,
            Forwarding::Nginx { original_uri } => FieldSet::Replaced { original_uri },
        }
    }

    /// Writes the set (the hop-by-hop fields are gone already); returns the request's
    /// X-Request-Id.
    #[inline(always)]
    pub(super) fn apply(
        self,
        headers: &mut HeaderMap,
        added: &mut AddedFields,
        hop: &Hop<'_>,
        route: &Route,
        options: &ProxyOptions,
    ) -> HeaderValue {
        match self {
            FieldSet::Chained => {
                let protocol_field = route.client_protocol_header.as_ref();
                chained(headers, added, hop, &options.trusted_proxies, protocol_field)
            }
            FieldSet::Replaced { original_uri } => {
                headers.remove(header::EXPECT);
                if !route.upstream.protocol.is_h2() {
                    headers.remove(header::TE);
                }
                let request = ReplaceContext {
                    peer: hop.conn.peer.ip(),
                    via: hop.conn.via,
                    tls: hop.conn.tls,
                    host: hop.host,
                    original_uri: original_uri.then(|| hop.target.map_or("/", PathAndQuery::as_str)),
                    keys: route.rules.nginx_forwarding.as_deref(),
                };
                replace_forwarded(headers, &request, added)
            }
        }
    }
}

/// shunt's own fields: forwarding fields, and the route's protocol field (`http` or `https`).
#[inline(always)]
fn chained(
    headers: &mut HeaderMap,
    added: &mut AddedFields,
    hop: &Hop<'_>,
    trusted: &TrustedProxies,
    protocol_field: Option<&HeaderName>,
) -> HeaderValue {
    let scheme = if hop.conn.tls { "https" } else { "http" };
    let forwarded = ForwardedContext {
        peer: hop.conn.peer.ip(),
        scheme,
        host: hop.host_str,
        host_field: Some(hop.host),
    };
    let request_id = set_forwarded(headers, &forwarded, trusted, added);
    if let Some(name) = protocol_field {
        added.replace(headers, name.clone(), HeaderValue::from_static(scheme));
    }
    request_id
}
