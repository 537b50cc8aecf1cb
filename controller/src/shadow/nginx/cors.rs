//! `enable-cors` and the `cors-*` keys read as ingress-nginx reads them
//! (internal/ingress/annotations/cors/main.go: its validators, then `Parse` with its defaults),
//! into the [`CorsSpec`] the proxy serves. A value main.go's validator rejects refuses the hosts.

use shunt_spec::{AllowOrigin, CorsList, CorsSpec, CorsStyle};

use super::annotations::{Refusal, flag};

const DEFAULT_METHODS: &str = "GET, PUT, POST, DELETE, PATCH, OPTIONS";
const DEFAULT_HEADERS: &str =
    "DNT,Keep-Alive,User-Agent,X-Requested-With,If-Modified-Since,Cache-Control,Content-Type,Range,Authorization";
const DEFAULT_MAX_AGE: i64 = 1728000;

/// The CORS keys of one Ingress, as written; resolved once all are seen.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CorsKeys {
    enable: Option<String>,
    allow_origin: Option<String>,
    allow_methods: Option<String>,
    allow_headers: Option<String>,
    allow_credentials: Option<String>,
    expose_headers: Option<String>,
    max_age: Option<String>,
}

impl CorsKeys {
    /// Keeps `value` when `name` (without the prefix) is a CORS key; `false` otherwise.
    pub fn set(&mut self, name: &str, value: &str) -> bool {
        let slot = match name {
            "enable-cors" => &mut self.enable,
            "cors-allow-origin" => &mut self.allow_origin,
            "cors-allow-methods" => &mut self.allow_methods,
            "cors-allow-headers" => &mut self.allow_headers,
            "cors-allow-credentials" => &mut self.allow_credentials,
            "cors-expose-headers" => &mut self.expose_headers,
            "cors-max-age" => &mut self.max_age,
            _ => return false,
        };
        *slot = Some(value.to_string());
        true
    }

    /// What the routes of the Ingress do, or the key that refuses its hosts. Without
    /// `enable-cors` the other keys change nothing, whatever they hold.
    pub fn resolve(&self) -> Result<Option<CorsSpec>, (Refusal, &'static str)> {
        // An empty value skips validation and fails to parse: main.go's default (off) holds.
        match self.enable.as_deref() {
            None | Some("") => return Ok(None),
            Some(value) if !flag(value).map_err(|r| (r, "enable-cors"))? => return Ok(None),
            Some(_) => {}
        }
        let Some(allow_origin) = allow_origin(self.allow_origin.as_deref()).map_err(|r| (r, "cors-allow-origin"))?
        else {
            // No origin survived main.go's parsing: the template writes no `if` that sets `$cors`.
            return Ok(None);
        };
        let spec = CorsSpec {
            allow_origin,
            allow_methods: Some(CorsList::Listed(
                listed(self.allow_methods.as_deref(), is_method_list, DEFAULT_METHODS)
                    .map_err(|r| (r, "cors-allow-methods"))?,
            )),
            allow_headers: Some(CorsList::Listed(
                listed(self.allow_headers.as_deref(), is_header_list, DEFAULT_HEADERS)
                    .map_err(|r| (r, "cors-allow-headers"))?,
            )),
            allow_credentials: credentials(self.allow_credentials.as_deref())
                .map_err(|r| (r, "cors-allow-credentials"))?,
            expose_headers: Some(
                listed(self.expose_headers.as_deref(), is_expose_list, "").map_err(|r| (r, "cors-expose-headers"))?,
            )
            .filter(|expose| !expose.is_empty()),
            max_age: max_age(self.max_age.as_deref()).map_err(|r| (r, "cors-max-age"))?,
            style: CorsStyle::Nginx,
        };
        Ok(Some(spec))
    }
}

/// `cors-allow-origin`: `None` when no origin is kept. Missing or blank is `*`; origins
/// `Parse` does not recognise are skipped, as it skips them; `*` anywhere admits all.
fn allow_origin(value: Option<&str>) -> Result<Option<AllowOrigin>, Refusal> {
    let Some(value) = value.filter(|v| !v.is_empty()) else {
        return Ok(Some(AllowOrigin::Any));
    };
    if !valid(value, is_origin_list) {
        return Err(Refusal::Invalid);
    }
    if value.trim().is_empty() {
        return Ok(Some(AllowOrigin::Any));
    }
    let mut kept = Vec::new();
    for origin in value.trim().split(',').map(str::trim).filter(|o| !o.is_empty()) {
        if origin == "*" {
            return Ok(Some(AllowOrigin::Any));
        }
        if is_origin(origin) {
            kept.push(origin.to_string());
        }
    }
    Ok((!kept.is_empty()).then_some(AllowOrigin::List(kept)))
}

/// A list key: missing or blank gives `default`; a value the validator rejects refuses; a
/// value it admits but `Parse`'s own check (on the value with its spaces) rejects gives
/// `default` too. The value is sent trimmed.
fn listed(value: Option<&str>, check: fn(&str) -> bool, default: &str) -> Result<String, Refusal> {
    let Some(value) = value.filter(|v| !v.is_empty()) else {
        return Ok(default.to_string());
    };
    if !valid(value, check) {
        return Err(Refusal::Invalid);
    }
    let trimmed = value.trim();
    if trimmed.is_empty() || !check(trimmed) {
        return Ok(default.to_string());
    }
    // Go's `\s` admits a form feed, which no field value may hold.
    if !trimmed.bytes().all(|b| b == b'\t' || (0x20..0x7f).contains(&b)) {
        return Err(Refusal::Unsupported);
    }
    Ok(trimmed.to_string())
}

/// parser.ValidateRegex(regex, true): spaces removed, then the regex, and no CR or LF.
fn valid(value: &str, check: fn(&str) -> bool) -> bool {
    let spaceless = value.replace(' ', "");
    check(&spaceless) && !value.contains(['\r', '\n'])
}

/// Missing or empty is `true`, main.go's default.
fn credentials(value: Option<&str>) -> Result<bool, Refusal> {
    match value {
        None | Some("") => Ok(true),
        Some(value) => flag(value),
    }
}

/// Go's `strconv.Atoi`: a sign, decimal digits, within 64 bits. Missing or empty is the default.
fn max_age(value: Option<&str>) -> Result<i64, Refusal> {
    match value {
        None | Some("") => Ok(DEFAULT_MAX_AGE),
        Some(value) => value.parse().map_err(|_| Refusal::Invalid),
    }
}

/// `^([A-Za-z]+,?\s?)+$`: words of letters, each followed by at most a comma and one blank.
pub(super) fn is_method_list(value: &str) -> bool {
    is_word_list(value, |b| b.is_ascii_alphabetic())
}

/// `^(([A-Za-z0-9\-\_]+|\*),?\s?)+$`.
pub(super) fn is_expose_list(value: &str) -> bool {
    is_word_list(value, |b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'*'))
}

/// `^[A-Za-z0-9-_, ]*$` (parser.HeadersVariable).
pub(super) fn is_header_list(value: &str) -> bool {
    value
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b',' | b' '))
}

/// `^((word),?\s?)+$` with words of `word` bytes: starts with a word byte, and every run of
/// other bytes is a comma, one Go `\s` blank, or a comma and one blank.
fn is_word_list(value: &str, word: fn(u8) -> bool) -> bool {
    let bytes = value.as_bytes();
    if !bytes.first().copied().is_some_and(word) {
        return false;
    }
    let blank = |b: u8| matches!(b, b'\t' | b'\n' | b'\x0c' | b'\r' | b' ');
    bytes.split(|b| word(*b)).all(|gap| match gap {
        [] | [b','] => true,
        [b] => blank(*b),
        [b',', b] => blank(*b),
        _ => false,
    })
}

/// One origin as `Parse` keeps it: `^([a-z]+://(\*\.)?[A-Za-z0-9\-.]*(:\d+)?|\*|null)?$`.
pub(super) fn is_origin(origin: &str) -> bool {
    if origin == "null" || origin == "*" {
        return true;
    }
    let Some((scheme, rest)) = origin.split_once("://") else {
        return false;
    };
    if scheme.is_empty() || !scheme.bytes().all(|b| b.is_ascii_lowercase()) {
        return false;
    }
    let rest = rest.strip_prefix("*.").unwrap_or(rest);
    let (host, port) = match rest.split_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (rest, None),
    };
    host.bytes().all(is_host_byte) && port.is_none_or(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

fn is_host_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.')
}

/// The validator's `^((((([a-z]+://)?(\*\.)?[A-Za-z0-9\-.]*(:\d+)?,?)|null)+)|\*)?$`, on the
/// value without its spaces: `*`, or a run of items each of which may be empty, so whether
/// the text splits into items at all (`null` is host characters already).
pub(super) fn is_origin_list(value: &str) -> bool {
    if value == "*" {
        return true;
    }
    let bytes = value.as_bytes();
    let mut reachable = vec![false; bytes.len() + 1];
    reachable[0] = true;
    for start in 0..bytes.len() {
        if reachable[start] {
            for end in item_ends(bytes, start) {
                reachable[end] = true;
            }
        }
    }
    reachable[bytes.len()]
}

/// Every end of one item `([a-z]+://)?(\*\.)?[A-Za-z0-9\-.]*(:\d+)?,?` starting at `start`.
fn item_ends(bytes: &[u8], start: usize) -> Vec<usize> {
    let run = |from: usize, class: fn(u8) -> bool| from + bytes[from..].iter().take_while(|b| class(**b)).count();
    let mut heads = vec![start];
    let letters = run(start, |b| b.is_ascii_lowercase());
    if letters > start && bytes[letters..].starts_with(b"://") {
        heads.push(letters + 3);
    }
    let mut hosts = Vec::new();
    for head in heads {
        hosts.push(head);
        if bytes[head..].starts_with(b"*.") {
            hosts.push(head + 2);
        }
    }
    let mut ends = Vec::new();
    for host in hosts {
        for after_host in host..=run(host, is_host_byte) {
            ends.push(after_host);
            if bytes.get(after_host) == Some(&b':') {
                let digits = run(after_host + 1, |b| b.is_ascii_digit());
                ends.extend(after_host + 2..=digits);
            }
        }
    }
    let commas: Vec<usize> = ends
        .iter()
        .filter(|&&end| bytes.get(end) == Some(&b','))
        .map(|end| end + 1)
        .collect();
    ends.extend(commas);
    ends
}
