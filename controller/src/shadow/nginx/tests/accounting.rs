//! The Ingresses no host verdict accounts for: one skipped for a snippet is listed with why, and
//! one without a host (ingress-nginx's default server) is listed; under a class of ours it is
//! served for any Host no other rule claims, and a refused one is a diagnostic, not silence.

use super::*;
use crate::{compile::Reason, shadow::IngressKind};

/// A host-less rule, as a catch-all Ingress writes it.
const HOSTLESS: &str = "rules:\n- http:\n    paths:\n    - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}\n";

fn entries(compiled: &Compiled) -> Vec<(&str, IngressKind, Vec<String>)> {
    let entries = compiled.shadow_ingresses.iter();
    entries
        .map(|entry| (entry.ingress.as_str(), entry.kind, entry.reasons.clone()))
        .collect()
}

fn compile_owned(ingresses: &[String]) -> Compiled {
    let ingresses: Vec<String> = (ingresses.iter())
        .map(|ingress| ingress.replace("ingressClassName: nginx", "ingressClassName: shunt"))
        .collect();
    let options = CompileOptions {
        class_profiles: vec!["shunt=nginx".parse().expect("a profile")],
        ..CompileOptions::default()
    };
    compile(&mk_state(&ingresses), &options)
}

#[test]
fn an_ingress_skipped_for_a_snippet_is_listed_with_the_version_that_skips_it() {
    let snippet = mk_ingress(
        "snippet",
        "nginx.ingress.kubernetes.io/server-snippet: \"return 418;\"",
        &mk_rule("b.example.com", &[("/", "Prefix")]),
    );
    let compiled = compile_nginx(&[snippet]);
    let listed = entries(&compiled);
    assert_eq!((listed[0].0, listed[0].1), ("shop/snippet", IngressKind::Skipped));
    assert!(listed[0].2[0].starts_with("SnippetRejected: nginx.ingress.kubernetes.io/server-snippet"));
    assert!(listed[0].2[0].contains("ingress-nginx 1.12"), "{listed:?}");
    let document: serde_json::Value = serde_json::from_str(&compiled.table.documents["shadow"].text()).expect("JSON");
    assert_eq!(document["summary"]["skipped"], 1);
    assert_eq!(document["summary"]["ingresses"], 1);
}

#[test]
fn a_hostless_ingress_of_a_class_of_ours_is_the_default_server() {
    let compiled = compile_owned(&[
        mk_ingress("named", "", &mk_rule("a.example.com", &[("/", "Prefix")])),
        mk_ingress("any", "", &HOSTLESS.replace("name: web", "name: api")),
    ]);
    assert_eq!(answer(&compiled, PLAIN, "elsewhere.example.com", "/x"), API);
    assert_eq!(answer(&compiled, PLAIN, "a.example.com", "/x"), WEB);
    assert_eq!(entries(&compiled), [("shop/any", IngressKind::CatchAll, vec![])]);
    let document: serde_json::Value = serde_json::from_str(&compiled.table.documents["shadow"].text()).expect("JSON");
    assert_eq!(
        document["catchAlls"][0]["reach"],
        "served by shunt as the default server: any Host no other rule claims"
    );
}

#[test]
fn a_refused_hostless_ingress_is_a_diagnostic_and_listed() {
    let compiled = compile_owned(&[mk_ingress(
        "any",
        "nginx.ingress.kubernetes.io/auth-url: http://$host/auth",
        HOSTLESS,
    )]);
    assert_eq!(answer(&compiled, PLAIN, "elsewhere.example.com", "/x"), "404");
    let listed = entries(&compiled);
    assert_eq!(listed.len(), 1);
    assert!(!listed[0].2.is_empty(), "{listed:?}");
    let refused: Vec<&str> = (compiled.diagnostics.iter())
        .filter(|d| d.reason == Reason::ShadowRefused)
        .map(|d| d.name.as_str())
        .collect();
    assert_eq!(refused, ["any"]);
}
