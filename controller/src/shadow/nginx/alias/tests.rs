use proptest::prelude::*;

use super::*;

#[test]
fn names_are_trimmed_lowercased_sorted_and_once() {
    assert_eq!(
        parse(" b.example.com,A.example.com, ,b.example.com"),
        Ok(vec!["a.example.com".to_string(), "b.example.com".to_string()])
    );
    assert_eq!(parse(""), Ok(Vec::new()));
}

#[test]
fn regex_and_wildcard_names_are_unsupported_and_other_characters_invalid() {
    for value in ["~^www\\d+\\.example\\.com$", "*.example.com", "a.example.com:8080"] {
        assert_eq!(parse(value), Err(Refusal::Unsupported), "{value}");
    }
    for value in ["a example.com", "a.example.com;", "é.example.com"] {
        assert_eq!(parse(value), Err(Refusal::Invalid), "{value}");
    }
}

proptest! {
    #[test]
    fn plain_names_parse_to_themselves(labels in prop::collection::vec("[a-z][a-z0-9-]{0,10}[a-z0-9]", 2..4), count in 1usize..4) {
        let names: Vec<String> = (0..count).map(|i| format!("n{i}.{}", labels.join("."))).collect();
        prop_assert_eq!(parse(&names.join(",")), Ok(names));
    }

    #[test]
    fn any_value_parses_or_is_refused_without_panicking(value in "\\PC{0,40}") {
        if let Ok(names) = parse(&value) {
            prop_assert!(names.len() <= MAX_ALIASES);
            prop_assert!(names.iter().all(|name| matches!(crate::compile::parse_host(name), Ok(HostMatch::Exact(_)))));
        }
    }
}
