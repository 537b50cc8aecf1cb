//! proxy-body-size: the ConfigMap's 1m default (413 above it, for a declared length before the
//! HTTPS redirect, for a chunked body as it arrives), and the annotation per Ingress with
//! nginx's units (`8k`, `1G`) and `0` for no limit.

use super::{
    case::{Verdict, case, check},
    probe::{Payload, Probe},
};

/// nginx's `1m`.
const MEGABYTE: usize = 1024 * 1024;

#[tokio::test]
async fn bodies_above_the_default_megabyte_are_answered_413() {
    const HOST: &str = "limits.example.com";
    let probes = [
        Probe::post(HOST, "/up", Payload::Sized(MEGABYTE))
            .https()
            .expect("pod body_len", "1048576"),
        Probe::post(HOST, "/up", Payload::Sized(MEGABYTE + 1))
            .https()
            .expect("status", "413")
            .expect(
                "response strict-transport-security",
                "max-age=31536000; includeSubDomains",
            ),
        Probe::post(HOST, "/up", Payload::Chunked(MEGABYTE + 1))
            .https()
            .expect("status", "413"),
        Probe::post(HOST, "/up", Payload::Chunked(MEGABYTE + 1))
            .h2()
            .expect("status", "413"),
        Probe::post(HOST, "/up", Payload::Sized(2000))
            .h2()
            .expect("pod body_len", "2000"),
        // Plain HTTP: a declared length above the limit is refused before the redirect; a
        // chunked one is redirected before nginx reads it.
        Probe::post(HOST, "/up", Payload::Sized(MEGABYTE + 1)).expect("status", "413"),
        Probe::post(HOST, "/up", Payload::Chunked(MEGABYTE + 1)).expect("status", "308"),
    ];
    let certificates = &[(HOST, "limits-tls")];
    check(
        case!("body_limit_default", certificates),
        &probes,
        &[(HOST, Verdict::Identical)],
    )
    .await;
}

#[tokio::test]
async fn proxy_body_size_sets_each_ingresses_limit_and_zero_lifts_it() {
    const HOST: &str = "sized.example.com";
    let probes = [
        Probe::post(HOST, "/small", Payload::Sized(8192)).expect("pod body_len", "8192"),
        Probe::post(HOST, "/small", Payload::Sized(8193)).expect("status", "413"),
        Probe::post(HOST, "/small/x", Payload::Chunked(8193)).expect("status", "413"),
        Probe::post(HOST, "/big", Payload::Sized(2 * MEGABYTE)).expect("pod body_len", "2097152"),
        Probe::post(HOST, "/big/x", Payload::Chunked(MEGABYTE + 500)).expect("pod body_len", "1049076"),
        Probe::post(HOST, "/huge", Payload::Sized(MEGABYTE + 1)).expect("pod body_len", "1048577"),
        Probe::get(HOST, "/elsewhere").status_only().expect("status", "404"),
    ];
    check(
        case!("body_limit_annotation", &[]),
        &probes,
        &[(HOST, Verdict::Identical)],
    )
    .await;
}
