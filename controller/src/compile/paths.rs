//! Rule hosts and paths: validated first, then normalised to the form the table stores.

use std::net::IpAddr;

use shunt_spec::{HostMatch, PathKind};

/// Longest DNS name (RFC 1123) and label.
const MAX_NAME: usize = 253;
const MAX_LABEL: usize = 63;

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HostError {
    #[error("a wildcard must be the whole first label (\"*.example.com\")")]
    Wildcard,
    #[error("an IP address is not a host name")]
    IpAddress,
    #[error("longer than {MAX_NAME} characters")]
    TooLong,
    #[error("empty label")]
    EmptyLabel,
    #[error(
        "label {0:?} is not a DNS-1123 label (letters, digits and '-', at most {MAX_LABEL}, starting and ending with a letter or digit)"
    )]
    Label(String),
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("pathType is missing")]
    MissingType,
    #[error("pathType {0:?} is not Exact, Prefix or ImplementationSpecific")]
    UnknownType(String),
    #[error("an Exact path must not be empty")]
    EmptyExact,
    #[error("must start with \"/\"")]
    NotAbsolute,
    #[error("must not contain whitespace, control characters, '?' or '#' (found {0:?})")]
    Character(char),
}

/// `""` is any host, `*.example.com` a one-label wildcard, anything else an exact DNS name.
/// Uppercase letters are accepted and lowercased, as DNS names are case-insensitive.
pub fn parse_host(raw: &str) -> Result<HostMatch, HostError> {
    if raw.is_empty() {
        return Ok(HostMatch::Any);
    }
    let host = raw.to_ascii_lowercase();
    let name = host.strip_prefix("*.").unwrap_or(&host);
    if name.contains('*') {
        return Err(HostError::Wildcard);
    }
    if name.parse::<IpAddr>().is_ok() {
        return Err(HostError::IpAddress);
    }
    check_dns1123_subdomain(name)?;
    // Lowercase and checked (no empty label, so no trailing dot): what `from_rule_host` would
    // give, without copying the name again.
    Ok(match host.strip_prefix("*.") {
        Some(suffix) => HostMatch::Wildcard(suffix.to_string()),
        None => HostMatch::Exact(host),
    })
}

/// Lowercase DNS-1123 subdomain: dot-separated labels of `[a-z0-9-]`, not starting or ending with `-`.
fn check_dns1123_subdomain(name: &str) -> Result<(), HostError> {
    if name.len() > MAX_NAME {
        return Err(HostError::TooLong);
    }
    for label in name.split('.') {
        if label.is_empty() {
            return Err(HostError::EmptyLabel);
        }
        let allowed = label
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if !allowed || label.len() > MAX_LABEL || label.starts_with('-') || label.ends_with('-') {
            return Err(HostError::Label(label.to_string()));
        }
    }
    Ok(())
}

/// Validates an Ingress path and returns it the way the table keys it. `ImplementationSpecific`
/// means `Prefix` here; a missing path is `/` (for `Exact` it is an error). `Prefix` paths lose
/// their trailing slashes (`/foo/` matches like `/foo`), `Exact` paths are kept verbatim.
pub fn parse_path(path: Option<&str>, path_type: &str) -> Result<(PathKind, String), PathError> {
    let kind = match path_type {
        "Exact" => PathKind::Exact,
        "Prefix" | "ImplementationSpecific" => PathKind::Prefix,
        "" => return Err(PathError::MissingType),
        other => return Err(PathError::UnknownType(other.to_string())),
    };
    let path = match (path.filter(|p| !p.is_empty()), kind) {
        (Some(path), _) => path,
        (None, PathKind::Prefix | PathKind::CharPrefix | PathKind::Regex) => "/",
        (None, PathKind::Exact) => return Err(PathError::EmptyExact),
    };
    if !path.starts_with('/') {
        return Err(PathError::NotAbsolute);
    }
    if let Some(c) = path
        .chars()
        .find(|&c| c.is_whitespace() || c.is_control() || c == '?' || c == '#')
    {
        return Err(PathError::Character(c));
    }
    let path = match kind {
        PathKind::Exact | PathKind::CharPrefix | PathKind::Regex => path,
        PathKind::Prefix => match path.trim_end_matches('/') {
            "" => "/",
            trimmed => trimmed,
        },
    };
    Ok((kind, path.to_string()))
}
