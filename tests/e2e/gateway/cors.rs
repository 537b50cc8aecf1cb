//! httproute-cors (v1.6.1): the suite's four routes and each of its cases, with the header
//! values it accepts (any of several, whitespace ignored where it ignores it), the fields it
//! wants absent, and the echo pod reached where it checks the answering namespace.

use http::StatusCode;

use super::*;

const ROUTES: &str = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: cors-multiple-origins-methods-headers, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: same-namespace}]
  rules:
  - filters:
    - type: CORS
      cors:
        allowOrigins: ["https://www.foo.com", "https://*.bar.com"]
        allowMethods: [GET, OPTIONS]
        allowHeaders: [x-header-1, x-header-2]
        exposeHeaders: [x-header-3, x-header-4]
        allowCredentials: true
        maxAge: 3600
    matches: [{path: {type: PathPrefix, value: /cors-1}}]
    backendRefs: [{name: infra-backend-v1, port: 8080}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: cors-wildcard-methods, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: same-namespace}]
  rules:
  - filters: [{type: CORS, cors: {allowOrigins: ["https://www.foo.com"], allowMethods: ["*"]}}]
    matches: [{path: {type: PathPrefix, value: /cors-2}}]
    backendRefs: [{name: infra-backend-v1, port: 8080}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: cors-wildcard-origin, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: same-namespace}]
  rules:
  - filters: [{type: CORS, cors: {allowOrigins: ["*"], allowMethods: [PUT], allowCredentials: false}}]
    matches: [{path: {type: PathPrefix, value: /cors-wildcard-origin}}]
    backendRefs: [{name: infra-backend-v1, port: 8080}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: cors-wildcard-methods-headers, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: same-namespace}]
  rules:
  - filters:
    - {type: CORS, cors: {allowOrigins: ["*"], allowMethods: ["*"], allowHeaders: ["*"], allowCredentials: true}}
    matches: [{path: {type: PathPrefix, value: /cors-wildcard-methods-headers}}]
    backendRefs: [{name: infra-backend-v1, port: 8080}]
  - filters:
    - {type: CORS, cors: {allowOrigins: ["*"], allowMethods: ["*"], allowHeaders: ["*"], allowCredentials: false}}
    matches: [{path: {type: PathPrefix, value: /cors-wildcard-methods-headers-unauth}}]
    backendRefs: [{name: infra-backend-v1, port: 8080}]
"#;

/// One of the suite's cases.
struct Case {
    name: &'static str,
    method: &'static str,
    path: &'static str,
    headers: &'static [(&'static str, &'static str)],
    /// Any of these statuses.
    statuses: &'static [u16],
    /// Each field present with one of the values (several fields joined by `,`).
    valid: &'static [(&'static str, &'static [&'static str])],
    absent: &'static [&'static str],
    ignore_whitespace: bool,
    /// The suite checks the answer came from the echo pod.
    from_pod: bool,
}

const ORIGIN_FOO: (&str, &str) = ("Origin", "https://www.foo.com");
const ORIGIN_BAR: (&str, &str) = ("Origin", "https://www.bar.com");
const ORIGIN_XPTO: (&str, &str) = ("Origin", "https://xpto.www.bar.com");
const ORIGIN_FOOBAR: (&str, &str) = ("Origin", "https://foobar.com");
const ORIGIN_PORT: (&str, &str) = ("Origin", "https://foobar.com:12345");
const ORIGIN_OTHER: (&str, &str) = ("Origin", "https://other.foo.com");
const METHOD_GET: (&str, &str) = ("access-control-request-method", "GET");
const METHOD_POST: (&str, &str) = ("access-control-request-method", "POST");
const METHOD_PUT: (&str, &str) = ("access-control-request-method", "PUT");
const HEADERS_1_2: (&str, &str) = ("access-control-request-headers", "x-header-1, x-header-2");

const OK: &[u16] = &[200, 204];
const HEADERS_EITHER: &[&str] = &["x-header-1, x-header-2", "x-header-2, x-header-1"];
/// The fields of an allowed preflight on `/cors-1`, for `origin`.
const fn cors_1_fields(origin: &'static [&'static str]) -> [(&'static str, &'static [&'static str]); 6] {
    [
        ("access-control-allow-origin", origin),
        ("access-control-allow-methods", &["GET, OPTIONS", "OPTIONS, GET"]),
        ("access-control-allow-headers", HEADERS_EITHER),
        (
            "access-control-expose-headers",
            &["x-header-3, x-header-4", "x-header-4, x-header-3"],
        ),
        ("access-control-max-age", &["3600"]),
        ("access-control-allow-credentials", &["true"]),
    ]
}

const PREFLIGHT: Case = Case {
    name: "",
    method: "OPTIONS",
    path: "/cors-1",
    headers: &[],
    statuses: OK,
    valid: &[],
    absent: &[],
    ignore_whitespace: false,
    from_pod: false,
};
const SIMPLE: Case = Case {
    method: "GET",
    statuses: &[200],
    from_pod: true,
    ..PREFLIGHT
};

const CASES: &[Case] = &[
    Case {
        name: "CORS preflight request from an exact matching origin should be allowed",
        headers: &[ORIGIN_FOO, METHOD_GET, HEADERS_1_2],
        valid: &cors_1_fields(&["https://www.foo.com"]),
        ignore_whitespace: true,
        ..PREFLIGHT
    },
    Case {
        name: "CORS preflight request from a wildcard matching origin should be allowed",
        headers: &[ORIGIN_BAR, METHOD_GET, HEADERS_1_2],
        valid: &cors_1_fields(&["https://www.bar.com"]),
        ignore_whitespace: true,
        ..PREFLIGHT
    },
    Case {
        name: "CORS preflight request from a wildcard matching any number of periods left to '*' should be allowed",
        headers: &[ORIGIN_XPTO, METHOD_GET, HEADERS_1_2],
        valid: &cors_1_fields(&["https://xpto.www.bar.com"]),
        ignore_whitespace: true,
        ..PREFLIGHT
    },
    Case {
        name: "CORS preflight request from a non-matching origin should not be allowed",
        headers: &[ORIGIN_FOOBAR, METHOD_GET],
        statuses: &[200, 204, 403],
        absent: &["access-control-allow-origin"],
        ..PREFLIGHT
    },
    Case {
        name: "Simple request from an exact matching origin should be allowed",
        headers: &[ORIGIN_FOO, METHOD_GET, HEADERS_1_2],
        valid: &[("access-control-allow-origin", &["https://www.foo.com"])],
        ..SIMPLE
    },
    Case {
        name: "Simple request from a wildcard matching origin should be allowed",
        headers: &[ORIGIN_BAR, METHOD_GET, HEADERS_1_2],
        valid: &[("access-control-allow-origin", &["https://www.bar.com"])],
        ..SIMPLE
    },
    Case {
        name: "Simple request from a non-matching origin should not be allowed",
        headers: &[ORIGIN_FOOBAR, METHOD_GET],
        absent: &["access-control-allow-origin"],
        ..SIMPLE
    },
    Case {
        name: "CORS preflight request with POST method should be allowed by allowMethods with wildcard",
        path: "/cors-2",
        headers: &[ORIGIN_FOO, METHOD_POST],
        valid: &[
            ("access-control-allow-methods", &["POST", "*"]),
            ("access-control-allow-origin", &["https://www.foo.com"]),
        ],
        absent: &["access-control-allow-credentials"],
        ..PREFLIGHT
    },
    Case {
        name: "CORS preflight request should not receive access-control-allow-credentials header without access-control-allow-credentials set to true",
        path: "/cors-2",
        headers: &[ORIGIN_FOO, METHOD_POST],
        absent: &["Access-Control-Allow-Credentials"],
        ..PREFLIGHT
    },
    Case {
        name: "CORS preflight request from a wildcard origin should return header with '*' or with the requested Origin",
        path: "/cors-wildcard-origin",
        headers: &[ORIGIN_FOOBAR, METHOD_PUT],
        valid: &[
            ("access-control-allow-origin", &["https://foobar.com", "*"]),
            ("access-control-allow-methods", &["PUT"]),
        ],
        absent: &["Access-Control-Allow-Credentials"],
        ..PREFLIGHT
    },
    Case {
        name: "CORS preflight request from a wildcard origin containing a port should return header with '*' or with the requested Origin",
        path: "/cors-wildcard-origin",
        headers: &[ORIGIN_PORT, METHOD_PUT],
        valid: &[
            ("access-control-allow-origin", &["https://foobar.com:12345", "*"]),
            ("access-control-allow-methods", &["PUT"]),
        ],
        absent: &["Access-Control-Allow-Credentials"],
        ..PREFLIGHT
    },
    Case {
        name: "Request from a wildcard origin containing a port should return header with '*' or with the requested Origin",
        method: "PUT",
        path: "/cors-wildcard-origin",
        headers: &[ORIGIN_PORT],
        valid: &[("access-control-allow-origin", &["https://foobar.com:12345", "*"])],
        ..SIMPLE
    },
    Case {
        name: "Simple request from a wildcard origin should return header with '*' or with the requested Origin",
        method: "PUT",
        path: "/cors-wildcard-origin",
        headers: &[ORIGIN_FOOBAR],
        valid: &[("access-control-allow-origin", &["https://foobar.com", "*"])],
        absent: &["Access-Control-Allow-Credentials"],
        ..SIMPLE
    },
    Case {
        name: "CORS preflight request requesting specific method and headers should be allowed and always echo the origin with allowCredentials set to true",
        path: "/cors-wildcard-methods-headers",
        headers: &[ORIGIN_OTHER, METHOD_PUT, HEADERS_1_2],
        valid: &[
            ("access-control-allow-origin", &["https://other.foo.com"]),
            ("access-control-allow-methods", &["PUT"]),
            ("access-control-allow-headers", HEADERS_EITHER),
            ("access-control-allow-credentials", &["true"]),
        ],
        ignore_whitespace: true,
        ..PREFLIGHT
    },
    Case {
        name: "CORS preflight request requesting specific method and headers should hide access-control-allow-credentials headers with allowCredentials set to false",
        path: "/cors-wildcard-methods-headers-unauth",
        headers: &[ORIGIN_OTHER, METHOD_PUT, HEADERS_1_2],
        valid: &[
            ("access-control-allow-origin", &["https://other.foo.com", "*"]),
            ("access-control-allow-methods", &["PUT", "*"]),
            (
                "access-control-allow-headers",
                &["x-header-1, x-header-2", "x-header-2, x-header-1", "*"],
            ),
        ],
        absent: &["access-control-allow-credentials"],
        ignore_whitespace: true,
        ..PREFLIGHT
    },
    Case {
        name: "CORS request should receive access-control-allow-credentials header with allowCredentials set to true",
        path: "/cors-wildcard-methods-headers",
        headers: &[ORIGIN_OTHER],
        valid: &[
            ("access-control-allow-origin", &["https://other.foo.com"]),
            ("access-control-allow-credentials", &["true"]),
        ],
        ..SIMPLE
    },
    Case {
        name: "CORS request should not receive access-control-allow-credentials header without allowCredentials set to true",
        path: "/cors-wildcard-methods-headers-unauth",
        headers: &[ORIGIN_OTHER],
        valid: &[("access-control-allow-origin", &["https://other.foo.com", "*"])],
        absent: &["access-control-allow-credentials"],
        ..SIMPLE
    },
];

/// httproute-cors: every route accepted with its references resolved, every case answered as
/// the suite accepts, and `HTTPRouteCORS` claimed.
#[tokio::test]
async fn httproute_cors() {
    let site = Conformance::start(ROUTES).await;
    for route in [
        "cors-multiple-origins-methods-headers",
        "cors-wildcard-methods",
        "cors-wildcard-origin",
        "cors-wildcard-methods-headers",
    ] {
        assert_eq!(
            site.parent_conditions(route, "same-namespace").await,
            [
                condition("Accepted", "True", "Accepted"),
                condition("ResolvedRefs", "True", "ResolvedRefs")
            ],
            "{route}"
        );
    }
    let status = site.status().await;
    let features = &status["gatewayClasses"][0]["supportedFeatures"];
    assert!(
        features
            .as_array()
            .expect("features")
            .iter()
            .any(|f| f == "HTTPRouteCORS"),
        "{features}"
    );
    for case in CASES {
        let reply = site
            .shunt
            .send(request(case.method, "example.com", case.path, case.headers))
            .await;
        check(case, &reply);
    }
}

fn check(case: &Case, reply: &Reply) {
    let name = case.name;
    assert!(
        case.statuses.contains(&reply.status.as_u16()),
        "{name}: {}",
        reply.status
    );
    let squeeze = |text: &str| match case.ignore_whitespace {
        true => text.replace(' ', ""),
        false => text.to_string(),
    };
    for (field, accepted) in case.valid {
        let values: Vec<&str> = (reply.headers.get_all(*field).iter())
            .map(|value| value.to_str().expect("a text value"))
            .collect();
        assert!(!values.is_empty(), "{name}: {field} missing from {:?}", reply.headers);
        let got = squeeze(&values.join(","));
        assert!(
            accepted.iter().any(|value| squeeze(value) == got),
            "{name}: {field} is {got:?}, not one of {accepted:?}"
        );
    }
    for field in case.absent {
        assert!(
            !reply.headers.contains_key(*field),
            "{name}: {field} in {:?}",
            reply.headers
        );
    }
    if case.from_pod {
        assert_eq!(reply.status, StatusCode::OK, "{name}");
        assert_eq!(reply.backend(), "infra-backend-v1", "{name}");
    }
}
