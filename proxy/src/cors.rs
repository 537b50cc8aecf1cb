//! CORS as a route behaviour (`spec::CorsSpec`): whether a request's Origin is allowed, the
//! preflight answered without a pod, and the fields set on every other answer. Two styles:
//! ingress-nginx's template (nginx.tmpl, `define "CORS"`) and the Fetch standard's, which
//! Gateway API's `CORS` filter asks for.
//!
//! ```text
//! request ─answer─▶ None: nothing changes (nginx: an OPTIONS from another Origin goes to the pod)
//!                   Preflight: 204, the fields for an allowed Origin (Fetch: none for another)
//!                   Allowed(origin) ─▶ set_fields() on the answer, whoever made it
//! ```

mod origin;

use crate::{
    response_body::ResponseBody,
    spec::{AllowOrigin, CorsList, CorsSpec, CorsStyle, OriginPattern},
};
use bytes::{BufMut, BytesMut};
use http::{HeaderMap, HeaderName, HeaderValue, Method, Response, StatusCode, header};

use self::origin::{NginxPattern, whole_matches};

/// [`CorsSpec`] ready for requests: patterns split once, field values parsed once.
#[derive(Clone, Debug)]
pub struct Cors {
    origins: Origins,
    style: CorsStyle,
    /// The preflight's fields after `Access-Control-Allow-Origin`, in the template's order.
    preflight: Vec<(HeaderName, Field)>,
    /// Every other answer's fields after `Access-Control-Allow-Origin`.
    answer: Vec<(HeaderName, HeaderValue)>,
}

#[derive(Clone, Debug)]
enum Origins {
    /// Any request, answered `*`.
    Star,
    Nginx(Vec<NginxPattern>),
    /// Any request with an Origin, echoed.
    Echo,
    Whole(Vec<OriginPattern>),
}

#[derive(Clone, Debug)]
enum Field {
    Fixed(HeaderValue),
    /// The preflight's own field of this name, echoed; the field is not sent without it.
    Requested(HeaderName),
}

/// What CORS makes of a request.
pub enum CorsAnswer {
    /// Answered here.
    Preflight(Response<ResponseBody>),
    /// Goes on; its answer gets the fields with this `Access-Control-Allow-Origin`.
    Allowed(AllowedOrigin),
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
        let list = |field, list: &CorsList, requested| match list {
            CorsList::Listed(text) => value(field, text).map(Field::Fixed),
            CorsList::Requested => Ok(Field::Requested(requested)),
        };
        let mut preflight = Vec::with_capacity(5);
        if spec.allow_credentials {
            let true_ = HeaderValue::from_static("true");
            preflight.push((header::ACCESS_CONTROL_ALLOW_CREDENTIALS, Field::Fixed(true_)));
        }
        if let Some(methods) = &spec.allow_methods {
            let field = list("methods", methods, header::ACCESS_CONTROL_REQUEST_METHOD)?;
            preflight.push((header::ACCESS_CONTROL_ALLOW_METHODS, field));
        }
        if let Some(headers) = &spec.allow_headers {
            let field = list("headers", headers, header::ACCESS_CONTROL_REQUEST_HEADERS)?;
            preflight.push((header::ACCESS_CONTROL_ALLOW_HEADERS, field));
        }
        if let Some(expose) = &spec.expose_headers {
            let field = Field::Fixed(value("expose headers", expose)?);
            preflight.push((header::ACCESS_CONTROL_EXPOSE_HEADERS, field));
        }
        let max_age = Field::Fixed(HeaderValue::from(spec.max_age));
        preflight.push((header::ACCESS_CONTROL_MAX_AGE, max_age));
        let answer = Self::answer_fields(spec.style, &preflight);
        let origins = match &spec.allow_origin {
            AllowOrigin::Any => Origins::Star,
            AllowOrigin::List(list) => Origins::Nginx(list.iter().map(|origin| NginxPattern::new(origin)).collect()),
            AllowOrigin::Echo => Origins::Echo,
            AllowOrigin::Origins(patterns) => Origins::Whole(patterns.clone()),
        };
        Ok(Cors {
            origins,
            style: spec.style,
            preflight,
            answer,
        })
    }

    /// The fields of answers other than the preflight: the template sets them all (an echo has
    /// nothing to echo there); Fetch only those a response is read with.
    fn answer_fields(style: CorsStyle, preflight: &[(HeaderName, Field)]) -> Vec<(HeaderName, HeaderValue)> {
        let kept = |name: &HeaderName| match style {
            CorsStyle::Nginx => true,
            CorsStyle::Fetch => {
                name == header::ACCESS_CONTROL_ALLOW_CREDENTIALS || name == header::ACCESS_CONTROL_EXPOSE_HEADERS
            }
        };
        let fixed = |(name, field): &(HeaderName, Field)| match field {
            Field::Fixed(value) if kept(name) => Some((name.clone(), value.clone())),
            _ => None,
        };
        preflight.iter().filter_map(fixed).collect()
    }

    /// What CORS does with a request: a preflight answered here, or the Origin allowed.
    pub fn on_request(&self, method: &Method, request: &HeaderMap) -> Option<CorsAnswer> {
        let origin = self.allowed_origin(request);
        let options = method == Method::OPTIONS;
        match self.style {
            CorsStyle::Nginx => Some(match options {
                true => CorsAnswer::Preflight(self.preflight(origin?, request)),
                false => CorsAnswer::Allowed(origin?),
            }),
            CorsStyle::Fetch => {
                let preflight = options
                    && request.contains_key(header::ORIGIN)
                    && request.contains_key(header::ACCESS_CONTROL_REQUEST_METHOD);
                match (preflight, origin) {
                    (true, Some(origin)) => Some(CorsAnswer::Preflight(self.preflight(origin, request))),
                    // Refused: answered without fields, so no pod adds its own.
                    (true, None) => Some(CorsAnswer::Preflight(no_content())),
                    (false, origin) => origin.map(CorsAnswer::Allowed),
                }
            }
        }
    }

    /// The `Access-Control-Allow-Origin` value when the request's Origin is allowed.
    ///
    /// Several Origin fields are read as one, joined by `, `, as nginx's `$http_origin` does.
    pub fn allowed_origin(&self, request: &HeaderMap) -> Option<AllowedOrigin> {
        if let Origins::Star = self.origins {
            return Some(HeaderValue::from_static("*"));
        }
        let origin = joined_field(request, &header::ORIGIN)?;
        let allowed = match &self.origins {
            Origins::Star | Origins::Echo => true,
            Origins::Nginx(patterns) => patterns.iter().any(|pattern| pattern.ends(origin.as_bytes())),
            Origins::Whole(patterns) => patterns.iter().any(|pattern| whole_matches(pattern, origin.as_bytes())),
        };
        allowed.then_some(origin)
    }

    /// The answer to an allowed preflight: 204 with the fields. nginx's header filter drops a
    /// 204's Content-Type (set to `text/plain charset=UTF-8` by the template) but keeps its
    /// `Content-Length: 0`, which headers-more put among the other fields
    /// (ngx_http_header_filter_module.c); Fetch's has none, as RFC 9110 wants of a 204.
    pub fn preflight(&self, origin: AllowedOrigin, request: &HeaderMap) -> Response<ResponseBody> {
        let mut response = no_content();
        let headers = response.headers_mut();
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        for (name, field) in &self.preflight {
            let value = match field {
                Field::Fixed(value) => Some(value.clone()),
                Field::Requested(requested) => joined_field(request, requested),
            };
            if let Some(value) = value {
                headers.insert(name.clone(), value);
            }
        }
        if self.style == CorsStyle::Nginx {
            headers.insert(header::CONTENT_LENGTH, HeaderValue::from_static("0"));
        }
        response
    }

    /// Sets the fields on an answer, replacing the pod's of the same names (`more_set_headers`
    /// without `-s` applies to every status).
    pub fn set_fields(&self, headers: &mut HeaderMap, origin: AllowedOrigin) {
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        for (name, value) in &self.answer {
            headers.insert(name.clone(), value.clone());
        }
    }
}

fn no_content() -> Response<ResponseBody> {
    let mut response = Response::new(ResponseBody::empty());
    *response.status_mut() = StatusCode::NO_CONTENT;
    response
}

/// The request's fields named `name` as one value, joined by `, `; `None` without any.
fn joined_field(request: &HeaderMap, name: &HeaderName) -> Option<HeaderValue> {
    let mut values = request.get_all(name).iter();
    let first = values.next()?;
    let Some(second) = values.next() else {
        return Some(first.clone());
    };
    let mut bytes = BytesMut::from(first.as_bytes());
    for value in std::iter::once(second).chain(values) {
        bytes.put_slice(b", ");
        bytes.put_slice(value.as_bytes());
    }
    Some(HeaderValue::from_maybe_shared(bytes.freeze()).expect("field values joined by \", \" are a field value"))
}

#[cfg(test)]
mod tests;
