use proptest::prelude::*;

use super::*;

fn pace(rate: &str, after: &str) -> Option<ResponsePace> {
    let keys = PaceKeys::annotations(Some(rate), Some(after)).expect("in range");
    keys.over(PaceKeys::default())
}

#[test]
fn the_values_are_kibibytes_and_zero_paces_nothing() {
    // buildRateLimit writes `limit_rate 100k;` and `limit_rate_after 2k;`.
    assert_eq!(pace("100", "2"), ResponsePace::new(102_400, 2048, false));
    assert_eq!(pace("0", "2"), None);
    assert_eq!(pace("-5", "2"), None);
    // `limit_rate_after` is left out below one: nothing goes unpaced.
    assert_eq!(pace("1", "-3"), ResponsePace::new(1024, 0, false));
}

#[test]
fn each_annotation_falls_back_to_the_config_map_when_absent_or_unparsed() {
    let config = PaceKeys {
        rate: Some(8),
        after: Some(16),
        buffering: Some(true),
    };
    let keys = PaceKeys::annotations(Some("abc"), None).expect("unparsed is absent");
    assert_eq!(keys.over(config), ResponsePace::new(8 * 1024, 16 * 1024, true));
    let mut keys = PaceKeys::annotations(Some("4"), Some(" 1")).expect("unparsed is absent");
    assert_eq!(keys.over(config), ResponsePace::new(4 * 1024, 16 * 1024, true));
    keys.buffering_annotation(" off ");
    assert_eq!(keys.over(config), ResponsePace::new(4 * 1024, 16 * 1024, false));
    keys.buffering_annotation("OFF");
    assert_eq!(
        keys.over(config).map(|pace| pace.buffered()),
        Some(true),
        "not an option: the ConfigMap's"
    );
    // An annotation of zero turns the ConfigMap's pace off, as the template writes nothing.
    let keys = PaceKeys::annotations(Some("0"), None).expect("valid");
    assert_eq!(keys.over(config), None);
}

#[test]
fn a_size_nginx_cannot_parse_is_refused() {
    let huge = (i64::MAX / 1024 + 1).to_string();
    assert_eq!(
        PaceKeys::annotations(Some(&huge), None),
        Err((Refusal::Invalid, "limit-rate"))
    );
    assert_eq!(
        PaceKeys::annotations(None, Some(&huge)),
        Err((Refusal::Invalid, "limit-rate-after"))
    );
    let largest = (i64::MAX / 1024).to_string();
    assert!(PaceKeys::annotations(Some(&largest), Some(&largest)).is_ok());
}

proptest! {
    /// Any text: what Go's Atoi takes (a sign, then digits, within 64 bits) is read as that
    /// number; anything else is absent.
    #[test]
    fn values_read_as_atoi(value in "[+-]?[0-9]{0,21}|\\PC{0,8}") {
        let digits = value.strip_prefix(['+', '-']).unwrap_or(&value);
        let atoi_like = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
        let wide: Option<i128> = atoi_like.then(|| value.parse().expect("digits fit 128 bits"));
        let expected = wide.and_then(|wide| i64::try_from(wide).ok());
        prop_assert_eq!(atoi(&value), expected);
    }
}

#[test]
fn the_config_map_keys_set_every_ingress_s_pace() {
    use std::collections::BTreeMap;

    use super::super::config::NginxConfig;
    let parse = |pairs: &[(&str, &str)]| {
        let data: BTreeMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        NginxConfig::parse(&data)
    };
    let config = parse(&[
        ("limit-rate", "8"),
        ("limit-rate-after", "1"),
        ("proxy-buffering", "On"),
    ]);
    assert!(config.refusals.is_empty(), "{:?}", config.refusals);
    assert_eq!(
        PaceKeys::default().over(config.pace),
        ResponsePace::new(8192, 1024, true)
    );
    let config = parse(&[("limit-rate", "8k"), ("proxy-buffering", "sometimes")]);
    assert_eq!(config.refusals, ["InvalidConfigMapKey: limit-rate"]);
    assert_eq!(config.pace.buffering, None);
}
