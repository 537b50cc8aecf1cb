//! Properties of what the profile parses.

use proptest::prelude::*;

use super::super::{annotations, keys, paths::nginx_path, timeouts};
use shunt_spec::PathKind;

proptest! {
    #[test]
    fn a_prefix_path_is_element_wise_unless_it_ends_in_a_slash(segments in prop::collection::vec("[a-z0-9._-]{1,8}", 1..4), slash in any::<bool>()) {
        let path = format!("/{}{}", segments.join("/"), if slash { "/" } else { "" });
        for kind in ["Prefix", "ImplementationSpecific", ""] {
            let (parsed, normalised) = nginx_path(Some(&path), kind).expect("a valid path");
            if slash {
                prop_assert_eq!(parsed, PathKind::CharPrefix);
                prop_assert_eq!(&normalised, &path);
            } else {
                prop_assert_eq!(parsed, PathKind::Prefix);
                prop_assert_eq!(&normalised, &path);
            }
        }
    }

    #[test]
    fn any_key_no_nginx_parser_reads_is_ignored_by_name(name in "[a-z][a-z-]{0,30}") {
        prop_assume!(!keys::read(&name));
        let key = format!("{}{name}", annotations::PREFIX);
        let mut ingress = crate::objects::Ingress::default();
        ingress.metadata.annotations = Some([(key.clone(), "x".to_string())].into());
        let parsed = annotations::parse(&ingress);
        prop_assert_eq!(parsed.refusals, Vec::<String>::new());
        prop_assert_eq!(parsed.ignored, vec![key]);
    }

    #[test]
    fn a_timeout_is_its_seconds_when_go_reads_an_int_in_range(seconds in any::<i64>(), plus in any::<bool>()) {
        let text = if plus && seconds >= 0 { format!("+{seconds}") } else { seconds.to_string() };
        let parsed = timeouts::seconds(&text);
        if (1..=i64::from(timeouts::MAX_SECONDS)).contains(&seconds) {
            prop_assert_eq!(parsed, Ok(seconds as u32));
        } else {
            prop_assert_eq!(parsed, Err(annotations::Refusal::Unsupported));
        }
    }

    #[test]
    fn a_timeout_of_anything_but_a_sign_and_digits_is_invalid(text in "\\PC{0,12}") {
        let digits = text.strip_prefix(['+', '-']).unwrap_or(&text);
        let go_int = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
        let parsed = timeouts::seconds(&text);
        prop_assert_eq!(parsed == Err(annotations::Refusal::Invalid), !go_int);
    }

    #[test]
    fn a_url_rewrite_target_keeps_its_text_and_groups(https in any::<bool>(), host in "[a-z]{1,10}\\.example\\.com", parts in prop::collection::vec("[a-z0-9._~-]{1,6}|\\$[1-9]", 0..5)) {
        let value = format!("{}://{host}/{}", if https { "https" } else { "http" }, parts.join("/"));
        let parsed = annotations::parse(&mk_annotated("rewrite-target", &value));
        prop_assert_eq!(&parsed.refusals, &Vec::<String>::new());
        let target = parsed.rewrite_target.expect("a target");
        prop_assert!(target.is_absolute());
        prop_assert_eq!(target.as_str(), value.as_str());
    }

    #[test]
    fn any_rewrite_target_is_a_target_or_refused_without_panicking(value in "\\PC{0,30}") {
        let parsed = annotations::parse(&mk_annotated("rewrite-target", &value));
        prop_assert!(parsed.rewrite_target.is_none() || parsed.refusals.is_empty());
    }
}

fn mk_annotated(key: &str, value: &str) -> crate::objects::Ingress {
    let mut ingress = crate::objects::Ingress::default();
    ingress.metadata.annotations = Some([(format!("{}{key}", annotations::PREFIX), value.to_string())].into());
    ingress
}
