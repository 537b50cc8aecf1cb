//! ingress-nginx's CORS (`enable-cors`) as its template writes it (nginx.tmpl, `define "CORS"`):
//! whether a request's Origin is allowed, the preflight answered without a pod, and the fields
//! set on every other answer.
//!
//! ```text
//! Origin ─allowed_origin─▶ None: nothing changes (an OPTIONS goes to the pod)
//!                          Some(origin) ─ OPTIONS ─▶ preflight(): 204 and the fields
//!                                       └ other ──▶ set_fields() on the answer, whoever made it
//! ```

use crate::{
    response_body::ResponseBody,
    spec::{AllowOrigin, CorsSpec},
};
use bytes::{BufMut, BytesMut};
use http::{HeaderMap, HeaderName, HeaderValue, Response, StatusCode, header};

/// [`CorsSpec`] ready for requests: patterns split once, field values parsed once.
#[derive(Clone, Debug)]
pub struct Cors {
    /// `None`: any origin, answered with `*`.
    origins: Option<Vec<OriginPattern>>,
    /// The fields after `Access-Control-Allow-Origin`, in the template's order.
    fields: Vec<(HeaderName, HeaderValue)>,
}

/// One origin as `buildOriginRegex` (template.go) turns it into a regex: the text quoted, its
/// first `*` replaced by `[A-Za-z0-9\-]+`, matched case-insensitively at the end of the Origin.
#[derive(Clone, Debug)]
struct OriginPattern {
    /// The text before the first `*`, or all of it when there is none.
    before: Box<[u8]>,
    /// After the first `*`; `None` when the origin has no `*`.
    after: Option<Box<[u8]>>,
}

/// A value of the spec that cannot be sent as a field.
#[derive(Debug, thiserror::Error)]
#[error("CORS {field} {value:?} is not a field value")]
pub struct InvalidCorsField {
    field: &'static str,
    value: String,
}

/// An allowed request: the value `Access-Control-Allow-Origin` gets.
pub type AllowedOrigin = HeaderValue;

// === impl Cors ===

impl Cors {
    pub fn from_spec(spec: &CorsSpec) -> Result<Self, InvalidCorsField> {
        let value = |field: &'static str, text: &str| {
            HeaderValue::from_str(text).map_err(|_| InvalidCorsField {
                field,
                value: text.to_string(),
            })
        };
        let mut fields = Vec::with_capacity(5);
        if spec.allow_credentials {
            fields.push((
                header::ACCESS_CONTROL_ALLOW_CREDENTIALS,
                HeaderValue::from_static("true"),
            ));
        }
        fields.push((
            header::ACCESS_CONTROL_ALLOW_METHODS,
            value("methods", &spec.allow_methods)?,
        ));
        fields.push((
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            value("headers", &spec.allow_headers)?,
        ));
        if let Some(expose) = &spec.expose_headers {
            fields.push((header::ACCESS_CONTROL_EXPOSE_HEADERS, value("expose headers", expose)?));
        }
        fields.push((header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from(spec.max_age)));
        let origins = match &spec.allow_origin {
            AllowOrigin::Any => None,
            AllowOrigin::List(list) => Some(list.iter().map(|origin| OriginPattern::new(origin)).collect()),
        };
        Ok(Cors { origins, fields })
    }

    /// The `Access-Control-Allow-Origin` value when the request's Origin is allowed.
    ///
    /// Several Origin fields are read as one, joined by `, `, as nginx's `$http_origin` does.
    pub fn allowed_origin(&self, request: &HeaderMap) -> Option<AllowedOrigin> {
        let Some(patterns) = &self.origins else {
            return Some(HeaderValue::from_static("*"));
        };
        let mut origins = request.get_all(header::ORIGIN).iter();
        let first = origins.next()?;
        let origin = match origins.next() {
            None => first.clone(),
            Some(second) => joined(first, second, origins),
        };
        patterns
            .iter()
            .any(|pattern| pattern.ends(origin.as_bytes()))
            .then_some(origin)
    }

    /// The answer to an allowed `OPTIONS` request: 204 with the fields, as the template's
    /// `return 204` is sent. nginx's header filter drops a 204's Content-Type (set to
    /// `text/plain charset=UTF-8` by the template) but keeps its `Content-Length: 0`, which
    /// headers-more put among the other fields (ngx_http_header_filter_module.c).
    pub fn preflight(&self, origin: AllowedOrigin) -> Response<ResponseBody> {
        let mut response = Response::new(ResponseBody::empty());
        *response.status_mut() = StatusCode::NO_CONTENT;
        let headers = response.headers_mut();
        self.set_fields(headers, origin);
        headers.insert(header::CONTENT_LENGTH, HeaderValue::from_static("0"));
        response
    }

    /// Sets the fields on an answer, replacing the pod's of the same names (`more_set_headers`
    /// without `-s` applies to every status).
    pub fn set_fields(&self, headers: &mut HeaderMap, origin: AllowedOrigin) {
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        for (name, value) in &self.fields {
            headers.insert(name.clone(), value.clone());
        }
    }
}

fn joined<'a>(
    first: &HeaderValue,
    second: &'a HeaderValue,
    rest: impl Iterator<Item = &'a HeaderValue>,
) -> HeaderValue {
    let mut bytes = BytesMut::from(first.as_bytes());
    for value in std::iter::once(second).chain(rest) {
        bytes.put_slice(b", ");
        bytes.put_slice(value.as_bytes());
    }
    HeaderValue::from_maybe_shared(bytes.freeze()).expect("field values joined by \", \" are a field value")
}

// === impl OriginPattern ===

impl OriginPattern {
    fn new(origin: &str) -> Self {
        match origin.split_once('*') {
            Some((before, after)) => OriginPattern {
                before: before.as_bytes().into(),
                after: Some(after.as_bytes().into()),
            },
            None => OriginPattern {
                before: origin.as_bytes().into(),
                after: None,
            },
        }
    }

    /// Whether `origin` ends with a match (the regex is anchored at the end only).
    fn ends(&self, origin: &[u8]) -> bool {
        let Some(after) = &self.after else {
            return ends_with_ignore_case(origin, &self.before);
        };
        if !ends_with_ignore_case(origin, after) {
            return false;
        }
        let rest = &origin[..origin.len() - after.len()];
        // `[A-Za-z0-9\-]+` takes one or more of the characters just before `after`.
        let run = rest.iter().rev().take_while(|b| is_label_byte(**b)).count();
        (1..=run).any(|taken| ends_with_ignore_case(&rest[..rest.len() - taken], &self.before))
    }
}

fn is_label_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-'
}

fn ends_with_ignore_case(text: &[u8], suffix: &[u8]) -> bool {
    text.len() >= suffix.len() && text[text.len() - suffix.len()..].eq_ignore_ascii_case(suffix)
}

#[cfg(test)]
mod tests;
