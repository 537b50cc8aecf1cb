//! What every route of an nginx Ingress carries besides its backend: ingress-nginx's request
//! fields, the body limit (ConfigMap and annotation), HSTS, `upstream-vhost`.

use shunt_spec::{BodyLimit, Forwarding, RouteOptions};

use super::*;

fn mk_config_map(data: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{namespace: ingress-nginx, name: ingress-nginx-controller}}\ndata:\n{}",
        indent(data, 2)
    )
}

/// The options of the route `path` on `host`.
fn options_of(compiled: &Compiled, host: &str, path: &str) -> RouteOptions {
    let vhost = compiled
        .table
        .hosts
        .iter()
        .find(|vhost| vhost.host.to_string() == host)
        .unwrap_or_else(|| panic!("no host {host}"));
    let route = vhost
        .paths
        .iter()
        .find(|p| p.path == path)
        .unwrap_or_else(|| panic!("no path {path}"));
    RouteOptions::clone(&route.options)
}

fn one(annotations: &str, config: Option<&str>) -> Compiled {
    let mut objects = vec![mk_ingress(
        "a",
        annotations,
        &mk_rule("a.example.com", &[("/", "Prefix")]),
    )];
    objects.extend(config.map(mk_config_map));
    compile_nginx(&objects)
}

#[test]
fn defaults_give_the_templates_fields_a_1m_body_limit_and_hsts() {
    let options = options_of(&one("", None), "a.example.com", "/");
    assert_eq!(options.forwarding, Forwarding::Nginx { original_uri: false });
    assert_eq!(options.body_limit, Some(BodyLimit::Bytes(1024 * 1024)));
    assert_eq!(options.hsts.as_deref(), Some("max-age=31536000; includeSubDomains"));
    assert_eq!(options.upstream_host, None);
}

#[test]
fn the_configmap_sets_hsts_the_body_limit_and_x_original_uri() {
    let config = "hsts-max-age: \"600\"\nhsts-include-subdomains: \"false\"\nhsts-preload: \"true\"\nproxy-body-size: 8k\nproxy-add-original-uri-header: \"true\"";
    let compiled = one("", Some(config));
    let options = options_of(&compiled, "a.example.com", "/");
    assert_eq!(options.hsts.as_deref(), Some("max-age=600; preload"));
    assert_eq!(options.body_limit, Some(BodyLimit::Bytes(8 * 1024)));
    assert_eq!(options.forwarding, Forwarding::Nginx { original_uri: true });
    assert_eq!(refusals(&compiled, "a.example.com"), Vec::<String>::new());
    let off = options_of(&one("", Some("hsts: \"false\"")), "a.example.com", "/");
    assert_eq!(off.hsts, None);
}

#[test]
fn the_body_size_annotation_wins_over_the_configmap_and_zero_is_no_limit() {
    let cases = [
        ("0", BodyLimit::Unlimited),
        ("10m", BodyLimit::Bytes(10 << 20)),
        ("512", BodyLimit::Bytes(512)),
        ("2G", BodyLimit::Bytes(2 << 30)),
    ];
    for (value, expected) in cases {
        let annotation = format!("nginx.ingress.kubernetes.io/proxy-body-size: \"{value}\"");
        let options = options_of(&one(&annotation, Some("proxy-body-size: 8k")), "a.example.com", "/");
        assert_eq!(options.body_limit, Some(expected), "{value}");
    }
    for bad in ["1.5m", "m", "-1", "10 m", "1t"] {
        let annotation = format!("nginx.ingress.kubernetes.io/proxy-body-size: \"{bad}\"");
        assert_eq!(
            refusals(&one(&annotation, None), "a.example.com"),
            ["InvalidAnnotation: nginx.ingress.kubernetes.io/proxy-body-size"],
            "{bad}"
        );
    }
}

#[test]
fn upstream_vhost_is_the_pods_host_and_odd_values_are_refused() {
    let compiled = one("nginx.ingress.kubernetes.io/upstream-vhost: internal.svc:8080", None);
    assert_eq!(
        options_of(&compiled, "a.example.com", "/").upstream_host.as_deref(),
        Some("internal.svc:8080")
    );
    let odd = one("nginx.ingress.kubernetes.io/upstream-vhost: \"$host\"", None);
    assert_eq!(
        refusals(&odd, "a.example.com"),
        ["UnsupportedAnnotation: nginx.ingress.kubernetes.io/upstream-vhost"]
    );
}

#[test]
fn connect_and_read_timeouts_at_any_value_become_the_routes_own() {
    let defaults = "nginx.ingress.kubernetes.io/proxy-read-timeout: \"60\"\nnginx.ingress.kubernetes.io/proxy-next-upstream-tries: \"3\"";
    let compiled = one(defaults, None);
    assert_eq!(refusals(&compiled, "a.example.com"), Vec::<String>::new());
    assert_eq!(
        options_of(&compiled, "a.example.com", "/").timeouts,
        None,
        "defaults carry nothing"
    );
    let longer = "nginx.ingress.kubernetes.io/proxy-read-timeout: \"3600\"";
    let compiled = one(longer, Some("proxy-connect-timeout: \"2\"\nproxy-read-timeout: \"30\""));
    assert_eq!(refusals(&compiled, "a.example.com"), Vec::<String>::new());
    let timeouts = options_of(&compiled, "a.example.com", "/")
        .timeouts
        .expect("the route's own");
    assert_eq!(
        (timeouts.connect.as_secs(), timeouts.read.as_secs()),
        (2, 3600),
        "the annotation over the ConfigMap"
    );
    let odd = [
        ("0", "UnsupportedAnnotation"),
        ("-5", "UnsupportedAnnotation"),
        ("5s", "InvalidAnnotation"),
    ];
    for (value, reason) in odd {
        let annotation = format!("nginx.ingress.kubernetes.io/proxy-connect-timeout: \"{value}\"");
        assert_eq!(
            refusals(&one(&annotation, None), "a.example.com"),
            [format!("{reason}: nginx.ingress.kubernetes.io/proxy-connect-timeout")],
            "{value}"
        );
    }
}

#[test]
fn a_send_timeout_is_served_except_on_grpc_and_a_forwarding_configmap_key_is_carried() {
    let longer = "nginx.ingress.kubernetes.io/proxy-send-timeout: \"3600\"";
    assert_eq!(refusals(&one(longer, None), "a.example.com"), Vec::<String>::new());
    let grpc = format!("{longer}\nnginx.ingress.kubernetes.io/backend-protocol: GRPC");
    assert_eq!(
        refusals(&one(&grpc, None), "a.example.com"),
        ["UnsupportedAnnotation: nginx.ingress.kubernetes.io/proxy-send-timeout"]
    );
    let config = one("", Some("proxy-read-timeout: \"60\"\nuse-forwarded-headers: \"true\""));
    assert_eq!(refusals(&config, "a.example.com"), Vec::<String>::new());
    let carried = options_of(&config, "a.example.com", "/").nginx_forwarding;
    assert!(carried.is_some_and(|keys| keys.pass_forwarded && keys.real_ip.is_some()));
    // ingress-nginx's defaults: nothing on the route.
    let plain = one("", Some("use-forwarded-headers: \"false\""));
    assert_eq!(options_of(&plain, "a.example.com", "/").nginx_forwarding, None);
}

#[test]
fn public_source_ranges_are_judged_on_the_callers_address_and_allowlist_wins_over_its_old_name() {
    let annotations = "nginx.ingress.kubernetes.io/allowlist-source-range: 203.0.113.0/24\nnginx.ingress.kubernetes.io/whitelist-source-range: 198.51.100.0/24\nnginx.ingress.kubernetes.io/denylist-source-range: 203.0.113.9";
    let compiled = one(annotations, None);
    let ranges = options_of(&compiled, "a.example.com", "/")
        .source_ranges
        .expect("a rule");
    assert_eq!(ranges.allow, ["203.0.113.0/24".parse::<ipnet::IpNet>().unwrap()]);
    assert_eq!(ranges.deny, ["203.0.113.9/32".parse::<ipnet::IpNet>().unwrap()]);
    assert_eq!(refusals(&compiled, "a.example.com"), Vec::<String>::new());
    // cert-manager's solver: every address, so no rule at all.
    let solver = one(
        "nginx.ingress.kubernetes.io/whitelist-source-range: 0.0.0.0/0,::/0",
        None,
    );
    assert_eq!(options_of(&solver, "a.example.com", "/").source_ranges, None);
}

#[test]
fn next_upstream_keys_at_any_value_become_the_routes_own_retry_rules() {
    let defaults = "nginx.ingress.kubernetes.io/proxy-next-upstream: \"error timeout\"";
    assert_eq!(
        options_of(&one(defaults, None), "a.example.com", "/").next_upstream,
        None
    );
    let off = "nginx.ingress.kubernetes.io/proxy-next-upstream: \"off\"";
    let compiled = one(off, None);
    assert_eq!(refusals(&compiled, "a.example.com"), Vec::<String>::new());
    let rule = options_of(&compiled, "a.example.com", "/").next_upstream;
    assert_eq!(rule, Some(shunt_spec::NextUpstream::OFF));
    let statuses = "nginx.ingress.kubernetes.io/proxy-next-upstream: \"error http_503\"\nnginx.ingress.kubernetes.io/proxy-next-upstream-tries: \"2\"";
    let configmap = "proxy-next-upstream-timeout: \"7\"\nretry-non-idempotent: \"true\"";
    let compiled = one(statuses, Some(configmap));
    assert_eq!(refusals(&compiled, "a.example.com"), Vec::<String>::new());
    let rule = options_of(&compiled, "a.example.com", "/")
        .next_upstream
        .expect("the route's own");
    assert_eq!(
        (
            rule.error,
            rule.timeout,
            rule.statuses,
            rule.tries,
            rule.within_secs,
            rule.non_idempotent
        ),
        (true, false, vec![503], 2, Some(7), true),
        "the annotations over the ConfigMap, which fills in the rest"
    );
    for (value, reason) in [("0", "UnsupportedAnnotation"), ("two", "InvalidAnnotation")] {
        let annotation = format!("nginx.ingress.kubernetes.io/proxy-next-upstream-tries: \"{value}\"");
        assert_eq!(
            refusals(&one(&annotation, None), "a.example.com"),
            [format!(
                "{reason}: nginx.ingress.kubernetes.io/proxy-next-upstream-tries"
            )],
        );
    }
}

#[test]
fn external_auth_under_use_forwarded_headers_is_refused_where_nginxs_auth_request_differs() {
    let auth = "nginx.ingress.kubernetes.io/auth-url: http://auth.shop.svc.cluster.local/check";
    let passed = "use-forwarded-headers: \"true\"";
    assert_eq!(
        refusals(&one(auth, Some(passed)), "a.example.com"),
        Vec::<String>::new()
    );
    let refused = ["UnsupportedConfigMapKey: use-forwarded-headers (with nginx.ingress.kubernetes.io/auth-url)"];
    let full = "use-forwarded-headers: \"true\"\ncompute-full-forwarded-for: \"true\"";
    assert_eq!(refusals(&one(auth, Some(full)), "a.example.com"), refused);
    let method = format!("{auth}\nnginx.ingress.kubernetes.io/auth-method: POST");
    assert_eq!(refusals(&one(&method, Some(passed)), "a.example.com"), refused);
    // The realip rule alone changes only the address, which shunt's auth request follows.
    let real_ip = "enable-real-ip: \"true\"";
    assert_eq!(
        refusals(&one(&method, Some(real_ip)), "a.example.com"),
        Vec::<String>::new()
    );
}
