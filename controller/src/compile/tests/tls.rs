//! Certificates: which Secret each TLS host is bound to, and every way a Secret can fail to
//! serve, each time checking the routes still compiled and the other hosts kept theirs.

use std::collections::BTreeMap;

use k8s_openapi::{
    ByteString,
    api::{core::v1::Secret, networking::v1::IngressTLS},
};
use rcgen::{CertificateParams, KeyPair, date_time_ymd};

use super::*;

/// PEM chain and key of a self-signed certificate for `names`, valid 2020 to 2040.
fn mk_pem(names: &[&str]) -> (String, String) {
    mk_pem_valid(names, (2020, 2040))
}

fn mk_pem_valid(names: &[&str], (from, to): (i32, i32)) -> (String, String) {
    let mut params =
        CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>()).expect("valid names");
    params.not_before = date_time_ymd(from, 1, 1);
    params.not_after = date_time_ymd(to, 1, 1);
    let key = KeyPair::generate().expect("a key");
    let cert = params.self_signed(&key).expect("a certificate");
    (cert.pem(), key.serialize_pem())
}

/// A `kubernetes.io/tls` Secret in `shop`, its PEM in `data` as the API server returns it.
fn mk_secret(name: &str, (chain, key): &(String, String)) -> Secret {
    let data = [("tls.crt", chain), ("tls.key", key)].map(|(k, v)| (k.to_string(), ByteString(v.clone().into_bytes())));
    Secret {
        metadata: mk_meta("shop", name),
        type_: Some("kubernetes.io/tls".into()),
        data: Some(BTreeMap::from(data)),
        ..Default::default()
    }
}

fn with_tls(mut ingress: Ingress, entries: &[(&[&str], &str)]) -> Ingress {
    let tls = entries
        .iter()
        .map(|(hosts, secret)| IngressTLS {
            hosts: Some(hosts.iter().map(|h| h.to_string()).collect()),
            secret_name: Some(secret.to_string()),
        })
        .collect();
    ingress.spec.get_or_insert_default().tls = Some(tls);
    ingress
}

/// Ingress `shop/<name>` routing `hosts` to web, with `tls` entries.
fn mk_tls_ingress(name: &str, hosts: &[&str], tls: &[(&[&str], &str)]) -> Ingress {
    let rules = hosts
        .iter()
        .map(|h| mk_rule(h, vec![mk_prefix("/", "web", 80)]))
        .collect();
    with_tls(mk_ingress("shop", name, rules), tls)
}

fn compile_with(ingresses: Vec<Ingress>, secrets: Vec<Secret>, options: &CompileOptions) -> Compiled {
    compile(
        &ClusterState {
            secrets: mk_shared(secrets),
            ..world_with(ingresses)
        },
        options,
    )
}

fn bindings(compiled: &Compiled) -> Vec<(String, String)> {
    compiled
        .table
        .tls
        .hosts
        .iter()
        .map(|(host, id)| (host.to_string(), id.clone()))
        .collect()
}

fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
    expected.iter().map(|(h, id)| (h.to_string(), id.to_string())).collect()
}

fn reasons(compiled: &Compiled) -> Vec<Reason> {
    compiled.diagnostics.iter().map(|d| d.reason).collect()
}

#[test]
fn listed_hosts_and_wildcards_bind_to_their_secret() {
    let shop = mk_pem(&["shop.example.com"]);
    let apps = mk_pem(&["*.apps.example.com"]);
    let ingress = mk_tls_ingress(
        "front",
        &["shop.example.com", "*.apps.example.com"],
        &[
            (&["shop.example.com"], "shop-tls"),
            (&["*.apps.example.com"], "apps-tls"),
        ],
    );
    let compiled = compile_with(
        vec![ingress],
        vec![mk_secret("shop-tls", &shop), mk_secret("apps-tls", &apps)],
        &Default::default(),
    );
    assert_eq!(compiled.diagnostics, vec![]);
    assert_eq!(
        bindings(&compiled),
        pairs(&[
            ("shop.example.com", "shop/shop-tls"),
            ("*.apps.example.com", "shop/apps-tls")
        ])
    );
    let certificate = &compiled.table.tls.certificates["shop/shop-tls"];
    assert_eq!(certificate.chain_pem, shop.0.as_bytes());
    assert_eq!(certificate.names, ["shop.example.com"]);
    assert_eq!(certificate.not_after, "2040-01-01T00:00:00Z");
    assert_eq!(compiled.table.tls.default, None);
}

#[test]
fn an_entry_without_hosts_covers_the_rule_hosts() {
    let pem = mk_pem(&["a.example.com", "b.example.com"]);
    let ingress = mk_tls_ingress("front", &["a.example.com", "b.example.com"], &[(&[], "both")]);
    let compiled = compile_with(vec![ingress], vec![mk_secret("both", &pem)], &Default::default());
    assert_eq!(compiled.diagnostics, vec![]);
    assert_eq!(
        bindings(&compiled),
        pairs(&[("a.example.com", "shop/both"), ("b.example.com", "shop/both")])
    );
}

#[test]
fn string_data_wins_over_data_as_the_api_server_merges_them() {
    let good = mk_pem(&["shop.example.com"]);
    let mut secret = mk_secret("shop-tls", &(String::from("garbage"), String::from("garbage")));
    secret.string_data = Some(BTreeMap::from([("tls.crt".into(), good.0), ("tls.key".into(), good.1)]));
    let ingress = mk_tls_ingress("front", &["shop.example.com"], &[(&["shop.example.com"], "shop-tls")]);
    let compiled = compile_with(vec![ingress], vec![secret], &Default::default());
    assert_eq!(compiled.diagnostics, vec![]);
    assert_eq!(bindings(&compiled), pairs(&[("shop.example.com", "shop/shop-tls")]));
}

/// One Ingress binding `bad.example.com` to `bad` and `good.example.com` to `good`.
fn one_bad_secret(bad: Option<Secret>, options: &CompileOptions) -> Compiled {
    let ingress = mk_tls_ingress(
        "front",
        &["good.example.com", "bad.example.com"],
        &[(&["good.example.com"], "good"), (&["bad.example.com"], "bad")],
    );
    let secrets = [Some(mk_secret("good", &mk_pem(&["good.example.com"]))), bad]
        .into_iter()
        .flatten()
        .collect();
    let compiled = compile_with(vec![ingress], secrets, options);
    assert_eq!(
        bindings(&compiled),
        pairs(&[("good.example.com", "shop/good")]),
        "the good host keeps its certificate"
    );
    assert_eq!(compiled.table.hosts.len(), 2, "both hosts still route");
    assert_eq!(
        compiled.table.tls.certificates.keys().collect::<Vec<_>>(),
        ["shop/good"],
        "only used certificates are kept"
    );
    compiled
}

fn assert_one(compiled: &Compiled, reason: Reason, message: &str) {
    assert_eq!(compiled.diagnostics, vec![diagnostic("front", reason, message)]);
}

#[test]
fn a_missing_secret_is_reported_and_its_host_falls_back() {
    let compiled = one_bad_secret(None, &Default::default());
    assert_one(
        &compiled,
        Reason::MissingTlsSecret,
        r#"secret "bad" not found; the default certificate serves host "bad.example.com""#,
    );
}

#[test]
fn a_secret_of_another_type_is_refused() {
    let mut opaque = mk_secret("bad", &mk_pem(&["bad.example.com"]));
    opaque.type_ = Some("Opaque".into());
    let compiled = one_bad_secret(Some(opaque), &Default::default());
    assert_eq!(reasons(&compiled), [Reason::InvalidTlsSecret]);
    assert!(
        compiled.diagnostics[0]
            .message
            .contains("is of type Opaque, not kubernetes.io/tls"),
        "{:?}",
        compiled.diagnostics
    );
}

#[test]
fn a_secret_without_a_key_or_with_a_broken_or_foreign_key_is_refused() {
    let pem = mk_pem(&["bad.example.com"]);
    let mut keyless = mk_secret("bad", &pem);
    keyless.data.as_mut().expect("data").remove("tls.key");
    let garbage = mk_secret("bad", &(pem.0.clone(), "not a key".into()));
    let foreign = mk_secret("bad", &(pem.0.clone(), mk_pem(&["bad.example.com"]).1));
    let cases = [
        (keyless, "has no tls.key"),
        (garbage, "tls.key holds no PEM private key"),
        (foreign, "does not match"),
    ];
    for (secret, expected) in cases {
        let compiled = one_bad_secret(Some(secret), &Default::default());
        assert_eq!(reasons(&compiled), [Reason::InvalidTlsSecret]);
        assert!(
            compiled.diagnostics[0].message.contains(expected),
            "{expected}: {:?}",
            compiled.diagnostics
        );
    }
}

#[test]
fn an_expired_or_not_yet_valid_certificate_is_refused_only_when_a_clock_is_given() {
    let expired = mk_secret("bad", &mk_pem_valid(&["bad.example.com"], (2020, 2021)));
    let now = CompileOptions {
        now: Some("2026-11-23T00:00:00Z".parse().expect("a timestamp")),
        ..Default::default()
    };
    let compiled = one_bad_secret(Some(expired.clone()), &now);
    assert_one(
        &compiled,
        Reason::InvalidTlsSecret,
        r#"certificate in secret "bad" expired at 2021-01-01T00:00:00Z; the default certificate serves host "bad.example.com""#,
    );
    let future = mk_secret("bad", &mk_pem_valid(&["bad.example.com"], (2030, 2040)));
    assert_eq!(reasons(&one_bad_secret(Some(future), &now)), [Reason::InvalidTlsSecret]);

    let timeless = compile_with(
        vec![mk_tls_ingress(
            "front",
            &["bad.example.com"],
            &[(&["bad.example.com"], "bad")],
        )],
        vec![expired],
        &Default::default(),
    );
    assert_eq!(timeless.diagnostics, vec![], "compile without a clock checks no dates");
}

#[test]
fn a_certificate_that_does_not_name_its_host_is_refused_for_that_host() {
    let compiled = one_bad_secret(
        Some(mk_secret("bad", &mk_pem(&["other.example.com"]))),
        &Default::default(),
    );
    assert_one(
        &compiled,
        Reason::TlsHostNotCovered,
        r#"certificate in secret "bad" does not cover host "bad.example.com" (it names other.example.com); the host uses the default certificate"#,
    );
}

#[test]
fn a_secret_in_another_namespace_is_not_used() {
    let mut elsewhere = mk_secret("bad", &mk_pem(&["bad.example.com"]));
    elsewhere.metadata.namespace = Some("other".into());
    let compiled = one_bad_secret(Some(elsewhere), &Default::default());
    assert_eq!(reasons(&compiled), [Reason::MissingTlsSecret]);
}

#[test]
fn the_older_ingress_keeps_a_tls_host_and_the_newer_is_told() {
    let first = created_at(
        mk_tls_ingress("first", &["shop.example.com"], &[(&[], "first-tls")]),
        10,
    );
    let second = created_at(
        with_tls(
            mk_ingress("shop", "second", vec![]),
            &[(&["shop.example.com"], "second-tls")],
        ),
        20,
    );
    let secrets = vec![
        mk_secret("first-tls", &mk_pem(&["shop.example.com"])),
        mk_secret("second-tls", &mk_pem(&["shop.example.com"])),
    ];
    let compiled = compile_with(vec![second, first], secrets, &Default::default());
    assert_eq!(bindings(&compiled), pairs(&[("shop.example.com", "shop/first-tls")]));
    assert_eq!(
        compiled.diagnostics,
        vec![diagnostic(
            "second",
            Reason::Conflict,
            r#"tls host "shop.example.com" already uses secret "shop/first-tls" from ingress "shop/first""#
        )]
    );
}

#[test]
fn the_default_certificate_is_bound_or_its_problem_reported() {
    let options = CompileOptions {
        default_certificate: Some(("shop".into(), "fallback".into())),
        ..Default::default()
    };
    let secret = mk_secret("fallback", &mk_pem(&["fallback.example.com"]));
    let compiled = compile_with(vec![], vec![secret], &options);
    assert_eq!(compiled.table.tls.default.as_deref(), Some("shop/fallback"));
    assert!(compiled.table.tls.certificates.contains_key("shop/fallback"));
    assert_eq!(compiled.default_certificate_error, None);

    let missing = compile_with(vec![], vec![], &options);
    assert_eq!(missing.table.tls.default, None);
    assert_eq!(
        missing.default_certificate_error.as_deref(),
        Some(r#"default certificate shop/fallback: secret "fallback" not found"#)
    );
}

#[test]
fn redirect_and_backend_protocol_annotations_reach_the_table() {
    let mut ingress = mk_ingress(
        "shop",
        "front",
        vec![mk_rule("shop.example.com", vec![mk_prefix("/", "web", 80)])],
    );
    let annotations = ingress.metadata.annotations.get_or_insert_default();
    annotations.insert("shunt.dev/ssl-redirect".into(), "true".into());
    annotations.insert("shunt.dev/backend-protocol".into(), "HTTPS".into());
    let plain = mk_ingress(
        "shop",
        "plain",
        vec![mk_rule("plain.example.com", vec![mk_prefix("/", "web", 80)])],
    );
    let compiled = compile_with(vec![ingress, plain], vec![], &Default::default());
    assert_eq!(compiled.diagnostics, vec![]);
    let path = |host: &str| {
        compiled
            .table
            .hosts
            .iter()
            .find(|h| h.host.to_string() == host)
            .expect("host")
            .paths[0]
            .clone()
    };
    let secure = path("shop.example.com");
    assert!(secure.ssl_redirect);
    assert_eq!(secure.backend, "shop/web:80@https");
    assert_eq!(
        compiled.table.backends["shop/web:80@https"].protocol,
        UpstreamProtocol::Https
    );
    let plain = path("plain.example.com");
    assert!(!plain.ssl_redirect);
    assert_eq!(
        compiled.table.backends[&plain.backend].protocol,
        UpstreamProtocol::Http1,
        "the same Service without the annotation"
    );
}

#[test]
fn an_annotation_value_we_do_not_understand_is_reported_and_ignored() {
    let mut ingress = mk_ingress(
        "shop",
        "front",
        vec![mk_rule("shop.example.com", vec![mk_prefix("/", "web", 80)])],
    );
    ingress
        .metadata
        .annotations
        .get_or_insert_default()
        .insert("shunt.dev/backend-protocol".into(), "FCGI".into());
    let compiled = compile_with(vec![ingress], vec![], &Default::default());
    assert_eq!(
        compiled.diagnostics,
        vec![diagnostic(
            "front",
            Reason::InvalidAnnotation,
            r#"annotation shunt.dev/backend-protocol is "FCGI", expected HTTP, HTTPS, H2C, GRPC or GRPCS; ignored"#
        )]
    );
    assert_eq!(compiled.table.hosts[0].paths[0].backend, WEB);
}
