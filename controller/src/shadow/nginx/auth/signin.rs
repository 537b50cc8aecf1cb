//! `auth-signin` and `auth-signin-redirect-param`: the template's sign-in location,
//! `return 302 {{ buildAuthSignURL $externalAuth.SigninURL $externalAuth.SigninURLRedirectParam }}`,
//! as nginx expands its variables. Variables other than the request's scheme, host and target
//! are refused.

use shunt_spec::{MAX_URL_LEN, Signin, SigninPart};

use super::{super::annotations::Refusal, url::url_char};

/// template.go's `defaultGlobalAuthRedirectParam`.
const DEFAULT_PARAM: &str = "rd";

/// The sign-in redirect's template, or the key that refuses the hosts.
pub(super) fn parse(value: &str, param: Option<&str>) -> Result<Signin, (Refusal, &'static str)> {
    let param = redirect_param(param).map_err(|r| (r, "auth-signin-redirect-param"))?;
    template(value, &param).map_err(|r| (r, "auth-signin"))
}

/// `auth-signin-redirect-param`: a plain query parameter name; missing or empty is `rd`.
fn redirect_param(param: Option<&str>) -> Result<String, Refusal> {
    let param = param.map(|p| p.replace(' ', "")).unwrap_or_default();
    if param.is_empty() {
        return Ok(DEFAULT_PARAM.to_string());
    }
    if !param.bytes().all(url_char) {
        return Err(Refusal::Invalid);
    }
    // `&`, `=`, `?` or `/` in a name would be read apart by Go's query parser and nginx.
    if !param.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b)) {
        return Err(Refusal::Unsupported);
    }
    Ok(param)
}

fn template(value: &str, param: &str) -> Result<Signin, Refusal> {
    let value = value.trim();
    if value.is_empty() || value.len() > MAX_URL_LEN {
        return Err(Refusal::Invalid);
    }
    if !value.bytes().all(|b| url_char(b) || b == b'$') {
        return Err(Refusal::Invalid);
    }
    // nginx's `return 302` makes a Location starting with `/` absolute with its own server name.
    let absolute = ["http://", "https://", "$scheme://", "$pass_access_scheme://"];
    if !absolute.iter().any(|start| value.starts_with(start)) {
        return Err(Refusal::Unsupported);
    }
    let url = with_redirect_param(value, param);
    let mut parts = Vec::new();
    let mut rest = url.as_str();
    while let Some(at) = rest.find('$') {
        push_text(&mut parts, &rest[..at]);
        let name_len = rest[at + 1..]
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
            .count();
        let name = &rest[at + 1..at + 1 + name_len];
        parts.push(variable(name).ok_or(Refusal::Unsupported)?);
        rest = &rest[at + 1 + name_len..];
    }
    push_text(&mut parts, rest);
    Ok(Signin { parts })
}

/// template.go's `buildAuthSignURL`: the parameter is added unless the query has it with a
/// value (Go's `url.Values.Get`); after `?` when the query has no key at all, else after `&`.
fn with_redirect_param(url: &str, param: &str) -> String {
    let query = url.split_once('?').map(|(_, query)| query).unwrap_or("");
    let pairs = query.split('&').filter(|pair| !pair.is_empty());
    let first = pairs.clone().find_map(|pair| {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        (key == param).then_some(value)
    });
    if first.is_some_and(|value| !value.is_empty()) {
        return url.to_string();
    }
    let join = if pairs.count() == 0 { '?' } else { '&' };
    format!("{url}{join}{param}=$pass_access_scheme://$http_host$escaped_request_uri")
}

fn push_text(parts: &mut Vec<SigninPart>, text: &str) {
    if !text.is_empty() {
        parts.push(SigninPart::Text(text.to_string()));
    }
}

/// The variables a sign-in URL may name: the ones ingress-nginx's own template and oauth2-proxy's
/// documented examples use.
fn variable(name: &str) -> Option<SigninPart> {
    Some(match name {
        "scheme" | "pass_access_scheme" => SigninPart::Scheme,
        "host" => SigninPart::Host,
        "http_host" => SigninPart::HttpHost,
        "request_uri" => SigninPart::RequestUri,
        "escaped_request_uri" => SigninPart::EscapedRequestUri,
        _ => return None,
    })
}
