//! The values of the `proxy-ssl-*` keys as proxyssl/main.go reads them: a value that fails its
//! validator falls back to the default (`DEFAULT` ciphers, depth 1), so only a valid
//! non-default value changes what nginx does.

/// Longer values are not read (a `namespace/name` is at most 63 + 1 + 253 bytes).
pub const MAX_VALUE: usize = 512;

/// What `proxy-ssl-verify-depth` sets once nginx writes `proxy_ssl_verify_depth`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Depth {
    /// The default (also for a non-integer or 0): the pod's certificate is issued by the CA.
    One,
    /// Intermediates allowed: rustls has no depth limit to set, so shunt cannot reproduce it.
    Deeper,
    /// nginx's `ngx_conf_set_num_slot` rejects it and the configuration fails to load.
    Negative,
}

/// ingress-nginx's `normalizeString`: each line trimmed.
fn normalize(value: &str) -> String {
    value.lines().map(str::trim).collect::<Vec<_>>().join("\n")
}

/// The namespace of a valid `namespace/name` reference, or `None` when nginx denies it: it
/// fails `BasicCharsRegex` (checked with spaces removed), is not two parts (`k8s.ParseNameNS`),
/// or names no Secret (an empty part).
pub fn secret_namespace(value: &str) -> Option<&str> {
    let basic = |c: char| c.is_ascii_alphanumeric() || "/-._~:".contains(c) || c == ' ';
    if value.len() > MAX_VALUE || !value.chars().all(basic) {
        return None;
    }
    // Without newlines (refused above), normalizing is trimming the whole value.
    let (namespace, name) = value.trim().split_once('/')?;
    (!namespace.is_empty() && !name.is_empty() && !name.contains('/')).then_some(namespace)
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
        Ok(depth) if depth > 1 => Depth::Deeper,
        _ => Depth::One,
    }
}

#[cfg(test)]
mod tests;
