//! Names a host's `server` answers besides its own: `from-to-www-redirect`'s other name (a
//! redirect server) and `server-alias` (the same locations).

use super::*;

const WWW: &str = "nginx.ingress.kubernetes.io/from-to-www-redirect: \"true\"";

fn mk_ingress_on(name: &str, annotations: &str, host: &str) -> String {
    mk_ingress(name, annotations, &mk_rule(host, &[("/", "Prefix")]))
}

#[test]
fn from_to_www_redirects_the_other_name_both_ways_with_the_pods_port_and_no_ending_slash() {
    let compiled = compile_nginx(&[
        mk_ingress_on("bare", WWW, "shop.example.com"),
        mk_ingress_on("www", WWW, "www.blog.example.com"),
    ]);
    assert_eq!(
        answer(&compiled, PLAIN, "www.shop.example.com", "/cart/?id=1"),
        "308 http://shop.example.com:80/cart/?id=1"
    );
    assert_eq!(
        answer(&compiled, PLAIN, "www.shop.example.com", "/cart/"),
        "308 http://shop.example.com:80/cart"
    );
    assert_eq!(
        answer(&compiled, TLS, "blog.example.com", "/"),
        "308 https://www.blog.example.com:443"
    );
    let other = verdict(&compiled, "www.shop.example.com");
    assert_eq!(other.verdict, crate::shadow::Verdict::Identical);
    assert_eq!(other.listeners, ["http"], "no certificate covers it");
    assert_eq!(other.ingresses, ["shop/bare"]);
    assert_eq!(answer(&compiled, PLAIN, "shop.example.com", "/"), "shop/web:80");
}

#[test]
fn no_redirect_server_where_the_other_name_is_an_ingress_host_and_a_wildcard_is_refused() {
    let compiled = compile_nginx(&[
        mk_ingress_on("bare", WWW, "shop.example.com"),
        mk_ingress_on("www", "", "www.shop.example.com"),
        mk_ingress_on("wild", WWW, "\"*.example.net\""),
    ]);
    assert_eq!(answer(&compiled, PLAIN, "www.shop.example.com", "/"), "shop/web:80");
    assert_eq!(refusals(&compiled, "www.shop.example.com"), Vec::<String>::new());
    assert_eq!(
        refusals(&compiled, "*.example.net"),
        [
            "UnsupportedAnnotation: nginx.ingress.kubernetes.io/from-to-www-redirect on a wildcard host (nginx would not load www.*.example.net)"
        ]
    );
}

#[test]
fn an_alias_serves_its_hosts_locations_unless_it_is_another_hosts_name() {
    let alias = "nginx.ingress.kubernetes.io/server-alias: \"alias.example.com, b.example.com\"";
    let compiled = compile_nginx(&[
        mk_ingress_on("a", alias, "a.example.com"),
        mk_ingress("b", "", &mk_rule("b.example.com", &[("/b", "Exact")])),
    ]);
    assert_eq!(refusals(&compiled, "alias.example.com"), Vec::<String>::new());
    assert_eq!(answer(&compiled, PLAIN, "alias.example.com", "/x"), "shop/web:80");
    // b.example.com keeps its own server: the alias is dropped, as controller.go drops it.
    assert_eq!(answer(&compiled, PLAIN, "b.example.com", "/x"), "404");
    assert_eq!(verdict(&compiled, "alias.example.com").ingresses, ["shop/a"]);
}

#[test]
fn an_alias_covered_by_its_hosts_certificate_is_served_and_redirected_like_it() {
    // The fixture's certificate names a.example.com only: the alias has no HTTPS, and no redirect.
    let alias = "nginx.ingress.kubernetes.io/server-alias: \"other.example.com\"";
    let spec = format!(
        "tls:\n- hosts: [a.example.com]\n  secretName: cert\n{}",
        mk_rule("a.example.com", &[("/", "Prefix")])
    );
    let compiled = compile_nginx(&[mk_ingress("a", alias, &spec)]);
    assert_eq!(
        answer(&compiled, PLAIN, "a.example.com", "/x"),
        "308 https://a.example.com/x"
    );
    assert_eq!(answer(&compiled, PLAIN, "other.example.com", "/x"), "shop/web:80");
    assert_eq!(verdict(&compiled, "other.example.com").listeners, ["http"]);
}

#[test]
fn an_alias_gets_a_dns_rule_only_where_the_policy_lets_any_host_have_one() {
    let alias = "nginx.ingress.kubernetes.io/server-alias: \"web.shop.svc.cluster.local, alias.example.com\"";
    let compiled = compile_nginx(&[mk_ingress_on("a", alias, "a.example.com")]);
    let served = crate::dns::served_hosts(&compiled.table);
    let plan = crate::dns::DnsPolicy::new("cluster.local", Vec::new(), Vec::new()).plan(&served);
    let rewritten: Vec<String> = plan.rewrite.iter().map(ToString::to_string).collect();
    assert_eq!(rewritten, ["a.example.com", "alias.example.com"]);
    let refused: Vec<String> = plan.refused.iter().map(|r| r.host.to_string()).collect();
    assert_eq!(
        refused,
        ["web.shop.svc.cluster.local"],
        "a cluster name is never captured"
    );
}
