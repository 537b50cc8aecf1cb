//! proxy-next-upstream with an HTTP status and -tries: an answer nginx drops for another pod is
//! dropped by shunt too, and the last try's answer stands where no other pod is left.

use super::{
    case::{Verdict, case, check},
    probe::Probe,
};

#[tokio::test]
async fn a_503_goes_to_the_other_pod_and_the_last_tries_answer_stands() {
    const NEXT: &str = "next.example.com";
    const ALONE: &str = "alone.example.com";
    // Half of the first tries reach the pod answering 503, whichever balancer picks: each such
    // answer is dropped for the other pod, within 2 tries.
    let mut probes: Vec<Probe> = (0..4)
        .map(|_| Probe::get(NEXT, "/a?b=c").expect("pod", "answered by web"))
        .collect();
    probes.extend((0..2).map(|_| Probe::get(NEXT, "/").expect("pod", "answered by web")));
    probes.push(Probe::get(ALONE, "/x").expect("status", "503"));
    check(
        case!("next_upstream", &[]),
        &probes,
        &[(NEXT, Verdict::Identical), (ALONE, Verdict::Identical)],
    )
    .await;
}
