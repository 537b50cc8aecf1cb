//! Replicas share one Lease: both serve traffic, only the leader writes status, and never do two
//! lead at once: not when the leader dies, not when its API stops answering, not when their
//! clocks disagree, not under random API delays and black holes. A leader stopped with SIGTERM hands over at once.
//!
//! Who led when comes from each replica's `Leadership changed` log lines (one machine, one wall
//! clock), so overlaps are checked on what the replicas themselves believed.

use std::time::Duration;

use k8s_openapi::jiff::{SignedDuration, Timestamp};
use serde_json::json;
use tokio::time::Instant;

use super::{Cluster, OURS, STATUS_ADDRESS, Shunt, Stall, eventually, host, lb_status, mk_ingress, until_served_by};

const WITHIN: Duration = Duration::from_secs(5);
/// Short election timings, so takeovers happen within seconds: lease 3 s, renew deadline 2 s,
/// retry 500 ms.
const FAST: [&str; 6] = [
    "--lease-duration",
    "3s",
    "--renew-deadline",
    "2s",
    "--retry-period",
    "500ms",
];
const LEASE_DURATION: SignedDuration = SignedDuration::from_secs(3);

fn holder(cluster: &Cluster) -> Option<String> {
    let lease = cluster.api.get("Lease", "shunt-system", "shunt-leader")?;
    lease["spec"]["holderIdentity"].as_str().map(str::to_string)
}

async fn until_holder(cluster: &Cluster, identity: &str, within: Duration) {
    let what = format!("{identity} to hold the Lease");
    eventually(&what, within, async || (holder(cluster)? == identity).then_some(())).await;
}

/// When `replica` started leading, once its log says it leads: the Lease changes hands before the
/// replica's log line says so, because logs go through a background writer.
async fn until_logged_leading(replica: &Shunt) -> Timestamp {
    let what = format!("{} to log that it leads", replica.identity);
    let leading = async || match replica.leadership().last() {
        Some((from, None)) => Some(*from),
        _ => None,
    };
    eventually(&what, WITHIN, leading).await
}

/// `identity`'s last successful Lease write: when it arrived at the API server.
fn last_lease_write(cluster: &Cluster, identity: &str) -> Timestamp {
    let requests = cluster.api.requests();
    let writes = requests
        .iter()
        .filter(|r| r.who == identity && r.ok() && r.path.contains("/leases") && r.method != http::Method::GET);
    writes
        .map(|r| r.wall)
        .next_back()
        .unwrap_or_else(|| panic!("{identity} never wrote the Lease"))
}

/// Every leadership interval of these replicas, the open ones closed at `now`; panics when two
/// replicas' intervals overlap. Returns how many intervals there were.
fn assert_never_two_leaders(replicas: &[(&Shunt, Timestamp)]) -> usize {
    let mut intervals: Vec<(Timestamp, Timestamp, &str)> = Vec::new();
    for (shunt, end) in replicas {
        for (from, to) in shunt.leadership() {
            intervals.push((from, to.unwrap_or(*end), &shunt.identity));
        }
    }
    intervals.sort();
    for pair in intervals.windows(2) {
        let ((_, first_end, first), (second_start, _, second)) = (pair[0], pair[1]);
        assert!(
            first_end <= second_start,
            "{first} led until {first_end} and {second} from {second_start}: two leaders at once\n{intervals:#?}"
        );
    }
    intervals.len()
}

#[tokio::test]
async fn a_renew_deadline_not_below_the_lease_duration_fails_start_up_with_one_line() {
    let cluster = Cluster::start(&[]).await;
    let kubeconfig = cluster.api.kubeconfig(cluster.dir.path(), "shunt-a");
    let run = tokio::process::Command::from(super::launch::shunt())
        .arg("run")
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .args(["--lease-duration", "10s", "--renew-deadline", "10s"])
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(WITHIN, run)
        .await
        .expect("shunt exits at once")
        .expect("shunt runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        stderr.lines().any(|line| line.starts_with("shunt: ")
            && line.contains("--renew-deadline")
            && line.contains("must be shorter than the lease duration")),
        "{stderr}"
    );
    assert!(cluster.api.requests().is_empty(), "it gave up before calling the API");
}

#[tokio::test]
async fn only_the_leader_writes_status_and_the_other_replica_takes_over_when_it_dies() {
    let cluster = Cluster::start(&["web"]).await;
    let api = &cluster.api;
    let ours = json!([{"ip": STATUS_ADDRESS}]);
    let status_of = |name: &str| api.get("Ingress", "shop", name).map(|ingress| lb_status(&ingress));

    let mut a = cluster.shunt("shunt-a", &FAST).await;
    until_holder(&cluster, "shunt-a", WITHIN).await;
    let b = cluster.shunt("shunt-b", &FAST).await;
    eventually("shunt-b to look at the Lease", WITHIN, async || {
        api.requests()
            .iter()
            .any(|r| r.who == "shunt-b" && r.path.contains("/leases/"))
            .then_some(())
    })
    .await;

    api.apply(mk_ingress("shop", "second", OURS, &host("second"), "web"));
    for shunt in [&a, &b] {
        until_served_by(shunt, &host("web"), "web", WITHIN).await;
        until_served_by(shunt, &host("second"), "web", WITHIN).await;
    }
    eventually("status of both Ingresses", WITHIN, async || {
        (status_of("web")? == ours && status_of("second")? == ours).then_some(())
    })
    .await;

    a.kill().await;
    let killed = Instant::now();
    let killed_wall = Timestamp::now();
    until_holder(&cluster, "shunt-b", WITHIN).await;
    eprintln!(
        "shunt-b took the Lease over {:.1} s after shunt-a was killed",
        killed.elapsed().as_secs_f64()
    );
    until_served_by(&b, &host("second"), "web", WITHIN).await;

    api.apply(mk_ingress("shop", "third", OURS, &host("third"), "web"));
    eventually("status of the Ingress made after the takeover", WITHIN, async || {
        (status_of("third")? == ours).then_some(())
    })
    .await;

    let requests = api.requests();
    let writers = |who: &str| {
        requests
            .iter()
            .filter(|r| r.who == who && r.ok())
            .filter_map(|r| r.ingress_status_write())
            .collect::<Vec<_>>()
    };
    let by_a = writers("shunt-a");
    let by_b = writers("shunt-b");
    assert!(
        by_a.iter().all(|r| r.as_str() != "shop/third"),
        "shunt-a is dead: {by_a:?}"
    );
    assert!(
        by_a.contains(&"shop/web".to_string()) && by_a.contains(&"shop/second".to_string()),
        "the leader wrote: {by_a:?}"
    );
    assert_eq!(by_b, ["shop/third"], "the follower wrote nothing before it led");
    let taken_by_b = requests
        .iter()
        .filter(|r| r.who == "shunt-b" && r.ok() && r.path.contains("/leases") && r.method != http::Method::GET);
    assert!(
        taken_by_b.clone().all(|r| r.at >= killed),
        "shunt-b wrote the Lease while shunt-a held it"
    );
    assert!(taken_by_b.count() >= 1);
    assert_never_two_leaders(&[(&a, killed_wall), (&b, Timestamp::now())]);
}

/// The leader's connection to the API black-holes: its rounds hang. It must stop leading a renew
/// deadline after its last successful renewal started, well before the other replica, which still
/// reaches the API, may take the Lease over.
#[tokio::test]
async fn a_leader_whose_api_stops_answering_stops_leading_before_another_may_take_over() {
    let cluster = Cluster::start(&["web"]).await;
    // A lease of 4 s with a renew deadline of 2 s: the leader must be gone after 2 s, and the
    // test allows up to 3 s (1 s of scheduling slack) before the peer could take over at 4 s.
    let args = [
        "--lease-duration",
        "4s",
        "--renew-deadline",
        "2s",
        "--retry-period",
        "500ms",
    ];
    let lease_duration = SignedDuration::from_secs(4);
    let a = cluster.shunt("shunt-a", &args).await;
    until_holder(&cluster, "shunt-a", WITHIN).await;
    let b = cluster.shunt("shunt-b", &args).await;
    // Let shunt-b see a few renewals first.
    tokio::time::sleep(Duration::from_secs(1)).await;
    cluster.api.stall("leases", Some("shunt-a"), Stall::BlackHole);
    until_holder(&cluster, "shunt-b", Duration::from_secs(10)).await;
    until_logged_leading(&b).await;

    let renewed = last_lease_write(&cluster, "shunt-a");
    // Its log line that it stopped is written in the background too.
    let stopped_leading = async || a.leadership().last().and_then(|(_, end)| *end);
    let stopped = eventually("shunt-a to log that it stopped leading", WITHIN, stopped_leading).await;
    // `renewed` is when the write arrived, after its round started: the deadline counts from
    // before it. A second of slack for scheduling on a busy machine, still below the lease.
    let margin = SignedDuration::from_secs(1);
    assert!(
        stopped < renewed + (lease_duration - margin),
        "shunt-a stopped leading at {stopped}, {} after its last renewal arrived",
        stopped.duration_since(renewed)
    );
    let now = Timestamp::now();
    assert!(assert_never_two_leaders(&[(&a, now), (&b, now)]) >= 2);
    cluster.api.unstall();
}

/// Two replicas whose wall clocks are a minute apart: to the one ahead, every renewTime the other
/// writes looks a minute old. Only what it sees change counts, so it waits while the other renews,
/// and takes over a lease duration after the other dies.
#[tokio::test]
async fn two_replicas_whose_clocks_are_a_minute_apart_never_lead_at_once() {
    let cluster = Cluster::start(&["web"]).await;
    let behind: Vec<&str> = FAST.iter().copied().chain(["--lease-clock-offset", "-30s"]).collect();
    let ahead: Vec<&str> = FAST.iter().copied().chain(["--lease-clock-offset", "30s"]).collect();
    let mut a = cluster.shunt("shunt-a", &behind).await;
    until_holder(&cluster, "shunt-a", WITHIN).await;
    let b = cluster.shunt("shunt-b", &ahead).await;

    // Three lease durations of shunt-a renewing.
    tokio::time::sleep(Duration::from_secs(9)).await;
    assert_eq!(holder(&cluster).as_deref(), Some("shunt-a"));
    let lease = cluster
        .api
        .get("Lease", "shunt-system", "shunt-leader")
        .expect("the Lease");
    let renewed: Timestamp = lease["spec"]["renewTime"]
        .as_str()
        .and_then(|t| t.parse().ok())
        .expect("a renewTime");
    let behind_by = Timestamp::now().duration_since(renewed);
    assert!(
        behind_by > SignedDuration::from_secs(25),
        "shunt-a's clock is not behind: renewTime {renewed} is {behind_by} old"
    );
    assert!(b.leadership().is_empty(), "shunt-b led: {:?}", b.leadership());

    a.kill().await;
    let killed = Timestamp::now();
    until_holder(&cluster, "shunt-b", Duration::from_secs(10)).await;
    let took = until_logged_leading(&b).await;
    // Counted from shunt-a's last renewal as the API server received it, not from the kill: on a
    // busy machine that renewal can arrive well before the kill.
    let renewed = last_lease_write(&cluster, "shunt-a");
    assert!(
        took >= renewed + LEASE_DURATION - SignedDuration::from_millis(600),
        "shunt-b took over {} after shunt-a's last renewal, less than a lease duration",
        took.duration_since(renewed)
    );
    assert_never_two_leaders(&[(&a, killed), (&b, Timestamp::now())]);
}

/// A rollout: the leader gets SIGTERM, stops leading, releases the Lease, and the other replica
/// (default lease duration and renew deadline, rounds every second) leads within 2 s instead of
/// after a lease duration.
#[tokio::test]
async fn on_sigterm_the_leader_releases_the_lease_and_the_other_replica_leads_within_two_seconds() {
    let cluster = Cluster::start(&["web"]).await;
    let args = ["--retry-period", "1s"];
    let mut a = cluster.shunt("shunt-a", &args).await;
    until_holder(&cluster, "shunt-a", WITHIN).await;
    let b = cluster.shunt("shunt-b", &args).await;
    eventually("shunt-b to read the Lease", WITHIN, async || {
        let requests = cluster.api.requests();
        requests
            .iter()
            .any(|r| r.who == "shunt-b" && r.ok() && r.path.contains("/leases/"))
            .then_some(())
    })
    .await;

    assert_eq!(a.metric("shunt_leader").await, Some(1.0), "the leader's gauge");
    assert_eq!(b.metric("shunt_leader").await, Some(0.0), "the follower's gauge");
    let terminated = Timestamp::now();
    a.terminate();
    until_holder(&cluster, "shunt-b", WITHIN).await;
    let took = until_logged_leading(&b).await;
    eprintln!(
        "shunt-b led {} after shunt-a got SIGTERM",
        took.duration_since(terminated)
    );
    assert!(
        took < terminated + SignedDuration::from_secs(2),
        "shunt-b led {} after SIGTERM",
        took.duration_since(terminated)
    );
    eventually("shunt-b's gauge to say it leads", WITHIN, async || {
        (b.metric("shunt_leader").await? == 1.0).then_some(())
    })
    .await;
    assert!(a.wait_exit(Duration::from_secs(10)).await.success());

    let requests = cluster.api.requests();
    let release = requests
        .iter()
        .rfind(|r| r.who == "shunt-a" && r.method == http::Method::PUT && r.path.contains("/leases/"))
        .expect("shunt-a wrote the Lease");
    assert!(release.ok(), "the release was accepted: {}", release.status);
    assert_eq!(release.body["spec"]["holderIdentity"], "");
    assert_eq!(release.body["spec"]["leaseDurationSeconds"], 1);
    assert_never_two_leaders(&[(&a, terminated), (&b, Timestamp::now())]);
}

/// Every Lease request waits a random time up to 600 ms before it is handled and again after, so
/// some rounds outlast the renew deadline; and every 6 s the current holder's connection
/// black-holes while the previous one's comes back (its stalled requests handled late). Through
/// 24 s of that, leadership changes hands, and the two replicas' intervals never overlap.
#[tokio::test]
async fn under_random_api_delays_and_black_holes_there_is_never_more_than_one_leader() {
    let cluster = Cluster::start(&["web"]).await;
    let random = Stall::Random {
        max: Duration::from_millis(600),
    };
    cluster.api.stall("leases", None, random);
    let a = cluster.shunt("shunt-a", &FAST).await;
    let b = cluster.shunt("shunt-b", &FAST).await;
    for _ in 0..4 {
        tokio::time::sleep(Duration::from_secs(6)).await;
        let holder = holder(&cluster).filter(|holder| !holder.is_empty());
        cluster.api.unstall();
        // The first matching stall applies: the black hole before the delays.
        if let Some(holder) = &holder {
            cluster.api.stall("leases", Some(holder), Stall::BlackHole);
        }
        cluster.api.stall("leases", None, random);
    }
    let now = Timestamp::now();
    let intervals = assert_never_two_leaders(&[(&a, now), (&b, now)]);
    eprintln!(
        "leadership intervals: shunt-a {:?}, shunt-b {:?}",
        a.leadership(),
        b.leadership()
    );
    assert!(
        !a.leadership().is_empty() && !b.leadership().is_empty(),
        "leadership never changed hands: the scenario tested nothing"
    );
    assert!(intervals >= 3, "only {intervals} leadership intervals");
    cluster.api.unstall();
}
