//! `auth-cache-key` and `auth-cache-duration`: the template's `proxy_cache auth_cache` on the
//! auth location (nginx.tmpl, `$tmp_cache_key` and `proxy_cache_valid`). The key is nginx
//! text with variables: those of the request shunt expands are kept, any other refuses the
//! hosts. nginx caches only GET and HEAD subrequests (`proxy_cache_methods`' default), so
//! another `auth-method` caches nothing.

use std::time::Duration;

use shunt_spec::{AuthCache, CacheKeyPart, CacheValid, MAX_CACHE_KEY_PARTS, MAX_URL_LEN};

use super::super::annotations::Refusal;

/// authreq's `DefaultCacheDuration`, for an annotation without `auth-cache-duration`.
const DEFAULT_DURATION: &str = "200 202 401 5m";

/// The cache `key` and `duration` ask for; `None` without a key or for a method nginx does not
/// cache. `duration` missing: `default` (the annotation's), or, without one, a refusal (the
/// global keys write no `proxy_cache_valid`, and nginx then keeps what the answer's own
/// fields say, which shunt does not reproduce).
pub(super) fn parse(
    key: Option<&str>,
    duration: Option<&str>,
    method: Option<&str>,
    default: bool,
) -> Result<Option<AuthCache>, (Refusal, &'static str)> {
    let Some(key) = key.map(str::trim).filter(|key| !key.is_empty()) else {
        return Ok(None);
    };
    let key = template(key).map_err(|r| (r, "auth-cache-key"))?;
    let duration = match duration.map(str::trim).filter(|d| !d.is_empty()) {
        Some(duration) => duration,
        None if default => DEFAULT_DURATION,
        None => return Err((Refusal::Unsupported, "auth-cache-duration")),
    };
    let valid = valid_lines(duration).map_err(|r| (r, "auth-cache-duration"))?;
    if method.is_some_and(|method| method != "GET") {
        return Ok(None);
    }
    Ok(Some(AuthCache {
        scope: String::new(),
        key,
        valid,
    }))
}

/// parser's `NGINXVariable`: letters, digits, `-`, `_`, `$`, `{`, `}`.
fn key_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-_${}".contains(&b)
}

/// The key as text and variables (`$name` or `${name}`).
pub(super) fn template(value: &str) -> Result<Vec<CacheKeyPart>, Refusal> {
    if value.len() > MAX_URL_LEN || !value.bytes().all(key_char) {
        return Err(Refusal::Invalid);
    }
    let mut parts = Vec::new();
    let mut rest = value;
    while let Some(at) = rest.find('$') {
        if at > 0 {
            parts.push(CacheKeyPart::Text(rest[..at].to_string()));
        }
        let after = &rest[at + 1..];
        let (name, tail) = match after.strip_prefix('{') {
            Some(braced) => braced.split_once('}').ok_or(Refusal::Invalid)?,
            None => after.split_at(
                after
                    .bytes()
                    .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
                    .count(),
            ),
        };
        // nginx's `set` refuses a `$` without a name.
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Err(Refusal::Invalid);
        }
        parts.push(variable(name).ok_or(Refusal::Unsupported)?);
        rest = tail;
    }
    if !rest.is_empty() {
        parts.push(CacheKeyPart::Text(rest.to_string()));
    }
    if parts.len() > MAX_CACHE_KEY_PARTS {
        return Err(Refusal::Unsupported);
    }
    Ok(parts)
}

/// The request variables people key auth answers by.
fn variable(name: &str) -> Option<CacheKeyPart> {
    let name = name.to_ascii_lowercase();
    Some(match name.as_str() {
        "remote_user" => CacheKeyPart::RemoteUser,
        "host" => CacheKeyPart::Host,
        "request_uri" => CacheKeyPart::RequestUri,
        "request_method" => CacheKeyPart::RequestMethod,
        "scheme" => CacheKeyPart::Scheme,
        "remote_addr" => CacheKeyPart::RemoteAddr,
        _ => {
            if let Some(field) = name.strip_prefix("http_").filter(|f| !f.is_empty()) {
                CacheKeyPart::Header(field.replace('_', "-"))
            } else if let Some(cookie) = name.strip_prefix("cookie_").filter(|c| !c.is_empty()) {
                CacheKeyPart::Cookie(cookie.to_string())
            } else {
                return None;
            }
        }
    })
}

/// Each comma-separated entry becomes a `proxy_cache_valid` line: codes (or `any`), then one
/// time. Words nginx would not load (two times, another word) refuse the hosts.
pub(super) fn valid_lines(value: &str) -> Result<Vec<CacheValid>, Refusal> {
    if !super::cache_duration(value) {
        return Err(Refusal::Invalid);
    }
    let entries = value.split(',').map(str::trim).filter(|e| !e.is_empty());
    entries
        .map(|entry| {
            let words: Vec<&str> = entry.split(' ').filter(|w| !w.is_empty()).collect();
            let (time, codes) = words.split_last().ok_or(Refusal::Invalid)?;
            let ttl = time_value(time).ok_or(Refusal::Unsupported)?;
            let mut any = false;
            let mut statuses = Vec::new();
            for code in codes {
                match code.parse::<u16>() {
                    _ if *code == "any" => any = true,
                    Ok(status) if (100..=599).contains(&status) && code.len() == 3 => statuses.push(status),
                    _ => return Err(Refusal::Unsupported),
                }
            }
            // No code: nginx's 200, 301 and 302.
            let codes = match (any, statuses.is_empty()) {
                (true, _) => Vec::new(),
                (false, true) => vec![200, 301, 302],
                (false, false) => statuses,
            };
            Ok(CacheValid { codes, ttl })
        })
        .collect()
}

/// nginx's `ngx_parse_time` in seconds mode for one number and unit.
fn time_value(value: &str) -> Option<Duration> {
    let digits = value.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let seconds: u64 = match &value[digits.len()..] {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        "w" => 7 * 86_400,
        "M" => 30 * 86_400,
        "y" => 365 * 86_400,
        _ => return None,
    };
    let total = digits.parse::<u64>().ok()?.checked_mul(seconds)?;
    // NGX_MAX_INT32_VALUE seconds at most.
    (total <= i32::MAX as u64).then(|| Duration::from_secs(total))
}

/// nginx's `$tmp_cache_key` start: the server's name (`_` for a rule without host) and the
/// auth location (template.go `buildAuthLocation`).
pub(crate) fn scope(host: &str, path: &str, path_type: &str) -> String {
    let host = if host.is_empty() { "_" } else { host };
    format!("{host}/_external-auth-{}-{path_type}", base64_url(path.as_bytes()))
}

/// Go's `base64.RawURLEncoding`: the URL alphabet, no padding.
fn base64_url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(char::from(ALPHABET[(n >> (18 - 6 * i) & 63) as usize]));
        }
    }
    out
}
