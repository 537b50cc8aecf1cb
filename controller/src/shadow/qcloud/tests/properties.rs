//! The annotation parsers and the protocol split take anything a user can write without
//! panicking, and a refused parse always refuses the Ingress's hosts.

use proptest::prelude::*;

use super::*;
use crate::objects::Annotations;

/// Annotation values: JSON-ish fragments, the documented shapes, and arbitrary text.
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        Just("null".to_string()),
        Just("true".to_string()),
        r#"\[\{"(host|path|backend|rewrite)":("[a-z./*]{0,12}"|\{"serviceName":"[a-z]{0,4}","servicePort":("[0-9a-z]{0,5}"|[0-9]{1,6})\}|\{"port":[0-9]{1,6}\}|null|[0-9]{1,4})\}\]"#,
        r#"\{"defaultRewriteCode":[0-9]{1,4},"rewriteCodeInfos":\[\{"host":"[a-z.]{0,8}","rewriteCode":[0-9]{1,4}\}\]\}"#,
        r#"\[\{"(HTTP|HTTPS|TCP)":[0-9]{1,6}\}\]"#,
    ]
}

const KEYS: [&str; 9] = [
    "kubernetes.io/ingress.rule-mix",
    "kubernetes.io/ingress.rule-mix-both",
    "kubernetes.io/ingress.http-rules",
    "kubernetes.io/ingress.https-rules",
    "ingress.cloud.tencent.com/auto-rewrite",
    "ingress.cloud.tencent.com/auto-rewrite-code",
    "ingress.cloud.tencent.com/rewrite-support",
    "ingress.cloud.tencent.com/listen-ports",
    "ingress.cloud.tencent.com/enable-group",
];

proptest! {
    #[test]
    fn any_annotation_values_compile_without_panicking(values in proptest::collection::vec(value(), KEYS.len())) {
        let annotations: String = KEYS
            .iter()
            .zip(&values)
            .map(|(key, value)| format!("    {key}: {}\n", serde_json::to_string(value).expect("a JSON string")))
            .collect();
        let manifest = format!(
            "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  namespace: shop\n  name: fuzz\n  annotations:\n    kubernetes.io/ingress.class: qcloud\n{annotations}spec:\n  rules:\n  - host: fuzz.example.com\n    http:\n      paths:\n      - {{path: /, pathType: ImplementationSpecific, backend: {{service: {{name: web, port: {{number: 80}}}}}}}}\n"
        );
        let compiled = compile_tke(&manifest);
        let invalid = compiled.diagnostics.iter().any(|d| d.reason == Reason::InvalidAnnotation);
        if invalid {
            let verdict = verdict(&compiled, "fuzz.example.com");
            prop_assert_eq!(verdict.verdict, Verdict::Refused);
        }
    }

    #[test]
    fn any_rewrite_code_json_is_parsed_or_reported(text in value()) {
        let mut ingress = crate::objects::Ingress::default();
        ingress.metadata.annotations = Some(Annotations::from([
            ("ingress.cloud.tencent.com/auto-rewrite-code".to_string(), text.clone()),
            ("ingress.cloud.tencent.com/listen-ports".to_string(), text),
        ]));
        let parsed = annotations::parse(&ingress);
        for code in parsed.rewrite_codes.default.into_iter().chain(parsed.rewrite_codes.hosts.values().copied()) {
            prop_assert!(annotations::REWRITE_CODES.contains(&code));
        }
    }
}
