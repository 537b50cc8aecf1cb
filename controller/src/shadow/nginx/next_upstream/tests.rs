use proptest::prelude::*;

use super::*;

#[test]
fn the_conditions_read_as_the_template_writes_them() {
    let parsed = conditions("error timeout http_503 http_502 http_503 non_idempotent").expect("valid");
    assert!(parsed.error && parsed.timeout && parsed.non_idempotent && !parsed.off);
    assert_eq!(parsed.statuses, vec![502, 503]);
    assert!(conditions("off").expect("valid").off);
    assert_eq!(conditions("error "), Ok(Conditions::nginx_default().without_timeout()));
}

#[test]
fn what_the_validator_refuses_is_invalid_and_glued_words_nginx_cannot_load_are_unsupported() {
    for value in ["", " error", "error  timeout", "http_501", "error,timeout", "Error"] {
        assert_eq!(conditions(value), Err(Refusal::Invalid), "{value:?}");
    }
    assert_eq!(conditions("errortimeout"), Err(Refusal::Unsupported));
}

#[test]
fn the_defaults_at_every_level_leave_the_proxys_retries() {
    let keys = NextUpstreamKeys {
        conditions: Some(conditions("timeout error").expect("valid")),
        tries: Some(3),
        timeout: Some(0),
    };
    assert_eq!(keys.rule(false), None);
    assert_eq!(NextUpstreamKeys::default().rule(false), None);
    let rule = NextUpstreamKeys::default()
        .rule(true)
        .expect("retry-non-idempotent is not the default");
    assert!(rule.non_idempotent && rule.error && rule.timeout && rule.tries == 3);
}

#[test]
fn off_wins_over_every_other_word_and_the_annotation_over_the_configmap() {
    let annotation = NextUpstreamKeys {
        conditions: Some(conditions("off error http_503").expect("valid")),
        ..NextUpstreamKeys::default()
    };
    let configmap = NextUpstreamKeys {
        tries: Some(5),
        timeout: Some(10),
        ..NextUpstreamKeys::default()
    };
    assert_eq!(annotation.or(&configmap).rule(false), Some(NextUpstream::OFF));
    let rule = NextUpstreamKeys::default()
        .or(&configmap)
        .rule(false)
        .expect("not the default");
    assert_eq!((rule.tries, rule.within_secs), (5, Some(10)));
}

#[test]
fn tries_of_zero_or_past_the_bound_and_negative_times_are_refused() {
    assert_eq!(tries("1"), Ok(1));
    assert_eq!(tries("+16"), Ok(16));
    assert_eq!(tries("0"), Err(Refusal::Unsupported));
    assert_eq!(tries("17"), Err(Refusal::Unsupported));
    assert_eq!(tries("-1"), Err(Refusal::Unsupported));
    assert_eq!(tries("3s"), Err(Refusal::Invalid));
    assert_eq!(timeout("0"), Ok(0));
    assert_eq!(timeout("-5"), Err(Refusal::Unsupported));
}

impl Conditions {
    fn without_timeout(mut self) -> Self {
        self.timeout = false;
        self
    }
}

proptest! {
    #[test]
    fn any_sequence_of_admitted_words_parses_to_those_words(picks in prop::collection::vec(0..CONDITIONS.len(), 1..8), tab in any::<bool>()) {
        let words: Vec<&str> = picks.iter().map(|i| CONDITIONS[*i]).collect();
        let value = words.join(if tab { "\t" } else { " " });
        let parsed = conditions(&value).expect("admitted words");
        prop_assert_eq!(parsed.off, words.contains(&"off"));
        prop_assert_eq!(parsed.error, words.contains(&"error"));
        prop_assert_eq!(parsed.non_idempotent, words.contains(&"non_idempotent"));
        let mut statuses: Vec<u16> = words.iter().filter_map(|w| w.strip_prefix("http_")?.parse().ok()).collect();
        statuses.sort_unstable();
        statuses.dedup();
        prop_assert_eq!(parsed.statuses, statuses);
    }

    #[test]
    fn anything_else_is_refused_and_never_panics(value in "\\PC{0,24}") {
        let admitted = !value.is_empty()
            && !value.starts_with(' ')
            && !value.contains("  ")
            && value.split(' ').filter(|w| !w.is_empty()).all(|w| CONDITIONS.contains(&w));
        prop_assume!(!value.contains(['\t', '\n', '\r', '\x0c']));
        prop_assert_eq!(conditions(&value).is_ok(), admitted);
    }

    #[test]
    fn tries_are_go_ints_within_the_bound(number in any::<i64>()) {
        let parsed = tries(&number.to_string());
        if (1..=i64::from(MAX_TRIES)).contains(&number) {
            prop_assert_eq!(parsed, Ok(number as u32));
        } else {
            prop_assert_eq!(parsed, Err(Refusal::Unsupported));
        }
    }
}
