//! proxy-body-size: the ConfigMap's 1m default (413 above it, for a declared length before the
//! HTTPS redirect, for a chunked body as it arrives), and the annotation per Ingress with
//! nginx's units and `0` for no limit.

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
        Probe::post(HOST, "/up", Payload::Sized(MEGABYTE)).https(),
        Probe::post(HOST, "/up", Payload::Sized(MEGABYTE + 1)).https(),
        Probe::post(HOST, "/up", Payload::Chunked(MEGABYTE + 1)).https(),
        Probe::post(HOST, "/up", Payload::Chunked(MEGABYTE + 1)).h2(),
        Probe::post(HOST, "/up", Payload::Sized(2000)).h2(),
        // Plain HTTP: a declared length above the limit is refused before the redirect; a
        // chunked one is redirected before nginx reads it.
        Probe::post(HOST, "/up", Payload::Sized(MEGABYTE + 1)),
        Probe::post(HOST, "/up", Payload::Chunked(MEGABYTE + 1)),
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
        Probe::post(HOST, "/small", Payload::Sized(8192)),
        Probe::post(HOST, "/small", Payload::Sized(8193)),
        Probe::post(HOST, "/small/x", Payload::Chunked(8193)),
        Probe::post(HOST, "/big", Payload::Sized(2 * MEGABYTE)),
        Probe::post(HOST, "/big/x", Payload::Chunked(MEGABYTE + 500)),
        Probe::get(HOST, "/elsewhere").status_only(),
    ];
    check(
        case!("body_limit_annotation", &[]),
        &probes,
        &[(HOST, Verdict::Identical)],
    )
    .await;
}
