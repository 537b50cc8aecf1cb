//! The `nginx.ingress.kubernetes.io/*` keys ingress-nginx reads: every name its annotation
//! parsers pass to `parser.Get*Annotation` (internal/ingress/annotations/*/main.go, controller
//! v1.15.1), and the two aliases `checkAnnotation` falls back to. A key under the prefix that
//! is not here is ignored by nginx, so it never refuses a host; `/shadow` lists it.

/// Sorted (binary search), without the prefix.
pub const READ: [&str; 138] = [
    "affinity",
    "affinity-canary-behavior",
    "affinity-mode",
    "allowlist-source-range",
    "app-root",
    "auth-always-set-cookie",
    "auth-cache-duration",
    "auth-cache-key",
    "auth-keepalive",
    "auth-keepalive-requests",
    "auth-keepalive-share-vars",
    "auth-keepalive-timeout",
    "auth-method",
    "auth-proxy-set-headers",
    "auth-realm",
    "auth-request-redirect",
    "auth-response-headers",
    "auth-secret",
    "auth-secret-type",
    "auth-signin",
    "auth-signin-redirect-param",
    "auth-snippet",
    "auth-tls-error-page",
    "auth-tls-match-cn",
    "auth-tls-pass-certificate-to-upstream",
    "auth-tls-secret",
    "auth-tls-verify-client",
    "auth-tls-verify-depth",
    "auth-type",
    "auth-url",
    "backend-protocol",
    "canary",
    "canary-by-cookie",
    "canary-by-header",
    "canary-by-header-pattern",
    "canary-by-header-value",
    "canary-weight",
    "canary-weight-total",
    "client-body-buffer-size",
    "configuration-snippet",
    "connection-proxy-header",
    "cors-allow-credentials",
    "cors-allow-headers",
    "cors-allow-methods",
    "cors-allow-origin",
    "cors-expose-headers",
    "cors-max-age",
    "custom-headers",
    "custom-http-errors",
    "default-backend",
    "denylist-source-range",
    "disable-proxy-intercept-errors",
    "enable-access-log",
    "enable-cors",
    "enable-global-auth",
    "enable-modsecurity",
    "enable-opentelemetry",
    "enable-owasp-core-rules",
    "enable-rewrite-log",
    "fastcgi-index",
    "fastcgi-params-configmap",
    "force-ssl-redirect",
    "from-to-www-redirect",
    "http2-push-preload",
    "limit-allowlist",
    "limit-burst-multiplier",
    "limit-connections",
    "limit-rate",
    "limit-rate-after",
    "limit-rpm",
    "limit-rps",
    "limit-whitelist",
    "load-balance",
    "mirror-host",
    "mirror-request-body",
    "mirror-target",
    "modsecurity-snippet",
    "modsecurity-transaction-id",
    "opentelemetry-operation-name",
    "opentelemetry-trust-incoming-span",
    "permanent-redirect",
    "permanent-redirect-code",
    "preserve-trailing-slash",
    "proxy-body-size",
    "proxy-buffer-size",
    "proxy-buffering",
    "proxy-buffers-number",
    "proxy-busy-buffers-size",
    "proxy-connect-timeout",
    "proxy-cookie-domain",
    "proxy-cookie-path",
    "proxy-http-version",
    "proxy-max-temp-file-size",
    "proxy-next-upstream",
    "proxy-next-upstream-timeout",
    "proxy-next-upstream-tries",
    "proxy-read-timeout",
    "proxy-redirect-from",
    "proxy-redirect-to",
    "proxy-request-buffering",
    "proxy-send-timeout",
    "proxy-ssl-ciphers",
    "proxy-ssl-name",
    "proxy-ssl-protocols",
    "proxy-ssl-secret",
    "proxy-ssl-server-name",
    "proxy-ssl-verify",
    "proxy-ssl-verify-depth",
    "relative-redirects",
    "rewrite-target",
    "satisfy",
    "server-alias",
    "server-snippet",
    "service-upstream",
    "session-cookie-change-on-failure",
    "session-cookie-conditional-samesite-none",
    "session-cookie-domain",
    "session-cookie-expires",
    "session-cookie-max-age",
    "session-cookie-name",
    "session-cookie-path",
    "session-cookie-samesite",
    "session-cookie-secure",
    "ssl-ciphers",
    "ssl-passthrough",
    "ssl-prefer-server-ciphers",
    "ssl-redirect",
    "stream-snippet",
    "temporal-redirect",
    "temporal-redirect-code",
    "upstream-hash-by",
    "upstream-hash-by-subset",
    "upstream-hash-by-subset-size",
    "upstream-vhost",
    "use-port-in-redirects",
    "use-regex",
    "whitelist-source-range",
    "x-forwarded-prefix",
];

/// Whether ingress-nginx reads `name` (a key without the prefix).
pub fn read(name: &str) -> bool {
    READ.binary_search(&name).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_is_sorted_without_repeats_so_binary_search_finds_every_key() {
        assert!(READ.windows(2).all(|pair| pair[0] < pair[1]));
        assert!(READ.iter().all(|key| read(key)));
    }

    #[test]
    fn keys_no_parser_reads_are_not_read() {
        for key in [
            "rate-limit",
            "rate-limit-window",
            "websocket-services",
            "websocket-connections",
            "mirror-uri",
        ] {
            assert!(!read(key), "{key}");
        }
        for key in ["whitelist-source-range", "proxy-read-timeout", "server-alias", "canary"] {
            assert!(read(key), "{key}");
        }
    }
}
