//! An answer as the comparison sees it: named fields (status, response headers, and everything
//! the pod saw), with only the agreed normalisations, and the fields two answers differ in.
//!
//! ```text
//! Reply ─▶ "status", "response <name>", "pod <what>", "pod header <name>" ─▶ BTreeMap ─diff─▶ Difference
//! ```

use std::collections::BTreeMap;

use serde_json::Value;

use super::probe::{Payload, Probe};
use crate::support::Reply;

/// The `Date` the `loud` pod sends: a proxy must replace it, so it is never normalised away.
pub const POD_DATE: &str = "Mon, 01 Jan 2001 00:00:00 GMT";

/// Response fields that differ between any two servers and mean nothing here: framing, and the
/// proxy's own clock. `server` is handled apart (see [`Side`]). Every other field is compared,
/// `Content-Type` included: the answers nginx writes itself (redirects, 413, 404) are
/// `text/html` pages, and a caller sees that field (their bodies are not compared).
const RESPONSE_IGNORED: [&str; 5] = [
    "connection",
    "content-length",
    "date",
    "keep-alive",
    "transfer-encoding",
];

/// Hop-by-hop request fields the pod may see from either proxy's connection handling.
const POD_IGNORED: [&str; 3] = ["connection", "keep-alive", "transfer-encoding"];

/// How a missing field reads in a report and in [`super::probe::Probe::expect`].
pub const ABSENT: &str = "<absent>";
const NO_POD: &str = "<no pod answered>";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// nginx-light cannot run `more_clear_headers Server` (nginx.tmpl L340): its own `Server`
    /// is dropped, since ingress-nginx sends none.
    Nginx,
    /// Every field shunt sends is kept: a `Server` is a difference.
    Shunt,
}

/// One answer, field by field.
#[derive(Debug, Default)]
pub struct Seen(BTreeMap<String, String>);

/// A field two answers disagree on.
#[derive(Debug)]
pub struct Difference {
    pub field: String,
    pub nginx: String,
    pub shunt: String,
}

// === impl Seen ===

impl Seen {
    pub fn of(answer: &Result<Reply, String>, probe: &Probe, side: Side) -> Seen {
        let mut seen = Seen::default();
        let reply = match answer {
            Ok(reply) => reply,
            Err(error) => {
                seen.put("error", error.clone());
                return seen;
            }
        };
        seen.put("status", reply.status.as_u16().to_string());
        if probe.status_only {
            return seen;
        }
        seen.response(reply, side);
        match serde_json::from_slice::<Value>(&reply.body) {
            Ok(report) if report.get("backend").is_some() => seen.pod(&report, probe),
            _ => {
                seen.put("pod", NO_POD.to_string());
                // An answer the proxy made itself: nginx's page, byte for byte.
                seen.put("answer body", String::from_utf8_lossy(&reply.body).into_owned());
            }
        }
        seen
    }

    pub fn field(&self, field: &str) -> Option<&str> {
        self.0.get(field).map(String::as_str)
    }

    fn put(&mut self, field: impl Into<String>, value: String) {
        self.0.insert(field.into(), value);
    }

    fn response(&mut self, reply: &Reply, side: Side) {
        for name in reply.headers.keys() {
            let name = name.as_str();
            if RESPONSE_IGNORED.contains(&name) && !(name == "date" && reply.headers[name] == POD_DATE) {
                continue;
            }
            if name == "server" && side == Side::Nginx {
                continue;
            }
            let values: Vec<&str> = reply
                .headers
                .get_all(name)
                .iter()
                .map(|v| v.to_str().unwrap_or("<binary>"))
                .collect();
            self.put(format!("response {name}"), values.join(", "));
        }
    }

    /// The echo pod's report: `backend`, `method`, `path_and_query`, `version`, `headers`,
    /// `body_len`, `body_fnv`, and `big`'s `padding`.
    fn pod(&mut self, report: &Value, probe: &Probe) {
        self.put("pod", format!("answered by {}", plain(&report["backend"])));
        for what in ["method", "path_and_query", "version", "body_len", "body_fnv"] {
            self.put(format!("pod {what}"), plain(&report[what]));
        }
        if let Some(padding) = report["padding"].as_str() {
            let fnv = crate::support::fnv64(padding.as_bytes());
            self.put("pod padding", format!("{} bytes, fnv {fnv:016x}", padding.len()));
        }
        let Some(headers) = report["headers"].as_object() else {
            self.put("pod headers", plain(&report["headers"]));
            return;
        };
        for (name, value) in headers {
            let chunked_length = name == "content-length" && matches!(probe.payload, Payload::Chunked(_));
            if POD_IGNORED.contains(&name.as_str()) || chunked_length {
                continue;
            }
            let mut value = plain(value);
            if name == "x-request-id" && probe.request_id().is_none() && is_generated_id(&value) {
                value = "<generated: 32 lowercase hex digits>".to_string();
            }
            self.put(format!("pod header {name}"), value);
        }
    }
}

/// The fields `nginx` and `shunt` disagree on, in field order. When the answers came from
/// different pods (or one from none), that is said once instead of field by field.
pub fn differences(nginx: &Seen, shunt: &Seen) -> Vec<Difference> {
    let mut fields: Vec<&String> = nginx.0.keys().chain(shunt.0.keys()).collect();
    fields.sort();
    fields.dedup();
    let other_pod = nginx.0.get("pod") != shunt.0.get("pod");
    fields
        .into_iter()
        .filter(|field| !(other_pod && field.starts_with("pod ")))
        .filter_map(|field| {
            let (a, b) = (nginx.0.get(field), shunt.0.get(field));
            (a != b).then(|| Difference {
                field: field.clone(),
                nginx: a.map_or_else(|| ABSENT.to_string(), |v| format!("{v:?}")),
                shunt: b.map_or_else(|| ABSENT.to_string(), |v| format!("{v:?}")),
            })
        })
        .collect()
}

/// nginx's `$request_id`: 16 random bytes in lowercase hex.
fn is_generated_id(value: &str) -> bool {
    value.len() == 32 && value.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn plain(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}
