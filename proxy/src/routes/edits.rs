//! Header edits (see `spec::HeaderEdits`) with names and values parsed once per table build:
//! `set` replaces every value of a field, `add` appends one, `remove` deletes the field, in
//! that order. Fields that frame or route the message (hop-by-hop, `Content-Length`, `Host`)
//! are refused, since an edit of one would contradict what the proxy writes itself.

use http::{HeaderMap, HeaderName, HeaderValue};

use crate::{
    headers::{AddedFields, is_connection_or_framing_field},
    spec::{self, MAX_EDITS, MAX_VALUE_LEN},
};

#[derive(Debug, Default)]
pub struct HeaderEdits {
    set: Box<[(HeaderName, HeaderValue)]>,
    add: Box<[(HeaderName, HeaderValue)]>,
    remove: Box<[HeaderName]>,
}

impl HeaderEdits {
    /// The parsed edits, or why one cannot be made (`what`: "request" or "response").
    pub fn new(spec: &spec::HeaderEdits, what: &str) -> Result<Self, String> {
        if spec.set.len().max(spec.add.len()).max(spec.remove.len()) > MAX_EDITS {
            return Err(format!("more than {MAX_EDITS} {what} header edits of one kind"));
        }
        let name = |name: &str| -> Result<HeaderName, String> {
            match HeaderName::from_bytes(name.as_bytes()) {
                Ok(name) if is_connection_or_framing_field(&name) => {
                    Err(format!("{what} header edit {name}: a connection or framing field"))
                }
                Ok(name) => Ok(name),
                Err(_) => Err(format!("{what} header edit {name:?}: not a field name")),
            }
        };
        let field = |(field, value): &(String, String)| -> Result<(HeaderName, HeaderValue), String> {
            let name = name(field)?;
            if value.len() > MAX_VALUE_LEN {
                return Err(format!(
                    "{what} header edit {name}: a value longer than {MAX_VALUE_LEN} bytes"
                ));
            }
            let value = HeaderValue::from_str(value)
                .map_err(|_| format!("{what} header edit {name}: {value:?} is not a field value"))?;
            Ok((name, value))
        };
        Ok(HeaderEdits {
            set: spec.set.iter().map(field).collect::<Result<_, _>>()?,
            add: spec.add.iter().map(field).collect::<Result<_, _>>()?,
            remove: spec.remove.iter().map(|field| name(field)).collect::<Result<_, _>>()?,
        })
    }

    /// Edits an answer's fields.
    pub fn apply(&self, headers: &mut HeaderMap) {
        for (name, value) in &self.set {
            headers.insert(name.clone(), value.clone());
        }
        for (name, value) in &self.add {
            headers.append(name.clone(), value.clone());
        }
        for name in &self.remove {
            headers.remove(name);
        }
    }

    /// Edits a forwarded request's fields: the client's (`headers`) and those the proxy adds
    /// beside them (`added`), so a set or removed field leaves neither behind.
    pub fn apply_to_request(&self, headers: &mut HeaderMap, added: &mut AddedFields) {
        for (name, _) in &self.set {
            added.remove(name);
        }
        self.apply(headers);
        for name in &self.remove {
            added.remove(name);
        }
    }
}

#[cfg(test)]
mod tests;
