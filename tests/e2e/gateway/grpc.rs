//! GRPCRoute (profile GATEWAY-GRPC, core): the upstream tests `conformance/tests/grpcroute-*`
//! of v1.6.1, against echo pods speaking gRPC over h2c only, as the suite's
//! `grpc-infra-backend-v1`..`v3` do. Each pod answers one gRPC message (its echo report as
//! JSON, naming the pod) with `grpc-status: 0` in the trailers. A request no route takes gets
//! 404, which gRPC clients read as `UNIMPLEMENTED` (what the suite expects).

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Request, StatusCode, Version, header};
use http_body_util::BodyExt;

use super::*;

const SERVICE: &str = "gateway_api_conformance.echo_basic.grpcecho.GrpcEcho";
const PODS: [&str; 3] = [
    "grpc-infra-backend-v1",
    "grpc-infra-backend-v2",
    "grpc-infra-backend-v3",
];

/// The gRPC echo pods, [`BASE`], the test's objects, and shunt serving them.
struct GrpcSite {
    _pods: Vec<Backend>,
    _manifests: Manifests,
    shunt: Shunt,
}

impl GrpcSite {
    async fn start(objects: &str) -> GrpcSite {
        let mut pods = Vec::new();
        let mut documents = Vec::new();
        for name in PODS {
            let pod = Backend::h2c(name)
                .handler(move |req| grpc_echo(name, req))
                .start()
                .await;
            documents.push(json!({
                "apiVersion": "v1", "kind": "Service",
                "metadata": {"namespace": INFRA, "name": name},
                "spec": {"ports": [{"name": "grpc", "port": 8080}]},
            }));
            documents.extend(
                mk_slice(INFRA, name, pod.port())
                    .port_name("grpc")
                    .ready("127.0.0.1")
                    .documents(),
            );
            pods.push(pod);
        }
        let manifests = Manifests::new();
        manifests.write("backends.yaml", &[&documents]);
        manifests.write_text("gateway.yaml", &format!("{BASE}\n---\n{objects}"));
        let shunt = Shunt::start_listening(manifests.path(), &[], &["http", "https", "admin"]).await;
        GrpcSite {
            _pods: pods,
            _manifests: manifests,
            shunt,
        }
    }

    /// Calls `method` of the echo service on `authority` over h2c with `metadata`.
    async fn call(&self, authority: &str, method: &str, metadata: &[(&str, &str)]) -> Reply {
        self.shunt.send_h2(rpc(authority, method, metadata)).await
    }
}

/// A gRPC call as a client sends it: POST, `application/grpc`, `te: trailers`, one message.
fn rpc(authority: &str, method: &str, metadata: &[(&str, &str)]) -> Request<Body> {
    let mut builder = Request::post(format!("http://{authority}/{SERVICE}/{method}"))
        .version(Version::HTTP_2)
        .header(header::CONTENT_TYPE, "application/grpc")
        .header(header::TE, "trailers");
    for (name, value) in metadata {
        builder = builder.header(*name, *value);
    }
    builder
        .body(full(Bytes::from_static(b"\0\0\0\0\0")))
        .expect("a valid call")
}

/// The pod: only gRPC over HTTP/2; its answer is one length-prefixed message, then trailers.
async fn grpc_echo(name: &'static str, req: Request<hyper::body::Incoming>) -> http::Response<Body> {
    let grpc = req.version() == Version::HTTP_2
        && (req.headers().get(header::CONTENT_TYPE))
            .is_some_and(|value| value.as_bytes().starts_with(b"application/grpc"));
    let report = echo(name.to_string(), req).await;
    let report = report
        .into_body()
        .collect()
        .await
        .map(|body| body.to_bytes())
        .unwrap_or_default();
    let mut trailers = HeaderMap::new();
    let status = if grpc { "0" } else { "3" };
    trailers.insert("grpc-status", HeaderValue::from_static(status));
    let mut message = vec![0u8];
    message.extend_from_slice(&u32::try_from(report.len()).expect("a small report").to_be_bytes());
    message.extend_from_slice(&report);
    let body = full(Bytes::from(message))
        .with_trailers(async { Some(Ok(trailers)) })
        .boxed();
    let mut response = http::Response::new(body);
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/grpc"));
    response
}

/// The pod that answered a call, checked to be a whole gRPC answer with status OK.
fn pod(reply: &Reply) -> String {
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(reply.version, Version::HTTP_2);
    let trailers = reply.trailers.as_ref().expect("gRPC trailers");
    assert_eq!(trailers.get("grpc-status").map(HeaderValue::as_bytes), Some(&b"0"[..]));
    let (prefix, message) = reply.body.split_at(5);
    assert_eq!(prefix[0], 0, "an uncompressed message");
    assert_eq!(
        u32::from_be_bytes(prefix[1..].try_into().expect("4 bytes")) as usize,
        message.len()
    );
    let report: Value = serde_json::from_slice(message).expect("the pod's report");
    assert_eq!(report["version"], "HTTP/2.0", "h2c to the pod: {report}");
    report["backend"].as_str().expect("the pod's name").to_string()
}

fn grpc_route(name: &str, parents: &str, hostnames: &str, rules: &str) -> String {
    format!(
        "---\napiVersion: gateway.networking.k8s.io/v1\nkind: GRPCRoute\nmetadata: {{namespace: {INFRA}, name: {name}}}\n\
         spec: {{parentRefs: {parents}, hostnames: {hostnames}, rules: {rules}}}\n"
    )
}

/// grpcroute-exact-method-matching: `Echo` to v1, `EchoTwo` to v2, `EchoThree` unimplemented.
#[tokio::test]
async fn grpc_exact_method_matching() {
    let rules = format!(
        "[{{matches: [{{method: {{service: {SERVICE}, method: Echo}}}}], backendRefs: [{{name: grpc-infra-backend-v1, port: 8080}}]}}, \
          {{matches: [{{method: {{service: {SERVICE}, method: EchoTwo}}}}], backendRefs: [{{name: grpc-infra-backend-v2, port: 8080}}]}}]"
    );
    let site = GrpcSite::start(&grpc_route("exact-matching", "[{name: same-namespace}]", "[]", &rules)).await;
    assert_eq!(pod(&site.call("example.com", "Echo", &[]).await), PODS[0]);
    assert_eq!(pod(&site.call("example.com", "EchoTwo", &[]).await), PODS[1]);
    assert_eq!(
        site.call("example.com", "EchoThree", &[]).await.status,
        StatusCode::NOT_FOUND
    );
    let status = site.shunt.admin("/gateway").await.json();
    let route = &status["routes"][0];
    assert_eq!(
        (&route["kind"], &route["name"]),
        (&json!("GRPCRoute"), &json!("exact-matching"))
    );
    assert_eq!(route["parents"][0]["conditions"][0]["reason"], "Accepted");
}

/// gRPC metadata a call sends, as (name, value).
type Metadata<'a> = &'a [(&'a str, &'a str)];

/// grpcroute-header-matching: every case of the suite, header names in any case.
#[tokio::test]
async fn grpc_route_header_matching() {
    let rule = |headers: &[&str], pod: &str| {
        let matches: Vec<String> = headers.iter().map(|set| format!("{{headers: [{set}]}}")).collect();
        format!(
            "{{matches: [{}], backendRefs: [{{name: {pod}, port: 8080}}]}}",
            matches.join(", ")
        )
    };
    let rules = [
        rule(&["{name: version, value: one}"], PODS[0]),
        rule(&["{name: version, value: two}"], PODS[1]),
        rule(&["{name: version, value: two}, {name: color, value: orange}"], PODS[0]),
        rule(&["{name: color, value: blue}", "{name: color, value: green}"], PODS[0]),
        rule(&["{name: color, value: red}", "{name: color, value: yellow}"], PODS[1]),
    ];
    let route = grpc_route(
        "grpc-header-matching",
        "[{name: same-namespace}]",
        "[]",
        &format!("[{}]", rules.join(", ")),
    );
    let site = GrpcSite::start(&route).await;
    let cases: [(Metadata<'_>, Option<&str>); 11] = [
        (&[("Version", "one")], Some(PODS[0])),
        (&[("Version", "two")], Some(PODS[1])),
        (&[("Version", "two"), ("Color", "orange")], Some(PODS[0])),
        (&[("Version", "two"), ("Color", "blue")], Some(PODS[1])),
        (&[("Color", "orange")], None),
        (&[("Some-Other-Header", "one")], None),
        (&[("Color", "blue")], Some(PODS[0])),
        (&[("Color", "green")], Some(PODS[0])),
        (&[("Color", "red")], Some(PODS[1])),
        (&[("Color", "yellow")], Some(PODS[1])),
        (&[("Color", "purple")], None),
    ];
    for (metadata, expected) in cases {
        let reply = site.call("example.com", "Echo", metadata).await;
        match expected {
            Some(expected) => assert_eq!(pod(&reply), expected, "{metadata:?}"),
            None => assert_eq!(reply.status, StatusCode::NOT_FOUND, "{metadata:?}"),
        }
    }
}

/// Implementation-specific method matches (the suite has no test): a method of any service, and
/// regular expressions over the service and method, matched on the whole path by the proxy.
#[tokio::test]
async fn grpc_method_of_any_service_and_regular_expressions() {
    let rules = format!(
        "[{{matches: [{{method: {{method: EchoTwo}}}}], backendRefs: [{{name: {}, port: 8080}}]}}, \
          {{matches: [{{method: {{type: RegularExpression, service: '.*\\.GrpcEcho', method: 'Echo(Three)?'}}}}], backendRefs: [{{name: {}, port: 8080}}]}}]",
        PODS[1], PODS[0]
    );
    let site = GrpcSite::start(&grpc_route("methods", "[{name: same-namespace}]", "[]", &rules)).await;
    for (method, expected) in [("EchoTwo", PODS[1]), ("Echo", PODS[0]), ("EchoThree", PODS[0])] {
        assert_eq!(pod(&site.call("example.com", method, &[]).await), expected, "{method}");
    }
    assert_eq!(
        site.call("example.com", "EchoFour", &[]).await.status,
        StatusCode::NOT_FOUND
    );
    let other = Request::post("http://example.com/other.Service/Echo")
        .version(Version::HTTP_2)
        .header(header::CONTENT_TYPE, "application/grpc")
        .body(full(Bytes::new()))
        .expect("a valid call");
    assert_eq!(site.shunt.send_h2(other).await.status, StatusCode::NOT_FOUND);
}

/// grpcroute-listener-hostname-matching: four listeners on port 80 told apart by hostname.
#[tokio::test]
async fn grpc_route_listener_hostname_matching() {
    let listener = |name: &str, hostname: &str| {
        format!(
            "{{name: {name}, port: 80, protocol: HTTP, allowedRoutes: {{namespaces: {{from: Same}}}}, hostname: '{hostname}'}}"
        )
    };
    let gateway = format!(
        "---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\n\
         metadata: {{namespace: {INFRA}, name: grpcroute-listener-hostname-matching}}\n\
         spec: {{gatewayClassName: shunt, listeners: [{}, {}, {}, {}]}}\n",
        listener("listener-1", "bar.com"),
        listener("listener-2", "foo.bar.com"),
        listener("listener-3", "*.bar.com"),
        listener("listener-4", "*.foo.com"),
    );
    let parent = |section: &str| {
        format!("{{name: grpcroute-listener-hostname-matching, namespace: {INFRA}, sectionName: {section}}}")
    };
    let backend = |pod: &str| format!("[{{backendRefs: [{{name: {pod}, port: 8080}}]}}]");
    let routes = [
        grpc_route(
            "backend-v1",
            &format!("[{}]", parent("listener-1")),
            "[]",
            &backend(PODS[0]),
        ),
        grpc_route(
            "backend-v2",
            &format!("[{}]", parent("listener-2")),
            "[]",
            &backend(PODS[1]),
        ),
        grpc_route(
            "backend-v3",
            &format!("[{}, {}]", parent("listener-3"), parent("listener-4")),
            "[]",
            &backend(PODS[2]),
        ),
    ];
    let site = GrpcSite::start(&format!("{gateway}{}", routes.concat())).await;
    for (authority, expected) in [
        ("bar.com", PODS[0]),
        ("foo.bar.com", PODS[1]),
        ("baz.bar.com", PODS[2]),
        ("boo.bar.com", PODS[2]),
        ("multiple.prefixes.bar.com", PODS[2]),
        ("multiple.prefixes.foo.com", PODS[2]),
    ] {
        assert_eq!(pod(&site.call(authority, "Echo", &[]).await), expected, "{authority}");
    }
    for authority in ["foo.com", "no.matching.host"] {
        assert_eq!(
            site.call(authority, "Echo", &[]).await.status,
            StatusCode::NOT_FOUND,
            "{authority}"
        );
    }
}

/// grpcroute-weight: 70/30/0; the pod of weight 0 never answers. (The suite checks the shares
/// within a tolerance; here both weighted pods answer some of 200 calls.)
#[tokio::test]
async fn grpc_route_weight() {
    let rules = format!(
        "[{{backendRefs: [{{name: {}, port: 8080, weight: 70}}, {{name: {}, port: 8080, weight: 30}}, {{name: {}, port: 8080, weight: 0}}]}}]",
        PODS[0], PODS[1], PODS[2]
    );
    let site = GrpcSite::start(&grpc_route(
        "weighted-backends",
        "[{name: same-namespace}]",
        "[]",
        &rules,
    ))
    .await;
    let mut seen = std::collections::BTreeMap::<String, usize>::new();
    for _ in 0..200 {
        *seen
            .entry(pod(&site.call("example.com", "Echo", &[]).await))
            .or_default() += 1;
    }
    assert!(!seen.contains_key(PODS[2]), "{seen:?}");
    assert!(seen.contains_key(PODS[0]) && seen.contains_key(PODS[1]), "{seen:?}");
}

/// A GRPCRoute on an HTTPS listener: h2 over TLS (ALPN) from the caller, h2c to the pod.
#[tokio::test]
async fn grpc_over_tls_reaches_an_h2c_pod() {
    let ca = TestCa::new("gateway-ca");
    let secret = to_yaml(&[mk_tls_secret(
        INFRA,
        "grpc-certificate",
        &ca.issue(&["grpc.example.org"]),
    )]);
    let gateway = format!(
        "---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {{namespace: {INFRA}, name: secure}}\n\
         spec: {{gatewayClassName: shunt, listeners: [{{name: https, port: 443, protocol: HTTPS, \
         tls: {{certificateRefs: [{{name: grpc-certificate}}]}}}}]}}\n"
    );
    let rules = format!("[{{backendRefs: [{{name: {}, port: 8080}}]}}]", PODS[1]);
    let route = grpc_route("secure", "[{name: secure}]", "[grpc.example.org]", &rules);
    let site = GrpcSite::start(&format!("{secret}\n{gateway}{route}")).await;
    let client = ca.client().alpn(&[b"h2"]);
    let mut connection = (client.connect(site.shunt.https, Some("grpc.example.org")).await).expect("a TLS connection");
    assert_eq!(connection.alpn.as_deref(), Some(&b"h2"[..]));
    let reply = connection
        .send(rpc("grpc.example.org", "Echo", &[]))
        .await
        .expect("an answer");
    assert_eq!(pod(&reply), PODS[1]);
    // Not on the plain listener.
    assert_eq!(
        site.call("grpc.example.org", "Echo", &[]).await.status,
        StatusCode::NOT_FOUND
    );
}

/// grpcroute-named-rule: a named rule to v1 (`Echo`) and an unnamed one to v2 (`EchoTwo`),
/// `GRPCRouteNamedRouteRule` claimed.
#[tokio::test]
async fn grpc_route_named_rule() {
    let rules = format!(
        "[{{name: named-rule, matches: [{{method: {{service: {SERVICE}, method: Echo}}}}], backendRefs: [{{name: grpc-infra-backend-v1, port: 8080}}]}}, \
          {{matches: [{{method: {{service: {SERVICE}, method: EchoTwo}}}}], backendRefs: [{{name: grpc-infra-backend-v2, port: 8080}}]}}]"
    );
    let site = GrpcSite::start(&grpc_route(
        "grpc-named-rules",
        "[{name: same-namespace}]",
        "[]",
        &rules,
    ))
    .await;
    assert_eq!(pod(&site.call("example.com", "Echo", &[]).await), PODS[0]);
    assert_eq!(pod(&site.call("example.com", "EchoTwo", &[]).await), PODS[1]);
    let status = site.shunt.admin("/gateway").await.json();
    assert_eq!(status["routes"][0]["parents"][0]["conditions"][0]["reason"], "Accepted");
    let features = status["gatewayClasses"][0]["supportedFeatures"].as_array().cloned();
    assert!(features.expect("features").contains(&json!("GRPCRouteNamedRouteRule")));
}
