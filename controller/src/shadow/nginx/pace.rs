//! `limit-rate` and `limit-rate-after`, annotations over the ConfigMap keys of the same names,
//! into the [`ResponsePace`] the proxy applies. ratelimit/main.go reads each annotation with
//! `strconv.Atoi` and falls back to the ConfigMap's value when it is absent or does not parse;
//! template.go's `buildRateLimit` writes `limit_rate_after Nk;` and `limit_rate Nk;` only for
//! values above zero: kibibytes, per request. nginx paces only answers it buffers, so the
//! location's `proxy-buffering` (annotation over ConfigMap, `off` by default) travels along.

use shunt_spec::ResponsePace;

use super::annotations::Refusal;

/// The two keys as one place (the Ingress's annotations, or the ConfigMap) sets them, each in
/// KiB; `None` where unset.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PaceKeys {
    pub rate: Option<i64>,
    pub after: Option<i64>,
    /// `proxy-buffering`: `on` or `off`.
    pub buffering: Option<bool>,
}

impl PaceKeys {
    /// The annotations' values: one that does not parse counts as absent (main.go), one too
    /// large for nginx is refused (its `ngx_parse_size` fails the whole configuration).
    pub(super) fn annotations(rate: Option<&str>, after: Option<&str>) -> Result<Self, (Refusal, &'static str)> {
        let read = |value: Option<&str>, key| match value.and_then(atoi) {
            Some(kib) if kib.checked_mul(1024).is_none() => Err((Refusal::Invalid, key)),
            kib => Ok(kib),
        };
        Ok(PaceKeys {
            rate: read(rate, "limit-rate")?,
            after: read(after, "limit-rate-after")?,
            buffering: None,
        })
    }

    /// The `proxy-buffering` annotation: proxy/main.go's validator takes `on` or `off`
    /// (trimmed, that case); anything else keeps the ConfigMap's.
    pub fn buffering_annotation(&mut self, value: &str) {
        self.buffering = match value.trim() {
            "on" => Some(true),
            "off" => Some(false),
            _ => None,
        };
    }

    /// The pace of an Ingress with these annotations under a ConfigMap with `config`'s.
    pub fn over(self, config: PaceKeys) -> Option<ResponsePace> {
        let rate = bytes(self.rate.or(config.rate).unwrap_or(0))?;
        let after = bytes(self.after.or(config.after).unwrap_or(0)).unwrap_or(0);
        let buffered = self.buffering.or(config.buffering).unwrap_or(false);
        ResponsePace::new(rate, after, buffered)
    }
}

/// Go's `strconv.Atoi` in base 10: an optional sign, then digits, within 64 bits.
pub fn atoi(value: &str) -> Option<i64> {
    value.parse().ok()
}

/// `N` KiB in bytes when above zero and within what nginx's size parser takes.
pub fn bytes(kib: i64) -> Option<u64> {
    let bytes = kib.checked_mul(1024)?;
    u64::try_from(bytes).ok().filter(|&bytes| bytes > 0)
}

#[cfg(test)]
mod tests;
