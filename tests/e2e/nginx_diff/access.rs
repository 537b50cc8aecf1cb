//! Source ranges judged on the caller's address: an allowlist the caller is outside answers 403
//! (the HTTPS redirect comes first), a denylist it is outside serves it.

use super::{
    case::{Verdict, case, check},
    probe::Probe,
};

#[tokio::test]
async fn source_ranges_answer_403_outside_an_allowlist_after_the_https_redirect() {
    const ALLOW: &str = "allow.example.com";
    const DENY: &str = "deny.example.com";
    let probes = [
        Probe::get(ALLOW, "/a/").expect_redirect("308", "https://allow.example.com/a"),
        Probe::get(ALLOW, "/a").https().expect("status", "403").expect(
            "response strict-transport-security",
            "max-age=31536000; includeSubDomains",
        ),
        Probe::get(ALLOW, "/b").h2().expect("status", "403"),
        Probe::get(DENY, "/").expect("pod", "answered by web"),
    ];
    let certificates = &[(ALLOW, "allow-tls")];
    let verdicts = [(ALLOW, Verdict::Identical), (DENY, Verdict::Identical)];
    check(case!("source_ranges", certificates), &probes, &verdicts).await;
}
