use proptest::prelude::*;

use super::*;

#[test]
fn secret_references_are_namespace_slash_name() {
    assert_eq!(secret_reference("default/pods-ca"), Some(("default", "pods-ca")));
    assert_eq!(secret_reference(" team-a/ca.v1 "), Some(("team-a", "ca.v1")));
    for denied in [
        "pods-ca",
        "a/b/c",
        "/pods-ca",
        "default/",
        "",
        "default/ca\nx",
        "default/ca$",
    ] {
        assert_eq!(secret_reference(denied), None, "{denied:?}");
    }
    assert_eq!(secret_reference(&format!("a/{}", "b".repeat(MAX_VALUE))), None);
}

#[test]
fn ciphers_other_than_default_are_noticed() {
    for default in ["DEFAULT", " DEFAULT ", "", "ECDHE;rm", "\tHIGH", "HIGH\u{e9}"] {
        assert!(default_ciphers(default), "{default:?}");
    }
    for custom in ["HIGH:!aNULL:!MD5", "ECDHE-RSA-AES128-GCM-SHA256", "DEF AULT"] {
        assert!(!default_ciphers(custom), "{custom:?}");
    }
}

#[test]
fn verify_depth_reads_as_atoi_with_zero_and_junk_as_one() {
    for one in ["1", "0", "+1", "01", " 2", "two", "", "99999999999999999999"] {
        assert_eq!(verify_depth(one), Depth::Max(1), "{one:?}");
    }
    assert_eq!(verify_depth("2"), Depth::Max(2));
    assert_eq!(verify_depth("+3"), Depth::Max(3));
    assert_eq!(verify_depth("1000"), Depth::Max(255));
    assert_eq!(verify_depth("-1"), Depth::Negative);
}

#[test]
fn on_off_keys_are_on_only_for_on() {
    for on_value in ["on", " on ", "\ton"] {
        assert!(on(Some(on_value)), "{on_value:?}");
    }
    // A line break fails the validator (`MaliciousRegex`): the default.
    for off in ["off", "On", "true", "o n", "", "on\r", "on\n"] {
        assert!(!on(Some(off)), "{off:?}");
    }
    assert!(!on(None));
}

#[test]
fn protocols_are_sorted_words_with_tls12_the_default() {
    use TlsVersions::*;
    for (value, expected) in [
        (None, Ok(Tls12)),
        (Some("TLSv1.3"), Ok(Tls13)),
        (Some("TLSv1.3 TLSv1.2"), Ok(Both)),
        (Some(" TLSv1.2  TLSv1.3 "), Ok(Both)),
        // Fails the validator: the default.
        (Some("TLSv1.1 TLSv1.2"), Ok(Tls12)),
        (Some("TLSv1.3\nTLSv1.2"), Ok(Tls12)),
        (Some(""), Ok(Tls12)),
        (Some("   "), Ok(Tls12)),
        // Passes it, and nginx's proxy_ssl_protocols then refuses the word.
        (Some("TLSv1.2TLSv1.3"), Err(())),
    ] {
        assert_eq!(protocols(value), expected, "{value:?}");
    }
}

#[test]
fn server_names_are_plain_dns_names_or_refused() {
    assert_eq!(server_name(None), Ok(None));
    assert_eq!(
        server_name(Some(" web.shop.svc ")),
        Ok(Some("web.shop.svc".to_string()))
    );
    assert_eq!(server_name(Some("")), Ok(None));
    // Fails ValidateServerName: no proxy_ssl_name line.
    assert_eq!(server_name(Some("web shop")), Ok(None));
    assert_eq!(server_name(Some("web\"x")), Ok(None));
    // Passes it, but is not a name shunt can check as nginx does.
    for refused in ["$host", "web:443", "web/x", ".web", "*.shop.svc"] {
        assert_eq!(server_name(Some(refused)), Err(()), "{refused:?}");
    }
}

proptest! {
    #[test]
    fn a_valid_reference_gives_back_its_namespace(ns in "[a-z0-9][a-z0-9-]{0,20}", name in "[a-z0-9.-]{1,40}") {
        let reference = format!("{ns}/{name}");
        prop_assert_eq!(secret_reference(&reference), Some((ns.as_str(), name.as_str())));
    }

    #[test]
    fn no_value_panics_and_only_valid_references_pass(value in "\\PC{0,80}") {
        if let Some((namespace, _)) = secret_reference(&value) {
            prop_assert!(value.trim().starts_with(namespace));
            prop_assert_eq!(value.matches('/').count(), 1);
        }
        let _ = default_ciphers(&value);
        let depth = verify_depth(&value);
        prop_assert_eq!(depth == Depth::Negative, value.parse::<i64>().is_ok_and(|d| d < 0));
        let _ = on(Some(&value));
        if let Ok(Some(name)) = server_name(Some(&value)) {
            prop_assert!(name.chars().all(|c| c.is_ascii_alphanumeric() || "-._".contains(c)), "{}", name);
        }
    }

    #[test]
    fn protocol_lists_give_the_versions_they_name(words in proptest::collection::vec(prop_oneof![Just("TLSv1.2"), Just("TLSv1.3")], 1..5), pad in " {0,3}") {
        let value = words.join(&format!(" {pad}"));
        let (tls12, tls13) = (words.contains(&"TLSv1.2"), words.contains(&"TLSv1.3"));
        let expected = match (tls12, tls13) {
            (true, true) => TlsVersions::Both,
            (false, true) => TlsVersions::Tls13,
            _ => TlsVersions::Tls12,
        };
        prop_assert_eq!(protocols(Some(&value)), Ok(expected));
    }

    #[test]
    fn any_protocols_value_is_a_version_set_or_a_refusal(value in "[TLSv1.23 \\n]{0,30}") {
        if let Ok(versions) = protocols(Some(&value)) {
            let named = |v: &str| value.contains(v);
            match versions {
                TlsVersions::Both => prop_assert!(named("TLSv1.2") && named("TLSv1.3")),
                TlsVersions::Tls13 => prop_assert!(named("TLSv1.3")),
                TlsVersions::Tls12 => {}
            }
        }
    }

    #[test]
    fn integer_depths_split_at_one(depth in any::<i64>()) {
        let expected = match depth {
            ..0 => Depth::Negative,
            0 => Depth::Max(1),
            1..=255 => Depth::Max(depth as u8),
            _ => Depth::Max(255),
        };
        prop_assert_eq!(verify_depth(&depth.to_string()), expected);
    }
}
