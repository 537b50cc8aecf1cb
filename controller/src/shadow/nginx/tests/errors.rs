//! Custom error pages: `custom-http-errors` (annotation and ConfigMap), `default-backend`,
//! `disable-proxy-intercept-errors` and `--nginx-default-backend` on the routes, and the values
//! that refuse a host.

use proptest::prelude::*;
use shunt_spec::{ErrorLocation, ErrorPages};

use super::{
    super::{annotations::Refusal, errors},
    *,
};

const ERRORS: &str = "shop/errors:80";

/// Services `errors` (first port 80, then 81) and endpoints for it and for `web`.
const ENDPOINTS: &str = r#"apiVersion: v1
kind: Service
metadata: {namespace: shop, name: errors}
spec: {ports: [{name: http, port: 80}, {name: other, port: 81}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {namespace: shop, name: errors-1, labels: {kubernetes.io/service-name: errors}}
addressType: IPv4
endpoints: [{addresses: [10.0.0.9], conditions: {ready: true}}]
ports: [{name: http, port: 8080}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {namespace: shop, name: web-1, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
endpoints: [{addresses: [10.0.0.1], conditions: {ready: true}}]
ports: [{name: http, port: 8080}]"#;

fn mk_config_map(data: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{namespace: ingress-nginx, name: ingress-nginx-controller}}\ndata:\n{}",
        indent(data, 2)
    )
}

/// Ingress `a` on a.example.com (`/` to web:80) with `annotations`, beside `objects`, compiled
/// with `--nginx-default-backend` when `global` names one.
fn compile_with(annotations: &str, objects: &[&str], global: Option<&str>) -> Compiled {
    let mut all = vec![mk_ingress(
        "a",
        annotations,
        &mk_rule("a.example.com", &[("/", "Prefix")]),
    )];
    all.extend(objects.iter().map(|object| object.to_string()));
    let mut options = CompileOptions {
        shadow_classes: vec!["nginx".into()],
        ..CompileOptions::default()
    };
    options.shadow.nginx_default_backend = global.map(|name| ("shop".to_string(), name.to_string()));
    compile(&mk_state(&all), &options)
}

fn pages_of(compiled: &Compiled) -> Option<ErrorPages> {
    let vhost = (compiled.table.hosts.iter())
        .find(|vhost| vhost.host.to_string() == "a.example.com")
        .expect("the host is in the table");
    vhost.paths[0].options.error_pages.clone()
}

fn location() -> ErrorLocation {
    ErrorLocation {
        namespace: "shop".into(),
        ingress_name: "a".into(),
        service_name: "web".into(),
        service_port: "80".into(),
    }
}

#[test]
fn listed_codes_go_to_the_default_backend_services_first_port() {
    let compiled = compile_with(
        "nginx.ingress.kubernetes.io/custom-http-errors: \"503, 404,404\"\nnginx.ingress.kubernetes.io/default-backend: errors",
        &[ENDPOINTS],
        None,
    );
    let expected = ErrorPages {
        codes: vec![404, 503],
        backend: Some(ERRORS.to_string()),
        intercept: true,
        location: location(),
    };
    assert_eq!(pages_of(&compiled), Some(expected));
    assert!(
        compiled.table.backends.contains_key(ERRORS),
        "the error backend is in the table"
    );
    assert_eq!(refusals(&compiled, "a.example.com"), Vec::<String>::new());
}

#[test]
fn without_a_default_backend_with_endpoints_the_global_one_answers_else_the_built_in_404() {
    let codes = "nginx.ingress.kubernetes.io/custom-http-errors: \"404\"";
    let built_in = compile_with(codes, &[ENDPOINTS], None);
    assert_eq!(pages_of(&built_in).map(|pages| pages.backend), Some(None));
    let global = compile_with(codes, &[ENDPOINTS], Some("errors"));
    assert_eq!(
        pages_of(&global).and_then(|pages| pages.backend),
        Some(ERRORS.to_string())
    );
    // A default-backend Service that does not exist leaves the global one.
    let missing = format!("{codes}\nnginx.ingress.kubernetes.io/default-backend: gone");
    let compiled = compile_with(&missing, &[ENDPOINTS], Some("errors"));
    assert_eq!(
        pages_of(&compiled).and_then(|pages| pages.backend),
        Some(ERRORS.to_string())
    );
    assert_eq!(refusals(&compiled, "a.example.com"), Vec::<String>::new());
}

#[test]
fn the_configmaps_codes_apply_where_no_annotation_lists_any_and_interception_follows_the_blocks() {
    let global = mk_config_map("custom-http-errors: \"502,503\"");
    let compiled = compile_with("", &[ENDPOINTS, &global], Some("errors"));
    let pages = pages_of(&compiled).expect("the ConfigMap's codes");
    assert_eq!(
        (pages.codes, pages.backend, pages.intercept),
        (vec![502, 503], Some(ERRORS.to_string()), true)
    );
    // The location's own codes win, with the location's backend; disabled there, the http
    // block's `proxy_intercept_errors on` still holds.
    let own = "nginx.ingress.kubernetes.io/custom-http-errors: \"404\"\nnginx.ingress.kubernetes.io/disable-proxy-intercept-errors: \"true\"";
    let pages = pages_of(&compile_with(own, &[ENDPOINTS, &global], None)).expect("the location's codes");
    assert_eq!((pages.codes, pages.backend, pages.intercept), (vec![404], None, true));
    let pages = pages_of(&compile_with(own, &[ENDPOINTS], None)).expect("the location's codes");
    assert!(!pages.intercept, "interception disabled and none inherited");
    let off = mk_config_map("custom-http-errors: \"503\"\ndisable-proxy-intercept-errors: \"true\"");
    let pages = pages_of(&compile_with("", &[ENDPOINTS, &off], None)).expect("the ConfigMap's codes");
    assert!(!pages.intercept);
    assert_eq!(
        pages_of(&compile_with("", &[ENDPOINTS], None)),
        None,
        "plain routes carry none"
    );
}

#[test]
fn values_ingress_nginx_refuses_or_nginx_cannot_load_refuse_the_host_naming_the_key() {
    for (key, value) in [
        ("custom-http-errors", "404,,500"),
        ("custom-http-errors", "404500"),
        ("custom-http-errors", "600"),
        ("custom-http-errors", "404;500"),
        ("default-backend", "Errors_Page"),
        ("disable-proxy-intercept-errors", "maybe"),
    ] {
        let compiled = compile_with(
            &format!("nginx.ingress.kubernetes.io/{key}: \"{value}\""),
            &[ENDPOINTS],
            None,
        );
        assert_eq!(
            refusals(&compiled, "a.example.com"),
            [format!("InvalidAnnotation: nginx.ingress.kubernetes.io/{key}")],
            "{key}: {value}"
        );
    }
    let listed_3xx = mk_config_map("custom-http-errors: \"304\"");
    let compiled = compile_with("", &[ENDPOINTS, &listed_3xx], None);
    assert_eq!(
        refusals(&compiled, "a.example.com"),
        ["UnsupportedConfigMapKey: custom-http-errors"]
    );
}

#[test]
fn a_default_backend_standing_in_for_a_service_without_endpoints_refuses_the_host() {
    let errors_only: String = ENDPOINTS.split("\n---\n").take(2).collect::<Vec<_>>().join("\n---\n");
    let compiled = compile_with(
        "nginx.ingress.kubernetes.io/default-backend: errors",
        &[&errors_only],
        None,
    );
    let reasons = refusals(&compiled, "a.example.com");
    assert_eq!(reasons.len(), 1, "{reasons:?}");
    assert!(reasons[0].starts_with("UnsupportedAnnotation: nginx.ingress.kubernetes.io/default-backend"));
    // With endpoints, the annotation alone changes nothing.
    let served = compile_with(
        "nginx.ingress.kubernetes.io/default-backend: errors",
        &[ENDPOINTS],
        None,
    );
    assert_eq!(refusals(&served, "a.example.com"), Vec::<String>::new());
    assert_eq!(pages_of(&served), None);
}

proptest! {
    #[test]
    fn listed_codes_in_400_to_599_read_sorted_whatever_the_spacing(
        codes in prop::collection::vec(400u16..=599, 1..12),
        spaces in prop::collection::vec(0usize..3, 12),
        trailing in any::<bool>(),
    ) {
        let mut text = String::new();
        for (at, code) in codes.iter().enumerate() {
            if at > 0 {
                text.push(',');
            }
            text.push_str(&" ".repeat(spaces[at]));
            text.push_str(&code.to_string());
        }
        if trailing {
            text.push(',');
        }
        let mut expected = codes.clone();
        expected.sort_unstable();
        expected.dedup();
        prop_assert_eq!(errors::annotation_codes(&text), Ok(Some(expected)));
    }

    #[test]
    fn a_code_outside_400_to_599_refuses_the_list(
        code in (0u32..100_000).prop_filter("out of range", |c| !(400..=599).contains(c)),
        others in prop::collection::vec(400u16..=599, 0..4),
    ) {
        let mut items: Vec<String> = others.iter().map(u16::to_string).collect();
        items.push(code.to_string());
        prop_assert_eq!(errors::annotation_codes(&items.join(",")), Err(Refusal::Invalid));
    }

    #[test]
    fn whatever_is_written_the_codes_read_are_in_range_or_the_key_refuses(text in "\\PC{0,24}") {
        match errors::annotation_codes(&text) {
            Ok(Some(codes)) => prop_assert!(!codes.is_empty() && codes.iter().all(|c| (400..=599).contains(c))),
            Ok(None) => prop_assert!(text.chars().all(|c| c == ' ')),
            Err(refusal) => prop_assert_eq!(refusal, Refusal::Invalid),
        }
        if let Ok(codes) = errors::configmap_codes(&text) {
            prop_assert!(codes.iter().all(|c| (400..=599).contains(c)));
            prop_assert!(codes.windows(2).all(|pair| pair[0] < pair[1]));
        }
    }
}
