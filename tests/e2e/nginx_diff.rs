//! The differential suite against a real nginx: each case's Ingresses served by
//! `shunt serve --shadow-class nginx` and, beside it, by nginx configured the way ingress-nginx's
//! template renders them (written by hand in `nginx_diff/cases/NAME.conf`, each block citing
//! the template lines it follows), both in front of the same echo pods. Every request goes to
//! both; status, Location, the response fields and everything the pod saw must match, and
//! `/shadow` must call each host what the case expects.
//!
//! ```text
//!            ┌─▶ shunt serve --shadow-class nginx ─┐
//! Probe ─────┤                                     ├─▶ echo pods (web, api, solver, loud)
//!            └─▶ nginx -c nginx.conf (+ case.conf) ┘
//! Seen(nginx) vs Seen(shunt) ─▶ one line per differing field
//! ```
//!
//! Without nginx (Debian's `nginx-light`) the suite skips with one line, unless
//! `SHUNT_REQUIRE_NGINX` is set (tests/run.sh sets it).

mod case;
mod nginx;
mod observe;
mod probe;

mod access;
mod acme;
mod auth;
mod cors;
mod error_pages;
mod forwarding;
mod headers;
mod limits;
mod pace;
mod paths;
mod rate_limits;
mod redirects;
mod refused;
mod regex;
mod retries;
mod timeouts;
mod tls;
