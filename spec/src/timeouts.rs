//! A route's own timeouts towards its pods (ingress-nginx's `proxy-connect-timeout`,
//! `proxy-read-timeout` and `proxy-send-timeout`), in place of the proxy's `--connect-timeout`
//! and `--upstream-timeout`.

use std::time::Duration;

use serde::{Serialize, Serializer};

use crate::defaults;

/// Both are at least one millisecond (a zero timer would fail every try).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct UpstreamTimeouts {
    /// Connecting to a pod, TLS included (nginx's `proxy_connect_timeout`).
    #[serde(serialize_with = "millis")]
    pub connect: Duration,
    /// The longest wait for the response head, then between two reads of its body (nginx's
    /// `proxy_read_timeout`): a deadline for the wait, not for the whole response.
    #[serde(serialize_with = "millis")]
    pub read: Duration,
    /// The longest wait for the pod to take more of the request (nginx's `proxy_send_timeout`:
    /// between two successive writes), then 504. Routes without their own timeouts have none.
    #[serde(serialize_with = "millis")]
    pub send: Duration,
}

impl Default for UpstreamTimeouts {
    fn default() -> Self {
        UpstreamTimeouts {
            connect: defaults::CONNECT_TIMEOUT,
            read: defaults::UPSTREAM_TIMEOUT,
            send: defaults::UPSTREAM_TIMEOUT,
        }
    }
}

/// Milliseconds: a route document stays a plain number per timeout.
pub(crate) fn millis<S: Serializer>(duration: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_u64(u64::try_from(duration.as_millis()).unwrap_or(u64::MAX))
}

/// Deadlines on a request's answer (Gateway API's HTTPRoute `timeouts`): past either, 504.
/// Each bounds the wait for the response head, so a streamed answer is never cut.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct AnswerDeadlines {
    /// From when the request is forwarded to the answer, every try included (`request`).
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "some_millis")]
    pub request: Option<Duration>,
    /// Each try's wait for its pod's answer (`backendRequest`), under the proxy's or the
    /// route's read timeout when that is shorter.
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "some_millis")]
    pub attempt: Option<Duration>,
}

fn some_millis<S: Serializer>(duration: &Option<Duration>, serializer: S) -> Result<S::Ok, S::Error> {
    millis(&duration.unwrap_or_default(), serializer)
}
