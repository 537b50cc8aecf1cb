//! A route's own retry rules, nginx's `proxy_next_upstream`, `proxy_next_upstream_tries` and
//! `proxy_next_upstream_timeout` (ingress-nginx's annotations and ConfigMap keys of those names).
//! A route without one follows the proxy's [`crate::RetryPolicy`].

use serde::Serialize;

/// When a failed try goes to another pod, replacing the proxy's retries for the route: a
/// failed connect, a reset, a timeout or an invalid head counts only if its condition is set,
/// and an answer whose status is listed is dropped for another try, as nginx drops it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NextUpstream {
    /// `error`: a connect refused, or the connection failed before a response head.
    pub error: bool,
    /// `timeout`: no connection, or no response head, within the route's timeouts.
    pub timeout: bool,
    /// `invalid_header`: a response head that does not parse, or is too large.
    pub invalid_header: bool,
    /// `http_NNN`: answers with these statuses are dropped for another try, except the last's.
    /// Sorted, without repeats.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub statuses: Vec<u16>,
    /// `non_idempotent`: POST, LOCK and PATCH go again after their request was sent; without it,
    /// only when nothing was sent (a failed connect), as nginx decides.
    pub non_idempotent: bool,
    /// Tries in all, the first included. At least 1.
    pub tries: u32,
    /// No try after this many seconds from the first; `None`: no limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub within_secs: Option<u32>,
}

impl NextUpstream {
    /// nginx's `proxy_next_upstream off`: one try, whatever happens.
    pub const OFF: NextUpstream = NextUpstream {
        error: false,
        timeout: false,
        invalid_header: false,
        statuses: Vec::new(),
        non_idempotent: false,
        tries: 1,
        within_secs: None,
    };

    /// Whether an answer with `status` is dropped for another try (the tries left aside).
    pub fn retries_status(&self, status: u16) -> bool {
        self.tries > 1 && self.statuses.binary_search(&status).is_ok()
    }

    /// Whether a request with `method` may go again after it was sent (nginx: not POST, LOCK
    /// or PATCH, unless `non_idempotent`).
    pub fn resends(&self, method: &str) -> bool {
        self.non_idempotent || !matches!(method, "POST" | "LOCK" | "PATCH")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_listed_statuses_are_retried_and_only_with_a_try_left() {
        let rule = NextUpstream {
            statuses: vec![502, 503],
            tries: 2,
            ..NextUpstream::OFF
        };
        assert!(rule.retries_status(503));
        assert!(!rule.retries_status(500));
        let one = NextUpstream { tries: 1, ..rule };
        assert!(!one.retries_status(503));
    }

    #[test]
    fn post_lock_and_patch_go_again_only_with_non_idempotent() {
        let rule = NextUpstream::OFF;
        assert!(rule.resends("GET") && rule.resends("PUT") && rule.resends("PROPFIND"));
        assert!(!rule.resends("POST") && !rule.resends("LOCK") && !rule.resends("PATCH"));
        let any = NextUpstream {
            non_idempotent: true,
            ..NextUpstream::OFF
        };
        assert!(any.resends("POST"));
    }
}
