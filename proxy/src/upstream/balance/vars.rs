//! The nginx variables a canary rule or a hash key reads, from the request as the client sent
//! it: `$http_NAME`, `$cookie_NAME`, `$request_uri`, `$uri`, `$args`, `$host`, `$remote_addr`.

use std::{borrow::Cow, net::IpAddr};

use http::{HeaderMap, header::COOKIE};

/// The request as the variables see it; borrowed, built once per request that needs it.
pub struct RequestVars<'a> {
    pub headers: &'a HeaderMap,
    /// The target as the client sent it (`$request_uri`).
    pub target: &'a str,
    /// The path as shunt routes it, normalised (`$uri`).
    pub path: &'a str,
    /// The routed host, lowercase, without port (`$host`).
    pub host: &'a str,
    pub peer: IpAddr,
}

impl RequestVars<'_> {
    /// `$http_NAME` (`name` lowercase): every line of the field joined with `, ` as nginx
    /// 1.23 and later join them; `None` without the field or with a value that is not text.
    pub fn header(&self, name: &str) -> Option<Cow<'_, str>> {
        let mut values = self.headers.get_all(name).iter();
        let first = values.next()?.to_str().ok()?;
        let mut joined: Option<String> = None;
        for value in values {
            let text = joined.get_or_insert_with(|| first.to_string());
            text.push_str(", ");
            text.push_str(value.to_str().ok()?);
        }
        Some(joined.map_or(Cow::Borrowed(first), Cow::Owned))
    }

    /// `$cookie_NAME`: the first cookie of that name (compared without case, as nginx does)
    /// across the Cookie lines (HTTP/2 sends one per cookie).
    pub fn cookie(&self, name: &str) -> Option<&str> {
        cookie(self.headers, name)
    }

    /// `$args`: the query without `?`, empty when there is none.
    pub fn args(&self) -> &str {
        self.target.split_once('?').map_or("", |(_, query)| query)
    }
}

/// A cookie's value from `headers`' Cookie lines (see [`RequestVars::cookie`]).
pub fn cookie<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|line| line.to_str().ok())
        .flat_map(|line| line.split(';'))
        .find_map(|pair| {
            let (key, value) = pair.split_once('=')?;
            key.trim_start_matches([' ', '\t'])
                .eq_ignore_ascii_case(name)
                .then(|| value.trim_end_matches([' ', '\t']))
        })
}
