//! proxy-read-timeout per Ingress: a pod slower than the route's read timeout is a 504, one
//! slower than shunt's own default but within the route's answers.

use super::{
    case::{Verdict, case, check},
    probe::Probe,
};

#[tokio::test]
async fn a_routes_read_timeout_decides_between_the_pods_answer_and_504() {
    const HOST: &str = "timeouts.example.com";
    let probes = [
        Probe::get(HOST, "/short?pause=0"),
        // nginx's 504 page, compared by status: the pod's echo never comes.
        Probe::get(HOST, "/short?pause=1500")
            .status_only()
            .expect("status", "504"),
        Probe::get(HOST, "/long?pause=1500").expect("pod", "answered by slow"),
    ];
    check(case!("timeouts", &[]), &probes, &[(HOST, Verdict::Identical)]).await;
}
