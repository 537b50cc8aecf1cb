//! The values of the `proxy-ssl-*` keys as proxyssl/main.go reads them: a value that fails its
//! validator falls back to the default (`DEFAULT` ciphers, `TLSv1.2`, depth 1, `off`, no
//! name), so only a valid non-default value changes what nginx does.

use shunt_spec::TlsVersions;

/// Longer values are not read (a `namespace/name` is at most 63 + 1 + 253 bytes).
pub const MAX_VALUE: usize = 512;

/// What `proxy-ssl-verify-depth` sets once nginx writes `proxy_ssl_verify_depth`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Depth {
    /// OpenSSL's limit: at most this many intermediates between the pod's certificate and the
    /// anchor (1, the default, also for a non-integer or 0). Past 255 (any real chain) it is
    /// held at 255.
    Max(u8),
    /// nginx's `ngx_conf_set_num_slot` rejects it and the configuration fails to load.
    Negative,
}

/// ingress-nginx's `normalizeString`: each line trimmed.
fn normalize(value: &str) -> String {
    value.lines().map(str::trim).collect::<Vec<_>>().join("\n")
}

/// The namespace and name of a valid `namespace/name` reference, or `None` when nginx denies
/// it: it fails `BasicCharsRegex` (checked with spaces removed), is not two parts
/// (`k8s.ParseNameNS`), or names no Secret (an empty part).
pub fn secret_reference(value: &str) -> Option<(&str, &str)> {
    let basic = |c: char| c.is_ascii_alphanumeric() || "/-._~:".contains(c) || c == ' ';
    if value.len() > MAX_VALUE || !value.chars().all(basic) {
        return None;
    }
    // Without newlines (refused above), normalizing is trimming the whole value.
    let (namespace, name) = value.trim().split_once('/')?;
    (!namespace.is_empty() && !name.is_empty() && !name.contains('/')).then_some((namespace, name))
}

/// Whether `proxy-ssl-ciphers` leaves OpenSSL's `DEFAULT` list: an empty or invalid value
/// falls back to it (`proxySSLCiphersRegex`, checked with spaces removed).
pub fn default_ciphers(value: &str) -> bool {
    if value.chars().count() > MAX_VALUE {
        return false;
    }
    // The validator reads the raw value, the parser the normalized one.
    let valid = |c: char| c.is_ascii_alphanumeric() || "+:_-!".contains(c) || c == ' ';
    let normalized = normalize(value);
    !value.chars().all(valid) || normalized.is_empty() || normalized == "DEFAULT"
}

/// `proxy-ssl-verify-depth` as `GetIntAnnotation` reads it (Go's `strconv.Atoi`, which like
/// Rust's `i64` parser takes an optional sign and no spaces); invalid or 0 is the default 1.
pub fn verify_depth(value: &str) -> Depth {
    match value.parse::<i64>() {
        Ok(depth) if depth < 0 => Depth::Negative,
        Ok(depth) if depth > 0 => Depth::Max(u8::try_from(depth).unwrap_or(u8::MAX)),
        _ => Depth::Max(1),
    }
}

/// The validators' view of a raw value: spaces removed, and no line breaks (`MaliciousRegex`).
fn validated(value: &str, allowed: impl Fn(&str) -> bool) -> bool {
    let compact: String = value.chars().filter(|c| *c != ' ').collect();
    !compact.contains(['\r', '\n']) && allowed(&compact)
}

/// `proxy-ssl-verify` and `proxy-ssl-server-name`: on only for `on` (after trimming); any
/// other value is the default, off.
pub fn on(value: Option<&str>) -> bool {
    value.is_some_and(|value| validated(value, |_| true) && normalize(value) == "on")
}

/// `proxy-ssl-protocols` as `sortProtocols` leaves it, or `Err` when nginx's configuration
/// would not load (a word such as `TLSv1.2TLSv1.3` passes the validator and reaches
/// `proxy_ssl_protocols`). An invalid or empty value is the default, TLS 1.2 alone.
pub fn protocols(value: Option<&str>) -> Result<TlsVersions, ()> {
    let only = |compact: &str| {
        let rest = compact.replace("TLSv1.2", "").replace("TLSv1.3", "");
        rest.is_empty()
    };
    let Some(value) = value.filter(|value| value.len() <= MAX_VALUE && validated(value, only)) else {
        return Ok(TlsVersions::Tls12);
    };
    let (mut tls12, mut tls13) = (false, false);
    for word in normalize(value)
        .split(' ')
        .map(str::trim)
        .filter(|word| !word.is_empty())
    {
        match word {
            "TLSv1.2" => tls12 = true,
            "TLSv1.3" => tls13 = true,
            _ => return Err(()),
        }
    }
    Ok(match (tls12, tls13) {
        (_, false) => TlsVersions::Tls12,
        (false, true) => TlsVersions::Tls13,
        (true, true) => TlsVersions::Both,
    })
}

/// `proxy-ssl-name`: `Ok(None)` when absent or invalid (no `proxy_ssl_name` line), the name
/// when it is a plain DNS name, `Err` for what `ValidateServerName` lets through that shunt
/// cannot check the same way (nginx variables such as `$host`, ports, regex characters).
pub fn server_name(value: Option<&str>) -> Result<Option<String>, ()> {
    let Some(value) = value else { return Ok(None) };
    // IsValidRegex: alphanumerics, `-._~/:` and `^$[](){}*+?|&=\`.
    let allowed = |c: char| c.is_ascii_alphanumeric() || "-._~/:^$[](){}*+?|&=\\".contains(c);
    let trimmed = value.trim();
    let name = normalize(value);
    if value.len() > MAX_VALUE || !trimmed.chars().all(allowed) || name.is_empty() {
        return Ok(None);
    }
    let dns = |c: char| c.is_ascii_alphanumeric() || "-._".contains(c);
    match name.chars().all(dns) && !name.starts_with('.') && name.len() <= 253 {
        true => Ok(Some(name)),
        false => Err(()),
    }
}

#[cfg(test)]
mod tests;
