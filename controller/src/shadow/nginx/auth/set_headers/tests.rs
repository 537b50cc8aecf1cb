use proptest::prelude::*;

use super::*;

fn mk_maps(namespace: &str, name: &str, data: &[(&str, &str)]) -> ConfigMaps {
    let mut map = ConfigMap::default();
    map.metadata.namespace = Some(namespace.to_string());
    map.metadata.name = Some(name.to_string());
    map.data = Some(data.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect());
    ConfigMaps::new(&[Arc::new(map)])
}

fn data(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

#[test]
fn a_configmap_of_the_ingress_namespace_gives_its_fields_in_key_order() {
    let maps = mk_maps(
        "apps",
        "auth-headers",
        &[("X-Tenant", "blue"), ("X-Empty", ""), ("A_b", "x \"y\"")],
    );
    let fields = resolve("apps/auth-headers", "apps", &maps).unwrap();
    let expected = [("A_b", "x \"y\""), ("X-Empty", ""), ("X-Tenant", "blue")];
    assert_eq!(fields, expected.map(|(k, v)| (k.to_string(), v.to_string())));
}

#[test]
fn a_missing_configmap_refuses_naming_the_key() {
    let maps = mk_maps("apps", "auth-headers", &[("X-Tenant", "blue")]);
    // A bare name is looked up as written by ingress-nginx's lister, and never found.
    for reference in ["apps/other", "auth-headers"] {
        let refusal = resolve(reference, "apps", &maps).unwrap_err();
        assert!(
            refusal.starts_with("MissingConfigMap: nginx.ingress.kubernetes.io/auth-proxy-set-headers:"),
            "{refusal}"
        );
        assert!(refusal.contains("does not exist"), "{refusal}");
    }
}

#[test]
fn a_configmap_whose_data_the_watch_dropped_refuses_as_one_too_large() {
    use k8s_openapi::api::core::v1::ConfigMap;

    let large: Vec<(String, String)> = (0..=shunt_spec::MAX_AUTH_SET_HEADERS)
        .map(|i| (format!("X-{i}"), "v".to_string()))
        .collect();
    let mut map = ConfigMap {
        data: Some(large.into_iter().collect()),
        ..ConfigMap::default()
    };
    map.metadata.namespace = Some("apps".into());
    map.metadata.name = Some("auth-headers".into());
    crate::watch::slim::bound_auth_config_map(&mut map);
    assert_eq!(map.data, None, "the watch keeps no data past the bounds");
    let maps = ConfigMaps::new(&[std::sync::Arc::new(map)]);
    let refusal = resolve("apps/auth-headers", "apps", &maps).unwrap_err();
    assert_eq!(
        refusal,
        "UnsupportedAnnotation: nginx.ingress.kubernetes.io/auth-proxy-set-headers"
    );
}

#[test]
fn other_namespaces_and_malformed_references_refuse() {
    let maps = mk_maps("auth", "auth-headers", &[("X-Tenant", "blue")]);
    let key = "nginx.ingress.kubernetes.io/auth-proxy-set-headers";
    let cases = [
        ("auth/auth-headers", "UnsupportedAnnotation"),
        ("a/b/c", "InvalidAnnotation"),
        ("apps/auth headers", "InvalidAnnotation"),
        ("apps/$name", "InvalidAnnotation"),
    ];
    for (reference, kind) in cases {
        assert_eq!(
            resolve(reference, "apps", &maps),
            Err(format!("{kind}: {key}")),
            "{reference}"
        );
    }
}

#[test]
fn fields_shunt_cannot_send_as_nginx_does_refuse() {
    let cases: [(&[(&str, &str)], Refusal); 7] = [
        (&[("X Bad", "v")], Refusal::Invalid),
        (&[("X:Bad", "v")], Refusal::Invalid),
        (&[("", "v")], Refusal::Invalid),
        (&[("X-User", "$remote_user")], Refusal::Unsupported),
        (&[("X-Line", "a\nb")], Refusal::Unsupported),
        (&[("X-Original-URL", "http://x/")], Refusal::Unsupported),
        (&[("X-A", "1"), ("x-a", "2")], Refusal::Unsupported),
    ];
    for (pairs, refusal) in cases {
        assert_eq!(headers(&data(pairs)), Err(refusal), "{pairs:?}");
    }
}

proptest! {
    /// Within the bounds everything valid is kept as written; past either bound, refused.
    #[test]
    fn the_bounds_hold(
        count in 1usize..=80,
        value_len in 0usize..400,
    ) {
        let value = "v".repeat(value_len);
        let data: BTreeMap<String, String> =
            (0..count).map(|i| (format!("X-Field-{i:03}"), value.clone())).collect();
        let bytes: usize = data.iter().map(|(k, v)| k.len() + v.len()).sum();
        let within = count <= MAX_AUTH_SET_HEADERS && bytes <= MAX_AUTH_SET_HEADERS_BYTES;
        match headers(&data) {
            Ok(fields) => {
                prop_assert!(within);
                prop_assert_eq!(fields.len(), count);
                prop_assert!(fields.iter().all(|(_, v)| *v == value));
            }
            Err(refusal) => {
                prop_assert!(!within);
                prop_assert_eq!(refusal, Refusal::Unsupported);
            }
        }
    }

    /// Any data: fields come back only when every name matches authreq's `headerRegexp` and
    /// every value is printable ASCII without `$`.
    #[test]
    fn only_sendable_fields_pass(pairs in prop::collection::btree_map("[ -~]{0,12}", "[\\x00-\\x7f]{0,12}", 0..6)) {
        if let Ok(fields) = headers(&pairs) {
            for (name, value) in &fields {
                prop_assert!(!name.is_empty());
                prop_assert!(name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
                prop_assert!(value.bytes().all(|b| (b' '..=b'~').contains(&b) && b != b'$'));
                prop_assert!(http::HeaderName::from_bytes(name.as_bytes()).is_ok());
                prop_assert!(http::HeaderValue::from_str(value).is_ok());
            }
        }
    }
}
