//! A route's profile rules as the request path reads them: the spec's [`RouteOptions`] that
//! shape a forwarded request or its answer, with header values parsed once per table build.

use std::sync::{Arc, LazyLock};

use http::{HeaderValue, uri::PathAndQuery};

use super::{ErrorRoute, conditions::Conditions, edits::HeaderEdits, rewrite::Rewrite, split::Split};
use crate::{
    auth::AuthRule,
    cors::Cors,
    headers::ForwardingKeys,
    limits::{Limiter, limiter_for},
    spec::{
        AnswerDeadlines, BodyLimit, Forwarding, HttpsRedirect, MAX_VALUE_LEN, NextUpstream, PathReplacement,
        ResponsePace, RouteOptions, SourceRanges, UpstreamTimeouts,
    },
    upstream::RouteBalance,
};

/// What a profile changes about a route's requests and answers; the default changes nothing.
#[derive(Clone, Debug, Default)]
pub struct RouteRules {
    pub forwarding: Forwarding,
    /// ingress-nginx's ConfigMap forwarding keys, where not its defaults (`None` for every other
    /// route: the caller is the peer, its fields are replaced).
    pub nginx_forwarding: Option<Arc<ForwardingKeys>>,
    /// Replaces the proxy's `--max-body-size` for this route.
    pub body_limit: Option<BodyLimit>,
    /// Set on every answer the TLS listener gives for the route. This and the other boxed
    /// fields: a route without one (nearly all) holds 8 bytes instead of 24-48, and checking
    /// for `None` costs the same (1.4 MiB less at 10,000 routes).
    pub hsts: Option<Box<HeaderValue>>,
    pub https_redirect: HttpsRedirect,
    /// The pod's `Host`.
    pub upstream_host: Option<Box<HeaderValue>>,
    /// A `Regex` path's place among its host's.
    pub rank: u32,
    pub rewrite: Option<Arc<Rewrite>>,
    pub source_ranges: Option<Arc<SourceRanges>>,
    /// Shared: a table build clones the rules into each route of a path.
    pub cors: Option<Arc<Cors>>,
    /// The zone the route counts its callers in; equal specs share one across tables.
    pub limits: Option<Arc<Limiter>>,
    /// The pace of the pod's body towards the client (`limit-rate`).
    pub response_pace: Option<Box<ResponsePace>>,
    /// External authentication: the auth service asked before any pod (see `proxy/auth.rs`).
    pub external_auth: Option<Arc<AuthRule>>,
    /// Replace the proxy's connect and upstream timeouts for this route.
    pub timeouts: Option<Box<UpstreamTimeouts>>,
    /// Deadlines on the answer (HTTPRoute `timeouts`), checked in `proxy/attempt.rs`.
    pub deadlines: Option<Box<AnswerDeadlines>>,
    /// A canary or a hash key (set by the table build, which has the canary's upstream).
    pub balance: Option<Arc<RouteBalance>>,
    /// What a ranked host's request must carry besides the path (see `ranked.rs`).
    pub conditions: Option<Arc<Conditions>>,
    /// Edits of the request the pod sees, after the forwarding fields.
    pub request_headers: Option<Arc<HeaderEdits>>,
    /// Edits of the pod's answer (not of the proxy's own).
    pub response_headers: Option<Arc<HeaderEdits>>,
    /// The path the pod sees, in whole or by prefix; never beside `rewrite`.
    pub path_replacement: Option<Arc<PathReplacement>>,
    /// Several backends by weight (set by the table build, which has their upstreams).
    pub split: Option<Arc<Split>>,
    /// Copies of the request to mirror backends (set by the table build, which has their upstreams).
    pub mirror: Option<Arc<crate::mirror::Mirror>>,
    /// Custom error pages (set by the table build, which has the error backend's upstream).
    pub error_pages: Option<Arc<ErrorRoute>>,
    /// The route's own retry rules, instead of the proxy's.
    pub next_upstream: Option<Arc<NextUpstream>>,
}

impl RouteRules {
    /// The rules of a route without options: nearly every route's, so they share one allocation
    /// (a route holds 8 bytes of rules instead of ~200).
    pub fn unchanged() -> Arc<RouteRules> {
        static UNCHANGED: LazyLock<Arc<RouteRules>> = LazyLock::new(|| Arc::new(RouteRules::default()));
        UNCHANGED.clone()
    }

    /// Whether the table build gave these rules upstreams or a balance of their own (a canary, a
    /// split, a mirror, error pages, a hash key or cookie affinity): no other route shares them.
    pub fn is_the_routes_own(&self) -> bool {
        self.balance.is_some() || self.split.is_some() || self.mirror.is_some() || self.error_pages.is_some()
    }

    /// The rules `options` ask for, or why a value cannot be sent as a field.
    pub fn from_options(options: &RouteOptions) -> Result<Self, String> {
        let value = |what: &str, text: &Option<String>| -> Result<Option<HeaderValue>, String> {
            text.as_deref()
                .map(|text| HeaderValue::from_str(text).map_err(|_| format!("{what} {text:?} is not a field value")))
                .transpose()
        };
        if options.rewrite.is_some() && options.path_replacement.is_some() {
            return Err("both a rewrite and a path replacement".to_string());
        }
        if options.split.is_some() && (options.canary.is_some() || options.redirect.is_some()) {
            return Err("a split beside a canary or a redirect".to_string());
        }
        if let Some(replacement) = &options.path_replacement {
            check_replacement(replacement)?;
        }
        if let Some(prefix) = options
            .redirect
            .as_ref()
            .and_then(|redirect| redirect.replace_prefix.as_ref())
        {
            check_path("prefix replacement", &prefix.replacement, true)?;
        }
        let edits = |spec: &Option<crate::spec::HeaderEdits>, what| {
            spec.as_ref()
                .map(|spec| HeaderEdits::new(spec, what).map(Arc::new))
                .transpose()
        };
        // An absolute target is answered as a redirect, never sent to a pod as a path.
        let absolute = options
            .rewrite
            .as_ref()
            .is_some_and(|rewrite| rewrite.target.is_absolute());
        if absolute != options.redirect.as_ref().is_some_and(|redirect| redirect.rewritten) {
            return Err("a rewrite to a URL needs a redirect of its rewrite, and only it".to_string());
        }
        Ok(RouteRules {
            forwarding: options.forwarding,
            nginx_forwarding: (options.nginx_forwarding.as_ref())
                .map(|spec| ForwardingKeys::new(spec).map(Arc::new))
                .transpose()?,
            body_limit: options.body_limit,
            hsts: value("HSTS value", &options.hsts)?.map(Box::new),
            https_redirect: options.https_redirect,
            upstream_host: value("upstream host", &options.upstream_host)?.map(Box::new),
            rank: options.rank,
            rewrite: options.rewrite.as_ref().map(Rewrite::new).transpose()?.map(Arc::new),
            source_ranges: options.source_ranges.clone().map(Arc::new),
            cors: options
                .cors
                .as_ref()
                .map(|spec| Cors::from_spec(spec).map(Arc::new).map_err(|error| error.to_string()))
                .transpose()?,
            limits: options.limits.as_ref().map(limiter_for),
            response_pace: options.response_pace.map(Box::new),
            external_auth: options
                .external_auth
                .as_ref()
                .map(AuthRule::new)
                .transpose()?
                .map(Arc::new),
            timeouts: options.timeouts.map(Box::new),
            deadlines: options.deadlines.map(Box::new),
            balance: None,
            conditions: (options.conditions.as_ref())
                .map(|spec| Conditions::new(spec).map(Arc::new))
                .transpose()?,
            request_headers: edits(&options.request_headers, "request")?,
            response_headers: edits(&options.response_headers, "response")?,
            path_replacement: options.path_replacement.clone().map(Arc::new),
            split: None,
            mirror: None,
            error_pages: None,
            next_upstream: options.next_upstream.clone().map(Arc::new),
        })
    }

    /// The request body limit for this route, given the proxy's.
    #[inline]
    pub fn body_limit(&self, proxy_limit: Option<u64>) -> Option<u64> {
        self.body_limit.map_or(proxy_limit, BodyLimit::bytes)
    }
}

/// A path replacement the pod can be sent.
fn check_replacement(replacement: &PathReplacement) -> Result<(), String> {
    match replacement {
        PathReplacement::Full(path) => check_path("full path replacement", path, false),
        PathReplacement::Prefix(prefix) => check_path("prefix replacement", &prefix.replacement, true),
    }
}

/// `path` starts with `/` (or is empty, where `empty` allows it: Gateway API's prefix
/// replacement by nothing), is bounded, and is a valid path without query or fragment.
fn check_path(what: &str, path: &str, empty: bool) -> Result<(), String> {
    let valid = (path.is_empty() && empty)
        || (path.starts_with('/')
            && path.len() <= MAX_VALUE_LEN
            && !path.contains(['?', '#'])
            && PathAndQuery::try_from(path).is_ok());
    match valid {
        true => Ok(()),
        false => Err(format!("{what} {path:?} is not a path")),
    }
}

#[cfg(test)]
mod tests;
