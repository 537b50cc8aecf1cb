//! The affinity cookie on the wire: read from the request as lua-resty-cookie reads it, written
//! as sticky.lua's `set_cookie` and lua-resty-cookie's `bake` write it.

use std::{borrow::Cow, time::SystemTime};

use http::{HeaderMap, HeaderValue, header::COOKIE};

use super::Sticky;
use crate::spec::{CookieAffinity, SameSite};

/// The value of the last cookie named exactly `name`, as lua-resty-cookie's `get_cookie_table`
/// splits `$http_cookie` (Cookie lines joined with `; `): a name runs to `=`, a value to `;`,
/// a space or a tab, and a later pair of the same name replaces an earlier one.
pub fn read<'h>(headers: &'h HeaderMap, name: &str) -> Option<Cow<'h, [u8]>> {
    let mut lines = headers.get_all(COOKIE).iter();
    let first = lines.next()?.as_bytes();
    let Some(second) = lines.next() else {
        return find(first, name.as_bytes()).map(Cow::Borrowed);
    };
    let mut joined = first.to_vec();
    for line in std::iter::once(second).chain(lines) {
        joined.extend_from_slice(b"; ");
        joined.extend_from_slice(line.as_bytes());
    }
    find(&joined, name.as_bytes()).map(|value| Cow::Owned(value.to_vec()))
}

/// `get_cookie_table`'s state machine (`EXPECT_SP`, `EXPECT_KEY`, `EXPECT_VALUE`), keeping
/// only `name`'s last value.
fn find<'t>(text: &'t [u8], name: &[u8]) -> Option<&'t [u8]> {
    #[derive(PartialEq)]
    enum Expect {
        Space,
        Key,
        Value,
    }
    let blank = |b: u8| b == b' ' || b == b'\t';
    let (mut expect, mut key, mut found) = (Expect::Space, None, None);
    let (mut start, mut at) = (0, 0);
    while at < text.len() {
        let byte = text[at];
        match expect {
            Expect::Space if !blank(byte) => {
                // The same byte again, as the first of a name.
                (expect, start) = (Expect::Key, at);
                continue;
            }
            Expect::Key if byte == b'=' => {
                (expect, key, start) = (Expect::Value, Some(&text[start..at]), at + 1);
            }
            Expect::Value if byte == b';' || blank(byte) => {
                if key == Some(name) {
                    found = Some(&text[start..at]);
                }
                (expect, key) = (Expect::Space, None);
            }
            _ => {}
        }
        at += 1;
    }
    if expect == Expect::Value && key == Some(name) {
        found = Some(&text[start..]);
    }
    found
}

/// util/same_site.lua's `same_site_none_compatible`: the browsers known to reject
/// `SameSite=None` (https://www.chromium.org/updates/same-site/incompatible-clients).
pub fn takes_same_site_none(agent: &str) -> bool {
    let has = |part: &str| agent.contains(part);
    let old = [
        "Chrome/4",
        "Chrome/5",
        "Chrome/6",
        "CPU iPhone OS 12",
        "iPad; CPU OS 12",
    ];
    let mojave_safari = has("Macintosh") && has("Intel Mac OS X 10_14") && has("Safari") && !has("Chrome");
    !(old.iter().any(|part| has(part)) || mojave_safari)
}

/// The `Set-Cookie` value naming `value`, attributes in lua-resty-cookie's order; `None` when
/// it is not a field value (the controller admits only names and paths that are).
pub fn field(affinity: &CookieAffinity, sticky: &Sticky, value: &str, now: SystemTime) -> Option<HeaderValue> {
    let mut text = format!("{}={value}", affinity.name);
    if let Some(expires) = affinity.expires {
        let now = now
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        text.push_str("; Expires=");
        text.push_str(&cookie_time(now.saturating_add(expires)));
    }
    if let Some(max_age) = affinity.max_age {
        text.push_str(&format!("; Max-Age={max_age}"));
    }
    if let Some(domain) = &affinity.domain {
        text.push_str("; Domain=");
        text.push_str(domain);
    }
    text.push_str("; Path=");
    text.push_str(&affinity.path);
    if affinity.secure || sticky.tls {
        text.push_str("; Secure");
    }
    text.push_str("; HttpOnly");
    let same_site = affinity.same_site.filter(|&same_site| {
        same_site != SameSite::None || !affinity.conditional_same_site_none || sticky.same_site_none
    });
    if let Some(same_site) = same_site {
        text.push_str("; SameSite=");
        text.push_str(same_site.as_str());
    }
    HeaderValue::from_str(&text).ok()
}

/// nginx's `ngx_http_cookie_time` (`ngx.cookie_time`): `Thu, 18-Nov-10 11:27:35 GMT`, the year
/// in two digits up to 2037 and in full after.
pub fn cookie_time(unix: i64) -> String {
    const WEEK: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let (days, secs) = (unix.div_euclid(86_400), unix.rem_euclid(86_400));
    let (year, month, day) = civil(days);
    let weekday = WEEK[days.rem_euclid(7) as usize];
    let month = MONTHS[(month - 1) as usize];
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    if year > 2037 {
        format!("{weekday}, {day:02}-{month}-{year} {h:02}:{m:02}:{s:02} GMT")
    } else {
        format!("{weekday}, {day:02}-{month}-{:02} {h:02}:{m:02}:{s:02} GMT", year % 100)
    }
}

/// The proleptic Gregorian date `days` after 1970-01-01 (Howard Hinnant's `civil_from_days`).
fn civil(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}
