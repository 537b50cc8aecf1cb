//! The request line as the fake API server reads it: which resource a path names, and the
//! query parameters (percent-decoded) with the field selector shunt sends for Secrets.

use serde_json::Value;

use super::store::Resource;

/// A parsed request path: `/api/v1/namespaces/NS/services/NAME/status` and the like.
pub struct Target {
    pub resource: &'static Resource,
    pub namespace: Option<String>,
    pub name: Option<String>,
    /// The `/status` subresource.
    pub status: bool,
}

pub fn parse_path(path: &str) -> Option<Target> {
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let (group, version, rest) = match segments.as_slice() {
        ["api", version, rest @ ..] => ("", *version, rest),
        ["apis", group, version, rest @ ..] => (*group, *version, rest),
        _ => return None,
    };
    let (namespace, rest) = match rest {
        ["namespaces", namespace, rest @ ..] if !rest.is_empty() => (Some(namespace.to_string()), rest),
        _ => (None, rest),
    };
    let (plural, name, status) = match rest {
        [plural] => (*plural, None, false),
        [plural, name] => (*plural, Some(name.to_string()), false),
        [plural, name, "status"] => (*plural, Some(name.to_string()), true),
        _ => return None,
    };
    let resource = Resource::by_path(group, version, plural)?;
    let scoped_right = if resource.namespaced {
        namespace.is_some() || name.is_none()
    } else {
        namespace.is_none()
    };
    scoped_right.then_some(Target {
        resource,
        namespace,
        name,
        status,
    })
}

/// Query parameters, percent-decoded.
pub struct Params(Vec<(String, String)>);

/// `fieldSelector` as `path=value` terms (all must hold); `labelSelector` is not supported.
pub struct FieldSelector(Vec<(Vec<String>, String)>);

impl Params {
    pub fn parse(query: &str) -> Params {
        let pairs = query.split('&').filter(|pair| !pair.is_empty());
        Params(
            pairs
                .map(|pair| pair.split_once('=').unwrap_or((pair, "")))
                .map(|(k, v)| (decode(k), decode(v)))
                .collect(),
        )
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    pub fn field_selector(&self) -> Result<FieldSelector, String> {
        if self.get("labelSelector").is_some_and(|selector| !selector.is_empty()) {
            return Err("the fake API server does not support labelSelector".to_string());
        }
        let terms = self
            .get("fieldSelector")
            .unwrap_or("")
            .split(',')
            .filter(|term| !term.is_empty());
        let terms = terms.map(|term| match term.split_once('=') {
            Some((path, value)) if !path.ends_with('!') => Ok((
                path.split('.').map(str::to_string).collect(),
                value.trim_start_matches('=').to_string(),
            )),
            _ => Err(format!("unsupported field selector term {term:?}")),
        });
        terms.collect::<Result<_, _>>().map(FieldSelector)
    }
}

impl FieldSelector {
    pub fn matches(&self, object: &Value) -> bool {
        self.0
            .iter()
            .all(|(path, value)| path.iter().fold(object, |at, field| &at[field.as_str()]).as_str() == Some(value))
    }
}

fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = bytes.get(i + 1..i + 3).filter(|_| bytes[i] == b'%');
        let hex = escaped
            .and_then(|hex| std::str::from_utf8(hex).ok())
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match (bytes[i], hex) {
            (_, Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (b'+', None) => {
                out.push(b' ');
                i += 1;
            }
            (byte, None) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}
