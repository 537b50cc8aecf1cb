//! Parsers for argument values: durations, sizes, `NAMESPACE/NAME`, CIDR lists.

use std::{fmt, str::FromStr, time::Duration};

use clap::builder::RangedI64ValueParser;

use shunt_spec::TrustedProxies;

pub(super) fn parse_namespaced(s: &str) -> Result<(String, String), String> {
    match s.split_once('/') {
        Some((namespace, name)) if !namespace.is_empty() && !name.is_empty() && !name.contains('/') => {
            Ok((namespace.to_string(), name.to_string()))
        }
        _ => Err(format!("expected NAMESPACE/NAME, got {s:?}")),
    }
}

pub(super) fn parse_trusted(s: &str) -> Result<TrustedProxies, String> {
    s.parse()
        .map_err(|error| format!("{error} (expected CIDRs like 10.0.0.0/8,192.168.1.1)"))
}

/// `250ms`, `30s`, `5m`, `1h`; a bare number is seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("invalid duration {s:?} (expected e.g. 250ms, 30s, 5m)"))?;
    let seconds = match unit {
        "ms" => value / 1000.0,
        "" | "s" => value,
        "m" => value * 60.0,
        "h" => value * 3600.0,
        _ => return Err(format!("invalid duration unit in {s:?} (use ms, s, m or h)")),
    };
    Duration::try_from_secs_f64(seconds).map_err(|error| format!("invalid duration {s:?}: {error}"))
}

/// A duration as [`parse_duration`] reads it, optionally negative (`-60s`), or as jiff writes
/// one (`PT0S`, how clap shows a default).
pub(super) fn parse_signed_duration(s: &str) -> Result<k8s_openapi::jiff::SignedDuration, String> {
    if let Ok(duration) = s.trim().parse() {
        return Ok(duration);
    }
    let (negative, magnitude) = match s.trim().strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    let duration = k8s_openapi::jiff::SignedDuration::try_from(parse_duration(magnitude)?)
        .map_err(|error| format!("invalid duration {s:?}: {error}"))?;
    Ok(if negative { -duration } else { duration })
}

/// Bytes with an optional `K`/`Ki`/`M`/`Mi`/`G`/`Gi` suffix (as Kubernetes quantities spell them).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let value: u64 = number
        .parse()
        .map_err(|_| format!("invalid size {s:?} (expected e.g. 512Ki, 10Mi)"))?;
    let multiplier: u64 = match unit.trim_end_matches(['b', 'B']) {
        "" => 1,
        "K" | "k" => 1_000,
        "Ki" => 1 << 10,
        "M" => 1_000_000,
        "Mi" => 1 << 20,
        "G" => 1_000_000_000,
        "Gi" => 1 << 30,
        _ => return Err(format!("invalid size unit in {s:?} (use K, Ki, M, Mi, G or Gi)")),
    };
    value
        .checked_mul(multiplier)
        .ok_or_else(|| format!("size {s:?} is too large"))
}

/// A duration flag's value, read as [`parse_duration`] reads it and shown in the largest whole
/// unit (`1h`, `75s`, `250ms`), so a flag can take its default from `shunt_spec::defaults`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span(pub Duration);

impl FromStr for Span {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_duration(s).map(Span)
    }
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Span(duration) = *self;
        if duration.subsec_nanos() != 0 {
            return match duration.subsec_nanos() % 1_000_000 {
                0 => write!(f, "{}ms", duration.as_millis()),
                _ => write!(f, "{}s", duration.as_secs_f64()),
            };
        }
        match duration.as_secs() {
            0 => f.write_str("0s"),
            secs if secs % 3600 == 0 => write!(f, "{}h", secs / 3600),
            secs if secs % 60 == 0 => write!(f, "{}m", secs / 60),
            secs => write!(f, "{secs}s"),
        }
    }
}

/// A count flag that must be at least one.
pub(super) fn positive<T>() -> RangedI64ValueParser<T>
where
    T: TryFrom<i64> + Clone + Send + Sync + 'static,
    <T as TryFrom<i64>>::Error: std::error::Error + Send + Sync + 'static,
{
    RangedI64ValueParser::new().range(1..)
}

/// A share in percent.
pub(super) fn percent() -> RangedI64ValueParser<u8> {
    RangedI64ValueParser::new().range(0..=100)
}
