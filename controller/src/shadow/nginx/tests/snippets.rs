//! Snippet annotations: with ingress-nginx's defaults the Ingress is not served at all; where the
//! ConfigMap drops snippets the rest is served; where it runs them the hosts are refused.

use super::*;

fn mk_config_map(data: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{namespace: ingress-nginx, name: ingress-nginx-controller}}\ndata:\n{}",
        indent(data, 2)
    )
}

fn ingresses() -> Vec<String> {
    vec![
        mk_ingress("plain", "", &mk_rule("a.example.com", &[("/", "Prefix")])),
        mk_ingress(
            "snippet",
            "nginx.ingress.kubernetes.io/configuration-snippet: \"more_set_headers 'X: y';\"",
            &format!(
                "{}- host: b.example.com\n  http:\n    paths:\n    - {{path: /, pathType: Prefix, backend: {{service: {{name: api, port: {{number: 80}}}}}}}}\n",
                mk_rule("a.example.com", &[("/admin", "Prefix")])
            )
            .replace("name: web", "name: api"),
        ),
    ]
}

#[test]
fn with_the_defaults_an_ingress_with_a_snippet_is_served_by_neither() {
    let compiled = compile_nginx(&ingresses());
    assert_eq!(answer(&compiled, PLAIN, "a.example.com", "/admin"), WEB);
    assert_eq!(answer(&compiled, PLAIN, "b.example.com", "/"), "404");
    assert!(compiled.shadow.iter().all(|v| v.host != "b.example.com"));
    assert_eq!(verdict(&compiled, "a.example.com").verdict, Verdict::Identical);
    let reported = compiled
        .diagnostics
        .iter()
        .find(|d| d.name == "snippet")
        .expect("the skipped Ingress is reported");
    assert!(
        reported.message.contains("configuration-snippet"),
        "{}",
        reported.message
    );
}

#[test]
fn at_critical_risk_a_disallowed_snippet_is_dropped_and_an_allowed_one_refuses_the_hosts() {
    let dropped = compile_nginx(&[ingresses(), vec![mk_config_map("annotations-risk-level: Critical")]].concat());
    assert_eq!(answer(&dropped, PLAIN, "a.example.com", "/admin"), API);
    assert_eq!(verdict(&dropped, "b.example.com").verdict, Verdict::Identical);
    let run = compile_nginx(
        &[
            ingresses(),
            vec![mk_config_map(
                "annotations-risk-level: Critical\nallow-snippet-annotations: \"true\"",
            )],
        ]
        .concat(),
    );
    assert_eq!(
        refusals(&run, "b.example.com"),
        ["UnsupportedAnnotation: nginx.ingress.kubernetes.io/configuration-snippet"]
    );
    let lower = compile_nginx(&[ingresses(), vec![mk_config_map("annotations-risk-level: Medium")]].concat());
    assert_eq!(
        refusals(&lower, "a.example.com"),
        ["UnsupportedConfigMapKey: annotations-risk-level"]
    );
}
