//! `HTTPRouteMatch` to a table path and [`RequestConditions`], and the spec's precedence
//! between matches: Exact path, then the longest prefix, then a method, then the most header
//! matches, then the most query matches (the route's age, name and rule order come after, in
//! `hosts.rs`).

use std::cmp::Reverse;

use shunt_spec::{FieldCondition, MAX_CONDITIONS, PathKind, RequestConditions, ValueMatch};

use super::objects::{self, HTTPRouteMatch};
use crate::compile::paths::parse_path;

/// Longest header or query name, value, or regular expression shunt takes.
pub const MAX_NAME_LEN: usize = 256;
pub const MAX_VALUE_LEN: usize = 1024;
/// A compiled header regex may take this much memory; a pattern above it is refused.
const REGEX_SIZE_LIMIT: usize = 64 * 1024;

pub const METHODS: [&str; 9] = [
    "GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH",
];

/// One match, as the table holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Match {
    pub kind: PathKind,
    pub path: String,
    pub conditions: RequestConditions,
}

/// The spec's order among matches: lower sorts first and wins.
pub type Specificity = (bool, Reverse<usize>, Reverse<bool>, Reverse<usize>, Reverse<usize>);

/// Parses one match; the error says what shunt cannot serve (the parent then says
/// `UnsupportedValue`).
pub fn parse(raw: &HTTPRouteMatch) -> Result<Match, String> {
    let path = raw.path.as_ref();
    let type_ = path.and_then(|path| path.type_.as_deref()).unwrap_or("PathPrefix");
    let value = path.and_then(|path| path.value.as_deref()).unwrap_or("/");
    let ingress_type = match type_ {
        "Exact" => "Exact",
        "PathPrefix" => "Prefix",
        "RegularExpression" => return Err("path type RegularExpression is not supported yet".to_string()),
        other => return Err(format!("path type {other:?} is not supported")),
    };
    if value.len() > MAX_VALUE_LEN {
        return Err(format!("path longer than {MAX_VALUE_LEN} characters"));
    }
    let (kind, path) = parse_path(Some(value), ingress_type).map_err(|error| format!("path {value:?}: {error}"))?;
    if raw.headers.len() + raw.query_params.len() > MAX_CONDITIONS {
        return Err(format!("more than {MAX_CONDITIONS} header and query matches"));
    }
    let mut conditions = RequestConditions::default();
    if let Some(method) = &raw.method {
        if !METHODS.contains(&method.as_str()) {
            return Err(format!("method {method:?} is not supported"));
        }
        conditions.method = Some(method.clone());
    }
    for header in &raw.headers {
        let name = header.name.to_ascii_lowercase();
        if !is_token(&name) {
            return Err(format!("header name {:?} is not a field name", header.name));
        }
        // The spec: of several matches on one name, only the first counts.
        if conditions.headers.iter().all(|seen| seen.name != name) {
            conditions.headers.push(condition(name, header)?);
        }
    }
    for param in &raw.query_params {
        if param.name.is_empty() || param.name.len() > MAX_NAME_LEN || !param.name.bytes().all(is_visible) {
            return Err(format!("query parameter name {:?} is not supported", param.name));
        }
        if conditions.query.iter().all(|seen| seen.name != param.name) {
            conditions.query.push(condition(param.name.clone(), param)?);
        }
    }
    Ok(Match { kind, path, conditions })
}

/// Where `found` sorts among its host's matches.
pub fn specificity(found: &Match) -> Specificity {
    (
        found.kind != PathKind::Exact,
        Reverse(found.path.len()),
        Reverse(found.conditions.method.is_some()),
        Reverse(found.conditions.headers.len()),
        Reverse(found.conditions.query.len()),
    )
}

fn condition(name: String, raw: &objects::ValueMatch) -> Result<FieldCondition, String> {
    let value = &raw.value;
    if value.len() > MAX_VALUE_LEN
        || !value
            .bytes()
            .all(|byte| is_visible(byte) || byte == b' ' || byte == b'\t')
    {
        return Err(format!(
            "the value matched for {name:?} is not a field value of at most {MAX_VALUE_LEN} characters"
        ));
    }
    let value = match raw.type_.as_deref().unwrap_or("Exact") {
        "Exact" => ValueMatch::Exact(value.clone()),
        "RegularExpression" => {
            check_regex(value).map_err(|error| format!("regular expression for {name:?}: {error}"))?;
            ValueMatch::Regex(value.clone())
        }
        other => return Err(format!("match type {other:?} for {name:?} is not supported")),
    };
    Ok(FieldCondition { name, value })
}

/// A regular expression the proxy can run in bounded time and memory (the `regex` crate has no
/// backtracking; its compiled size is capped here).
pub fn check_regex(pattern: &str) -> Result<(), regex::Error> {
    // Alone first: a pattern closing a group it did not open (`a)|(b`) would escape the anchors.
    let build = |text: &str| regex::RegexBuilder::new(text).size_limit(REGEX_SIZE_LIMIT).build();
    build(pattern)
        .and_then(|_| build(&format!("^(?:{pattern})$")))
        .map(|_| ())
}

/// An RFC 9110 token, lowercase, of at most [`MAX_NAME_LEN`] characters.
pub fn is_token(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME_LEN
        && name
            .bytes()
            .all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || b"!#$%&'*+-.^_`|~".contains(&byte))
}

fn is_visible(byte: u8) -> bool {
    byte.is_ascii_graphic()
}
