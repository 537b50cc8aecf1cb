//! `upstream-hash-by`: nginx's complex value parsed as util.lua's `parse_complex_value` splits
//! it (`$var`, `${var}`, text), into the [`HashKey`] the proxy hashes. ingress-nginx keys it
//! by upstream: the first Ingress naming a backend gives it its key, for every route to it
//! (controller.go `createUpstreams`, lines 1094-1104).

use std::collections::BTreeMap;

use shunt_spec::{BackendId, HashKey, KeyPart, MAX_KEY_PARTS, MAX_NAME_LEN};

use super::{Nginx, annotations::Refusal};
use crate::compile::Sink;

/// `upstream-hash-by`'s value; empty is no key (main.go's parse fails and the key is skipped).
/// Characters upstreamhashby/main.go's validator rejects are invalid; a variable shunt does not
/// read is unsupported.
pub fn key(value: &str) -> Result<Option<HashKey>, Refusal> {
    if value.is_empty() {
        return Ok(None);
    }
    let allowed = |b: u8| b.is_ascii_alphanumeric() || b"-_${}".contains(&b);
    if !value.bytes().all(allowed) {
        return Err(Refusal::Invalid);
    }
    let mut parts = Vec::new();
    let mut rest = value;
    while !rest.is_empty() {
        let (part, after) = next_part(rest)?;
        parts.push(part);
        rest = after;
    }
    if parts.len() > MAX_KEY_PARTS || value.len() > MAX_NAME_LEN {
        return Err(Refusal::Unsupported);
    }
    Ok(Some(HashKey { parts }))
}

/// The first part of `rest` and what follows it.
fn next_part(rest: &str) -> Result<(KeyPart, &str), Refusal> {
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let Some(after) = rest.strip_prefix('$') else {
        let end = rest.find('$').unwrap_or(rest.len());
        return Ok((KeyPart::Text(rest[..end].to_string()), &rest[end..]));
    };
    if let Some(braced) = after.strip_prefix('{')
        && let Some(end) = braced.find('}')
        && end > 0
        && braced[..end].chars().all(is_name)
    {
        return Ok((variable(&braced[..end])?, &braced[end + 1..]));
    }
    let end = after.find(|c: char| !is_name(c)).unwrap_or(after.len());
    if end == 0 {
        // A lone `$` is text to the pattern's last branch.
        return Ok((KeyPart::Text("$".to_string()), after));
    }
    Ok((variable(&after[..end])?, &after[end..]))
}

/// The variables shunt reads alike; nginx's other variables are refused.
fn variable(name: &str) -> Result<KeyPart, Refusal> {
    Ok(match name {
        "request_uri" => KeyPart::RequestUri,
        "uri" => KeyPart::Uri,
        "args" => KeyPart::Args,
        "host" => KeyPart::Host,
        "remote_addr" => KeyPart::RemoteAddr,
        "binary_remote_addr" => KeyPart::BinaryRemoteAddr,
        _ => match (name.strip_prefix("http_"), name.strip_prefix("cookie_")) {
            (Some(field), _) if !field.is_empty() && !field.bytes().any(|b| b.is_ascii_uppercase()) => {
                KeyPart::Header(field.replace('_', "-"))
            }
            (_, Some(cookie)) if !cookie.is_empty() => KeyPart::Cookie(cookie.to_string()),
            _ => return Err(Refusal::Unsupported),
        },
    })
}

/// Each backend's key, from the first Ingress (in precedence order, canaries included) naming it.
pub(super) fn by_backend(nginxes: &[&Nginx<'_>], sink: &mut Sink<'_>) -> BTreeMap<BackendId, Option<HashKey>> {
    let mut keys = BTreeMap::new();
    for nginx in nginxes {
        let rules = nginx.ingress.spec.as_ref().and_then(|spec| spec.rules.as_ref());
        let paths = rules
            .into_iter()
            .flatten()
            .flat_map(|rule| rule.http.iter().flat_map(|http| &http.paths));
        for path in paths {
            let protocol = nginx.annotations.backend_protocol;
            if let Ok(resolved) = sink.backends.resolve(nginx.namespace, &path.backend, protocol) {
                keys.entry(resolved.id.clone())
                    .or_insert_with(|| nginx.annotations.hash.clone());
            }
        }
    }
    keys
}
