//! The `/shadow` document on the admin listener: which profile, what it assumes of the other
//! controller where its documentation is not precise, and a verdict per host.

use serde_json::json;

use super::HostVerdict;

/// The document for `profile`, its `assumed` behaviours and its hosts' `verdicts`.
pub fn document(profile: &str, assumed: &[&str], verdicts: &[HostVerdict]) -> serde_json::Value {
    json!({
        "profile": profile,
        "assumed": assumed,
        "hosts": verdicts,
    })
}
