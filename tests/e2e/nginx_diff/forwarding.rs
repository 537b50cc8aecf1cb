//! The ConfigMap's forwarding keys: whose address is the caller's (the realip module, trusted
//! only from `proxy-real-ip-cidr`), and the caller's X-Forwarded-* standing for the
//! connection's under `use-forwarded-headers`. Plain probes come from 127.0.0.1 (the trusted
//! proxy) or 127.0.0.2 (a caller the ConfigMap does not name).

use super::{
    case::{Verdict, case, check},
    probe::Probe,
};

const UNTRUSTED: &str = "127.0.0.2";

#[tokio::test]
async fn use_forwarded_headers_trusts_the_named_proxy_and_passes_the_callers_fields() {
    const HOST: &str = "fwd.example.com";
    let chain = |probe: Probe| {
        probe
            .header("x-forwarded-for", "203.0.113.7, 127.0.0.1")
            .header("x-forwarded-proto", "https")
    };
    let probes = [
        chain(Probe::get(HOST, "/a"))
            .expect("pod header x-real-ip", "203.0.113.7")
            .expect("pod header x-forwarded-for", "203.0.113.7, 127.0.0.1, 127.0.0.1")
            .expect("pod header x-forwarded-proto", "https")
            .expect("pod header x-scheme", "https")
            .expect("pod header x-original-forwarded-for", "203.0.113.7, 127.0.0.1"),
        // The same fields from a peer the ConfigMap does not name: its address stands, its
        // X-Forwarded-Proto still does (lua_ingress.lua asks nobody's trust).
        chain(Probe::get(HOST, "/b").from(UNTRUSTED))
            .expect("pod header x-real-ip", UNTRUSTED)
            .expect("pod header x-forwarded-for", "203.0.113.7, 127.0.0.1, 127.0.0.2")
            .expect("pod header x-forwarded-proto", "https"),
        // Right to left, stopping at the first address outside the ranges.
        Probe::get(HOST, "/c")
            .header("x-forwarded-for", "198.51.100.1, 203.0.113.8")
            .header("x-forwarded-proto", "https")
            .expect("pod header x-real-ip", "203.0.113.8"),
        // Not an address: the peer stays the caller.
        Probe::get(HOST, "/d")
            .header("x-forwarded-for", "203.0.113.7, unknown")
            .header("x-forwarded-proto", "https")
            .expect("pod header x-real-ip", "127.0.0.1"),
        // Without X-Forwarded-Proto, plain HTTP is redirected, to X-Forwarded-Host's host.
        Probe::get(HOST, "/e/").expect_redirect("308", "https://fwd.example.com/e"),
        Probe::get(HOST, "/f")
            .header("x-forwarded-host", "public.example.com:8443, inner.example.com")
            .expect_redirect("308", "https://public.example.com/f"),
        Probe::get(HOST, "/g")
            .header("x-forwarded-proto", "https")
            .header("x-forwarded-host", "public.example.com")
            .header("x-forwarded-port", "8443")
            .expect("pod header host", "public.example.com")
            .expect("pod header x-forwarded-host", "public.example.com")
            .expect("pod header x-forwarded-port", "8443"),
        // Over TLS, a caller saying `http` is redirected as nginx redirects it.
        Probe::get(HOST, "/h")
            .https()
            .header("x-forwarded-proto", "http")
            .expect("status", "308"),
        Probe::get(HOST, "/i")
            .h2()
            .header("x-forwarded-for", "198.51.100.4")
            .expect("pod header x-real-ip", "198.51.100.4")
            .expect("pod header x-forwarded-proto", "https"),
    ];
    let certificates = &[(HOST, "fwd-tls")];
    check(
        case!("forwarded_headers", certificates),
        &probes,
        &[(HOST, Verdict::Identical)],
    )
    .await;
}

#[tokio::test]
async fn enable_real_ip_reads_the_named_field_for_limits_ranges_and_fields() {
    const HOST: &str = "realip.example.com";
    let probes = [
        Probe::get(HOST, "/")
            .header("x-client-ip", "203.0.113.9")
            .header("x-forwarded-proto", "https")
            .expect("pod header x-real-ip", "203.0.113.9")
            .expect("pod header x-forwarded-for", "203.0.113.9")
            .expect("pod header x-forwarded-proto", "http")
            .expect("pod header x-original-forwarded-for", "203.0.113.9"),
        Probe::get(HOST, "/")
            .from(UNTRUSTED)
            .header("x-client-ip", "203.0.113.9")
            .expect("pod header x-real-ip", UNTRUSTED),
        // The allowlist judges the caller the field names, only when the peer is trusted.
        Probe::get(HOST, "/admin/x")
            .header("x-client-ip", "203.0.113.9")
            .expect("pod header x-real-ip", "203.0.113.9"),
        Probe::get(HOST, "/admin")
            .from(UNTRUSTED)
            .header("x-client-ip", "203.0.113.9")
            .expect("status", "403"),
        Probe::get(HOST, "/admin").expect("status", "403"),
    ];
    check(case!("real_ip_header", &[]), &probes, &[(HOST, Verdict::Identical)]).await;
}

#[tokio::test]
async fn use_forwarded_headers_alone_trusts_every_ipv4_address_and_sends_the_caller_alone() {
    const HOST: &str = "anyproxy.example.com";
    let probes = [
        // Every IPv4 address is trusted: the walk runs to the left-most entry.
        Probe::get(HOST, "/")
            .from(UNTRUSTED)
            .header("x-forwarded-for", "198.51.100.7, 203.0.113.7")
            .expect("pod header x-real-ip", "198.51.100.7")
            .expect("pod header x-forwarded-for", "198.51.100.7")
            .expect("pod header x-original-forwarded-for", "198.51.100.7, 203.0.113.7"),
        Probe::get(HOST, "/all")
            .header("x-forwarded-for", "10.1.2.3 , 192.168.0.9:4431,127.0.0.9")
            .header("x-forwarded-proto", "wss")
            .expect("pod header x-real-ip", "10.1.2.3")
            .expect("pod header x-forwarded-proto", "wss"),
        // An IPv6 address is outside 0.0.0.0/0: the walk stops there.
        Probe::get(HOST, "/v6")
            .header("x-forwarded-for", "198.51.100.7, [2001:db8::7]:443")
            .expect("pod header x-real-ip", "2001:db8::7"),
    ];
    check(
        case!("forwarded_default_cidr", &[]),
        &probes,
        &[(HOST, Verdict::Identical)],
    )
    .await;
}
