//! The matching contract over real sockets (Gateway API's filters and matches): header edits
//! as the pod and the client see them, on HTTP/1.1 and HTTP/2, path replacement, request
//! conditions, and a split's 500 for a share without a backend.

mod support;

use std::{net::SocketAddr, sync::Arc};

use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::{BodyExt, Empty, Full};
use hyper_util::{
    client::legacy::Client,
    rt::{TokioExecutor, TokioIo},
};
use shunt_proxy::dataplane::{ProxyMetrics, Registry};
use shunt_proxy::spec::{
    BackendSplit, FieldCondition, HeaderEdits, HostMatch, PathReplacement, PrefixReplacement, RequestConditions,
    RouteOptions, SplitChoice, TableSpec, UpstreamProtocol, ValueMatch,
};
use support::{mk_spec, send, start_proxy, start_proxy_with};
use tokio::net::TcpListener;

/// A pod (HTTP/1.1 or h2c, whichever the proxy speaks) that answers with its `name`, the path
/// and query it saw and its `x-*` fields, one `name: value` line each, and sends back
/// `x-pod-set: pod`, `x-pod-remove: pod` and `x-pod-keep: pod`.
async fn start_echo(name: &'static str) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            let service = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| async move {
                let target = req.uri().path_and_query().map_or("", |pq| pq.as_str());
                let mut seen = format!("{name} {target} {:?}\n", req.version());
                for (field, value) in req.headers() {
                    if field.as_str().starts_with("x-") {
                        seen.push_str(&format!("{field}: {}\n", value.to_str().unwrap()));
                    }
                }
                let response = hyper::Response::builder()
                    .header("x-pod-set", "pod")
                    .header("x-pod-remove", "pod")
                    .header("x-pod-keep", "pod")
                    .body(Full::new(Bytes::from(seen)))
                    .unwrap();
                Ok::<_, std::convert::Infallible>(response)
            });
            tokio::spawn(async move {
                let builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
                let _ = builder.serve_connection(TokioIo::new(stream), service).await;
            });
        }
    });
    addr
}

fn mk_edits(set: &[(&str, &str)], add: &[(&str, &str)], remove: &[&str]) -> HeaderEdits {
    let pairs = |list: &[(&str, &str)]| list.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect();
    HeaderEdits {
        set: pairs(set),
        add: pairs(add),
        remove: remove.iter().map(|n| n.to_string()).collect(),
    }
}

/// `mk_spec`'s one route (`Prefix /`, backend `ns/svc:80`) with `options`, on any host (an
/// HTTP/2 request names the proxy's address as its authority).
fn with_options(mut spec: TableSpec, options: RouteOptions) -> TableSpec {
    let vhost = Arc::make_mut(&mut spec.hosts[0]);
    vhost.host = HostMatch::Any;
    vhost.paths[0].options = Arc::new(options);
    spec
}

fn edits_options() -> RouteOptions {
    RouteOptions {
        request_headers: Some(mk_edits(&[("x-set", "route")], &[("x-add", "route")], &["x-remove"])),
        response_headers: Some(mk_edits(
            &[("x-pod-set", "route")],
            &[("x-route-add", "route")],
            &["x-pod-remove"],
        )),
        ..Default::default()
    }
}

/// Sends a request with `x-set`, `x-add` and `x-remove` fields over HTTP/1.1 or HTTP/2:
/// the status, the answer's `x-*` fields as lines, and the body (what the pod saw).
async fn exchange(proxy: SocketAddr, target: &str, h2: bool) -> (StatusCode, String, String) {
    let req = Request::get(format!("http://{proxy}{target}"))
        .header("x-set", "client")
        .header("x-add", "client")
        .header("x-remove", "client")
        .body(Empty::<Bytes>::new())
        .unwrap();
    let client = Client::builder(TokioExecutor::new())
        .http2_only(h2)
        .build_http::<Empty<Bytes>>();
    let response = tokio::time::timeout(std::time::Duration::from_secs(10), client.request(req))
        .await
        .unwrap()
        .unwrap();
    let status = response.status();
    let mut fields: Vec<String> = (response.headers().iter())
        .filter(|(name, _)| name.as_str().starts_with("x-"))
        .map(|(name, value)| format!("{name}: {}", value.to_str().unwrap()))
        .collect();
    fields.sort();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, fields.join("\n"), String::from_utf8_lossy(&body).into_owned())
}

#[tokio::test]
async fn header_edits_reach_the_pod_and_the_client_over_http1_and_h2() {
    let cases = [
        (UpstreamProtocol::Http1, false, "pod /a?b=c HTTP/1.1"),
        (UpstreamProtocol::H2c, true, "pod /a?b=c HTTP/2.0"),
    ];
    for (protocol, h2, pod_line) in cases {
        let pod = start_echo("pod").await;
        let proxy = start_proxy(with_options(mk_spec(protocol, vec![pod]), edits_options())).await;
        let (status, fields, seen) = exchange(proxy, "/a?b=c", h2).await;
        assert_eq!(status, StatusCode::OK, "{seen}");
        let seen: Vec<&str> = seen
            .lines()
            .filter(|line| !line.starts_with("x-forwarded") && !line.starts_with("x-re"))
            .collect();
        assert_eq!(
            seen,
            [pod_line, "x-set: route", "x-add: client", "x-add: route"],
            "h2: {h2}"
        );
        assert_eq!(
            fields, "x-pod-keep: pod\nx-pod-set: route\nx-route-add: route",
            "h2: {h2}"
        );
    }
}

#[tokio::test]
async fn the_proxys_own_answers_carry_no_response_edits() {
    let dead = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let proxy = start_proxy(with_options(
        mk_spec(UpstreamProtocol::Http1, vec![dead]),
        edits_options(),
    ))
    .await;
    let (status, fields, _) = exchange(proxy, "/", false).await;
    assert_eq!(status, StatusCode::BAD_GATEWAY);
    assert_eq!(fields, "");
}

#[tokio::test]
async fn a_replaced_prefix_or_full_path_is_what_the_pod_sees_with_the_query_kept() {
    let pod = start_echo("pod").await;
    let prefix = RouteOptions {
        path_replacement: Some(PathReplacement::Prefix(PrefixReplacement {
            matched: "/prefix/one".into(),
            replacement: "/one".into(),
        })),
        ..Default::default()
    };
    let mut spec = with_options(mk_spec(UpstreamProtocol::Http1, vec![pod]), prefix);
    Arc::make_mut(&mut spec.hosts[0]).paths[0].path = "/prefix/one".into();
    let proxy = start_proxy(spec).await;
    let (status, _, seen) = exchange(proxy, "/prefix/one/two?x=1", false).await;
    assert_eq!(
        (status, seen.lines().next()),
        (StatusCode::OK, Some("pod /one/two?x=1 HTTP/1.1"))
    );
    let full = RouteOptions {
        path_replacement: Some(PathReplacement::Full("/one".into())),
        ..Default::default()
    };
    let proxy = start_proxy(with_options(mk_spec(UpstreamProtocol::Http1, vec![pod]), full)).await;
    let (_, _, seen) = exchange(proxy, "/full/one/two", false).await;
    assert_eq!(seen.lines().next(), Some("pod /one HTTP/1.1"));
}

/// A split over `choices` (backend, weight, its own request edits) on `mk_spec`'s route;
/// every backend named is `ns/svc:80`'s copy at `pod`.
fn split_spec(pod: SocketAddr, choices: Vec<(Option<&str>, u32, Option<HeaderEdits>)>) -> TableSpec {
    let mut spec = mk_spec(UpstreamProtocol::Http1, vec![pod]);
    let template = spec.backends["ns/svc:80"].clone();
    for (backend, _, _) in &choices {
        if let Some(id) = backend {
            spec.backends.insert(id.to_string(), template.clone());
        }
    }
    let choices = choices
        .into_iter()
        .map(|(backend, weight, request_headers)| SplitChoice {
            backend: backend.map(str::to_string),
            weight,
            request_headers,
            response_headers: None,
        })
        .collect();
    let options = RouteOptions {
        request_headers: Some(mk_edits(&[("x-set", "route")], &[], &[])),
        split: Some(BackendSplit { choices }),
        ..Default::default()
    };
    with_options(spec, options)
}

#[tokio::test]
async fn a_split_share_without_a_backend_and_a_split_of_zero_weights_answer_500() {
    let pod = start_echo("pod").await;
    let invalid = split_spec(pod, vec![(None, 1, None), (Some("ns/b:80"), 0, None)]);
    let proxy = start_proxy(invalid).await;
    for _ in 0..3 {
        let (status, body) = support::get(proxy, "/").await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(
            body,
            "500 Internal Server Error: no valid backend for this request's share of the route\n"
        );
    }
    let proxy = start_proxy(split_spec(
        pod,
        vec![(Some("ns/a:80"), 0), (Some("ns/b:80"), 0)]
            .into_iter()
            .map(|(b, w)| (b, w, None))
            .collect(),
    ))
    .await;
    let (status, _) = support::get(proxy, "/").await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
}

#[tokio::test]
async fn a_split_route_counts_for_the_backend_its_share_went_to() {
    let pod = start_echo("pod").await;
    let mut registry = Registry::default();
    let metrics = ProxyMetrics::register_with(&mut registry, Default::default());
    let spec = split_spec(pod, vec![(Some("ns/a:80"), 0, None), (Some("ns/b:80"), 1, None)]);
    let proxy = start_proxy_with(spec, metrics).await;
    assert_eq!(support::get(proxy, "/").await.0, StatusCode::OK);
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
    let counted: Vec<&str> = (text.lines())
        .filter(|line| line.starts_with("shunt_backend_response_seconds_total{"))
        .collect();
    assert_eq!(counted.len(), 1, "{text}");
    assert!(counted[0].contains(r#"backend="ns/b:80""#), "{text}");
}

#[tokio::test]
async fn a_split_shares_edits_follow_the_routes() {
    let pod = start_echo("pod").await;
    let own = mk_edits(&[("x-set", "share")], &[("x-share", "b")], &[]);
    let proxy = start_proxy(split_spec(
        pod,
        vec![(Some("ns/a:80"), 0, None), (Some("ns/b:80"), 5, Some(own))],
    ))
    .await;
    let (status, _, seen) = exchange(proxy, "/", false).await;
    assert_eq!(status, StatusCode::OK, "{seen}");
    assert!(
        seen.contains("x-set: share\n") && seen.contains("x-share: b\n"),
        "{seen}"
    );
    assert!(!seen.contains("x-set: route"), "{seen}");
}

#[tokio::test]
async fn request_conditions_choose_among_paths_sharing_one_prefix() {
    let (one, two) = (start_echo("one").await, start_echo("two").await);
    let mut spec = mk_spec(UpstreamProtocol::Http1, vec![one]);
    spec.backends.insert("ns/two:80".into(), {
        let mut backend = spec.backends["ns/svc:80"].clone();
        backend.endpoints = vec![two].into();
        backend
    });
    let vhost = Arc::make_mut(&mut spec.hosts[0]);
    let mut second = vhost.paths[0].clone();
    second.backend = "ns/two:80".into();
    second.options = Arc::new(RouteOptions {
        conditions: Some(RequestConditions {
            headers: vec![FieldCondition {
                name: "version".into(),
                value: ValueMatch::Exact("two".into()),
            }],
            ..Default::default()
        }),
        ..Default::default()
    });
    // Ranked first: the unconditioned path only takes what the conditioned one leaves.
    vhost.paths[0].options = Arc::new(RouteOptions {
        rank: 1,
        ..Default::default()
    });
    vhost.paths.push(second);
    let proxy = start_proxy(spec).await;
    let ask = |version: &'static str| {
        let req = Request::get(format!("http://{proxy}/x"))
            .header("host", "shop.example.com")
            .header("version", version)
            .body(Empty::<Bytes>::new())
            .unwrap();
        send(req)
    };
    assert!(ask("two").await.1.starts_with("two /x "));
    assert!(ask("one").await.1.starts_with("one /x "));
}
