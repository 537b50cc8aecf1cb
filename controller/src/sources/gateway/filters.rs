//! HTTPRoute filters to route behaviours of the contract: header modifiers to
//! [`HeaderEdits`], `RequestRedirect` to a [`RedirectSpec`], `URLRewrite` to `upstream_host`
//! and a [`PathReplacement`], `CORS` to a [`CorsSpec`] (`cors.rs`). What shunt cannot reproduce is refused with the reason the
//! route's parent gives (`UnsupportedValue`); an `ExtensionRef` is no refusal but a rule that
//! answers 500 (the spec: a filter that cannot be resolved is never skipped).

use shunt_spec::{
    CorsSpec, HeaderEdits, MAX_EDITS, PathKind, PathReplacement, PrefixReplacement, RedirectSpec, Scheme,
};

use super::{
    cors, hostnames,
    matches::{MAX_VALUE_LEN, Match, is_token},
    objects::{HTTPRouteFilter, HeaderModifier, PathModifier},
};

/// Fields no filter may edit: the proxy owns framing, the host and (on requests) the
/// forwarding fields it writes.
const REFUSED: [&str; 11] = [
    "host",
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "upgrade",
    "te",
    "trailer",
    "content-length",
    ":authority",
    ":path",
];
const FORWARDING: [&str; 5] = [
    "forwarded",
    "x-forwarded-for",
    "x-forwarded-proto",
    "x-real-ip",
    "x-request-id",
];

/// What a rule's filters ask of its routes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filters {
    pub request_headers: Option<HeaderEdits>,
    pub response_headers: Option<HeaderEdits>,
    pub redirect: Option<RedirectSpec>,
    pub upstream_host: Option<String>,
    pub path_replacement: Option<PathReplacement>,
    pub cors: Option<CorsSpec>,
    /// An `ExtensionRef`: shunt resolves none, so the rule answers 500.
    pub extension: bool,
}

/// Parses a rule's filters for one of its matches (a prefix replacement needs its path).
pub fn parse(filters: &[HTTPRouteFilter], matched: &Match) -> Result<Filters, String> {
    let mut parsed = Filters::default();
    let mut seen: Vec<&str> = Vec::new();
    for filter in filters {
        let type_ = filter.type_.as_str();
        // Several mirrors are several copies (the spec allows it); `mirror.rs` reads them.
        if seen.contains(&type_) && type_ != "ExtensionRef" && type_ != "RequestMirror" {
            return Err(format!("filter {type_} is given twice"));
        }
        seen.push(type_);
        match type_ {
            "RequestHeaderModifier" => {
                parsed.request_headers = Some(edits(filter.request_header_modifier.as_ref(), true)?);
            }
            "ResponseHeaderModifier" => {
                parsed.response_headers = Some(edits(filter.response_header_modifier.as_ref(), false)?);
            }
            "RequestRedirect" => {
                let redirect = filter
                    .request_redirect
                    .as_ref()
                    .ok_or("RequestRedirect without requestRedirect")?;
                parsed.redirect = Some(redirect_spec(redirect, matched)?);
            }
            "URLRewrite" => {
                let rewrite = filter.url_rewrite.as_ref().ok_or("URLRewrite without urlRewrite")?;
                if let Some(hostname) = &rewrite.hostname {
                    parsed.upstream_host = Some(exact_hostname(hostname)?);
                }
                if let Some(path) = &rewrite.path {
                    parsed.path_replacement = Some(path_replacement(path, matched)?);
                }
            }
            "CORS" => parsed.cors = Some(cors::parse(filter.cors.as_ref())?),
            "ExtensionRef" => parsed.extension = true,
            "RequestMirror" => {}
            other => return Err(format!("filter {other:?} is not supported")),
        }
    }
    if parsed.redirect.is_some() && (parsed.upstream_host.is_some() || parsed.path_replacement.is_some()) {
        return Err("RequestRedirect and URLRewrite in one rule".to_string());
    }
    Ok(parsed)
}

/// A backendRef's own filters: header modifiers only.
pub fn parse_backend(filters: &[HTTPRouteFilter]) -> Result<(Option<HeaderEdits>, Option<HeaderEdits>), String> {
    let (mut request, mut response) = (None, None);
    for filter in filters {
        match filter.type_.as_str() {
            "RequestHeaderModifier" if request.is_none() => {
                request = Some(edits(filter.request_header_modifier.as_ref(), true)?);
            }
            "ResponseHeaderModifier" if response.is_none() => {
                response = Some(edits(filter.response_header_modifier.as_ref(), false)?);
            }
            other => return Err(format!("backendRef filter {other:?} is not supported")),
        }
    }
    Ok((request, response))
}

fn edits(modifier: Option<&HeaderModifier>, request: bool) -> Result<HeaderEdits, String> {
    let Some(modifier) = modifier else {
        return Err("a header modifier filter without its modifier".to_string());
    };
    if [modifier.set.len(), modifier.add.len(), modifier.remove.len()]
        .iter()
        .any(|&n| n > MAX_EDITS)
    {
        return Err(format!("more than {MAX_EDITS} header edits of one kind"));
    }
    let name = |raw: &str| {
        let name = raw.to_ascii_lowercase();
        let refused = REFUSED.contains(&name.as_str()) || (request && FORWARDING.contains(&name.as_str()));
        match is_token(&name) && !refused {
            true => Ok(name),
            false => Err(format!("header {raw:?} cannot be edited")),
        }
    };
    let pair = |header: &super::objects::Header| -> Result<(String, String), String> {
        let value = &header.value;
        let valid =
            value.len() <= MAX_VALUE_LEN && value.bytes().all(|b| b.is_ascii_graphic() || b == b' ' || b == b'\t');
        match valid {
            true => Ok((name(&header.name)?, value.clone())),
            false => Err(format!("value of header {:?} is not a field value", header.name)),
        }
    };
    Ok(HeaderEdits {
        set: modifier.set.iter().map(pair).collect::<Result<_, _>>()?,
        add: modifier.add.iter().map(pair).collect::<Result<_, _>>()?,
        remove: modifier.remove.iter().map(|raw| name(raw)).collect::<Result<_, _>>()?,
    })
}

fn redirect_spec(redirect: &super::objects::RequestRedirect, matched: &Match) -> Result<RedirectSpec, String> {
    let code = match redirect.status_code.unwrap_or(302) {
        code @ (301 | 302 | 303 | 307 | 308) => code as u16,
        other => return Err(format!("redirect statusCode {other} is not supported")),
    };
    let scheme = match redirect.scheme.as_deref() {
        None => None,
        Some("http") => Some(Scheme::Http),
        Some("https") => Some(Scheme::Https),
        Some(other) => return Err(format!("redirect scheme {other:?} is not supported")),
    };
    let port = match redirect.port {
        None => None,
        Some(port) => Some(
            u16::try_from(port)
                .ok()
                .filter(|&port| port != 0)
                .ok_or(format!("redirect port {port}"))?,
        ),
    };
    let mut spec = RedirectSpec {
        code,
        scheme,
        host: redirect.hostname.as_deref().map(exact_hostname).transpose()?,
        port,
        path: None,
        drop_query: false,
        location: None,
        rewritten: false,
        www: false,
        replace_prefix: None,
    };
    match redirect
        .path
        .as_ref()
        .map(|path| path_replacement(path, matched))
        .transpose()?
    {
        Some(PathReplacement::Full(path)) => spec.path = Some(path),
        Some(PathReplacement::Prefix(prefix)) => spec.replace_prefix = Some(prefix),
        None => {}
    }
    Ok(spec)
}

fn path_replacement(modifier: &PathModifier, matched: &Match) -> Result<PathReplacement, String> {
    let checked = |value: Option<&String>, field: &str| -> Result<String, String> {
        let value = value.ok_or(format!("{} without {field}", modifier.type_))?;
        let valid = value.starts_with('/')
            && value.len() <= MAX_VALUE_LEN
            && value.bytes().all(|b| b.is_ascii_graphic() && b != b'?' && b != b'#');
        valid
            .then(|| value.clone())
            .ok_or(format!("{field} {value:?} is not a path"))
    };
    match modifier.type_.as_str() {
        "ReplaceFullPath" => Ok(PathReplacement::Full(checked(
            modifier.replace_full_path.as_ref(),
            "replaceFullPath",
        )?)),
        "ReplacePrefixMatch" if matched.kind == PathKind::Prefix => Ok(PathReplacement::Prefix(PrefixReplacement {
            matched: matched.path.clone(),
            replacement: checked(modifier.replace_prefix_match.as_ref(), "replacePrefixMatch")?,
        })),
        "ReplacePrefixMatch" => Err("ReplacePrefixMatch needs a PathPrefix match".to_string()),
        other => Err(format!("path modifier {other:?} is not supported")),
    }
}

/// A redirect's or rewrite's hostname: one exact DNS name.
fn exact_hostname(raw: &str) -> Result<String, String> {
    match hostnames::parse(raw) {
        Some(shunt_spec::HostMatch::Exact(name)) => Ok(name),
        _ => Err(format!("hostname {raw:?} is not a DNS name")),
    }
}
