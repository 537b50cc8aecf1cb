//! The nginx profile rule by rule, from Ingresses as ingress-nginx users write them: each test
//! compiles them, builds the proxy's real table, and asks it what a request gets.

mod accounting;
mod affinity;
mod annotations;
mod canary;
mod config;
mod cors;
mod errors;
mod global_auth;
mod hash;
mod names;
mod paths;
mod properties;
mod proxy_ssl;
mod redirects;
mod regex;
mod rules;
mod snippets;

use std::{path::Path, sync::Arc};

use shunt_proxy::publish::{RouteStats, RouteTable, Upstream, redirect};

use crate::{
    compile::{ClusterState, CompileOptions, Compiled, ShadowClass, compile},
    manifests::parse_documents,
    shadow::{HostVerdict, Verdict},
};

use crate::fixtures::SHOP_SERVICES as SERVICES;

const WEB: &str = "shop/web:80";
const API: &str = "shop/api:80";
const PLAIN: bool = false;
const TLS: bool = true;

/// An Ingress of class `nginx` in namespace `shop`: `annotations` as YAML map entries (or
/// empty), `spec` as the YAML under `spec:`.
fn mk_ingress(name: &str, annotations: &str, spec: &str) -> String {
    let annotations = if annotations.is_empty() {
        String::new()
    } else {
        format!("  annotations:\n{}", indent(annotations, 4))
    };
    format!(
        "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  namespace: shop\n  name: {name}\n{annotations}spec:\n  ingressClassName: nginx\n{}",
        indent(spec, 2)
    )
}

fn indent(text: &str, by: usize) -> String {
    let pad = " ".repeat(by);
    text.trim_matches('\n')
        .lines()
        .map(|line| format!("{pad}{line}\n"))
        .collect()
}

/// The objects of `ingresses` (and ConfigMaps) beside the Services and a certificate Secret
/// `cert` for `a.example.com` (JSON, which YAML reads).
fn mk_state(ingresses: &[String]) -> ClusterState {
    let secret = crate::fixtures::mk_tls_secret("shop", "cert", &["a.example.com"]);
    let secret = serde_json::to_string(&secret).expect("a Secret serialises");
    let text = format!("{SERVICES}\n---\n{secret}\n---\n{}", ingresses.join("\n---\n"));
    ClusterState::from_objects(parse_documents(&text, Path::new("nginx.yaml")).expect("valid manifests"))
}

fn compile_nginx(ingresses: &[String]) -> Compiled {
    let options = CompileOptions {
        shadow_classes: vec!["nginx".into()],
        ..CompileOptions::default()
    };
    compile(&mk_state(ingresses), &options)
}

/// What a request gets: the backend id, `CODE LOCATION` for a redirect, or `404`.
fn answer(compiled: &Compiled, tls: bool, host: &str, path_and_query: &str) -> String {
    let table = table(compiled);
    let target: http::uri::PathAndQuery = path_and_query.parse().expect("a valid path");
    match table.lookup_on(host, target.path(), tls) {
        None => "404".to_string(),
        Some(route) if route.ssl_redirect && !tls => {
            let style = route.rules.https_redirect;
            let response = if style.trim_trailing_slash {
                redirect::to_https_trimmed(style.code, host, &target)
            } else {
                let mut to = redirect::to_https();
                to.code = style.code;
                redirect::respond(&to, redirect::Arrival { tls, port: None }, host, &target)
            };
            redirected(&response)
        }
        Some(route) => match &route.redirect {
            Some(to) => redirected(&redirect::respond(
                to,
                redirect::Arrival { tls, port: None },
                host,
                &target,
            )),
            None => route.upstream.id.to_string(),
        },
    }
}

/// The proxy's table for `compiled`, built without a warning.
fn table(compiled: &Compiled) -> RouteTable {
    let (table, warnings) = RouteTable::build(
        Arc::new(compiled.table.clone()),
        |id| Arc::new(Upstream::new(id, Default::default(), vec![], Default::default())),
        |_, _| RouteStats::detached(),
    );
    assert_eq!(warnings, vec![]);
    table
}

/// `CODE LOCATION` of a redirect answer.
fn redirected<B>(response: &http::Response<B>) -> String {
    let location = response.headers()[http::header::LOCATION].to_str().expect("ASCII");
    format!("{} {location}", response.status().as_u16())
}

fn verdict<'c>(compiled: &'c Compiled, host: &str) -> &'c HostVerdict {
    compiled
        .shadow
        .iter()
        .find(|v| v.host == host)
        .unwrap_or_else(|| panic!("no verdict for {host}: {:?}", compiled.shadow))
}

/// The reasons a host is refused for.
fn refusals(compiled: &Compiled, host: &str) -> Vec<String> {
    verdict(compiled, host).reasons.to_vec()
}

/// One rule for `host` routing `paths` (YAML list entries) to `web`.
fn mk_rule(host: &str, paths: &[(&str, &str)]) -> String {
    let paths: String = paths
        .iter()
        .map(|(path, kind)| {
            format!("      - {{path: {path}, pathType: {kind}, backend: {{service: {{name: web, port: {{number: 80}}}}}}}}\n")
        })
        .collect();
    format!("rules:\n- host: {host}\n  http:\n    paths:\n{paths}")
}

#[test]
fn class_nginx_gets_the_nginx_profile_by_name_and_other_names_by_asking() {
    assert_eq!(ShadowClass::from("nginx").profile, crate::compile::Profile::Nginx);
    let named: ShadowClass = "internal=nginx".parse().expect("a profile");
    assert_eq!(named.profile, crate::compile::Profile::Nginx);
    assert_eq!(named.to_string(), "internal=nginx");
    assert!("internal=nginz".parse::<ShadowClass>().is_err());
}

#[test]
fn the_shadow_document_names_the_nginx_profile_and_its_assumptions() {
    let compiled = compile_nginx(&[mk_ingress("a", "", &mk_rule("a.example.com", &[("/", "Prefix")]))]);
    let document: serde_json::Value = serde_json::from_str(&compiled.table.documents["shadow"].text()).expect("JSON");
    let document = &document;
    assert_eq!(document["profile"], "nginx");
    assert_eq!(document["assumed"].as_array().map(Vec::len), Some(super::ASSUMED.len()));
    assert_eq!(document["hosts"][0]["host"], "a.example.com");
}

#[test]
fn a_host_with_nothing_the_profile_lacks_is_identical() {
    let compiled = compile_nginx(&[mk_ingress("a", "", &mk_rule("a.example.com", &[("/", "Prefix")]))]);
    let verdict = verdict(&compiled, "a.example.com");
    assert_eq!(verdict.verdict, Verdict::Identical, "{:?}", verdict.reasons);
    assert_eq!(refusals(&compiled, "a.example.com"), Vec::<String>::new());
}

#[test]
fn a_class_of_ours_with_the_nginx_profile_is_compiled_by_it_and_not_marked_shadow() {
    let ingress = mk_ingress(
        "a",
        "nginx.ingress.kubernetes.io/force-ssl-redirect: \"true\"",
        &mk_rule("a.example.com", &[("/app/", "Prefix")]),
    )
    .replace("ingressClassName: nginx", "ingressClassName: shunt");
    let options = CompileOptions {
        class_profiles: vec!["shunt=nginx".parse().expect("a profile")],
        ..CompileOptions::default()
    };
    let compiled = compile(&mk_state(&[ingress]), &options);
    assert!(compiled.served.iter().all(|served| !served.shadow));
    // The nginx meaning of a Prefix path ending in '/', and force-ssl-redirect without TLS.
    assert_eq!(
        answer(&compiled, TLS, "a.example.com", "/app"),
        "301 https://a.example.com/app/"
    );
    assert_eq!(answer(&compiled, TLS, "a.example.com", "/app/x"), WEB);
    assert_eq!(
        answer(&compiled, PLAIN, "a.example.com", "/app/x"),
        "308 https://a.example.com/app/x"
    );
    let document: serde_json::Value = serde_json::from_str(&compiled.table.documents["shadow"].text()).expect("JSON");
    assert_eq!(document["profile"], "nginx");
}

#[test]
fn the_same_ingress_in_a_class_of_ours_without_a_profile_keeps_the_ingress_spec_meaning() {
    let ingress = mk_ingress("a", "", &mk_rule("a.example.com", &[("/app/", "Prefix")]))
        .replace("ingressClassName: nginx", "ingressClassName: shunt");
    let compiled = compile(&mk_state(&[ingress]), &CompileOptions::default());
    assert_eq!(answer(&compiled, TLS, "a.example.com", "/app"), WEB);
    assert!(compiled.shadow.is_empty());
}
