//! `auth-url`: an `http` or `https` URL with a path, as ingress-nginx validates it
//! (`URLWithNginxVariableRegex`, then `parser.StringToURL`) and nginx's `proxy_pass $target`
//! sends it. nginx variables (`$host`) would change the service per request: refused.

use shunt_spec::{AuthUrl, MAX_URL_LEN, Scheme};

use super::super::annotations::Refusal;

/// parser's `URLIsValidRegex`: the characters of a URL ingress-nginx admits.
pub(super) fn url_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._~/:,?&=".contains(&b)
}

/// The auth service's URL.
pub(super) fn parse(value: &str) -> Result<AuthUrl, Refusal> {
    // The validator looks at the value without its spaces; nginx would get them as written.
    let value = value.trim();
    if value.is_empty() || value.len() > MAX_URL_LEN {
        return Err(Refusal::Invalid);
    }
    if !value.bytes().all(|b| url_char(b) || b == b'$' || b == b' ') {
        return Err(Refusal::Invalid);
    }
    if value.contains(' ') || value.contains('$') {
        return Err(Refusal::Unsupported);
    }
    let (scheme, rest) = if let Some(rest) = value.strip_prefix("http://") {
        (Scheme::Http, rest)
    } else if let Some(rest) = value.strip_prefix("https://") {
        (Scheme::Https, rest)
    } else {
        // Another scheme (or none) is no URL nginx's proxy_pass takes.
        return Err(Refusal::Invalid);
    };
    let split = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, path_and_query) = rest.split_at(split);
    // Without a path, nginx would send the internal location's own URI.
    if !path_and_query.starts_with('/') {
        return Err(Refusal::Unsupported);
    }
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, port)) => (
            host,
            port.parse::<u16>().ok().filter(|p| *p > 0).ok_or(Refusal::Invalid)?,
        ),
        None => (authority, scheme.default_port()),
    };
    if !dns_name(host) {
        return Err(Refusal::Invalid);
    }
    Ok(AuthUrl {
        scheme,
        host: host.to_string(),
        port,
        path_and_query: path_and_query.to_string(),
    })
}

/// A DNS name or IPv4 address: labels of letters, digits, `-` and `_`, no empty label
/// (StringToURL refuses `..`), at most 253 bytes.
fn dns_name(host: &str) -> bool {
    let host = host.strip_suffix('.').unwrap_or(host);
    !host.is_empty()
        && host.len() <= 253
        && host.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
}
