//! A TkeServiceConfig's cookie session persistence (`session.enable` under WRR) as the route's
//! cookie stickiness. The CLB "inserts the cookie into the client" for the session's duration
//! (214/6154); Tencent documents neither its name nor its value. The name is the one the CLB is
//! seen setting on sites it fronts (`tgw_l7_route`, a 32-hex-digit value); the value is shunt's
//! own, so a client keeps its pod while it exists, as the CLB keeps its real server.

use shunt_spec::{AffinityMode, CookieAffinity};

use super::{
    Lb,
    rules::{Action, ClbRule, known_on},
};

/// The cookie Tencent's CLB inserts for layer-7 session persistence.
pub const CLB_SESSION_COOKIE: &str = "tgw_l7_route";

/// The stickiness `rule` gets from its TkeServiceConfig; an error where its two listeners keep
/// different sessions, as shunt routes a host and path once for both.
pub(super) fn cookie(lb: &Lb<'_>, rule: &ClbRule) -> Result<Option<CookieAffinity>, String> {
    if !matches!(rule.action, Action::Forward(_)) {
        return Ok(None);
    }
    let url = rule.path.as_deref().filter(|p| !p.is_empty()).unwrap_or("/");
    let mut durations = [false, true]
        .into_iter()
        .filter(|tls| rule.listeners.serves(*tls))
        .map(|tls| {
            // A host without rules on a listener is served there by the default domain's.
            let domain = if known_on(&lb.rules, &rule.host, tls) {
                rule.host.as_str()
            } else {
                ""
            };
            lb.sessions.get(tls, domain, url)
        });
    let first = durations.next().flatten();
    if durations.any(|duration| duration != first) {
        return Err(format!(
            "TkeServiceConfig: session on {}{url} differs between HTTP and HTTPS, which shunt routes as one path",
            rule.host
        ));
    }
    Ok(first.map(inserted))
}

/// The cookie the CLB inserts for a session of `seconds`: on every path, expiring with it.
fn inserted(seconds: u32) -> CookieAffinity {
    CookieAffinity {
        mode: AffinityMode::Persistent,
        name: CLB_SESSION_COOKIE.to_string(),
        set_cookie: true,
        path: "/".to_string(),
        domain: None,
        max_age: None,
        expires: Some(i64::from(seconds)),
        same_site: None,
        conditional_same_site_none: false,
        secure: false,
        change_on_failure: false,
    }
}
