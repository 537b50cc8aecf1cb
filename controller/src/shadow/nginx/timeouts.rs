//! `proxy-connect-timeout`, `proxy-read-timeout` and `proxy-send-timeout` (annotations and
//! ConfigMap keys): whole
//! seconds, read as Go's `strconv.Atoi` reads them (proxy/main.go, `GetIntAnnotation`), written
//! by the template as `proxy_connect_timeout Ns;` and `proxy_read_timeout Ns;`.

use std::time::Duration;

use shunt_spec::{UpstreamTimeouts, defaults};

use super::annotations::Refusal;

/// A week: longer is refused rather than carried as a timer nobody meant.
pub const MAX_SECONDS: u32 = 7 * 86_400;

/// The seconds `value` holds. Not an int for Go is [`Refusal::Invalid`]; zero, negative (nginx
/// would not load `-5s`) or above [`MAX_SECONDS`] is [`Refusal::Unsupported`].
pub fn seconds(value: &str) -> Result<u32, Refusal> {
    let digits = value.strip_prefix(['+', '-']).unwrap_or(value);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Refusal::Invalid);
    }
    // Go's int is 64 bits: longer digit strings fail Atoi with a range error.
    let number: i64 = value.parse().map_err(|_| Refusal::Invalid)?;
    u32::try_from(number)
        .ok()
        .filter(|seconds| (1..=MAX_SECONDS).contains(seconds))
        .ok_or(Refusal::Unsupported)
}

/// Seconds set for a route's connect and read timeouts; `None` keeps the level below
/// (annotation over ConfigMap over ingress-nginx's defaults, which are shunt's own).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TimeoutSeconds {
    pub connect: Option<u32>,
    pub read: Option<u32>,
    pub send: Option<u32>,
}

impl TimeoutSeconds {
    /// `self` where set, else `below`.
    pub fn or(self, below: TimeoutSeconds) -> TimeoutSeconds {
        TimeoutSeconds {
            connect: self.connect.or(below.connect),
            read: self.read.or(below.read),
            send: self.send.or(below.send),
        }
    }

    /// The route's timeouts; `None` when all are nginx's defaults (the proxy's own for connect
    /// and read), so a route without its own carries nothing.
    pub fn route(self) -> Option<UpstreamTimeouts> {
        let secs = |seconds: Option<u32>, default: Duration| seconds.map_or(default, |s| Duration::from_secs(s.into()));
        let timeouts = UpstreamTimeouts {
            connect: secs(self.connect, defaults::CONNECT_TIMEOUT),
            read: secs(self.read, defaults::UPSTREAM_TIMEOUT),
            send: secs(self.send, defaults::UPSTREAM_TIMEOUT),
        };
        (timeouts != UpstreamTimeouts::default()).then_some(timeouts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_seconds_as_go_reads_them() {
        assert_eq!(seconds("30"), Ok(30));
        assert_eq!(seconds("+2"), Ok(2));
        assert_eq!(seconds("007"), Ok(7));
        for text in ["30s", " 30", "1.5", "", "+", "-", "1m", "99999999999999999999"] {
            assert_eq!(seconds(text), Err(Refusal::Invalid), "{text:?}");
        }
        for text in ["0", "-5", "604801"] {
            assert_eq!(seconds(text), Err(Refusal::Unsupported), "{text:?}");
        }
    }

    #[test]
    fn the_defaults_give_no_route_timeouts() {
        let defaults = TimeoutSeconds {
            connect: Some(5),
            read: Some(60),
            send: Some(60),
        };
        assert_eq!(defaults.route(), None);
        assert_eq!(TimeoutSeconds::default().route(), None);
        let read = TimeoutSeconds {
            read: Some(2),
            ..TimeoutSeconds::default()
        };
        assert_eq!(
            read.route().map(|t| (t.connect, t.read)),
            Some((Duration::from_secs(5), Duration::from_secs(2)))
        );
    }
}
