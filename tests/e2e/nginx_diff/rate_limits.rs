//! limit-rpm and limit-rps: nginx's `limit_req ... burst=B nodelay` per caller address, the
//! free first request, the 503 past the burst, and an allowlist that exempts the caller.

use super::{
    case::{Verdict, case, check},
    probe::Probe,
};

#[tokio::test]
async fn a_caller_past_its_burst_gets_503_and_an_exempt_one_never_does() {
    const LIMITED: &str = "limited.example.com";
    const EXEMPT: &str = "exempt.example.com";
    // 1 r/m with a burst of 5: the first request is free, five fill the burst, then 503 over
    // every protocol; a minute must pass for the next, far longer than the probes take. Plain
    // HTTP is redirected first, and not counted.
    let mut probes: Vec<Probe> = (0..3).map(|_| Probe::get(LIMITED, "/").https()).collect();
    probes.push(Probe::get(LIMITED, "/").expect("status", "308"));
    probes.extend((0..3).map(|_| Probe::get(LIMITED, "/x").h2()));
    probes.push(Probe::get(LIMITED, "/").https().expect("status", "503"));
    probes.push(Probe::get(LIMITED, "/again").h2().expect("status", "503"));
    probes.push(Probe::get(LIMITED, "/").expect("status", "308"));
    // 1 r/s with a burst of 1 would refuse the third request of a quick run; the allowlist
    // (every address) exempts the caller.
    probes.extend((0..4).map(|_| Probe::get(EXEMPT, "/")));
    check(
        case!("rate_limit", &[(LIMITED, "limited-tls")]),
        &probes,
        &[(LIMITED, Verdict::Identical), (EXEMPT, Verdict::Identical)],
    )
    .await;
}
