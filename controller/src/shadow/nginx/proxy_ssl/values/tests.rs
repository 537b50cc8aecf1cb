use proptest::prelude::*;

use super::*;

#[test]
fn secret_references_are_namespace_slash_name() {
    assert_eq!(secret_namespace("default/pods-ca"), Some("default"));
    assert_eq!(secret_namespace(" team-a/ca.v1 "), Some("team-a"));
    for denied in [
        "pods-ca",
        "a/b/c",
        "/pods-ca",
        "default/",
        "",
        "default/ca\nx",
        "default/ca$",
    ] {
        assert_eq!(secret_namespace(denied), None, "{denied:?}");
    }
    assert_eq!(secret_namespace(&format!("a/{}", "b".repeat(MAX_VALUE))), None);
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
        assert_eq!(verify_depth(one), Depth::One, "{one:?}");
    }
    assert_eq!(verify_depth("2"), Depth::Deeper);
    assert_eq!(verify_depth("+3"), Depth::Deeper);
    assert_eq!(verify_depth("-1"), Depth::Negative);
}

proptest! {
    #[test]
    fn a_valid_reference_gives_back_its_namespace(ns in "[a-z0-9][a-z0-9-]{0,20}", name in "[a-z0-9.-]{1,40}") {
        let reference = format!("{ns}/{name}");
        prop_assert_eq!(secret_namespace(&reference), Some(ns.as_str()));
    }

    #[test]
    fn no_value_panics_and_only_valid_references_pass(value in "\\PC{0,80}") {
        if let Some(namespace) = secret_namespace(&value) {
            prop_assert!(value.trim().starts_with(namespace));
            prop_assert_eq!(value.matches('/').count(), 1);
        }
        let _ = default_ciphers(&value);
        let depth = verify_depth(&value);
        prop_assert_eq!(depth == Depth::Negative, value.parse::<i64>().is_ok_and(|d| d < 0));
    }

    #[test]
    fn integer_depths_split_at_one(depth in any::<i64>()) {
        let expected = match depth {
            ..0 => Depth::Negative,
            0 | 1 => Depth::One,
            _ => Depth::Deeper,
        };
        prop_assert_eq!(verify_depth(&depth.to_string()), expected);
    }
}
