//! End to end: the built `shunt` binary between real clients and in-process origins, all on
//! loopback. Each test starts its own shunt on port 0, so tests run in parallel.
//!
//! ```text
//! client (hyper h1/h2, curl, raw TCP) ─▶ shunt serve --manifests <tempdir> ─▶ Backend(s) on 127.0.0.1:0
//!                                          └ admin: /readyz /routes /metrics
//! ```

mod support;

mod abuse;
mod admin;
mod balance;
mod classes;
mod corpus;
mod demo;
mod dns;
mod dns_gateway;
mod dns_reach;
mod docs;
mod errors;
mod faults;
mod gateway;
mod gateway_shadow;
mod grpcs;
mod h2c;
mod headers;
mod hosts;
mod http1;
mod layout;
mod nginx;
mod nginx_affinity;
mod nginx_auth;
mod nginx_auto_http;
mod nginx_canary;
mod nginx_cors;
mod nginx_diff;
mod nginx_errors;
mod nginx_limits;
mod nginx_pace;
mod nginx_proxy_ssl;
mod nginx_timeouts;
mod paths;
mod qcloud_corpus;
mod reload;
mod residency;
mod shutdown;
mod streaming;
mod tke;
mod tke_session;
mod tls;
mod topology;
mod upgrade;
