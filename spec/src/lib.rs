//! shunt's contract: every type the controller writes and the proxy reads, and the one set of
//! defaults. Plain data, imported by both sides and importing neither.
//!
//! ```text
//! controller: cluster objects ──compile──▶ TableSpec ──publish──▶ proxy: RouteTable
//!                flags ──────────────────▶ RetryPolicy, TrustedProxies, Topology, defaults
//! ```
//! - [`TableSpec`]: hosts ([`HostMatch`]) with their paths ([`PathSpec`]), each naming a
//!   backend ([`BackendSpec`]: protocol, endpoints, topology hints) and carrying its route
//!   behaviours ([`RouteOptions`]: listeners, redirects, rewrites, forwarding fields, body
//!   limit, source ranges, [`CorsSpec`], [`RateLimits`], a canary backend ([`CanarySpec`]), a
//!   hash key ([`HashKey`]), cookie affinity ([`CookieAffinity`])); server certificates ([`TlsSpec`]).
//! - The proxy's own knobs the controller sets: [`RetryPolicy`], [`TrustedProxies`], [`Topology`].
//! - [`defaults`]: the value of every knob when nothing sets it.

pub mod defaults;

mod affinity;
mod balance;
mod cors;
mod host;
mod limits;
mod options;
mod retry;
mod rewrite;
mod table;
mod timeouts;
mod tls;
mod topology;
mod trusted;

pub use self::{
    affinity::{AffinityMode, CookieAffinity, MAX_COOKIE_SECONDS, SameSite},
    balance::{
        CanaryHeader, CanaryRule, CanarySpec, HashKey, KeyPart, MAX_KEY_PARTS, MAX_NAME_LEN, MAX_VALUE_LEN,
        MAX_WEIGHT_TOTAL,
    },
    cors::{AllowOrigin, CorsSpec},
    host::HostMatch,
    limits::{RateLimits, RatePeriod, RequestRate},
    options::{
        BodyLimit, Forwarding, HttpsRedirect, Listeners, RedirectSpec, RewriteSpec, RouteOptions, Scheme, SourceRanges,
    },
    retry::{BudgetOptions, OutlierOptions, RetryPolicy, RetryReason},
    rewrite::{InvalidRewriteTarget, RewritePart, RewriteTarget},
    table::{
        BackendId, BackendSpec, EndpointTopology, PathKind, PathSpec, TableSpec, UpstreamProtocol, VirtualHostSpec,
        push_port,
    },
    timeouts::UpstreamTimeouts,
    tls::{CertificateId, CertificateSpec, TlsSpec},
    topology::{Locality, Topology},
    trusted::TrustedProxies,
};
