//! External authentication (`auth-url`) end to end: an auth service (a fake pod with a handler)
//! asked before the pod, over HTTP/1.1, HTTPS, HTTPS with h2 and h2c. Only its 2xx lets a
//! request reach the pod; 401 (with its challenge, or the sign-in redirect), 403, another status
//! and no answer in time each stop it; a host whose auth keys shunt cannot apply exactly is
//! not served at all.

use std::sync::{Arc, Mutex};

use http::{HeaderMap, Request, StatusCode, header};

use crate::support::*;

const GATED: &str = "gated.example.com";
const SIGNIN: &str = "signin.example.com";
const REFUSED: &str = "refused.example.com";
const CACHED: &str = "cached.example.com";

fn ingresses(auth_port: u16) -> String {
    let url = format!("http://127.0.0.1:{auth_port}/check?from=shunt");
    let ingress = |name: &str, host: &str, extra: &str| {
        format!(
            r#"apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  namespace: shop
  name: {name}
  annotations:
    nginx.ingress.kubernetes.io/auth-url: "{url}"
    nginx.ingress.kubernetes.io/auth-response-headers: "X-Auth-User"
{extra}spec:
  ingressClassName: nginx
  rules:
  - host: {host}
    http:
      paths:
      - {{path: /, pathType: Prefix, backend: {{service: {{name: web, port: {{number: 80}}}}}}}}
"#
        )
    };
    [
        ingress("gated", GATED, ""),
        ingress(
            "signin",
            SIGNIN,
            "    nginx.ingress.kubernetes.io/auth-signin: \"https://login.example/start\"\n",
        ),
        // A cache key with a variable shunt does not expand: the host stays refused, never
        // served without its gate.
        ingress(
            "refused",
            REFUSED,
            "    nginx.ingress.kubernetes.io/auth-cache-key: \"$remote_user$uri\"\n",
        ),
        // Answers kept per Authorization and X-Key, for the default 200 202 401 5m.
        ingress(
            "cached",
            CACHED,
            "    nginx.ingress.kubernetes.io/auth-cache-key: \"$http_authorization$http_x_key\"\n",
        ),
    ]
    .join("---\n")
}

/// What the auth service saw of each request.
type Seen = Arc<Mutex<Vec<(String, String, HeaderMap)>>>;

/// The auth service: the `Authorization` field decides.
async fn start_auth(seen: Seen) -> Backend {
    Backend::http1("auth")
        .handler(move |req: Request<hyper::body::Incoming>| {
            let seen = seen.clone();
            async move {
                let target = req.uri().path_and_query().map_or("", |t| t.as_str()).to_string();
                let token = req.headers().get(header::AUTHORIZATION).cloned();
                seen.lock()
                    .unwrap()
                    .push((req.method().to_string(), target, req.headers().clone()));
                let mut response = match token.as_ref().and_then(|t| t.to_str().ok()) {
                    Some("Bearer good") => {
                        let mut ok = text(StatusCode::OK, "ok");
                        ok.headers_mut().insert("x-auth-user", "alice".parse().unwrap());
                        ok.headers_mut()
                            .insert(header::SET_COOKIE, "session=s1".parse().unwrap());
                        ok
                    }
                    // A 200 without a cookie, which a cache may keep.
                    Some("Bearer plain") => {
                        let mut ok = text(StatusCode::OK, "ok");
                        ok.headers_mut().insert("x-auth-user", "bob".parse().unwrap());
                        ok
                    }
                    Some("Bearer forbidden") => text(StatusCode::FORBIDDEN, "no"),
                    Some("Bearer broken") => text(StatusCode::INTERNAL_SERVER_ERROR, "broken"),
                    Some("Bearer moved") => text(StatusCode::FOUND, "elsewhere"),
                    Some("Bearer slow") => {
                        std::future::pending::<()>().await;
                        unreachable!()
                    }
                    _ => text(StatusCode::UNAUTHORIZED, "who"),
                };
                if response.status() == StatusCode::UNAUTHORIZED {
                    let challenge = "Bearer realm=\"shop\"".parse().unwrap();
                    response.headers_mut().insert(header::WWW_AUTHENTICATE, challenge);
                }
                response
            }
        })
        .start()
        .await
}

struct Gate {
    shunt: Shunt,
    pod: Backend,
    seen: Seen,
    _auth: Backend,
    _manifests: Manifests,
}

async fn start_gate() -> Gate {
    start_gate_with(ingresses).await
}

/// shunt serving the objects `objects` writes for the auth service's port.
async fn start_gate_with(objects: fn(u16) -> String) -> Gate {
    let seen: Seen = Arc::default();
    let auth = start_auth(seen.clone()).await;
    let pod = Backend::start("web").await;
    let manifests = Manifests::new();
    manifests.write_text("ingress.yaml", &objects(auth.port()));
    manifests.write("services.yaml", &[&mk_backend_service("shop", "web", None, &[&pod])]);
    let args = ["--shadow-class", "nginx", "--external-auth-timeout", "1s"];
    let shunt = Shunt::start(manifests.path(), &args).await;
    Gate {
        shunt,
        pod,
        seen,
        _auth: auth,
        _manifests: manifests,
    }
}

fn request(host: &str, path: &str, token: Option<&str>, absolute: bool) -> Request<Body> {
    let uri = if absolute {
        format!("http://{host}{path}")
    } else {
        path.to_string()
    };
    let mut builder = Request::builder().uri(uri).header(header::HOST, host);
    if let Some(token) = token {
        builder = builder.header(header::AUTHORIZATION, format!("Bearer {token}"));
    }
    // A caller's own claim to be someone: replaced by the auth service's, or removed.
    builder = builder.header("x-auth-user", "mallory");
    builder.body(full("")).expect("a request")
}

/// The request over each protocol a caller may use.
async fn each_protocol(shunt: &Shunt, host: &str, path: &str, token: Option<&str>) -> Vec<(&'static str, Reply)> {
    let tls = TlsClient::any_certificate();
    let h2 = TlsClient::any_certificate().alpn(&[b"h2"]);
    vec![
        ("http/1.1", shunt.send(request(host, path, token, false)).await),
        ("h2c", shunt.send_h2(request(host, path, token, true)).await),
        (
            "https",
            tls.send(shunt.https, Some(host), request(host, path, token, false))
                .await,
        ),
        (
            "h2",
            h2.send(shunt.https, Some(host), request(host, path, token, true)).await,
        ),
    ]
}

#[tokio::test]
async fn no_request_reaches_the_pod_without_the_auth_services_2xx() {
    let gate = start_gate().await;
    let cases = [
        (None, StatusCode::UNAUTHORIZED),
        (Some("forbidden"), StatusCode::FORBIDDEN),
        (Some("broken"), StatusCode::INTERNAL_SERVER_ERROR),
        (Some("moved"), StatusCode::INTERNAL_SERVER_ERROR),
        (Some("slow"), StatusCode::INTERNAL_SERVER_ERROR),
    ];
    for (token, status) in cases {
        for (protocol, reply) in each_protocol(&gate.shunt, GATED, "/orders", token).await {
            assert_eq!(reply.status, status, "{protocol} {token:?}: {}", reply.text());
            // nginx's own page for the status, as ingress-nginx answers.
            assert!(
                reply.text().contains("<center>nginx</center>"),
                "{protocol}: {}",
                reply.text()
            );
        }
    }
    assert_eq!(gate.pod.hits(), 0, "the pod saw a request its gate stopped");

    // The challenge goes to the caller with the 401.
    let denied = gate.shunt.send(request(GATED, "/", None, false)).await;
    assert_eq!(
        denied
            .headers
            .get(header::WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok()),
        Some("Bearer realm=\"shop\"")
    );

    for (protocol, reply) in each_protocol(&gate.shunt, GATED, "/orders?id=7", Some("good")).await {
        assert_eq!(reply.status, StatusCode::OK, "{protocol}");
        assert_eq!(reply.seen_header("x-auth-user").as_deref(), Some("alice"), "{protocol}");
        let cookie = reply.headers.get(header::SET_COOKIE).and_then(|v| v.to_str().ok());
        assert_eq!(cookie, Some("session=s1"), "{protocol}");
    }
    assert_eq!(gate.pod.hits(), 4);

    let metrics = gate.shunt.metrics().await;
    for line in [
        "shunt_external_auth_total{outcome=\"allowed\"} 4",
        "shunt_external_auth_total{outcome=\"unauthorized\"} 5",
        "shunt_external_auth_total{outcome=\"forbidden\"} 4",
        "shunt_external_auth_total{outcome=\"unexpected\"} 8",
        "shunt_external_auth_total{outcome=\"failed\"} 4",
    ] {
        assert!(metrics.contains(line), "{line}\n{metrics}");
    }
}

#[tokio::test]
async fn the_auth_service_sees_the_template_fields_and_no_body() {
    let gate = start_gate().await;
    let post = Request::builder()
        .method("POST")
        .uri("/cart?x=1")
        .header(header::HOST, GATED)
        .header(header::AUTHORIZATION, "Bearer good")
        .header("x-forwarded-proto", "gopher")
        .body(full("a body the auth service never sees"))
        .expect("a request");
    let reply = gate.shunt.send(post).await;
    assert_eq!(reply.status, StatusCode::OK);
    let seen = gate.seen.lock().unwrap().pop().expect("the auth service was asked");
    let (method, target, headers) = seen;
    assert_eq!((method.as_str(), target.as_str()), ("GET", "/check?from=shunt"));
    let field = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_string);
    assert_eq!(field("host").as_deref(), Some("127.0.0.1"));
    assert_eq!(
        field("x-original-url").as_deref(),
        Some("http://gated.example.com/cart?x=1")
    );
    assert_eq!(field("x-original-method").as_deref(), Some("POST"));
    assert_eq!(field("x-auth-request-redirect").as_deref(), Some("/cart?x=1"));
    assert_eq!(field("x-sent-from").as_deref(), Some("nginx-ingress-controller"));
    assert_eq!(field("x-real-ip").as_deref(), Some("127.0.0.1"));
    assert_eq!(field("authorization").as_deref(), Some("Bearer good"));
    assert_eq!(field("content-length"), None);
    assert_eq!(field("x-forwarded-proto"), None);
    // The pod and the auth service see one request id.
    assert_eq!(field("x-request-id"), reply.seen_header("x-request-id"));
}

#[tokio::test]
async fn a_401_redirects_to_the_signin_page_with_the_original_url() {
    let gate = start_gate().await;
    let reply = gate.shunt.send(request(SIGNIN, "/a:b/c?q=1&r=[2]", None, false)).await;
    assert_eq!(reply.status, StatusCode::FOUND, "{}", reply.text());
    assert_eq!(
        reply.headers.get(header::LOCATION).and_then(|v| v.to_str().ok()),
        Some("https://login.example/start?rd=http://signin.example.com%2Fa%3Ab%2Fc%3Fq%3D1%26r%3D%5B2%5D")
    );
    assert_eq!(gate.pod.hits(), 0);
}

#[tokio::test]
async fn a_host_whose_auth_keys_cannot_be_applied_exactly_is_never_served_open() {
    let gate = start_gate().await;
    for (protocol, reply) in each_protocol(&gate.shunt, REFUSED, "/", Some("good")).await {
        assert_eq!(reply.status, StatusCode::NOT_FOUND, "{protocol}");
    }
    assert_eq!(gate.pod.hits(), 0);
    let shadow = gate.shunt.admin("/shadow").await.json();
    let host = shadow["hosts"]
        .as_array()
        .and_then(|hosts| hosts.iter().find(|h| h["host"] == REFUSED))
        .expect("a verdict");
    assert_eq!(host["verdict"], "refused");
    let reasons = host["reasons"].to_string();
    assert!(
        reasons.contains("UnsupportedAnnotation: nginx.ingress.kubernetes.io/auth-cache-key"),
        "{reasons}"
    );
}

#[tokio::test]
async fn a_kept_answer_stands_in_for_the_auth_request_only_for_its_key() {
    let gate = start_gate().await;
    let asked = || gate.seen.lock().unwrap().len();
    let send = |token: &'static str, key: &'static str| {
        let mut request = request(CACHED, "/orders", Some(token), false);
        request.headers_mut().insert("x-key", key.parse().unwrap());
        gate.shunt.send(request)
    };
    let first = send("plain", "a").await;
    assert_eq!((first.status, asked()), (StatusCode::OK, 1));
    // Without X-Key, another key: asked once over the first protocol, then the kept 200, its
    // field still copied onto the request, over the others.
    for (protocol, reply) in each_protocol(&gate.shunt, CACHED, "/orders", Some("plain")).await {
        assert_eq!(reply.status, StatusCode::OK, "{protocol}");
        assert_eq!(reply.seen_header("x-auth-user").as_deref(), Some("bob"), "{protocol}");
    }
    let after_protocols = asked();
    assert_eq!(after_protocols, 2);
    let again = send("plain", "a").await;
    assert_eq!(again.status, StatusCode::OK);
    assert_eq!(again.seen_header("x-auth-user").as_deref(), Some("bob"));
    assert_eq!(asked(), after_protocols, "the same key asked again");
    // Another key asks; a 500 and an answer with a cookie are not kept.
    assert_eq!(send("plain", "b").await.status, StatusCode::OK);
    assert_eq!(asked(), after_protocols + 1);
    for token in ["broken", "broken", "good", "good"] {
        let before = asked();
        send(token, "c").await;
        assert_eq!(asked(), before + 1, "{token} was kept");
    }
    // A kept 401 denies without asking, and never reaches the pod.
    let (hits, before) = (gate.pod.hits(), asked());
    for _ in 0..2 {
        assert_eq!(send("nobody", "d").await.status, StatusCode::UNAUTHORIZED);
    }
    assert_eq!((gate.pod.hits(), asked()), (hits, before + 1));
    let metrics = gate.shunt.metrics().await;
    assert!(
        metrics.contains("shunt_external_auth_cache_total{event=\"hit\"} 5"),
        "{metrics}"
    );
}

/// An Ingress without auth annotations under the ConfigMap's `global-auth-url`.
fn global_manifests(auth_port: u16) -> String {
    format!(
        r#"apiVersion: v1
kind: ConfigMap
metadata: {{namespace: ingress-nginx, name: ingress-nginx-controller}}
data:
  global-auth-url: "http://127.0.0.1:{auth_port}/check?from=global"
  global-auth-response-headers: "X-Auth-User"
  no-auth-locations: "/public"
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {{namespace: shop, name: plain}}
spec:
  ingressClassName: nginx
  rules:
  - host: {GATED}
    http:
      paths:
      - {{path: /, pathType: Prefix, backend: {{service: {{name: web, port: {{number: 80}}}}}}}}
      - {{path: /public, pathType: Prefix, backend: {{service: {{name: web, port: {{number: 80}}}}}}}}
"#
    )
}

#[tokio::test]
async fn under_global_auth_no_request_reaches_the_pod_without_the_auth_services_2xx() {
    let Gate { shunt, pod, seen, .. } = &start_gate_with(global_manifests).await;
    let denied = [
        (None, StatusCode::UNAUTHORIZED),
        (Some("forbidden"), StatusCode::FORBIDDEN),
        (Some("broken"), StatusCode::INTERNAL_SERVER_ERROR),
        (Some("slow"), StatusCode::INTERNAL_SERVER_ERROR),
    ];
    for (token, status) in denied {
        for (protocol, reply) in each_protocol(shunt, GATED, "/orders", token).await {
            assert_eq!(reply.status, status, "{protocol} {token:?}: {}", reply.text());
        }
    }
    assert_eq!(pod.hits(), 0, "the pod saw a request the global gate stopped");
    for (protocol, reply) in each_protocol(shunt, GATED, "/orders", Some("good")).await {
        assert_eq!(reply.status, StatusCode::OK, "{protocol}");
        assert_eq!(reply.seen_header("x-auth-user").as_deref(), Some("alice"), "{protocol}");
    }
    assert_eq!(pod.hits(), 4);
    let asked = seen.lock().unwrap().len();
    assert!(
        seen.lock()
            .unwrap()
            .iter()
            .all(|(_, target, _)| target == "/check?from=global")
    );
    // no-auth-locations: served without asking.
    let reply = shunt.send(request(GATED, "/public/x", None, false)).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(seen.lock().unwrap().len(), asked);
}
