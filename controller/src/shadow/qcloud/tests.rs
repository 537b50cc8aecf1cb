//! The qcloud profile rule by rule, from manifests shaped like TKE's documented examples: each
//! test compiles them, builds the proxy's real table, and asks it what a request gets.

mod catch_alls;
mod certificates;
mod hosts;
mod keys;
mod listeners;
mod properties;
mod redirects;
mod rejects;
mod service_config;

use std::{collections::BTreeMap, path::Path, sync::Arc};

use k8s_openapi::api::core::v1::Secret;
use shunt_proxy::publish::{RouteStats, RouteTable, Upstream, redirect};
use shunt_spec::HostMatch;

use super::*;
use crate::{
    compile::{ClusterState, CompileOptions, Compiled, compile},
    dns::RefusalReason,
    manifests::parse_documents,
    shadow::{
        Verdict,
        refusals::{ShadowRewrite, dns_refusals},
    },
};

/// Services `shop/web` and `shop/api` as TKE's examples write them: NodePort, the type a CLB
/// reaches without `direct-access` (a ClusterIP one is E4047, see `route.rs`).
const SERVICES: &str = r#"
apiVersion: v1
kind: Service
metadata: {namespace: shop, name: web}
spec: {type: NodePort, ports: [{name: http, port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {namespace: shop, name: api}
spec: {type: NodePort, ports: [{name: http, port: 80}]}
"#;

const WEB: &str = "shop/web:80";
const API: &str = "shop/api:80";

fn mk_state(ingresses: &str) -> ClusterState {
    let text = format!("{SERVICES}\n---\n{ingresses}");
    ClusterState::from_objects(parse_documents(&text, Path::new("tke.yaml")).expect("valid manifests"))
}

fn mk_options() -> CompileOptions {
    CompileOptions {
        shadow_classes: vec!["qcloud".into()],
        ..CompileOptions::default()
    }
}

fn compile_tke(ingresses: &str) -> Compiled {
    compile(&mk_state(ingresses), &mk_options())
}

/// What a request gets: the backend id, `CODE LOCATION` for a redirect, or `404`.
fn answer(compiled: &Compiled, tls: bool, host: &str, path_and_query: &str) -> String {
    let (table, warnings) = RouteTable::build(
        Arc::new(compiled.table.clone()),
        |id| Arc::new(Upstream::new(id, Default::default(), vec![], Default::default())),
        |_, _| RouteStats::detached(),
    );
    assert_eq!(warnings, vec![]);
    let target: http::uri::PathAndQuery = path_and_query.parse().expect("a valid path");
    match table.lookup_on(host, target.path(), tls) {
        None => "404".to_string(),
        Some(route) => match &route.redirect {
            Some(to) => format!(
                "{} {}",
                to.code,
                redirect::location(to, redirect::Arrival { tls, port: None }, host, &target)
            ),
            None => route.upstream.id.to_string(),
        },
    }
}

fn verdict<'c>(compiled: &'c Compiled, host: &str) -> &'c HostVerdict {
    compiled
        .shadow
        .iter()
        .find(|v| v.host == host)
        .unwrap_or_else(|| panic!("no verdict for {host}: {:?}", compiled.shadow))
}

/// The reason names (before `:`) of a host's verdict.
fn reasons(compiled: &Compiled, host: &str) -> Vec<String> {
    let verdict = verdict(compiled, host);
    verdict
        .reasons
        .iter()
        .map(|r| r.split(':').next().unwrap_or_default().to_string())
        .collect()
}

/// A `kubernetes.io/tls` Secret for `names` in namespace `shop`.
fn mk_tls_secret(name: &str, names: &[&str]) -> Secret {
    crate::fixtures::mk_tls_secret("shop", name, names)
}

const PLAIN: bool = false;
const TLS: bool = true;
