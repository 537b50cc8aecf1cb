//! A route's profile rules as the request path reads them: the spec's [`RouteOptions`] that
//! shape a forwarded request or its answer, with header values parsed once per table build.

use std::sync::Arc;

use http::HeaderValue;

use super::rewrite::Rewrite;
use crate::{
    auth::AuthRule,
    cors::Cors,
    limits::{Limiter, limiter_for},
    spec::{BodyLimit, Forwarding, HttpsRedirect, RouteOptions, SourceRanges, UpstreamTimeouts},
    upstream::RouteBalance,
};

/// What a profile changes about a route's requests and answers; the default changes nothing.
#[derive(Clone, Debug, Default)]
pub struct RouteRules {
    pub forwarding: Forwarding,
    /// Replaces the proxy's `--max-body-size` for this route.
    pub body_limit: Option<BodyLimit>,
    /// Set on every answer the TLS listener gives for the route.
    pub hsts: Option<HeaderValue>,
    pub https_redirect: HttpsRedirect,
    /// The pod's `Host`.
    pub upstream_host: Option<HeaderValue>,
    /// A `Regex` path's place among its host's.
    pub rank: u32,
    pub rewrite: Option<Arc<Rewrite>>,
    pub source_ranges: Option<Arc<SourceRanges>>,
    /// Shared: a table build clones the rules into each route of a path.
    pub cors: Option<Arc<Cors>>,
    /// The zone the route counts its callers in; equal specs share one across tables.
    pub limits: Option<Arc<Limiter>>,
    /// External authentication: the auth service asked before any pod (see `proxy/auth.rs`).
    pub external_auth: Option<Arc<AuthRule>>,
    /// Replace the proxy's connect and upstream timeouts for this route.
    pub timeouts: Option<UpstreamTimeouts>,
    /// A canary or a hash key (set by the table build, which has the canary's upstream).
    pub balance: Option<Arc<RouteBalance>>,
}

impl RouteRules {
    /// The rules `options` ask for, or why a value cannot be sent as a field.
    pub fn from_options(options: &RouteOptions) -> Result<Self, String> {
        let value = |what: &str, text: &Option<String>| -> Result<Option<HeaderValue>, String> {
            text.as_deref()
                .map(|text| HeaderValue::from_str(text).map_err(|_| format!("{what} {text:?} is not a field value")))
                .transpose()
        };
        Ok(RouteRules {
            forwarding: options.forwarding,
            body_limit: options.body_limit,
            hsts: value("HSTS value", &options.hsts)?,
            https_redirect: options.https_redirect,
            upstream_host: value("upstream host", &options.upstream_host)?,
            rank: options.rank,
            rewrite: options.rewrite.as_ref().map(Rewrite::new).transpose()?.map(Arc::new),
            source_ranges: options.source_ranges.clone().map(Arc::new),
            cors: options
                .cors
                .as_ref()
                .map(|spec| Cors::from_spec(spec).map(Arc::new).map_err(|error| error.to_string()))
                .transpose()?,
            limits: options.limits.as_ref().map(limiter_for),
            external_auth: options
                .external_auth
                .as_ref()
                .map(AuthRule::new)
                .transpose()?
                .map(Arc::new),
            timeouts: options.timeouts,
            balance: None,
        })
    }

    /// The request body limit for this route, given the proxy's.
    #[inline]
    pub fn body_limit(&self, proxy_limit: Option<u64>) -> Option<u64> {
        self.body_limit.map_or(proxy_limit, BodyLimit::bytes)
    }
}
