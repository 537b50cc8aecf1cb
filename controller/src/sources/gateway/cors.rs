//! A rule's `CORS` filter to the contract's [`CorsSpec`], the route behaviour ingress-nginx's
//! `enable-cors` also gives, in the Fetch style the filter's description asks for: a whole-Origin
//! match, the Origin echoed (so `*` stays valid with credentials), `*` methods and headers
//! echoed from the preflight, `maxAge` 5 unless given. Each list is bounded as the CRD bounds
//! it, also when read from a manifest no API server validated; what shunt cannot send as the
//! description says is refused.

use serde::{Deserialize, Serialize};
use shunt_spec::{AllowOrigin, CorsList, CorsSpec, CorsStyle, OriginPattern};

use super::matches::{MAX_NAME_LEN, METHODS, is_token};

/// Most `allowOrigins`, `allowHeaders`, `exposeHeaders` (the CRD's `maxItems`).
const MAX_ITEMS: usize = 64;
/// `maxAge` when not given, in seconds.
const DEFAULT_MAX_AGE: i64 = 5;

/// `HTTPCORSFilter`, as the CRD spells it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CorsFilter {
    #[serde(default)]
    pub allow_origins: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_credentials: Option<bool>,
    #[serde(default)]
    pub allow_methods: Vec<String>,
    #[serde(default)]
    pub allow_headers: Vec<String>,
    #[serde(default)]
    pub expose_headers: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_age: Option<i64>,
}

/// The filter's route behaviour, or why shunt cannot serve it.
pub fn parse(filter: Option<&CorsFilter>) -> Result<CorsSpec, String> {
    let filter = filter.ok_or("CORS without cors")?;
    let credentials = filter.allow_credentials.unwrap_or(false);
    let allow_origin = origins(&filter.allow_origins)?;
    let allow_methods = methods(&filter.allow_methods)?;
    let allow_headers = names("allowHeaders", &filter.allow_headers)?;
    let expose_headers = match names("exposeHeaders", &filter.expose_headers)? {
        None => None,
        Some(CorsList::Listed(listed)) => Some(listed),
        // With credentials a browser reads `*` as a field named `*`, and which fields an answer
        // has is only known per answer: nothing shunt could send says what the filter means.
        Some(CorsList::Requested) if credentials => {
            return Err("exposeHeaders * with allowCredentials is not supported".to_string());
        }
        Some(CorsList::Requested) => Some("*".to_string()),
    };
    let max_age = match filter.max_age {
        None => DEFAULT_MAX_AGE,
        Some(age @ 1..=0x7fff_ffff) => age,
        Some(other) => return Err(format!("maxAge {other} is not a number of seconds from 1")),
    };
    Ok(CorsSpec {
        allow_origin,
        allow_methods,
        allow_headers,
        allow_credentials: credentials,
        expose_headers,
        max_age,
        style: CorsStyle::Fetch,
    })
}

fn origins(listed: &[String]) -> Result<AllowOrigin, String> {
    if listed.len() > MAX_ITEMS {
        return Err(format!("more than {MAX_ITEMS} allowOrigins"));
    }
    match alone_star("allowOrigins", listed)? {
        true => Ok(AllowOrigin::Echo),
        false => {
            let pattern = |origin: &String| {
                OriginPattern::parse(origin).ok_or(format!("allowOrigins {origin:?} is not an origin"))
            };
            Ok(AllowOrigin::Origins(
                listed.iter().map(pattern).collect::<Result<_, _>>()?,
            ))
        }
    }
}

fn methods(listed: &[String]) -> Result<Option<CorsList>, String> {
    if listed.len() > METHODS.len() {
        return Err(format!("more than {} allowMethods", METHODS.len()));
    }
    if alone_star("allowMethods", listed)? {
        return Ok(Some(CorsList::Requested));
    }
    if let Some(other) = listed.iter().find(|method| !METHODS.contains(&method.as_str())) {
        return Err(format!("allowMethods {other:?} is not a method"));
    }
    Ok(joined(listed).map(CorsList::Listed))
}

/// `allowHeaders` or `exposeHeaders`: field names, or `*` alone.
fn names(field: &str, listed: &[String]) -> Result<Option<CorsList>, String> {
    if listed.len() > MAX_ITEMS {
        return Err(format!("more than {MAX_ITEMS} {field}"));
    }
    if alone_star(field, listed)? {
        return Ok(Some(CorsList::Requested));
    }
    if let Some(other) = (listed.iter()).find(|name| name.len() > MAX_NAME_LEN || !is_token(&name.to_ascii_lowercase()))
    {
        return Err(format!("{field} {other:?} is not a field name"));
    }
    Ok(joined(listed).map(CorsList::Listed))
}

/// Whether the list is `*` alone; `*` beside others is refused, as the CRD refuses it.
fn alone_star(field: &str, listed: &[String]) -> Result<bool, String> {
    match (listed, listed.iter().any(|item| item == "*")) {
        ([_], true) => Ok(true),
        (_, true) => Err(format!("{field} holds * beside others")),
        (_, false) => Ok(false),
    }
}

/// The items as one field value, duplicates dropped (the CRD's lists are sets); `None` when empty.
fn joined(listed: &[String]) -> Option<String> {
    let mut kept: Vec<&str> = Vec::with_capacity(listed.len());
    for item in listed {
        if !kept.contains(&item.as_str()) {
            kept.push(item);
        }
    }
    (!kept.is_empty()).then(|| kept.join(", "))
}
