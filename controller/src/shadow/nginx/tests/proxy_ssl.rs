//! `proxy-ssl-secret` and its keys: the upstream TLS an HTTPS location gets, or the key named.

use shunt_spec::{BackendSpec, BodyLimit, TlsVersions, UpstreamTls};

use super::*;

const SECRET: &str = "nginx.ingress.kubernetes.io/proxy-ssl-secret: shop/pods";
const HTTPS: &str = "nginx.ingress.kubernetes.io/backend-protocol: HTTPS";

/// A self-signed CA (PEM) and a client keypair it issued (PEM chain, key).
fn mk_pki() -> (String, (String, String)) {
    let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).expect("CA parameters");
    ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca.distinguished_name.push(rcgen::DnType::CommonName, "pods CA");
    let issuer = rcgen::CertifiedIssuer::self_signed(ca, rcgen::KeyPair::generate().expect("a key")).expect("a CA");
    let key = rcgen::KeyPair::generate().expect("a key");
    let client = rcgen::CertificateParams::new(vec!["ingress".to_string()]).expect("client parameters");
    let client = client.signed_by(&key, &issuer).expect("a client certificate");
    (issuer.pem(), (client.pem(), key.serialize_pem()))
}

/// Secret `shop/pods` with `entries` in `stringData` (JSON strings, which YAML reads).
fn mk_secret(entries: &[(&str, &str)]) -> String {
    let data: serde_json::Map<String, serde_json::Value> = (entries.iter())
        .map(|(key, value)| (key.to_string(), serde_json::Value::from(*value)))
        .collect();
    let data = serde_json::Value::Object(data);
    format!("apiVersion: v1\nkind: Secret\nmetadata: {{namespace: shop, name: pods}}\ntype: Opaque\nstringData: {data}")
}

/// Compiles one Ingress for `a.example.com` with `annotations` beside `secret`.
fn compile_with(secret: &str, annotations: &[&str]) -> Compiled {
    let ingress = mk_ingress(
        "a",
        &annotations.join("\n"),
        &mk_rule("a.example.com", &[("/", "Prefix")]),
    );
    compile_nginx(&[secret.to_string(), ingress])
}

/// The backend `/` on `a.example.com` forwards to.
fn backend(compiled: &Compiled) -> &BackendSpec {
    let id = answer(compiled, PLAIN, "a.example.com", "/");
    &compiled.table.backends[&id]
}

fn tls(compiled: &Compiled) -> &UpstreamTls {
    backend(compiled)
        .tls
        .as_deref()
        .expect("the backend carries upstream TLS")
}

#[test]
fn a_ca_with_verify_on_checks_the_upstream_block_name_over_tls12_without_sni() {
    let (ca, _) = mk_pki();
    let verify = "nginx.ingress.kubernetes.io/proxy-ssl-verify: \"on\"";
    let compiled = compile_with(&mk_secret(&[("ca.crt", &ca)]), &[SECRET, HTTPS, verify]);
    assert_eq!(
        verdict(&compiled, "a.example.com").verdict,
        Verdict::Identical,
        "{:?}",
        refusals(&compiled, "a.example.com")
    );
    let tls = tls(&compiled);
    let check = tls.verify.as_ref().expect("verified");
    assert_eq!(
        (check.name.as_str(), check.max_intermediates, check.trusted.len()),
        ("upstream_balancer", 1, 1)
    );
    assert_eq!(
        (tls.sni.as_deref(), tls.versions, tls.client_certificate.is_some()),
        (None, TlsVersions::Tls12, false)
    );
}

#[test]
fn name_server_name_protocols_and_depth_are_read_as_nginx_writes_them() {
    let (ca, _) = mk_pki();
    let keys = [
        SECRET,
        HTTPS,
        "nginx.ingress.kubernetes.io/proxy-ssl-verify: \"on\"",
        "nginx.ingress.kubernetes.io/proxy-ssl-name: web.shop.svc",
        "nginx.ingress.kubernetes.io/proxy-ssl-server-name: \"on\"",
        "nginx.ingress.kubernetes.io/proxy-ssl-protocols: TLSv1.3 TLSv1.2",
        "nginx.ingress.kubernetes.io/proxy-ssl-verify-depth: \"3\"",
    ];
    let compiled = compile_with(&mk_secret(&[("ca.crt", &ca)]), &keys);
    let tls = tls(&compiled);
    let check = tls.verify.as_ref().expect("verified");
    assert_eq!((check.name.as_str(), check.max_intermediates), ("web.shop.svc", 3));
    assert_eq!(
        (tls.sni.as_deref(), tls.versions),
        (Some("web.shop.svc"), TlsVersions::Both)
    );
}

#[test]
fn without_ca_crt_only_name_and_sni_apply_and_the_keypair_is_not_presented() {
    let (_, (chain, key)) = mk_pki();
    let keys = [
        SECRET,
        HTTPS,
        "nginx.ingress.kubernetes.io/proxy-ssl-verify: \"on\"",
        "nginx.ingress.kubernetes.io/proxy-ssl-server-name: \"on\"",
        // Written only with ca.crt: no refusal here.
        "nginx.ingress.kubernetes.io/proxy-ssl-ciphers: HIGH:!aNULL",
    ];
    let compiled = compile_with(&mk_secret(&[("tls.crt", &chain), ("tls.key", &key)]), &keys);
    let tls = tls(&compiled);
    assert_eq!(tls.verify, None);
    assert_eq!(
        (tls.sni.as_deref(), tls.client_certificate.is_some()),
        (Some("upstream_balancer"), false)
    );
}

#[test]
fn a_keypair_with_ca_crt_is_presented_and_trusted_as_nginx_writes_one_file() {
    let (ca, (chain, key)) = mk_pki();
    let secret = mk_secret(&[("tls.crt", &chain), ("tls.key", &key), ("ca.crt", &ca)]);
    let compiled = compile_with(&secret, &[SECRET, HTTPS]);
    let tls = tls(&compiled);
    assert_eq!(tls.verify, None, "verify stays off without proxy-ssl-verify");
    let client = tls.client_certificate.as_ref().expect("a client certificate");
    assert_eq!(client.chain_pem, chain.as_bytes());
}

#[test]
fn only_https_locations_carry_the_setting() {
    let (ca, _) = mk_pki();
    let secret = mk_secret(&[("ca.crt", &ca)]);
    for protocol in ["GRPCS", "HTTP", "GRPC"] {
        let key = format!("nginx.ingress.kubernetes.io/backend-protocol: {protocol}");
        let compiled = compile_with(&secret, &[SECRET, &key]);
        assert_eq!(backend(&compiled).tls, None, "{protocol}");
    }
}

#[test]
fn refusals_name_the_key_shunt_cannot_reproduce() {
    let (ca, (chain, _)) = mk_pki();
    let with_ca = mk_secret(&[("ca.crt", &ca)]);
    let cases = [
        (
            mk_secret(&[]),
            "",
            "InvalidAnnotation: nginx.ingress.kubernetes.io/proxy-ssl-secret",
        ),
        (
            mk_secret(&[("ca.crt", "junk")]),
            "",
            "InvalidAnnotation: nginx.ingress.kubernetes.io/proxy-ssl-secret",
        ),
        (
            mk_secret(&[("tls.crt", &chain), ("tls.key", &ca)]),
            "",
            "InvalidAnnotation: nginx.ingress.kubernetes.io/proxy-ssl-secret",
        ),
        (
            mk_secret(&[("ca.crt", &ca), ("ca.crl", "x")]),
            "",
            "UnsupportedAnnotation: nginx.ingress.kubernetes.io/proxy-ssl-secret",
        ),
        (
            mk_secret(&[("ca.crt", &ca.repeat(200))]),
            "",
            "UnsupportedAnnotation: nginx.ingress.kubernetes.io/proxy-ssl-secret",
        ),
        (
            with_ca.clone(),
            "nginx.ingress.kubernetes.io/proxy-ssl-ciphers: HIGH:!aNULL",
            "UnsupportedAnnotation: nginx.ingress.kubernetes.io/proxy-ssl-ciphers",
        ),
        (
            with_ca.clone(),
            "nginx.ingress.kubernetes.io/proxy-ssl-verify-depth: \"-1\"",
            "InvalidAnnotation: nginx.ingress.kubernetes.io/proxy-ssl-verify-depth",
        ),
        (
            with_ca.clone(),
            "nginx.ingress.kubernetes.io/proxy-ssl-protocols: TLSv1.2TLSv1.3",
            "InvalidAnnotation: nginx.ingress.kubernetes.io/proxy-ssl-protocols",
        ),
        (
            with_ca.clone(),
            "nginx.ingress.kubernetes.io/proxy-ssl-name: $host",
            "UnsupportedAnnotation: nginx.ingress.kubernetes.io/proxy-ssl-name",
        ),
    ];
    for (index, (secret, other, expected)) in cases.into_iter().enumerate() {
        let compiled = compile_with(&secret, &[SECRET, HTTPS, other]);
        assert_eq!(
            refusals(&compiled, "a.example.com"),
            [expected],
            "case {index}: {other}"
        );
    }
}

#[test]
fn a_host_whose_ingresses_differ_in_the_setting_is_refused() {
    let (ca, _) = mk_pki();
    let with = mk_ingress(
        "a",
        &[SECRET, HTTPS].join("\n"),
        &mk_rule("a.example.com", &[("/", "Prefix")]),
    );
    let without = mk_ingress("b", HTTPS, &mk_rule("a.example.com", &[("/b", "Prefix")]));
    let compiled = compile_nginx(&[mk_secret(&[("ca.crt", &ca)]), with.clone(), without]);
    assert_eq!(
        refusals(&compiled, "a.example.com"),
        ["UnsupportedAnnotation: nginx.ingress.kubernetes.io/proxy-ssl-secret"]
    );
    let same = mk_ingress(
        "b",
        &[SECRET, HTTPS].join("\n"),
        &mk_rule("a.example.com", &[("/b", "Prefix")]),
    );
    let compiled = compile_nginx(&[mk_secret(&[("ca.crt", &ca)]), with, same]);
    assert_eq!(refusals(&compiled, "a.example.com"), Vec::<String>::new());
}

/// The route `/` on `a.example.com`: its backend's id and endpoints, and its body limit.
fn denied_route(compiled: &Compiled) -> (String, usize, Option<BodyLimit>) {
    let id = answer(compiled, PLAIN, "a.example.com", "/");
    let path = (compiled.table.hosts.iter())
        .find(|host| host.host.to_string() == "a.example.com")
        .and_then(|host| host.paths.iter().find(|path| path.path == "/"))
        .expect("a route for /");
    (id.clone(), backend(compiled).endpoints.len(), path.options.body_limit)
}

#[test]
fn a_missing_or_foreign_secret_denies_every_location_of_the_ingress_with_503() {
    let own = "nginx.ingress.kubernetes.io/proxy-ssl-secret: shop/absent";
    let foreign = "nginx.ingress.kubernetes.io/proxy-ssl-secret: other/pods";
    let (ca, _) = mk_pki();
    let secret = mk_secret(&[("ca.crt", &ca)]);
    // Whatever the protocol: the parse fails before backend-protocol is read.
    let http = "nginx.ingress.kubernetes.io/backend-protocol: HTTP";
    // Denied locations write no CORS, limits or body size of their own.
    let cors = "nginx.ingress.kubernetes.io/enable-cors: \"true\"";
    let body = "nginx.ingress.kubernetes.io/proxy-body-size: 8m";
    for keys in [[own, HTTPS, cors, body], [foreign, http, cors, body]] {
        let compiled = compile_with(&secret, &keys);
        assert_eq!(refusals(&compiled, "a.example.com"), Vec::<String>::new(), "{keys:?}");
        let (id, endpoints, limit) = denied_route(&compiled);
        assert_eq!(
            (id.as_str(), endpoints, limit),
            ("shop/a#denied", 0, Some(BodyLimit::Bytes(1 << 20))),
            "{keys:?}"
        );
    }
}

#[test]
fn a_denied_location_the_configmap_sends_to_error_pages_is_refused() {
    let config = "apiVersion: v1\nkind: ConfigMap\nmetadata: {namespace: ingress-nginx, name: ingress-nginx-controller}\ndata: {custom-http-errors: \"503\"}";
    let own = "nginx.ingress.kubernetes.io/proxy-ssl-secret: shop/absent";
    let compiled = compile_with(config, &[own, HTTPS]);
    assert_eq!(
        refusals(&compiled, "a.example.com"),
        ["UnsupportedAnnotation: nginx.ingress.kubernetes.io/proxy-ssl-secret"]
    );
}
