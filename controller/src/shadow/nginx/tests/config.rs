//! ingress-nginx's ConfigMap (`--nginx-configmap`): missing means the defaults, known keys
//! change the routes, any other key refuses every host.

use super::*;

fn mk_config_map(namespace: &str, data: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{namespace: {namespace}, name: ingress-nginx-controller}}\ndata:\n{}",
        indent(data, 2)
    )
}

fn mk_tls_ingress() -> String {
    mk_ingress(
        "a",
        "",
        &format!(
            "tls:\n- hosts: [a.example.com]\n  secretName: cert\n{}",
            mk_rule("a.example.com", &[("/", "Prefix")])
        ),
    )
}

#[test]
fn the_configmaps_ssl_redirect_false_turns_the_default_redirect_off() {
    let on = compile_nginx(&[mk_tls_ingress()]);
    assert_eq!(answer(&on, PLAIN, "a.example.com", "/"), "308 https://a.example.com");
    let off = compile_nginx(&[
        mk_tls_ingress(),
        mk_config_map("ingress-nginx", "ssl-redirect: \"false\""),
    ]);
    assert_eq!(answer(&off, PLAIN, "a.example.com", "/"), WEB);
    assert_eq!(refusals(&off, "a.example.com"), Vec::<String>::new());
}

#[test]
fn a_configmap_key_shunt_does_not_reproduce_refuses_every_host() {
    let compiled = compile_nginx(&[
        mk_tls_ingress(),
        mk_config_map(
            "ingress-nginx",
            "use-gzip: \"true\"\nenable-brotli: \"true\"\nworker-processes: \"4\"",
        ),
    ]);
    assert_eq!(
        refusals(&compiled, "a.example.com"),
        [
            "UnsupportedConfigMapKey: enable-brotli",
            "UnsupportedConfigMapKey: use-gzip"
        ]
    );
}

#[test]
fn a_configmap_of_that_name_in_another_namespace_is_not_ingress_nginxs() {
    let compiled = compile_nginx(&[mk_tls_ingress(), mk_config_map("default", "use-gzip: \"true\"")]);
    assert_eq!(refusals(&compiled, "a.example.com"), Vec::<String>::new());
}

#[test]
fn acme_challenge_paths_never_redirect_even_when_the_host_has_a_certificate() {
    let solver = mk_ingress(
        "solver",
        "nginx.ingress.kubernetes.io/force-ssl-redirect: \"true\"",
        &mk_rule(
            "a.example.com",
            &[("/.well-known/acme-challenge/t", "ImplementationSpecific")],
        ),
    );
    let compiled = compile_nginx(&[mk_tls_ingress(), solver.clone()]);
    assert_eq!(
        answer(&compiled, PLAIN, "a.example.com", "/.well-known/acme-challenge/t"),
        WEB
    );
    assert_eq!(
        answer(&compiled, PLAIN, "a.example.com", "/x"),
        "308 https://a.example.com/x"
    );
    let listed = compile_nginx(&[
        mk_tls_ingress(),
        solver,
        mk_config_map("ingress-nginx", "no-tls-redirect-locations: /x, /y"),
    ]);
    assert_eq!(
        answer(&listed, PLAIN, "a.example.com", "/.well-known/acme-challenge/t"),
        "308 https://a.example.com/.well-known/acme-challenge/t"
    );
}

#[test]
fn the_forwarding_keys_refuse_nothing_but_what_shunt_cannot_reproduce() {
    let defaults = "use-forwarded-headers: \"false\"\nenable-real-ip: \"false\"\nforwarded-for-header: X-Forwarded-For\ncompute-full-forwarded-for: \"true\"\nproxy-real-ip-cidr: 10.0.0.0/8";
    let compiled = compile_nginx(&[mk_tls_ingress(), mk_config_map("ingress-nginx", defaults)]);
    assert_eq!(refusals(&compiled, "a.example.com"), Vec::<String>::new());
    let trusting = "use-forwarded-headers: \"true\"\nenable-real-ip: \"true\"\nforwarded-for-header: X-Client-IP";
    let compiled = compile_nginx(&[mk_tls_ingress(), mk_config_map("ingress-nginx", trusting)]);
    assert_eq!(refusals(&compiled, "a.example.com"), Vec::<String>::new());
    for (keys, refused) in [
        (
            "use-forwarded-headers: \"true\"\nuse-proxy-protocol: \"true\"",
            "UnsupportedConfigMapKey: use-proxy-protocol",
        ),
        (
            "proxy-real-ip-cidr: lb.example.com",
            "UnsupportedConfigMapKey: proxy-real-ip-cidr",
        ),
        (
            "proxy-real-ip-cidr: 10.0.0.0/8, ,",
            "InvalidConfigMapKey: proxy-real-ip-cidr",
        ),
        (
            "forwarded-for-header: X_Client_IP",
            "UnsupportedConfigMapKey: forwarded-for-header",
        ),
        (
            "forwarded-for-header: X Client",
            "InvalidConfigMapKey: forwarded-for-header",
        ),
        ("enable-real-ip: \"yes\"", "InvalidConfigMapKey: enable-real-ip"),
    ] {
        let compiled = compile_nginx(&[mk_tls_ingress(), mk_config_map("ingress-nginx", keys)]);
        assert_eq!(refusals(&compiled, "a.example.com"), [refused], "{keys}");
    }
}
