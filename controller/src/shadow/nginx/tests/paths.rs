//! Paths as ingress-nginx turns them into locations: ImplementationSpecific is Prefix, Prefix
//! is element-wise, a Prefix ending in '/' is that character prefix, Exact is '=', longest wins.

use super::*;

/// `(path, pathType)` pairs of one rule.
type Paths<'p> = &'p [(&'p str, &'p str)];

/// What each request gets on a host whose one Ingress names `paths`.
fn answers(paths: &[(&str, &str)], requests: &[&str]) -> Vec<String> {
    let compiled = compile_nginx(&[mk_ingress("a", "", &mk_rule("a.example.com", paths))]);
    requests
        .iter()
        .map(|request| answer(&compiled, TLS, "a.example.com", request))
        .collect()
}

#[test]
fn path_table_matches_the_locations_ingress_nginx_writes() {
    // (paths, request, expected): `web` routes every listed path.
    let cases: &[(Paths<'_>, &str, &str)] = &[
        (&[("/foo", "ImplementationSpecific")], "/foo", WEB),
        (&[("/foo", "ImplementationSpecific")], "/foo/bar", WEB),
        (&[("/foo", "ImplementationSpecific")], "/foobar", "404"),
        (&[("/foo", "Prefix")], "/foo", WEB),
        (&[("/foo", "Prefix")], "/foo/", WEB),
        (&[("/foo", "Prefix")], "/foobar", "404"),
        // nginx's own rule for a location ending in '/' (the `proxy_pass` auto-redirect).
        (&[("/foo/", "Prefix")], "/foo", "301 https://a.example.com/foo/"),
        (&[("/foo/", "Prefix")], "/foo/", WEB),
        (&[("/foo/", "Prefix")], "/foo/x", WEB),
        (&[("/foo", "Exact")], "/foo", WEB),
        (&[("/foo", "Exact")], "/foo/", "404"),
        (&[("/", "Prefix")], "/anything/at/all", WEB),
    ];
    for (paths, request, expected) in cases {
        assert_eq!(answers(paths, &[request]), [*expected], "{paths:?} {request}");
    }
}

#[test]
fn the_longest_path_wins_across_ingresses_and_exact_beats_prefix() {
    let web = mk_ingress(
        "a",
        "",
        &mk_rule("a.example.com", &[("/", "Prefix"), ("/api/v1", "Exact")]),
    );
    let api = mk_ingress(
        "b",
        "",
        &mk_rule("a.example.com", &[("/api", "Prefix")]).replace("web", "api"),
    );
    let compiled = compile_nginx(&[web, api]);
    assert_eq!(answer(&compiled, TLS, "a.example.com", "/api/v2"), API);
    assert_eq!(answer(&compiled, TLS, "a.example.com", "/api/v1"), WEB);
    assert_eq!(answer(&compiled, TLS, "a.example.com", "/apix"), WEB);
    assert_eq!(verdict(&compiled, "a.example.com").ingresses, ["shop/a", "shop/b"]);
}

#[test]
fn a_path_a_class_of_ours_routes_refuses_the_nginx_host() {
    let ours = mk_ingress("mine", "", &mk_rule("a.example.com", &[("/api", "Prefix")]))
        .replace("ingressClassName: nginx", "ingressClassName: shunt");
    let theirs = mk_ingress("theirs", "", &mk_rule("a.example.com", &[("/api", "Prefix")]));
    let compiled = compile_nginx(&[ours, theirs]);
    assert_eq!(
        refusals(&compiled, "a.example.com"),
        ["Conflict: path /api is routed by shop/mine"]
    );
}

#[test]
fn cert_managers_http01_solver_ingress_is_served_beside_the_hosts_own() {
    let app = mk_ingress("app", "", &mk_rule("a.example.com", &[("/", "Prefix")]));
    let solver = r#"
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  namespace: shop
  name: cm-acme-http-solver-x
  annotations:
    kubernetes.io/ingress.class: nginx
    nginx.ingress.kubernetes.io/whitelist-source-range: 0.0.0.0/0,::/0
spec:
  rules:
  - host: a.example.com
    http:
      paths:
      - path: /.well-known/acme-challenge/token
        pathType: ImplementationSpecific
        backend: {service: {name: api, port: {number: 80}}}
"#;
    let compiled = compile_nginx(&[app, solver.to_string()]);
    assert_eq!(
        answer(&compiled, PLAIN, "a.example.com", "/.well-known/acme-challenge/token"),
        API
    );
    assert_eq!(answer(&compiled, PLAIN, "a.example.com", "/"), WEB);
    assert_eq!(refusals(&compiled, "a.example.com"), Vec::<String>::new());
}
