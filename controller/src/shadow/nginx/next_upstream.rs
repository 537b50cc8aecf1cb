//! `proxy-next-upstream`, `proxy-next-upstream-tries` and `proxy-next-upstream-timeout`
//! (annotations over ConfigMap keys of the same names, and the ConfigMap's
//! `retry-non-idempotent`), read as proxy/main.go reads them and written into a route's
//! [`NextUpstream`] as the template writes `proxy_next_upstream*` (nginx.tmpl L1353-1355,
//! template.go `buildNextUpstream`).

use shunt_spec::NextUpstream;

use super::annotations::Refusal;

/// More tries than this are refused rather than sent: ingress-nginx's Lua balancer grants a try
/// per pick (`set_more_tries(1)`), so nginx would make them all.
pub const MAX_TRIES: u32 = 16;

/// The conditions proxy/main.go's `validUpstreamAnnotation` admits.
const CONDITIONS: [&str; 12] = [
    "error",
    "timeout",
    "invalid_header",
    "http_500",
    "http_502",
    "http_503",
    "http_504",
    "http_403",
    "http_404",
    "http_429",
    "non_idempotent",
    "off",
];

/// The three keys as one level (annotations, or the ConfigMap) sets them; `None` keeps the level
/// below (the ConfigMap, then ingress-nginx's defaults: `error timeout`, 3 tries, no time limit).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NextUpstreamKeys {
    pub conditions: Option<Conditions>,
    pub tries: Option<u32>,
    /// Seconds; 0 is no limit.
    pub timeout: Option<u32>,
}

/// `proxy-next-upstream`'s words, parsed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Conditions {
    pub off: bool,
    pub error: bool,
    pub timeout: bool,
    pub invalid_header: bool,
    pub non_idempotent: bool,
    /// Sorted, without repeats.
    pub statuses: Vec<u16>,
}

/// `proxy-next-upstream`: words the validator admits, each followed by at most one blank (the
/// regex `^((error|...|off)\s?)+$`). Words run together (`errortimeout`) pass the validator
/// but nginx would not load them.
pub fn conditions(value: &str) -> Result<Conditions, Refusal> {
    let blank = |c: char| matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0c');
    if value.is_empty() || value.starts_with(blank) || value.contains(|c: char| c.is_whitespace() && !blank(c)) {
        return Err(Refusal::Invalid);
    }
    let mut parsed = Conditions::default();
    let mut words = value.split(blank).peekable();
    while let Some(word) = words.next() {
        // A separator is one blank: an empty word is a second blank, unless it ends the value.
        if word.is_empty() && words.peek().is_some() {
            return Err(Refusal::Invalid);
        }
        if word.is_empty() {
            continue;
        }
        if !CONDITIONS.contains(&word) {
            return Err(if glued(word) {
                Refusal::Unsupported
            } else {
                Refusal::Invalid
            });
        }
        parsed.set(word);
    }
    Ok(parsed)
}

/// Whether `word` is conditions written without blanks between them, which the validator's
/// regex admits. No condition is a prefix of another, so taking the one that starts the rest
/// each time decides it.
fn glued(mut word: &str) -> bool {
    while !word.is_empty() {
        match CONDITIONS.iter().find_map(|condition| word.strip_prefix(condition)) {
            Some(rest) => word = rest,
            None => return false,
        }
    }
    true
}

impl Conditions {
    fn set(&mut self, word: &str) {
        match word {
            "off" => self.off = true,
            "error" => self.error = true,
            "timeout" => self.timeout = true,
            "invalid_header" => self.invalid_header = true,
            "non_idempotent" => self.non_idempotent = true,
            status => {
                let code = status
                    .trim_start_matches("http_")
                    .parse()
                    .expect("a listed http_NNN condition");
                if let Err(at) = self.statuses.binary_search(&code) {
                    self.statuses.insert(at, code);
                }
            }
        }
    }

    /// ingress-nginx's default, `error timeout`.
    fn nginx_default() -> Self {
        Conditions {
            error: true,
            timeout: true,
            ..Conditions::default()
        }
    }
}

/// `proxy-next-upstream-tries`: Go's `Atoi`; 0 (no limit) and more than [`MAX_TRIES`] are
/// refused, and nginx would not load a negative count.
pub fn tries(value: &str) -> Result<u32, Refusal> {
    let number = go_int(value)?;
    u32::try_from(number)
        .ok()
        .filter(|tries| (1..=MAX_TRIES).contains(tries))
        .ok_or(Refusal::Unsupported)
}

/// `proxy-next-upstream-timeout`: Go's `Atoi`, seconds; 0 is no limit, nginx would not load a
/// negative one.
pub fn timeout(value: &str) -> Result<u32, Refusal> {
    let number = go_int(value)?;
    u32::try_from(number)
        .ok()
        .filter(|seconds| *seconds <= super::timeouts::MAX_SECONDS)
        .ok_or(Refusal::Unsupported)
}

fn go_int(value: &str) -> Result<i64, Refusal> {
    let digits = value.strip_prefix(['+', '-']).unwrap_or(value);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Refusal::Invalid);
    }
    value.parse().map_err(|_| Refusal::Invalid)
}

impl NextUpstreamKeys {
    /// `self` where set, else `below`.
    pub fn or(&self, below: &NextUpstreamKeys) -> NextUpstreamKeys {
        NextUpstreamKeys {
            conditions: self.conditions.clone().or_else(|| below.conditions.clone()),
            tries: self.tries.or(below.tries),
            timeout: self.timeout.or(below.timeout),
        }
    }

    /// The route's rule, or `None` at ingress-nginx's defaults, which the proxy's own retries
    /// already are (`error timeout`, 3 tries). `retry_non_idempotent`: the ConfigMap's key.
    pub fn rule(&self, retry_non_idempotent: bool) -> Option<NextUpstream> {
        let conditions = self.conditions.clone().unwrap_or_else(Conditions::nginx_default);
        let default_tries = u32::from(shunt_spec::defaults::RETRIES) + 1;
        let tries = self.tries.unwrap_or(default_tries);
        let within_secs = self.timeout.filter(|seconds| *seconds > 0);
        let non_idempotent = conditions.non_idempotent || retry_non_idempotent;
        if conditions == Conditions::nginx_default()
            && tries == default_tries
            && within_secs.is_none()
            && !non_idempotent
        {
            return None;
        }
        // nginx's `off` clears every other condition (ngx_http_proxy_merge_loc_conf).
        if conditions.off {
            return Some(NextUpstream::OFF);
        }
        Some(NextUpstream {
            error: conditions.error,
            timeout: conditions.timeout,
            invalid_header: conditions.invalid_header,
            statuses: conditions.statuses,
            non_idempotent,
            tries,
            within_secs,
        })
    }
}

#[cfg(test)]
mod tests;
