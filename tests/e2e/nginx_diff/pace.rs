//! limit-rate and limit-rate-after: nginx's `limit_rate` paces the answer's body per request
//! once its first bytes are out, but only an answer it buffers: under ingress-nginx's
//! `proxy-buffering: off` an answer goes unpaced unless the pod sends `X-Accel-Buffering: yes`.
//! A paced 256 KiB answer at 64 KiB/s after 64 KiB takes 3 s here and at least 2 s in nginx
//! (which lets one second's worth more out at once, header included): both must take at least
//! those 2 s, and answer the same, body included. No upper bound is asserted: the unpaced
//! answer is only compared.

use std::time::Duration;

use super::{
    case::{Verdict, case, check},
    probe::Probe,
};

#[tokio::test]
async fn an_answer_nginx_buffers_is_paced_on_both_sides_and_others_are_not() {
    const HOST: &str = "paced.example.com";
    const PADDING: &str = "262144 bytes, fnv 118f4a1e2dc56c09";
    let least = Duration::from_secs(2);
    let probes = [
        Probe::get(HOST, "/file?kib=256&accel=yes")
            .https()
            .takes_at_least(least)
            .expect("pod padding", PADDING),
        Probe::get(HOST, "/file?kib=256&accel=YES").h2().takes_at_least(least),
        Probe::get(HOST, "/file?kib=256").https().expect("pod padding", PADDING),
        Probe::get(HOST, "/file?kib=256&accel=no").h2(),
        Probe::get(HOST, "/").expect("status", "308"),
    ];
    check(
        case!("paced", &[(HOST, "paced-tls")]),
        &probes,
        &[(HOST, Verdict::Identical)],
    )
    .await;
}
