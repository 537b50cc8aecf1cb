//! A ranked host's request conditions (see `spec::RequestConditions`), compiled once per table
//! build: the method parsed, field names as `HeaderName`s, regular expressions built anchored at
//! both ends. [`Facts`] is what a lookup knows of the request besides host and path.
//!
//! Values are tenant-written: each is bounded (`MAX_NAME_LEN`, `MAX_VALUE_LEN`, at most
//! `MAX_CONDITIONS` per route) and a regular expression is compiled with a size limit; what
//! cannot be reproduced is refused with a reason, and the table build drops that path.

use http::{HeaderMap, HeaderName, HeaderValue, Method};
use regex::bytes::{Regex, RegexBuilder};

use super::regex::PATTERN_SIZE_LIMIT;
use crate::spec::{FieldCondition, MAX_CONDITIONS, MAX_NAME_LEN, MAX_VALUE_LEN, RequestConditions, ValueMatch};

/// What a request must carry besides host and path; empty takes every request.
#[derive(Debug)]
pub struct Conditions {
    method: Option<Method>,
    headers: Box<[(HeaderName, ValueTest)]>,
    query: Box<[(Box<str>, ValueTest)]>,
    /// The whole path; only GRPCRoute method matches carry one.
    path: Option<ValueTest>,
}

#[derive(Debug)]
enum ValueTest {
    Exact(Box<[u8]>),
    /// Anchored at both ends: the whole value must match.
    Regex(Regex),
}

/// What a lookup knows of the request besides host and path.
pub trait Facts {
    /// Whether every one of `conditions` holds.
    fn satisfy(&self, conditions: &Conditions) -> bool;
}

/// No request at hand (a lookup by host and path alone): only empty conditions hold.
pub struct NoFacts;

/// The request as a ranked host's conditions read it.
pub struct RequestFacts<'a> {
    pub method: &'a Method,
    pub headers: &'a HeaderMap,
    /// As sent, undecoded; `None` without a `?`.
    pub query: Option<&'a str>,
}

// === impl Conditions ===

impl Conditions {
    /// The compiled conditions, or why one cannot be served.
    pub fn new(spec: &RequestConditions) -> Result<Self, String> {
        if spec.headers.len() + spec.query.len() > MAX_CONDITIONS {
            return Err(format!("more than {MAX_CONDITIONS} header and query conditions"));
        }
        let method = match &spec.method {
            None => None,
            Some(method) if method.len() <= MAX_NAME_LEN => {
                Some(Method::from_bytes(method.as_bytes()).map_err(|_| format!("method {method:?} is not a token"))?)
            }
            Some(_) => return Err(format!("a method longer than {MAX_NAME_LEN} bytes")),
        };
        let headers = spec
            .headers
            .iter()
            .map(|condition| {
                let name = bounded_name(condition, "header")?;
                let name = HeaderName::from_bytes(name.as_bytes())
                    .map_err(|_| format!("header condition {name:?}: not a field name"))?;
                Ok((
                    name,
                    ValueTest::new(condition, "header", |value| HeaderValue::from_str(value).is_ok())?,
                ))
            })
            .collect::<Result<_, String>>()?;
        let query = spec
            .query
            .iter()
            .map(|condition| {
                let name = bounded_name(condition, "query")?;
                if name.is_empty() || !name.bytes().all(is_query_byte) {
                    return Err(format!("query condition {name:?}: not a parameter name"));
                }
                let valid = |value: &str| value.bytes().all(|byte| is_query_byte(byte) || byte == b'=');
                Ok((name.into(), ValueTest::new(condition, "query", valid)?))
            })
            .collect::<Result<_, String>>()?;
        let path = match &spec.path {
            None => None,
            Some(value) => {
                let condition = FieldCondition {
                    name: ":path".to_string(),
                    value: value.clone(),
                };
                Some(ValueTest::new(&condition, "path", |path| path.starts_with('/'))?)
            }
        };
        Ok(Conditions {
            method,
            headers,
            query,
            path,
        })
    }

    pub fn is_empty(&self) -> bool {
        self.method.is_none() && self.headers.is_empty() && self.query.is_empty() && self.path.is_none()
    }

    /// Whether `path` (the request's, without its query) passes the path condition, if any.
    pub fn path_holds(&self, path: &str) -> bool {
        self.path.as_ref().is_none_or(|test| test.matches(path.as_bytes()))
    }
}

fn bounded_name<'c>(condition: &'c FieldCondition, what: &str) -> Result<&'c str, String> {
    match condition.name.len() {
        0 => Err(format!("a {what} condition without a name")),
        len if len > MAX_NAME_LEN => Err(format!("a {what} condition name longer than {MAX_NAME_LEN} bytes")),
        _ => Ok(&condition.name),
    }
}

/// A byte a query name or value can hold undecoded: visible ASCII but the separators.
fn is_query_byte(byte: u8) -> bool {
    byte.is_ascii_graphic() && !matches!(byte, b'&' | b'=' | b'#')
}

// === impl ValueTest ===

impl ValueTest {
    /// `valid`: whether an exact value can be sent at all (else no request could match it).
    fn new(condition: &FieldCondition, what: &str, valid: impl Fn(&str) -> bool) -> Result<Self, String> {
        let name = &condition.name;
        let text = match &condition.value {
            ValueMatch::Exact(text) | ValueMatch::Regex(text) => text,
        };
        if text.len() > MAX_VALUE_LEN {
            return Err(format!(
                "{what} condition {name}: a value longer than {MAX_VALUE_LEN} bytes"
            ));
        }
        match &condition.value {
            ValueMatch::Exact(value) => {
                if !valid(value) {
                    return Err(format!("{what} condition {name}: {value:?} cannot be sent as a value"));
                }
                Ok(ValueTest::Exact(value.as_bytes().into()))
            }
            ValueMatch::Regex(pattern) => {
                // Alone first: a pattern that closes a group it did not open (`a)|(b`) would
                // escape the anchors around it.
                let build = |text: &str| RegexBuilder::new(text).size_limit(PATTERN_SIZE_LIMIT).build();
                build(pattern)
                    .and_then(|_| build(&format!("^(?:{pattern})$")))
                    .map(ValueTest::Regex)
                    .map_err(|error| format!("{what} condition {name}: regex {pattern:?}: {error}"))
            }
        }
    }

    fn matches(&self, value: &[u8]) -> bool {
        match self {
            ValueTest::Exact(exact) => **exact == *value,
            ValueTest::Regex(regex) => regex.is_match(value),
        }
    }
}

// === impl Facts ===

impl Facts for NoFacts {
    fn satisfy(&self, conditions: &Conditions) -> bool {
        conditions.is_empty()
    }
}

impl Facts for RequestFacts<'_> {
    fn satisfy(&self, conditions: &Conditions) -> bool {
        if conditions.method.as_ref().is_some_and(|method| method != self.method) {
            return false;
        }
        let mut headers = conditions.headers.iter();
        if !headers.all(|(name, test)| header_matches(self.headers, name, test)) {
            return false;
        }
        conditions.query.iter().all(|(name, test)| {
            self.query
                .and_then(|query| first_value(query, name))
                .is_some_and(|value| test.matches(value.as_bytes()))
        })
    }
}

/// Whether the field's value passes `test`; a field sent several times is read as its values
/// joined by `,` (RFC 9110 5.3), which only such a request pays for.
fn header_matches(headers: &HeaderMap, name: &HeaderName, test: &ValueTest) -> bool {
    let mut values = headers.get_all(name).iter();
    let Some(first) = values.next() else {
        return false;
    };
    let Some(second) = values.next() else {
        return test.matches(first.as_bytes());
    };
    let mut joined = first.as_bytes().to_vec();
    for value in std::iter::once(second).chain(values) {
        joined.push(b',');
        joined.extend_from_slice(value.as_bytes());
    }
    test.matches(&joined)
}

/// The first value of parameter `name` in `query`, undecoded; `a` alone has the value `""`.
fn first_value<'q>(query: &'q str, name: &str) -> Option<&'q str> {
    query.split('&').find_map(|pair| {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        (key == name).then_some(value)
    })
}

#[cfg(test)]
mod tests;
