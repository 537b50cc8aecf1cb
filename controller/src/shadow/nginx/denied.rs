//! A denied Ingress: an annotation parser failed with `LocationDenied` (annotations.go,
//! `Extract`), so each of its locations is written as `return 503;` alone (nginx.tmpl, the
//! `isLocationAllowed` branch). What such a location still does:
//!
//! ```text
//! client_max_body_size  none written: nginx's own 1m, checked when the location is found (413)
//! return 503            rewrite phase, ahead of lua_ingress.lua's HTTPS redirect: no redirect
//! header filter Lua     still runs: HSTS on TLS, the pod-free answer as nginx's page
//! error_page            only the http block's (ConfigMap custom-http-errors): not reproduced
//! ```
//! No access rule, auth, CORS, limit, canary or mirror is written, and no pod is reached: shunt
//! routes to a backend without endpoints, whose answer is 503.

use std::sync::Arc;

use shunt_spec::{BackendSpec, BodyLimit, HostMatch, PathKind, RouteOptions};

use super::{Nginx, config::NginxConfig};
use crate::compile::{PathClaim, Resolved, RouteSettings};

/// nginx's `client_max_body_size` default.
const NGINX_BODY_LIMIT: u64 = 1 << 20;

/// Whether shunt answers a denied location as nginx does: not where the ConfigMap sends 503
/// to the default backend's pages (`error_page` in the http block, which the location inherits).
pub(super) fn reproducible(config: &NginxConfig) -> Result<(), ()> {
    match config.errors.codes.contains(&503) {
        true => Err(()),
        false => Ok(()),
    }
}

/// The claim of a denied location: `options` (the location's as allowed) keep only what the
/// location still does.
pub(super) fn claim(
    nginx: &Nginx<'_>,
    host: &HostMatch,
    (kind, location): (PathKind, String),
    options: RouteOptions,
) -> PathClaim {
    let options = RouteOptions {
        listeners: options.listeners,
        forwarding: options.forwarding,
        nginx_forwarding: options.nginx_forwarding,
        hsts: options.hsts,
        rank: options.rank,
        conditions: options.conditions,
        body_limit: Some(BodyLimit::Bytes(NGINX_BODY_LIMIT)),
        ..RouteOptions::default()
    };
    PathClaim {
        host: host.clone(),
        path: location,
        kind,
        backend: Some(backend(nginx)),
        route: RouteSettings::from(options),
    }
}

/// The Ingress's own backend without endpoints.
fn backend(nginx: &Nginx<'_>) -> Arc<Resolved> {
    Arc::new(Resolved {
        id: format!("{}#denied", nginx.source),
        spec: BackendSpec {
            protocol: Default::default(),
            endpoints: Arc::from([]),
            topology: Default::default(),
            tls: None,
        },
    })
}
