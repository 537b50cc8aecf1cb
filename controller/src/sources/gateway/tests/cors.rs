//! `CORS` filters (upstream conformance `httproute-cors`, v1.6.1): the filter becomes the route
//! behaviour ingress-nginx's `enable-cors` gives, in the Fetch style; what the CRD refuses, or
//! shunt cannot send as the description says, refuses the route (`UnsupportedValue`).

use shunt_spec::{AllowOrigin, CorsList, CorsSpec, CorsStyle, OriginPattern};

use super::*;

fn mk_cors_route(cors: &str) -> String {
    let rules = format!("[{{filters: [{{type: CORS, cors: {cors}}}], backendRefs: [{{name: v1, port: 8080}}]}}]");
    mk_route("infra", "web", "same", "[web.example.com]", &rules)
}

/// The route's CORS, or its parent's `Accepted` reason when refused.
fn cors_of(cors: &str) -> Result<CorsSpec, String> {
    let compiled = compiled(&mk_cors_route(cors));
    let accepted = &parent_conditions(&status(&compiled), "web", "same")[0];
    if accepted.1 != "True" {
        return Err(accepted.2.clone());
    }
    let paths = paths(&compiled.table, &exact("web.example.com"));
    Ok(paths[0].options.cors.clone().expect("the rule's CORS"))
}

/// httproute-cors: `cors-multiple-origins-methods-headers`.
#[test]
fn the_conformance_filter_becomes_a_fetch_style_cors_with_its_lists_joined() {
    let cors = "{allowOrigins: ['https://www.foo.com', 'https://*.bar.com'], allowMethods: [GET, OPTIONS], \
                allowHeaders: [x-header-1, x-header-2], exposeHeaders: [x-header-3, x-header-4], \
                allowCredentials: true, maxAge: 3600}";
    let origins = ["https://www.foo.com", "https://*.bar.com"].map(|o| OriginPattern::parse(o).unwrap());
    let expected = CorsSpec {
        allow_origin: AllowOrigin::Origins(origins.to_vec()),
        allow_methods: Some(CorsList::Listed("GET, OPTIONS".into())),
        allow_headers: Some(CorsList::Listed("x-header-1, x-header-2".into())),
        allow_credentials: true,
        expose_headers: Some("x-header-3, x-header-4".into()),
        max_age: 3600,
        style: CorsStyle::Fetch,
    };
    assert_eq!(cors_of(cors), Ok(expected));
}

/// httproute-cors: `cors-wildcard-methods-headers` and `cors-wildcard-methods`.
#[test]
fn stars_are_echoes_and_unset_fields_take_the_crds_defaults() {
    let cors = cors_of("{allowOrigins: ['*'], allowMethods: ['*'], allowHeaders: ['*'], allowCredentials: true}");
    let expected = CorsSpec {
        allow_origin: AllowOrigin::Echo,
        allow_methods: Some(CorsList::Requested),
        allow_headers: Some(CorsList::Requested),
        allow_credentials: true,
        expose_headers: None,
        max_age: 5,
        style: CorsStyle::Fetch,
    };
    assert_eq!(cors, Ok(expected));
    let bare = cors_of("{allowOrigins: ['https://www.foo.com'], allowMethods: ['*']}").unwrap();
    assert_eq!(
        (bare.allow_credentials, bare.allow_headers, bare.max_age),
        (false, None, 5)
    );
    let star = cors_of("{exposeHeaders: ['*']}").unwrap();
    assert_eq!(
        (star.allow_origin, star.expose_headers.as_deref()),
        (AllowOrigin::Origins(vec![]), Some("*"))
    );
}

#[test]
fn what_the_crd_refuses_or_shunt_cannot_send_refuses_the_route() {
    // At the bounds, accepted.
    let many = |n: usize, item: &str| format!("[{}]", vec![item; n].join(", "));
    let bounds = format!(
        "{{allowOrigins: {}, allowHeaders: ['{}'], maxAge: 2147483647}}",
        many(64, "'https://a.example'"),
        "x".repeat(256)
    );
    assert!(cors_of(&bounds).is_ok());
    let refused = [
        "{allowOrigins: ['*', 'https://a.example']}".to_string(),
        "{allowOrigins: ['https://a.example/path']}".to_string(),
        "{allowOrigins: ['ftp://a.example']}".to_string(),
        "{allowOrigins: ['https://a.example:70000']}".to_string(),
        format!("{{allowOrigins: {}}}", many(65, "'https://a.example'")),
        "{allowMethods: [GET, '*']}".to_string(),
        "{allowMethods: [get]}".to_string(),
        format!("{{allowMethods: {}}}", many(10, "GET")),
        "{allowHeaders: ['x a']}".to_string(),
        format!("{{allowHeaders: ['{}']}}", "x".repeat(257)),
        format!("{{exposeHeaders: {}}}", many(65, "x-a")),
        "{exposeHeaders: ['*'], allowCredentials: true}".to_string(),
        "{maxAge: 0}".to_string(),
        "{maxAge: 2147483648}".to_string(),
    ];
    for cors in &refused {
        assert_eq!(cors_of(cors), Err("UnsupportedValue".to_string()), "{cors}");
    }
    // A CORS filter without its `cors`, or two of them.
    let without = "[{filters: [{type: CORS}], backendRefs: [{name: v1, port: 8080}]}]";
    let twice = "[{filters: [{type: CORS, cors: {}}, {type: CORS, cors: {}}], backendRefs: [{name: v1, port: 8080}]}]";
    for rules in [without, twice] {
        let route = compiled(&mk_route("infra", "web", "same", "[web.example.com]", rules));
        assert_eq!(
            parent_conditions(&status(&route), "web", "same")[0],
            condition("Accepted", "False", "UnsupportedValue"),
            "{rules}"
        );
    }
}
