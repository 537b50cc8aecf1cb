//! TLS: certificates chosen by SNI from `spec.tls` Secrets (exact, then wildcard, then the
//! default), rotation on the next handshake, broken Secrets falling back to the default,
//! HTTP/2 by ALPN, redirects to HTTPS, and HTTPS to backends.

use std::time::Duration;

use bytes::Bytes;
use http::{Request, StatusCode, Version, header};
use rustls::pki_types::CertificateDer;
use serde_json::Value;

use crate::support::*;

/// The name on shunt's self-signed certificate, served when nothing else fits.
const FALLBACK_NAME: &str = "shunt-default.invalid";
/// A rotated Secret must be served within this (the manifest poll interval is 250 ms).
const ROTATE_WITHIN: Duration = Duration::from_secs(5);

/// Asserts that `presented` is `expected`, naming both by their DNS names when not.
fn assert_is(presented: &CertificateDer<'_>, expected: &Leaf, what: &str) {
    assert!(
        *presented == expected.der,
        "{what}: expected the certificate for {:?}, got one for {:?}",
        expected.names(),
        leaf_names(presented)
    );
}

fn assert_is_fallback(presented: &CertificateDer<'_>, what: &str) {
    assert_eq!(
        leaf_names(presented),
        [FALLBACK_NAME],
        "{what}: expected shunt's self-signed certificate"
    );
}

/// `host` (`Prefix /`) routed to the Service of the same name in namespace `tls`.
fn mk_host_ingress(name: &str, host: &str, service: &str) -> Ingress {
    mk_ingress("tls", name).rule(host, [mk_path("/", "Prefix", service, 80)])
}

// === SNI ===

/// `shop.example.com` and `blog.example.com` with their own certificates, `*.apps.example.com`
/// with a wildcard one and `special.apps.example.com` with its own, each routed to a backend of
/// the same name; plus whatever `extra` objects and `args` a test adds.
struct Sites {
    site: Site,
    shop: Leaf,
    blog: Leaf,
    apps: Leaf,
    special: Leaf,
    ca: TestCa,
}

impl Sites {
    async fn serve(extra: &[&dyn Manifest], args: &[&str]) -> Sites {
        let ca = TestCa::new("sites CA");
        let (shop, blog) = (ca.issue(&["shop.example.com"]), ca.issue(&["blog.example.com"]));
        let (apps, special) = (
            ca.issue(&["*.apps.example.com"]),
            ca.issue(&["special.apps.example.com"]),
        );
        // Empty `hosts` (the rule's host) for three of them, an explicit list for blog.
        let ingresses = vec![
            with_tls(
                &mk_host_ingress("shop", "shop.example.com", "shop"),
                &[(&[], "shop-tls")],
            ),
            with_tls(
                &mk_host_ingress("blog", "blog.example.com", "blog"),
                &[(&["blog.example.com"], "blog-tls")],
            ),
            with_tls(
                &mk_host_ingress("apps", "*.apps.example.com", "apps"),
                &[(&[], "apps-tls")],
            ),
            with_tls(
                &mk_host_ingress("special", "special.apps.example.com", "special"),
                &[(&[], "special-tls")],
            ),
        ];
        let secrets = vec![
            mk_tls_secret("tls", "shop-tls", &shop),
            mk_tls_secret("tls", "blog-tls", &blog),
            mk_tls_secret("tls", "apps-tls", &apps),
            mk_tls_secret("tls", "special-tls", &special),
        ];
        let mut objects: Vec<&dyn Manifest> = vec![&ingresses, &secrets];
        objects.extend_from_slice(extra);
        let site = Site::start("tls", &["shop", "blog", "apps", "special"], &objects, args).await;
        Sites {
            site,
            shop,
            blog,
            apps,
            special,
            ca,
        }
    }

    fn shunt(&self) -> &Shunt {
        &self.site.shunt
    }

    async fn presented(&self, sni: Option<&str>) -> CertificateDer<'static> {
        TlsClient::any_certificate().presented(self.shunt().https, sni).await
    }
}

#[tokio::test]
async fn sni_picks_the_exact_certificate_before_a_one_label_wildcard() {
    let sites = Sites::serve(&[], &[]).await;
    assert_is(
        &sites.presented(Some("shop.example.com")).await,
        &sites.shop,
        "shop.example.com",
    );
    assert_is(
        &sites.presented(Some("blog.example.com")).await,
        &sites.blog,
        "blog.example.com",
    );
    assert_is(
        &sites.presented(Some("www.apps.example.com")).await,
        &sites.apps,
        "www.apps.example.com",
    );
    assert_is(
        &sites.presented(Some("special.apps.example.com")).await,
        &sites.special,
        "exact beats wildcard",
    );
    assert_is(
        &sites.presented(Some("SPECIAL.Apps.Example.COM")).await,
        &sites.special,
        "SNI in any case",
    );
    assert_is_fallback(
        &sites.presented(Some("a.b.apps.example.com")).await,
        "two labels under the wildcard",
    );
    assert_is_fallback(
        &sites.presented(Some("apps.example.com")).await,
        "the wildcard's own parent",
    );

    // A client that verifies the chain against the CA and the name gets through and is routed.
    let client = sites.ca.client();
    let routed = [
        ("shop.example.com", "shop"),
        ("www.apps.example.com", "apps"),
        ("special.apps.example.com", "special"),
    ];
    for (host, backend) in routed {
        let reply = client.send(sites.shunt().https, Some(host), get(host, "/")).await;
        assert_eq!(reply.backend(), backend, "{host} over verified TLS");
    }
}

#[tokio::test]
async fn without_a_default_certificate_clients_without_sni_or_with_an_unknown_name_get_the_self_signed_one() {
    let sites = Sites::serve(&[], &[]).await;
    let hosts = [&sites.shop, &sites.blog, &sites.apps, &sites.special];
    for sni in [None, Some("unknown.example.org")] {
        let presented = sites.presented(sni).await;
        assert_is_fallback(&presented, &format!("SNI {sni:?}"));
        assert!(
            hosts.iter().all(|leaf| presented != leaf.der),
            "SNI {sni:?} got another host's certificate"
        );
    }
    // Without SNI the Host header still routes.
    let reply = TlsClient::any_certificate()
        .send(sites.shunt().https, None, get("blog.example.com", "/"))
        .await;
    assert_eq!(reply.backend(), "blog");
}

#[tokio::test]
async fn with_a_default_certificate_clients_without_sni_or_with_an_unknown_name_get_that_one() {
    let ca = TestCa::new("default CA");
    let default = ca.issue(&["ingress.example.net"]);
    let secret = mk_tls_secret("shunt-system", "default-cert", &default);
    let sites = Sites::serve(&[&secret], &["--default-ssl-certificate", "shunt-system/default-cert"]).await;
    assert_is(&sites.presented(None).await, &default, "no SNI");
    assert_is(
        &sites.presented(Some("unknown.example.org")).await,
        &default,
        "an unknown SNI",
    );
    assert_is(
        &sites.presented(Some("a.b.apps.example.com")).await,
        &default,
        "two labels under the wildcard",
    );
    assert_is(
        &sites.presented(Some("shop.example.com")).await,
        &sites.shop,
        "a host with its own certificate",
    );
}

#[tokio::test]
async fn sni_chooses_the_certificate_and_the_host_header_chooses_the_route() {
    let sites = Sites::serve(&[], &[]).await;
    // Verified against shop's name, so shop's certificate it is; Host asks for blog.
    let mut connection = sites
        .ca
        .client()
        .connect(sites.shunt().https, Some("shop.example.com"))
        .await
        .expect("connecting as shop");
    assert_is(&connection.leaf, &sites.shop, "SNI shop.example.com");
    let reply = connection
        .send(get("blog.example.com", "/cart"))
        .await
        .expect("a request for blog");
    assert_eq!(reply.backend(), "blog");
    assert_eq!(reply.json()["path_and_query"], "/cart");
}

// === rotation ===

#[tokio::test]
async fn a_rotated_secret_serves_the_next_handshake_while_open_connections_keep_working() {
    const HOST: &str = "rotate.example.com";
    let ca = TestCa::new("rotation CA");
    let (old, new) = (ca.issue(&[HOST]), ca.issue(&[HOST]));
    let backend = Backend::start("rotate").await;
    let manifests = Manifests::new();
    let ingress = with_tls(&mk_host_ingress("rotate", HOST, "rotate"), &[(&[], "rotate-tls")]);
    manifests.write(
        "routes.yaml",
        &[&ingress, &mk_backend_service("tls", "rotate", None, &[&backend])],
    );
    manifests.write("secret.yaml", &[&mk_tls_secret("tls", "rotate-tls", &old)]);
    let shunt = Shunt::start(manifests.path(), &[]).await;

    let mut open = ca
        .client()
        .connect(shunt.https, Some(HOST))
        .await
        .expect("connecting before the rotation");
    assert_is(&open.leaf, &old, "before the rotation");
    assert_eq!(
        open.send(get(HOST, "/before"))
            .await
            .expect("a request before the rotation")
            .backend(),
        "rotate"
    );

    manifests.write("secret.yaml", &[&mk_tls_secret("tls", "rotate-tls", &new)]);
    let client = TlsClient::any_certificate();
    eventually(
        "a new handshake to present the rotated certificate",
        ROTATE_WITHIN,
        async || (client.presented(shunt.https, Some(HOST)).await == new.der).then_some(()),
    )
    .await;

    // The same hyper connection: it cannot reconnect, so an answer proves the old one lives on.
    let reply = open
        .send(get(HOST, "/after"))
        .await
        .expect("the connection opened before the rotation still serves");
    assert_eq!(reply.backend(), "rotate");
    assert_eq!(reply.json()["path_and_query"], "/after");
    let reply = ca.client().send(shunt.https, Some(HOST), get(HOST, "/new")).await;
    assert_eq!(
        reply.backend(),
        "rotate",
        "a new connection verifies the rotated certificate"
    );
}

// === broken Secrets ===

#[tokio::test]
async fn hosts_with_unusable_secrets_get_the_default_certificate_and_a_diagnostic_while_others_keep_theirs() {
    let ca = TestCa::new("broken CA");
    let healthy = ca.issue(&["healthy.example.com"]);
    let expired = ca.issue_expired(&["expired.example.com"]);
    let elsewhere = ca.issue(&["elsewhere.example.com"]);
    let garbage_key = ca.issue(&["garbage.example.com"]);
    let garbage = [("tls.crt", garbage_key.chain_pem.as_str()), ("tls.key", "not a key")];
    let opaque = [
        ("tls.crt", healthy.chain_pem.as_str()),
        ("tls.key", healthy.key_pem.as_str()),
    ];
    let secrets = vec![
        mk_tls_secret("tls", "healthy-tls", &healthy),
        mk_tls_secret("tls", "expired-tls", &expired),
        mk_tls_secret("tls", "uncovered-tls", &elsewhere),
        mk_string_secret("tls", "garbage-tls", "kubernetes.io/tls", &garbage),
        mk_string_secret("tls", "opaque-tls", "Opaque", &opaque),
    ];
    // (Ingress and host, its Secret, the reason it is unusable).
    let broken = [
        ("expired", "expired-tls", "InvalidTlsSecret"),
        ("garbage", "garbage-tls", "InvalidTlsSecret"),
        ("opaque", "opaque-tls", "InvalidTlsSecret"),
        ("uncovered", "uncovered-tls", "TlsHostNotCovered"),
        ("missing", "absent-tls", "MissingTlsSecret"),
    ];
    let host = |name: &str| format!("{name}.example.com");
    let healthy_ingress = mk_host_ingress("healthy", "healthy.example.com", "healthy");
    let mut ingresses = vec![with_tls(&healthy_ingress, &[(&[], "healthy-tls")])];
    for (name, secret, _) in broken {
        ingresses.push(with_tls(&mk_host_ingress(name, &host(name), name), &[(&[], secret)]));
    }
    let names = ["healthy", "expired", "garbage", "opaque", "uncovered", "missing"];
    let site = Site::start("tls", &names, &[&ingresses, &secrets], &[]).await;
    let shunt = &site.shunt;

    let client = TlsClient::any_certificate();
    assert_is(
        &client.presented(shunt.https, Some("healthy.example.com")).await,
        &healthy,
        "the healthy host",
    );
    for (name, _, reason) in broken {
        assert_is_fallback(
            &client.presented(shunt.https, Some(&host(name))).await,
            &format!("{name} ({reason})"),
        );
        let ingress = format!("tls/{name}");
        shunt
            .wait_for_log(&format!("a {reason} warning for {ingress}"), |line| {
                line["level"] == "WARN" && line["ingress"] == ingress.as_str() && line["reason"] == reason
            })
            .await;
    }
    let metrics = shunt.metrics().await;
    for (reason, count) in [
        ("InvalidTlsSecret", 3.0),
        ("TlsHostNotCovered", 1.0),
        ("MissingTlsSecret", 1.0),
    ] {
        let value = sample(&metrics, "shunt_ingress_diagnostics", &[("reason", reason)]);
        assert_eq!(value, Some(count), "shunt_ingress_diagnostics{{reason={reason:?}}}");
    }

    // Routing does not depend on the certificate: every host answers over HTTP and HTTPS.
    for name in names {
        let host = host(name);
        assert_eq!(shunt.get(&host, "/").await.backend(), name, "{host} over HTTP");
        let reply = client.send(shunt.https, Some(&host), get(&host, "/")).await;
        assert_eq!(reply.backend(), name, "{host} over HTTPS");
    }
}

// === HTTP/2 ===

#[tokio::test]
async fn alpn_h2_gives_http2_over_tls_to_hyper_and_to_curl() {
    const HOST: &str = "h2.example.com";
    let ca = TestCa::new("h2 CA");
    let leaf = ca.issue(&[HOST]);
    let ingress = with_tls(&mk_host_ingress("h2", HOST, "h2"), &[(&[], "h2-tls")]);
    let site = Site::start("tls", &["h2"], &[&ingress, &mk_tls_secret("tls", "h2-tls", &leaf)], &[]).await;
    let https = site.shunt.https;

    let mut connection = ca
        .client()
        .alpn(&[b"h2", b"http/1.1"])
        .connect(https, Some(HOST))
        .await
        .expect("connecting with ALPN h2");
    assert_eq!(connection.alpn.as_deref(), Some(&b"h2"[..]), "shunt chose h2");
    let req = Request::get(format!("https://{HOST}/over/h2?q=1"))
        .body(full(Bytes::new()))
        .expect("a valid request");
    let reply = connection.send(req).await.expect("an HTTP/2 request over TLS");
    assert_eq!(reply.version, Version::HTTP_2);
    assert_eq!(reply.backend(), "h2");
    let seen = reply.json();
    assert_eq!(seen["path_and_query"], "/over/h2?q=1");
    assert_eq!(seen["version"], "HTTP/1.1", "the backend speaks HTTP/1.1 still");
    assert_eq!(seen["headers"]["x-forwarded-proto"], "https");

    let connection = ca
        .client()
        .connect(https, Some(HOST))
        .await
        .expect("connecting with ALPN http/1.1");
    assert_eq!(
        connection.alpn.as_deref(),
        Some(&b"http/1.1"[..]),
        "an HTTP/1.1-only client gets HTTP/1.1"
    );

    let ca_file = tempfile::NamedTempFile::new().expect("a file for the CA");
    std::fs::write(ca_file.path(), ca.pem()).expect("writing the CA");
    let port = https.port();
    let cacert = ca_file.path().to_str().expect("a UTF-8 temp path");
    let resolve = format!("{HOST}:{port}:127.0.0.1");
    let url = format!("https://{HOST}:{port}/from/curl");
    let (body, status_line) = curl(&["--http2", "--cacert", cacert, "--resolve", &resolve, &url]).await;
    assert_eq!(
        status_line, "200 2",
        "curl verified shunt's certificate, spoke HTTP/2 and got 200: {body}"
    );
    let seen: Value = serde_json::from_str(&body).expect("the echo report");
    assert_eq!(seen["backend"], "h2");
    assert_eq!(seen["path_and_query"], "/from/curl");
}

// === redirects ===

#[tokio::test]
async fn each_ssl_redirect_annotation_sends_plain_http_to_https_and_https_is_proxied() {
    let ca = TestCa::new("redirect CA");
    let leaf = ca.issue(&["*.example.com"]);
    let annotated = [
        ("ours", "shunt.dev/ssl-redirect"),
        ("nginx", "nginx.ingress.kubernetes.io/ssl-redirect"),
        ("force", "nginx.ingress.kubernetes.io/force-ssl-redirect"),
    ];
    let mut ingresses: Vec<Value> = annotated
        .iter()
        .map(|(name, key)| {
            let ingress = mk_host_ingress(name, &format!("{name}.example.com"), "app").annotation(key, "true");
            with_tls(&ingress, &[(&[], "site-tls")])
        })
        .collect();
    ingresses.push(with_tls(
        &mk_host_ingress("plain", "plain.example.com", "app"),
        &[(&[], "site-tls")],
    ));
    // One host, two Ingresses: the redirect covers the annotated Ingress's paths only.
    let secure = mk_ingress("tls", "secure")
        .annotation("shunt.dev/ssl-redirect", "true")
        .rule("shared.example.com", [mk_path("/secure", "Prefix", "app", 80)]);
    ingresses.push(with_tls(&secure, &[(&[], "site-tls")]));
    let open = mk_ingress("tls", "open").rule("shared.example.com", [mk_path("/open", "Prefix", "app", 80)]);
    let secret = mk_tls_secret("tls", "site-tls", &leaf);
    let site = Site::start("tls", &["app"], &[&ingresses, &open, &secret], &[]).await;
    let shunt = &site.shunt;
    let client = ca.client();

    for (name, key) in annotated {
        let host = format!("{name}.example.com");
        let reply = shunt.get(&format!("{host}:8080"), "/a/b?x=1&y=two").await;
        assert_eq!(reply.status, StatusCode::PERMANENT_REDIRECT, "{key}: {}", reply.text());
        let location = reply
            .headers
            .get(header::LOCATION)
            .and_then(|value| value.to_str().ok());
        let expected = format!("https://{host}/a/b?x=1&y=two");
        assert_eq!(location, Some(expected.as_str()), "{key}: no port, path and query kept");

        let reply = client
            .send(shunt.https, Some(&host), get(&host, "/a/b?x=1&y=two"))
            .await;
        assert_eq!(reply.backend(), "app", "{key}: HTTPS is proxied");
        let seen = reply.json();
        assert_eq!(seen["path_and_query"], "/a/b?x=1&y=two");
        assert_eq!(seen["headers"]["x-forwarded-proto"], "https", "{key}");
        assert_eq!(seen["headers"]["x-forwarded-port"], "443", "{key}");
    }

    let reply = shunt.get("plain.example.com", "/a?x=1").await;
    assert_eq!(reply.backend(), "app", "no annotation, no redirect");
    assert_eq!(reply.seen_header("x-forwarded-proto").as_deref(), Some("http"));
    let reply = client
        .send(
            shunt.https,
            Some("plain.example.com"),
            get("plain.example.com:8443", "/"),
        )
        .await;
    assert_eq!(reply.seen_header("x-forwarded-proto").as_deref(), Some("https"));
    assert_eq!(
        reply.seen_header("x-forwarded-port").as_deref(),
        Some("8443"),
        "the Host header's port wins"
    );

    assert_eq!(
        shunt.get("shared.example.com", "/secure/x").await.status,
        StatusCode::PERMANENT_REDIRECT
    );
    assert_eq!(
        shunt.get("shared.example.com", "/open/x").await.backend(),
        "app",
        "the other Ingress's path"
    );
}

// === HTTPS backends ===

const SECURE_HOST: &str = "secure.example.com";

/// An HTTPS origin whose certificate names neither the Service nor the pod's IP, as pod
/// certificates usually do not: shunt does not check the name.
async fn start_https_backend(ca: &TestCa) -> TlsBackend {
    TlsBackend::start("secure", &ca.issue(&["pod.cluster.internal"])).await
}

#[tokio::test]
async fn a_service_port_with_app_protocol_https_is_spoken_to_over_tls() {
    let backend = start_https_backend(&TestCa::new("pods CA")).await;
    let (_manifests, shunt) = serve_host(SECURE_HOST, "secure", Some("https"), &[backend.port()], &[]).await;
    let reply = shunt.get(SECURE_HOST, "/over/tls?x=1").await;
    assert_eq!(reply.backend(), "secure", "an answer from the TLS-only origin");
    assert_eq!(reply.json()["path_and_query"], "/over/tls?x=1");
}

#[tokio::test]
async fn the_backend_protocol_annotation_turns_on_tls_to_the_backend() {
    let backend = start_https_backend(&TestCa::new("pods CA")).await;
    let ingress = mk_ingress("web", "secure")
        .annotation("shunt.dev/backend-protocol", "HTTPS")
        .rule(SECURE_HOST, [mk_path("/", "Prefix", "secure", 80)]);
    let (_manifests, shunt) = serve(
        &[&ingress, &mk_service_on_ports("web", "secure", None, &[backend.port()])],
        &[],
    )
    .await;
    assert_eq!(shunt.get(SECURE_HOST, "/").await.backend(), "secure");
}

/// An nginx Ingress to the HTTPS origin with `backend-protocol: HTTPS` and `extra` annotations.
async fn serve_nginx_https(backend: &TlsBackend, extra: &[(&str, &str)]) -> (Manifests, Shunt) {
    let mut ingress = mk_ingress("web", "secure")
        .class("nginx")
        .annotation("nginx.ingress.kubernetes.io/backend-protocol", "HTTPS")
        .annotation("nginx.ingress.kubernetes.io/ssl-redirect", "false");
    for (key, value) in extra {
        ingress = ingress.annotation(key, value);
    }
    let ingress = ingress.rule(SECURE_HOST, [mk_path("/", "Prefix", "secure", 80)]);
    let service = mk_service_on_ports("web", "secure", None, &[backend.port()]);
    serve(&[&ingress, &service], &["--shadow-class", "nginx"]).await
}

#[tokio::test]
async fn nginx_backend_protocol_https_reaches_a_pod_whose_certificate_nobody_checks() {
    // As nginx without proxy-ssl-verify: a certificate for another name, from a CA nobody knows.
    let backend = start_https_backend(&TestCa::new("unknown CA")).await;
    let (_manifests, shunt) = serve_nginx_https(&backend, &[]).await;
    let reply = shunt.get(SECURE_HOST, "/over/tls").await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(reply.backend(), "secure");
}

#[tokio::test]
async fn with_an_upstream_ca_bundle_only_backends_that_ca_issued_are_reached() {
    let (pods, other) = (TestCa::new("pods CA"), TestCa::new("another CA"));
    let backend = start_https_backend(&pods).await;
    let bundles = tempfile::tempdir().expect("a directory for CA bundles");
    for (file, ca) in [("pods.pem", &pods), ("other.pem", &other)] {
        std::fs::write(bundles.path().join(file), ca.pem()).expect("writing a CA bundle");
    }
    for (file, expected) in [("pods.pem", StatusCode::OK), ("other.pem", StatusCode::BAD_GATEWAY)] {
        let bundle = bundles.path().join(file);
        let args = ["--upstream-ca-bundle", bundle.to_str().expect("a UTF-8 temp path")];
        let (_manifests, shunt) = serve_host(SECURE_HOST, "secure", Some("https"), &[backend.port()], &args).await;
        let before = backend.connections();
        let reply = shunt.get(SECURE_HOST, "/").await;
        assert_eq!(reply.status, expected, "bundle {file}: {}", reply.text());
        // Refused after connecting, for its certificate, not for want of a connection.
        assert!(
            backend.connections() > before,
            "bundle {file}: shunt connected to the backend"
        );
    }
}
