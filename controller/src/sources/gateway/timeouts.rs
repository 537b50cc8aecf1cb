//! A rule's `timeouts` (extended features HTTPRouteRequestTimeout and HTTPRouteBackendTimeout)
//! to the contract's answer deadlines: `request` bounds every try together, `backendRequest`
//! each try; `0s` turns either off (the proxy's own timeouts still apply).
//!
//! The format is Gateway API's duration (GEP-2257): one to four `<1-5 digits><h|m|s|ms>`, as
//! the CRD's pattern `^([0-9]{1,5}(h|m|s|ms)){1,4}$` says; manifests read by `shunt serve`
//! are not validated by an API server, so anything else is refused here.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use shunt_spec::AnswerDeadlines;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HTTPRouteTimeouts {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend_request: Option<String>,
}

/// The rule's deadlines; `None` when it sets none (or only zeros).
pub fn deadlines(timeouts: Option<&HTTPRouteTimeouts>) -> Result<Option<AnswerDeadlines>, String> {
    let Some(timeouts) = timeouts else {
        return Ok(None);
    };
    let field = |value: &Option<String>, name: &str| -> Result<Option<Duration>, String> {
        let Some(text) = value else { return Ok(None) };
        let parsed = parse(text).ok_or_else(|| format!("timeouts.{name} is not a Gateway API duration"))?;
        Ok((!parsed.is_zero()).then_some(parsed))
    };
    let deadlines = AnswerDeadlines {
        request: field(&timeouts.request, "request")?,
        attempt: field(&timeouts.backend_request, "backendRequest")?,
    };
    Ok((deadlines != AnswerDeadlines::default()).then_some(deadlines))
}

/// A Gateway API duration (`1h30m`, `500ms`, `0s`); `None` for anything the CRD's pattern
/// refuses.
pub fn parse(text: &str) -> Option<Duration> {
    let mut rest = text.as_bytes();
    let (mut total, mut parts) = (Duration::ZERO, 0);
    while !rest.is_empty() {
        let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        if digits == 0 || digits > 5 || parts == 4 {
            return None;
        }
        let number: u64 = std::str::from_utf8(&rest[..digits]).ok()?.parse().ok()?;
        rest = &rest[digits..];
        let (unit, len) = match rest {
            [b'm', b's', ..] => (Duration::from_millis(1), 2),
            [b'h', ..] => (Duration::from_secs(3600), 1),
            [b'm', ..] => (Duration::from_secs(60), 1),
            [b's', ..] => (Duration::from_secs(1), 1),
            _ => return None,
        };
        rest = &rest[len..];
        // At most 4 × 99999 h: no overflow.
        total += unit * u32::try_from(number).ok()?;
        parts += 1;
    }
    (parts > 0).then_some(total)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn durations_as_the_suite_and_the_gep_write_them() {
        let ms = Duration::from_millis;
        assert_eq!(parse("500ms"), Some(ms(500)));
        assert_eq!(parse("0s"), Some(Duration::ZERO));
        assert_eq!(parse("1h30m"), Some(ms(5_400_000)));
        assert_eq!(parse("1m10s5ms"), Some(ms(70_005)));
        for refused in ["", "1", "1.5s", "-1s", "1d", "100000s", "1s1s1s1s1s", "1S", "1 s", "ms"] {
            assert_eq!(parse(refused), None, "{refused:?}");
        }
    }

    #[test]
    fn zero_turns_a_deadline_off_and_nonsense_refuses_the_route() {
        let timeouts = |request: &str, backend: &str| HTTPRouteTimeouts {
            request: Some(request.to_string()),
            backend_request: Some(backend.to_string()),
        };
        assert_eq!(deadlines(Some(&timeouts("0s", "0s"))), Ok(None));
        assert_eq!(
            deadlines(Some(&timeouts("10s", "500ms"))),
            Ok(Some(AnswerDeadlines {
                request: Some(Duration::from_secs(10)),
                attempt: Some(Duration::from_millis(500)),
            }))
        );
        assert!(deadlines(Some(&timeouts("10s", "soon"))).is_err());
    }

    fn unit() -> impl Strategy<Value = (&'static str, u64)> {
        prop::sample::select(vec![("h", 3_600_000), ("m", 60_000), ("s", 1_000), ("ms", 1)])
    }

    proptest! {
        /// What the CRD's pattern takes parses to the sum of its parts.
        #[test]
        fn a_valid_duration_is_the_sum_of_its_parts(parts in prop::collection::vec((0u64..100_000, unit()), 1..=4)) {
            let text: String = parts.iter().map(|(n, (unit, _))| format!("{n}{unit}")).collect();
            let millis: u64 = parts.iter().map(|(n, (_, scale))| n * scale).sum();
            prop_assert_eq!(parse(&text), Some(Duration::from_millis(millis)));
        }

        /// Anything parses exactly when the CRD's pattern matches it.
        #[test]
        fn only_what_the_pattern_matches_parses(text in "[0-9hms.x-]{0,14}") {
            let pattern = regex::Regex::new("^([0-9]{1,5}(h|m|s|ms)){1,4}$").expect("a valid pattern");
            prop_assert_eq!(parse(&text).is_some(), pattern.is_match(&text), "{:?}", text);
        }
    }
}
