//! The TkeServiceConfig an Ingress names, read: fields that change only which pod answers, or
//! when, leave the host identical; session persistence is the cookie the CLB inserts on that
//! rule; a backend protocol other than HTTP and fields shunt does not know refuse the hosts they
//! touch, with the field named. Shaped like Tencent's `jetty-ingress-config` example (457/45700).

use shunt_spec::{AffinityMode, CookieAffinity};

use super::*;
use crate::shadow::IngressKind;

/// The cookie stickiness of the route a request for `host` + `path` on listener `tls` reaches.
fn session_at(compiled: &Compiled, tls: bool, host: &str, path: &str) -> Option<CookieAffinity> {
    let (table, _) = RouteTable::build(
        Arc::new(compiled.table.clone()),
        |id| Arc::new(Upstream::new(id, Default::default(), vec![], Default::default())),
        |_, _| RouteStats::detached(),
    );
    let route = table.lookup_on(host, path, tls).expect("a route");
    route
        .rules
        .balance
        .as_ref()
        .and_then(|balance| balance.affinity.clone())
}

/// The CLB's session cookie for a session of `seconds`.
fn clb_cookie(seconds: i64) -> CookieAffinity {
    CookieAffinity {
        mode: AffinityMode::Persistent,
        name: "tgw_l7_route".into(),
        set_cookie: true,
        path: "/".into(),
        domain: None,
        max_age: None,
        expires: Some(seconds),
        same_site: None,
        conditional_same_site_none: false,
        secure: false,
        change_on_failure: false,
    }
}

/// An Ingress naming `shop-config` for its host and its default domain.
const SHOP: &str = r#"
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  namespace: shop
  name: shop
  annotations:
    kubernetes.io/ingress.class: qcloud
    ingress.cloud.tencent.com/tke-service-config: shop-config
spec:
  rules:
  - http:
      paths:
      - {path: /health, pathType: ImplementationSpecific, backend: {service: {name: api, port: {number: 80}}}}
  - host: shop.example.com
    http:
      paths:
      - {path: /, pathType: ImplementationSpecific, backend: {service: {name: web, port: {number: 80}}}}
"#;

/// `shop-config` with `RULE` as the segment for `shop.example.com/` on HTTP:80.
fn mk_config(name: &str, rule: &str) -> String {
    format!(
        r#"
apiVersion: cloud.tencent.com/v1alpha1
kind: TkeServiceConfig
metadata: {{namespace: shop, name: {name}}}
spec:
  loadBalancer:
    l7Listeners:
    - protocol: HTTP
      port: 80
      keepaliveEnable: 1
      defaultServer: shop.example.com
      domains:
      - domain: ""
        rules:
        - url: /health
          healthCheck: {{enable: false}}
      - domain: shop.example.com
        rules:
        - url: /
{rule}
"#
    )
}

const HEALTH_AND_SCHEDULER: &str = "          scheduler: LEAST_CONN\n          forwardType: HTTP\n          healthCheck: {enable: true, intervalTime: 10, healthNum: 2, unHealthNum: 2, httpCheckPath: /checkHealth, httpCheckMethod: HEAD}";
const SESSION: &str = "          session: {enable: true, sessionExpireTime: 3600}\n          scheduler: WRR";

fn compile_with(ingress: &str, config: &str) -> Compiled {
    compile_tke(&format!("{ingress}\n---\n{config}"))
}

#[test]
fn health_checks_a_scheduler_and_keepalive_change_no_answer() {
    let compiled = compile_with(SHOP, &mk_config("shop-config", HEALTH_AND_SCHEDULER));
    assert_eq!(verdict(&compiled, "shop.example.com").verdict, Verdict::Identical);
    assert_eq!(answer(&compiled, PLAIN, "shop.example.com", "/"), WEB);
    assert_eq!(compiled.shadow_ingresses[0].reasons, Vec::<String>::new());
}

#[test]
fn session_persistence_is_the_clb_cookie_on_its_rule_only() {
    let compiled = compile_with(SHOP, &mk_config("shop-config", SESSION));
    assert_eq!(verdict(&compiled, "shop.example.com").verdict, Verdict::Identical);
    assert_eq!(
        session_at(&compiled, PLAIN, "shop.example.com", "/"),
        Some(clb_cookie(3600))
    );
    // The default domain's rule has no session: neither cookie nor reason there.
    assert_eq!(session_at(&compiled, PLAIN, "other.example.com", "/health"), None);
    assert_eq!(compiled.shadow_ingresses[0].reasons, Vec::<String>::new());
}

#[test]
fn a_session_without_cookie_changes_no_answer() {
    for rule in [
        // IP_HASH keeps sessions by source address, LEAST_CONN keeps none (214/6154).
        "          session: {enable: true, sessionExpireTime: 600}\n          scheduler: IP_HASH",
        "          session: {enable: true, sessionExpireTime: 600}\n          scheduler: LEAST_CONN",
        "          session: {enable: false}",
        "          session: {sessionExpireTime: 600}",
    ] {
        let compiled = compile_with(SHOP, &mk_config("shop-config", rule));
        assert_eq!(
            verdict(&compiled, "shop.example.com").verdict,
            Verdict::Identical,
            "{rule}"
        );
        assert_eq!(session_at(&compiled, PLAIN, "shop.example.com", "/"), None, "{rule}");
    }
}

#[test]
fn a_session_the_clb_would_not_take_refuses_the_host_naming_the_field() {
    for (rule, said) in [
        (
            "          session: {enable: true, sessionExpireTime: 10}",
            "from 30 to 3600",
        ),
        (
            "          session: {enable: true, sessionExpireTime: \"1h\"}",
            "from 30 to 3600",
        ),
        ("          session: {enable: true}", "without sessionExpireTime"),
        (
            "          session: {enable: \"yes\", sessionExpireTime: 60}",
            "is not a boolean",
        ),
    ] {
        let compiled = compile_with(SHOP, &mk_config("shop-config", rule));
        let verdict = verdict(&compiled, "shop.example.com");
        assert_eq!(verdict.verdict, Verdict::Refused, "{rule}");
        assert!(
            verdict.reasons[0].starts_with("TkeServiceConfig: session (shop/shop-config shop.example.com/): ")
                && verdict.reasons[0].contains(said),
            "{rule}: {verdict:?}"
        );
    }
}

#[test]
fn a_backend_protocol_other_than_http_and_unknown_fields_are_refused() {
    for (rule, field) in [
        ("          forwardType: HTTPS", "forwardType \"HTTPS\""),
        ("          forwardType: GRPC", "forwardType \"GRPC\""),
        ("          scheduler: FASTEST", "rules[].scheduler \"FASTEST\""),
        ("          http2: true", "rules[].http2 true"),
    ] {
        let compiled = compile_with(SHOP, &mk_config("shop-config", rule));
        let verdict = verdict(&compiled, "shop.example.com");
        assert_eq!(reasons(&compiled, "shop.example.com"), ["TkeServiceConfig"], "{rule}");
        assert!(verdict.reasons[0].contains(field), "{rule}: {verdict:?}");
    }
}

#[test]
fn a_segment_for_another_rule_or_listener_changes_nothing_here() {
    let other = mk_config("shop-config", SESSION).replace("- url: /\n", "- url: /other\n");
    let compiled = compile_with(SHOP, &other);
    assert_eq!(verdict(&compiled, "shop.example.com").verdict, Verdict::Identical);
    let https =
        mk_config("shop-config", SESSION).replace("protocol: HTTP\n      port: 80", "protocol: HTTPS\n      port: 443");
    let compiled = compile_with(SHOP, &https);
    assert_eq!(verdict(&compiled, "shop.example.com").verdict, Verdict::Identical);
}

#[test]
fn a_path_served_on_both_listeners_with_one_session_only_is_refused() {
    let both = SHOP.replace(
        "    ingress.cloud.tencent.com/tke-service-config: shop-config\n",
        "    ingress.cloud.tencent.com/tke-service-config: shop-config\n    kubernetes.io/ingress.rule-mix-both: \"true\"\n",
    );
    let compiled = compile_with(&both, &mk_config("shop-config", SESSION));
    let reasons = &verdict(&compiled, "shop.example.com").reasons;
    assert!(
        reasons.contains(&"TkeServiceConfig: session on shop.example.com/ differs between HTTP and HTTPS, which shunt routes as one path".to_string()),
        "{reasons:?}"
    );
}

#[test]
fn a_default_domain_session_is_the_catch_alls_not_a_host_with_its_own_rules() {
    let config = mk_config("shop-config", HEALTH_AND_SCHEDULER).replace(
        "healthCheck: {enable: false}",
        "session: {enable: true, sessionExpireTime: 30}",
    );
    let compiled = compile_with(SHOP, &config);
    assert_eq!(verdict(&compiled, "shop.example.com").verdict, Verdict::Identical);
    assert_eq!(session_at(&compiled, PLAIN, "shop.example.com", "/"), None);
    assert_eq!(
        session_at(&compiled, PLAIN, "other.example.com", "/health"),
        Some(clb_cookie(30))
    );
    let catch_all = &compiled.shadow_ingresses[0];
    assert_eq!(catch_all.kind, IngressKind::CatchAll);
    assert_eq!(catch_all.reasons, Vec::<String>::new());
}

#[test]
fn a_host_the_default_domain_serves_on_a_listener_takes_its_session() {
    // HTTPS-only host rules (rule-mix with an empty http-rules list): on HTTP the host falls back
    // to the default domain's rules, and so to their session.
    let ingress = SHOP.replace(
        "    ingress.cloud.tencent.com/tke-service-config: shop-config\n",
        "    ingress.cloud.tencent.com/tke-service-config: shop-config\n    kubernetes.io/ingress.rule-mix: \"true\"\n    kubernetes.io/ingress.http-rules: '[{\"path\":\"/health\",\"backend\":{\"serviceName\":\"api\",\"servicePort\":\"80\"}}]'\n",
    );
    let config = mk_config("shop-config", "          scheduler: WRR").replace(
        "healthCheck: {enable: false}",
        "session: {enable: true, sessionExpireTime: 30}",
    );
    let compiled = compile_with(&ingress, &config);
    assert_eq!(
        session_at(&compiled, PLAIN, "shop.example.com", "/health"),
        Some(clb_cookie(30))
    );
}

#[test]
fn a_named_config_that_does_not_exist_refuses_the_ingress() {
    let compiled = compile_tke(SHOP);
    assert_eq!(
        verdict(&compiled, "shop.example.com").reasons,
        [
            "TkeServiceConfigNotFound: ingress.cloud.tencent.com/tke-service-config names shop/shop-config, which does not exist: what the CLB then keeps is unknown"
        ]
    );
    assert_eq!(compiled.shadow_ingresses[0].reasons.len(), 1);
}

#[test]
fn tke_rejects_both_annotations_together_and_a_reserved_name() {
    let both = SHOP.replace(
        "    ingress.cloud.tencent.com/tke-service-config: shop-config\n",
        "    ingress.cloud.tencent.com/tke-service-config: shop-config\n    ingress.cloud.tencent.com/tke-service-config-auto: \"true\"\n",
    );
    let compiled = compile_with(&both, &mk_config("shop-config", HEALTH_AND_SCHEDULER));
    assert_eq!(reasons(&compiled, "shop.example.com"), ["TkeRejects"]);
    let reserved = SHOP.replace("shop-config", "mine-auto-ingress-config");
    let compiled = compile_with(&reserved, &mk_config("mine-auto-ingress-config", HEALTH_AND_SCHEDULER));
    assert_eq!(reasons(&compiled, "shop.example.com"), ["TkeRejects"]);
}

#[test]
fn the_auto_config_is_read_when_tke_created_it() {
    let auto = SHOP.replace(
        "ingress.cloud.tencent.com/tke-service-config: shop-config",
        "ingress.cloud.tencent.com/tke-service-config-auto: \"true\"",
    );
    // Not created yet: TKE creates it from the listeners as they are, which shunt reproduces.
    assert_eq!(
        verdict(&compile_tke(&auto), "shop.example.com").verdict,
        Verdict::Identical
    );
    let compiled = compile_with(
        &auto,
        &mk_config("shop-auto-ingress-config", "          forwardType: HTTPS"),
    );
    assert_eq!(reasons(&compiled, "shop.example.com"), ["TkeServiceConfig"]);
}

#[test]
fn a_config_that_does_not_parse_refuses_the_ingress() {
    let config = "apiVersion: cloud.tencent.com/v1alpha1\nkind: TkeServiceConfig\nmetadata: {namespace: shop, name: shop-config}\nspec: {loadBalancer: {l7Listeners: {protocol: HTTP}}}\n";
    let compiled = compile_with(SHOP, config);
    assert_eq!(reasons(&compiled, "shop.example.com"), ["InvalidTkeServiceConfig"]);
}

mod properties {
    use proptest::prelude::*;
    use serde_json::Value;

    use crate::{
        objects::TkeServiceConfig,
        shadow::qcloud::service_config::{Named, ServiceConfigs},
    };

    /// JSON of any shape, with the keys a TkeServiceConfig uses among random ones.
    fn json() -> impl Strategy<Value = Value> {
        let key = prop_oneof![
            Just("loadBalancer".to_string()),
            Just("l7Listeners".to_string()),
            Just("protocol".to_string()),
            Just("port".to_string()),
            Just("domains".to_string()),
            Just("domain".to_string()),
            Just("rules".to_string()),
            Just("url".to_string()),
            Just("session".to_string()),
            Just("scheduler".to_string()),
            "[a-zA-Z]{1,6}",
        ];
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            prop_oneof![Just(80u64), Just(443u64), any::<u64>()].prop_map(Value::from),
            prop_oneof![Just("HTTP".to_string()), Just("HTTPS".to_string()), ".{0,8}"].prop_map(Value::String),
        ];
        leaf.prop_recursive(5, 64, 6, move |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::btree_map(key.clone(), inner, 0..5)
                    .prop_map(|map| Value::Object(map.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn any_spec_is_read_or_refused_without_panicking(spec in json(), domain in "[a-z.]{0,8}", url in "/[a-z]{0,4}") {
            let mut config = TkeServiceConfig { spec: Some(spec), ..Default::default() };
            config.metadata.namespace = Some("shop".into());
            config.metadata.name = Some("c".into());
            let configs = ServiceConfigs::parse(&[config.into()]);
            let annotations = [("ingress.cloud.tencent.com/tke-service-config".to_string(), "c".to_string())].into();
            match configs.named("shop", "i", &annotations) {
                Named::Config(config) => {
                    for tls in [false, true] {
                        for reason in config.reasons(tls, &domain, &url) {
                            prop_assert!(reason.starts_with("TkeServiceConfig: "));
                        }
                    }
                }
                Named::Refused(reason) => prop_assert!(reason.starts_with("InvalidTkeServiceConfig: ")),
                Named::None => prop_assert!(false, "a named config is never none"),
            }
        }
    }
}

#[test]
fn an_edited_config_alone_is_picked_up_by_the_incremental_compiles() {
    use crate::compile::{Changes, Incremental};
    let options = mk_options();
    let before = mk_state(&format!(
        "{SHOP}\n---\n{}",
        mk_config("shop-config", HEALTH_AND_SCHEDULER)
    ));
    // The same Ingress and Services (the same `Arc`s, as a reflector store keeps them); only the
    // config is new.
    let mut after = before.clone();
    after.tke_service_configs = mk_state(&mk_config("shop-config", SESSION)).tke_service_configs;
    let full = compile(&after, &options);
    assert_eq!(
        session_at(&full, PLAIN, "shop.example.com", "/"),
        Some(clb_cookie(3600))
    );

    let mut by_address = Incremental::default();
    assert_eq!(by_address.compile(&before, &options), compile(&before, &options));
    assert_eq!(by_address.compile(&after, &options), full);
    // `shunt serve`'s watcher tells a config edit as it tells an IngressClass one.
    let mut told = Incremental::default();
    let everything = Changes {
        everything: true,
        ..Changes::default()
    };
    told.compile_changes(&before, &options, &everything);
    let edited = Changes {
        ingress_classes: true,
        ..Changes::default()
    };
    assert_eq!(told.compile_changes(&after, &options, &edited), full);
}

#[test]
fn a_reason_quotes_at_most_a_bounded_part_of_what_the_tenant_wrote() {
    let huge = "x".repeat(10_000);
    // YAML keeps a plain key under 1024 characters.
    let key = "y".repeat(1000);
    let rule = format!("          forwardType: {huge}\n          {key}: 1");
    let compiled = compile_with(SHOP, &mk_config("shop-config", &rule));
    let verdict = verdict(&compiled, "shop.example.com");
    assert_eq!(verdict.reasons.len(), 2, "{verdict:?}");
    assert!(verdict.reasons.iter().all(|r| r.len() < 400), "{verdict:?}");
}
