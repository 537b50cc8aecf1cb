//! The ConfigMap's `global-auth-url` on the routes: every location without its own `auth-url`,
//! unless its Ingress says `enable-global-auth: "false"` or its path is a `no-auth-locations`
//! entry.

use super::*;

fn mk_config_map(data: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{namespace: ingress-nginx, name: ingress-nginx-controller}}\ndata:\n{}",
        indent(data, 2)
    )
}

/// The auth URL of each path of `host`, by table path.
fn gates(compiled: &Compiled, host: &str) -> Vec<(String, Option<String>)> {
    let vhost = (compiled.table.hosts.iter())
        .find(|vhost| vhost.host.to_string() == host)
        .expect("the host is in the table");
    let url = |path: &shunt_spec::PathSpec| {
        let auth = path.options.external_auth.as_ref()?;
        Some(format!("{}{}", auth.url.host, auth.url.path_and_query))
    };
    vhost.paths.iter().map(|path| (path.path.clone(), url(path))).collect()
}

const GLOBAL: &str = "global-auth-url: \"http://auth.example/global\"\nglobal-auth-response-headers: X-User";

#[test]
fn every_location_without_its_own_auth_url_gets_the_global_gate() {
    let compiled = compile_nginx(&[
        mk_ingress("a", "", &mk_rule("a.example.com", &[("/", "Prefix")])),
        mk_ingress(
            "own",
            "nginx.ingress.kubernetes.io/auth-url: \"http://own.example/check\"",
            &mk_rule("a.example.com", &[("/own", "Prefix")]),
        ),
        mk_config_map(GLOBAL),
    ]);
    let gated = gates(&compiled, "a.example.com");
    assert!(
        gated.contains(&("/".into(), Some("auth.example/global".into()))),
        "{gated:?}"
    );
    // A location's own auth-url wins.
    assert!(
        gated.contains(&("/own".into(), Some("own.example/check".into()))),
        "{gated:?}"
    );
    let vhost = &compiled.table.hosts[0];
    let global = vhost
        .paths
        .iter()
        .find(|p| p.path == "/")
        .and_then(|p| p.options.external_auth.clone());
    assert_eq!(global.expect("a gate").response_headers, ["x-user"]);
    assert_eq!(refusals(&compiled, "a.example.com"), Vec::<String>::new());
}

#[test]
fn enable_global_auth_false_and_no_auth_locations_go_without_it() {
    let compiled = compile_nginx(&[
        mk_ingress(
            "a",
            "nginx.ingress.kubernetes.io/enable-global-auth: \"false\"",
            &mk_rule("a.example.com", &[("/", "Prefix")]),
        ),
        mk_ingress(
            "b",
            "",
            &mk_rule("b.example.com", &[("/", "Prefix"), ("/public/x", "Prefix")]),
        ),
        mk_config_map(&format!(
            "{GLOBAL}\nno-auth-locations: \"/.well-known/acme-challenge, /public\""
        )),
    ]);
    assert_eq!(gates(&compiled, "a.example.com"), [("/".to_string(), None)]);
    let gated = gates(&compiled, "b.example.com");
    assert!(
        gated.contains(&("/".into(), Some("auth.example/global".into()))),
        "{gated:?}"
    );
    assert!(gated.contains(&("/public/x".into(), None)), "{gated:?}");
}

#[test]
fn the_default_no_auth_locations_exempts_acme_challenges_and_an_empty_list_none() {
    let rule = mk_rule("a.example.com", &[("/.well-known/acme-challenge/", "Prefix")]);
    let path = "/.well-known/acme-challenge/".to_string();
    let default = compile_nginx(&[mk_ingress("a", "", &rule), mk_config_map(GLOBAL)]);
    assert!(gates(&default, "a.example.com").contains(&(path.clone(), None)));
    let empty = compile_nginx(&[
        mk_ingress("a", "", &rule),
        mk_config_map(&format!("{GLOBAL}\nno-auth-locations: \"\"")),
    ]);
    assert!(gates(&empty, "a.example.com").contains(&(path, Some("auth.example/global".into()))));
}

#[test]
fn a_global_key_shunt_cannot_apply_refuses_every_host_by_name() {
    let cases = [
        (
            "global-auth-url: \"http://$host/check\"",
            "UnsupportedConfigMapKey: global-auth-url",
        ),
        (
            "global-auth-url: \"gopher://auth/x\"",
            "InvalidConfigMapKey: global-auth-url",
        ),
        (
            "global-auth-snippet: \"return 200;\"",
            "UnsupportedConfigMapKey: global-auth-snippet",
        ),
        (
            "global-auth-url: http://auth.example/x\nglobal-auth-method: FETCH",
            "InvalidConfigMapKey: global-auth-method",
        ),
        (
            "global-auth-url: http://auth.example/x\nglobal-auth-signin: /start",
            "UnsupportedConfigMapKey: global-auth-signin",
        ),
    ];
    for (data, refusal) in cases {
        let compiled = compile_nginx(&[
            mk_ingress("a", "", &mk_rule("a.example.com", &[("/", "Prefix")])),
            mk_config_map(data),
        ]);
        assert!(
            refusals(&compiled, "a.example.com").contains(&refusal.to_string()),
            "{data}: {:?}",
            refusals(&compiled, "a.example.com")
        );
    }
}
