//! shunt's contract: every type the controller writes and the proxy reads, and the one set of
//! defaults. Plain data, imported by both sides and importing neither.
//!
//! ```text
//! controller: cluster objects ──compile──▶ TableSpec ──publish──▶ proxy: RouteTable
//!                flags ──────────────────▶ RetryPolicy, TrustedProxies, Topology, defaults
//! ```
//! - [`TableSpec`]: hosts ([`HostMatch`]) with their paths ([`PathSpec`]), each naming a
//!   backend ([`BackendSpec`]: protocol, endpoints, topology hints, [`UpstreamTls`]) and carrying its route
//!   behaviours ([`RouteOptions`]: listeners, redirects, rewrites, forwarding fields, body
//!   limit, source ranges, [`CorsSpec`], [`RateLimits`], external authentication
//!   ([`ExternalAuth`]), a canary backend ([`CanarySpec`]), a hash key ([`HashKey`]), cookie
//!   affinity ([`CookieAffinity`]), request conditions, header edits, path replacements and
//!   weighted splits ([`RequestConditions`], [`HeaderEdits`], [`PathReplacement`],
//!   [`BackendSplit`]), custom error pages ([`ErrorPages`]), the answer's pace
//!   ([`ResponsePace`])); server certificates ([`TlsSpec`]).
//! - The proxy's own knobs the controller sets: [`RetryPolicy`], [`TrustedProxies`], [`Topology`].
//! - [`defaults`]: the value of every knob when nothing sets it.

pub mod defaults;

mod affinity;
mod auth;
mod balance;
mod cors;
mod document;
mod error_pages;
mod host;
mod limits;
mod matching;
mod mirror;
mod next_upstream;
mod options;
mod pace;
mod real_ip;
mod retry;
mod rewrite;
mod table;
mod timeouts;
mod tls;
mod topology;
mod trusted;
mod upstream_tls;

pub use self::{
    affinity::{AffinityMode, CookieAffinity, MAX_COOKIE_SECONDS, SameSite},
    auth::{
        AuthCache, AuthTimeouts, AuthUrl, CacheKeyPart, CacheValid, ExternalAuth, MAX_AUTH_SET_HEADERS,
        MAX_AUTH_SET_HEADERS_BYTES, MAX_CACHE_KEY_PARTS, MAX_RESPONSE_HEADERS, MAX_URL_LEN, Signin, SigninPart,
        escaped_in_uri,
    },
    balance::{
        CanaryHeader, CanaryRule, CanarySpec, HashKey, KeyPart, MAX_KEY_PARTS, MAX_NAME_LEN, MAX_VALUE_LEN,
        MAX_WEIGHT_TOTAL,
    },
    cors::{AllowOrigin, CorsList, CorsSpec, CorsStyle, MAX_ORIGIN_LEN, OriginHost, OriginPattern, OriginScheme},
    document::Document,
    error_pages::{ERROR_CODES, ErrorLocation, ErrorPages},
    host::HostMatch,
    limits::{RateLimits, RatePeriod, RequestRate},
    matching::{
        BackendSplit, FieldCondition, HeaderEdits, MAX_CHOICES, MAX_CONDITIONS, MAX_EDITS, PathReplacement,
        PrefixReplacement, RequestConditions, SplitChoice, ValueMatch,
    },
    mirror::{MAX_MIRRORS, MirrorTarget, RequestMirrors},
    next_upstream::NextUpstream,
    options::{
        BodyLimit, Forwarding, HttpsRedirect, Listeners, RedirectSpec, RewriteSpec, RouteOptions, Scheme, SourceRanges,
    },
    pace::ResponsePace,
    real_ip::{MAX_FIELD_NAME_LEN, NginxForwarding, RealIp},
    retry::{BudgetOptions, OutlierOptions, RetryPolicy, RetryReason},
    rewrite::{InvalidRewriteTarget, RewritePart, RewriteTarget},
    table::{
        BackendId, BackendSpec, EndpointTopology, PathKind, PathSpec, PortHosts, TableSpec, UpstreamProtocol,
        VirtualHostSpec, push_port,
    },
    timeouts::{AnswerDeadlines, UpstreamTimeouts},
    tls::{CertificateId, CertificateSpec, TlsSpec},
    topology::{Locality, Topology},
    trusted::TrustedProxies,
    upstream_tls::{
        ClientCertificate, MAX_CLIENT_PEM_BYTES, MAX_TRUSTED_BYTES, PodVerification, TlsVersions, UpstreamTls,
    },
};
