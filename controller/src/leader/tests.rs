//! Election rounds and the elector's loop against a mocked API server: each test scripts the
//! Lease the server holds and asserts the exact requests sent back (or that none is). Tests of
//! timing run on tokio's paused clock, so "10 s later" is exact and instant.

use std::time::Duration;

use http::{Method, StatusCode};
use k8s_openapi::{
    apimachinery::pkg::apis::meta::v1::MicroTime,
    jiff::{SignedDuration, Timestamp},
};
use kube::Client;
use serde_json::{Value, json};
use tokio::{sync::watch, time::Instant};

use super::{lease::LeaseApi, *};

const LEASE_PATH: &str = "/apis/coordination.k8s.io/v1/namespaces/shunt-system/leases/shunt-leader";
const LEASES_PATH: &str = "/apis/coordination.k8s.io/v1/namespaces/shunt-system/leases";
const LEASE_DURATION: Duration = Duration::from_secs(15);
const RENEW_DEADLINE: Duration = Duration::from_secs(10);
const RETRY_PERIOD: Duration = Duration::from_secs(2);

fn mk_config(identity: &str) -> LeaseConfig {
    LeaseConfig {
        namespace: "shunt-system".to_string(),
        name: "shunt-leader".to_string(),
        identity: identity.to_string(),
        lease_duration: LEASE_DURATION,
        renew_deadline: RENEW_DEADLINE,
        retry_period: RETRY_PERIOD,
        clock: WallClock::default(),
    }
}

/// Replica `shunt-0`'s rounds, as the elector makes them.
fn mk_lease_api(client: Client) -> LeaseApi {
    LeaseApi::new(client, "shunt-system", "shunt-leader", "shunt-0", LEASE_DURATION)
}

/// One round of `shunt-0`, which has not read the Lease before and drops its client when done.
async fn round(client: Client) -> kube::Result<bool> {
    let decision = mk_lease_api(client).round(&mut None).await?;
    Ok(matches!(decision, LeaseDecision::Leading(_)))
}

/// The Lease as the API server returns it at `version`, renewed `renewed_ago` before now by the
/// server's (or the holder's) wall clock.
fn mk_lease(holder: &str, renewed_ago: SignedDuration, transitions: i32, version: u32) -> Value {
    let renewed = Timestamp::now() - renewed_ago;
    json!({
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "shunt-leader", "namespace": "shunt-system", "resourceVersion": version.to_string()},
        "spec": {
            "holderIdentity": holder,
            "leaseDurationSeconds": 15,
            "acquireTime": MicroTime(renewed - SignedDuration::from_mins(10)),
            "renewTime": MicroTime(renewed),
            "leaseTransitions": transitions,
        }
    })
}

/// Answers the round's read: no Lease yet.
async fn vacant(api: &mut ApiServerVerifier) {
    api.answer(
        Method::GET,
        LEASE_PATH,
        StatusCode::NOT_FOUND,
        mk_status(404, "NotFound"),
    )
    .await;
}

/// Answers the round's read with `lease`.
async fn held(api: &mut ApiServerVerifier, lease: Value) {
    api.answer(Method::GET, LEASE_PATH, StatusCode::OK, lease).await;
}

fn timestamp(value: &Value) -> Timestamp {
    value
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("not a timestamp: {value}"))
}

/// A write's timestamp is this round's `now`: not before the test began, not in the future.
fn assert_written_now(value: &Value, since: Timestamp) {
    let written = timestamp(value);
    assert!(
        written >= since - SignedDuration::from_millis(1) && written <= Timestamp::now(),
        "{written} is not now"
    );
}

/// [`verify`] for tests on the paused clock, which may let minutes pass: both sides within
/// `within` of paused time (a missing request fails as soon as nothing else can happen).
async fn verify_paused<T>(
    within: Duration,
    scenario: impl std::future::Future<Output = ApiServerVerifier>,
    code: impl std::future::Future<Output = T>,
) -> T {
    let both = futures::future::join(scenario, code);
    let (mut api, out) = tokio::time::timeout(within, both)
        .await
        .expect("the scenario completes in time");
    let extra = tokio::time::timeout(Duration::from_secs(1), api.0.next_request())
        .await
        .expect("the client is dropped");
    if let Some((request, _)) = extra {
        panic!("unexpected extra request {} {}", request.method(), request.uri());
    }
    out
}

// === one round ===

#[tokio::test]
async fn a_vacant_lease_is_created_with_us_as_holder() {
    let (client, mut api) = mk_client();
    let since = Timestamp::now();
    let scenario = async move {
        vacant(&mut api).await;
        let body = api.echo(Method::POST, LEASES_PATH, StatusCode::CREATED).await;
        let spec = &body["spec"];
        assert_eq!(body["metadata"]["name"], "shunt-leader");
        assert_eq!(spec["holderIdentity"], "shunt-0");
        assert_eq!(spec["leaseDurationSeconds"], 15);
        assert_eq!(spec["leaseTransitions"], 0);
        assert_written_now(&spec["acquireTime"], since);
        assert_eq!(spec["renewTime"], spec["acquireTime"]);
        api
    };
    let leads = verify(scenario, round(client)).await;
    assert!(leads.expect("the round succeeds"), "creating the Lease makes us leader");
}

#[tokio::test]
async fn our_own_lease_is_renewed_keeping_the_holder_and_transitions() {
    let (client, mut api) = mk_client();
    let since = Timestamp::now();
    let scenario = async move {
        let lease = mk_lease("shunt-0", SignedDuration::from_secs(5), 3, 7);
        held(&mut api, lease.clone()).await;
        let body = api.echo(Method::PUT, LEASE_PATH, StatusCode::OK).await;
        assert_eq!(
            body["metadata"]["resourceVersion"], "7",
            "a replace carries the version it read"
        );
        let spec = &body["spec"];
        assert_eq!(spec["holderIdentity"], "shunt-0");
        assert_eq!(spec["leaseTransitions"], 3, "a renewal is no transition");
        assert_eq!(
            spec["acquireTime"], lease["spec"]["acquireTime"],
            "a renewal keeps the acquire time"
        );
        assert_written_now(&spec["renewTime"], since);
        api
    };
    let leads = verify(scenario, round(client)).await;
    assert!(leads.expect("the round succeeds"), "renewing keeps us leader");
}

/// The old rule compared `renewTime` with our wall clock: a holder whose clock runs a minute
/// behind ours looked expired. Now only what we saw change counts.
#[tokio::test]
async fn a_held_lease_is_left_alone_however_old_its_renew_time_looks() {
    for renewed_ago in [
        SignedDuration::from_secs(14),
        SignedDuration::from_secs(60),
        SignedDuration::from_hours(24),
    ] {
        let (client, mut api) = mk_client();
        let scenario = async move {
            held(&mut api, mk_lease("shunt-1", renewed_ago, 3, 7)).await;
            api
        };
        let leads = verify(scenario, round(client)).await;
        assert!(
            !leads.expect("the round succeeds"),
            "renewed {renewed_ago} ago: we follow"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_lease_left_unchanged_for_its_duration_is_taken_over() {
    let (client, mut api) = mk_client();
    let since = Timestamp::now();
    // Renewed "just now" by its holder's clock: irrelevant, it never changes again.
    let lease = mk_lease("shunt-1", SignedDuration::ZERO, 3, 7);
    let scenario = async move {
        held(&mut api, lease.clone()).await;
        held(&mut api, lease.clone()).await;
        held(&mut api, lease).await;
        let body = api.echo(Method::PUT, LEASE_PATH, StatusCode::OK).await;
        assert_eq!(
            body["metadata"]["resourceVersion"], "7",
            "a racing replica's write must make ours fail"
        );
        let spec = &body["spec"];
        assert_eq!(spec["holderIdentity"], "shunt-0");
        assert_eq!(spec["leaseTransitions"], 4);
        assert_written_now(&spec["acquireTime"], since);
        assert_eq!(spec["renewTime"], spec["acquireTime"]);
        api
    };
    let code = async move {
        let lease = mk_lease_api(client);
        let mut observed = None;
        let first = lease.round(&mut observed).await.expect("round 1");
        tokio::time::advance(LEASE_DURATION - Duration::from_millis(1)).await;
        let second = lease.round(&mut observed).await.expect("round 2");
        tokio::time::advance(Duration::from_millis(1)).await;
        let third = lease.round(&mut observed).await.expect("round 3");
        [first, second, third].map(|decision| matches!(decision, LeaseDecision::Leading(_)))
    };
    let decisions = verify_paused(Duration::from_secs(60), scenario, code).await;
    assert_eq!(
        decisions,
        [false, false, true],
        "taken exactly a lease duration after first seen"
    );
}

#[tokio::test(start_paused = true)]
async fn a_lease_whose_holder_keeps_renewing_is_never_taken_whatever_the_clocks_say() {
    let (client, mut api) = mk_client();
    let scenario = async move {
        // The holder's clock runs an hour behind: every renewTime looks long expired to us.
        for version in 7..27 {
            held(&mut api, mk_lease("shunt-1", SignedDuration::from_hours(1), 3, version)).await;
        }
        api
    };
    let code = async move {
        let lease = mk_lease_api(client);
        let mut observed = None;
        let mut leading = 0;
        for _ in 0..20 {
            if matches!(lease.round(&mut observed).await, Ok(LeaseDecision::Leading(_))) {
                leading += 1;
            }
            tokio::time::advance(RENEW_DEADLINE).await;
        }
        leading
    };
    let leading = verify_paused(Duration::from_secs(600), scenario, code).await;
    assert_eq!(leading, 0, "200 s of renewals, never taken");
}

#[tokio::test]
async fn a_released_lease_is_taken_at_once() {
    let (client, mut api) = mk_client();
    let scenario = async move {
        held(&mut api, mk_lease("", SignedDuration::ZERO, 3, 7)).await;
        let body = api.echo(Method::PUT, LEASE_PATH, StatusCode::OK).await;
        assert_eq!(body["spec"]["holderIdentity"], "shunt-0");
        assert_eq!(body["spec"]["leaseTransitions"], 4);
        api
    };
    let leads = verify(scenario, round(client)).await;
    assert!(leads.expect("the round succeeds"));
}

/// Someone else wrote the Lease between our read and our write: a replace of a released Lease,
/// or a create of a vacant one, answered 409.
#[tokio::test]
async fn losing_the_write_race_with_a_conflict_makes_us_follow() {
    let released = mk_lease("", SignedDuration::ZERO, 3, 7);
    let races = [
        (StatusCode::OK, released, Method::PUT, LEASE_PATH, "Conflict"),
        (
            StatusCode::NOT_FOUND,
            mk_status(404, "NotFound"),
            Method::POST,
            LEASES_PATH,
            "AlreadyExists",
        ),
    ];
    for (read_status, read, write, write_path, reason) in races {
        let (client, mut api) = mk_client();
        let scenario = async move {
            api.answer(Method::GET, LEASE_PATH, read_status, read).await;
            api.answer(write, write_path, StatusCode::CONFLICT, mk_status(409, reason))
                .await;
            api
        };
        let leads = verify(scenario, round(client)).await;
        assert!(!leads.expect("a conflict is an answer, not an error"), "{reason}");
    }
}

#[tokio::test]
async fn a_server_error_is_an_error_not_a_decision() {
    let (client, mut api) = mk_client();
    let scenario = async move {
        api.answer(
            Method::GET,
            LEASE_PATH,
            StatusCode::INTERNAL_SERVER_ERROR,
            mk_status(500, "InternalError"),
        )
        .await;
        api
    };
    let leads = verify(scenario, round(client)).await;
    let error = leads.expect_err("a 500 decides nothing");
    assert!(
        matches!(&error, kube::Error::Api(status) if status.code == 500),
        "{error:?}"
    );
}

// === the elector's loop ===

#[test]
fn a_renew_deadline_not_below_the_lease_duration_is_refused() {
    let mut config = mk_config("shunt-0");
    assert_eq!(config.validate(), Ok(()));
    config.renew_deadline = LEASE_DURATION;
    assert!(matches!(config.validate(), Err(ConfigError::RenewNotBelowLease { .. })));
    config.renew_deadline = RENEW_DEADLINE;
    config.retry_period = RENEW_DEADLINE;
    assert!(matches!(config.validate(), Err(ConfigError::RetryNotBelowRenew { .. })));
    config.retry_period = Duration::ZERO;
    assert!(matches!(config.validate(), Err(ConfigError::RetryNotBelowRenew { .. })));
}

/// A started elector as `shunt-0`: its leadership, and the trigger that shuts it down.
struct Running {
    leader: watch::Receiver<bool>,
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
}

fn mk_running(client: Client) -> Running {
    let elector = Elector::new(client, mk_config("shunt-0")).expect("a valid config");
    let (leader_tx, leader) = watch::channel(false);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(elector.run(leader_tx, async move {
        let _ = stopped.await;
    }));
    Running { leader, stop, task }
}

/// The API answers rounds with 500 for a while, then not at all (a black-holed connection). The
/// leader must stop a renew deadline after its last successful round started: a peer that saw
/// that write may take over a lease duration after it, and by then the leader must be long gone.
#[tokio::test(start_paused = true)]
async fn a_leader_whose_api_stops_answering_stops_leading_before_its_lease_could_expire() {
    let (client, mut api) = mk_client();
    let start = Instant::now();
    let server = tokio::spawn(async move {
        vacant(&mut api).await;
        api.echo(Method::POST, LEASES_PATH, StatusCode::CREATED).await;
        let mut unanswered = Vec::new();
        let mut failed = 0;
        while let Some((request, send)) = api.0.next_request().await {
            assert_eq!(request.uri().path(), LEASE_PATH);
            if failed < 2 {
                reply(send, StatusCode::INTERNAL_SERVER_ERROR, mk_status(500, "InternalError"));
                failed += 1;
            } else {
                unanswered.push(send);
            }
        }
        (failed, unanswered.len())
    });
    let mut running = mk_running(client);
    running.leader.wait_for(|leads| *leads).await.expect("the elector runs");
    let became = start.elapsed();
    running
        .leader
        .wait_for(|leads| !*leads)
        .await
        .expect("the elector runs");
    let stepped_down = start.elapsed();
    // Paused time: the round that created the Lease started at 0 and took no time.
    assert_eq!(became, Duration::ZERO);
    assert!(
        stepped_down >= RENEW_DEADLINE && stepped_down < LEASE_DURATION - Duration::from_secs(4),
        "stepped down {stepped_down:?} after the last successful round started"
    );
    running.stop.send(()).expect("the elector is running");
    running
        .task
        .await
        .expect("the elector stops on shutdown without panicking");
    let (failed, unanswered) = server.await.expect("no panic");
    assert_eq!(failed, 2);
    assert!(unanswered >= 1, "the last round hung until its timeout");
}

#[tokio::test(start_paused = true)]
async fn on_shutdown_the_leader_stops_leading_then_releases_the_lease_it_holds() {
    let (client, mut api) = mk_client();
    let (leader_probe_tx, leader_probe) = tokio::sync::oneshot::channel::<watch::Receiver<bool>>();
    let server = tokio::spawn(async move {
        vacant(&mut api).await;
        let (mut created, send) = api.expect(Method::POST, LEASES_PATH).await;
        created["metadata"]["resourceVersion"] = json!("8");
        reply(send, StatusCode::CREATED, created);
        let leader = leader_probe.await.expect("the test sends the probe");
        let (body, send) = api.expect(Method::PUT, LEASE_PATH).await;
        let leading_at_release = *leader.borrow();
        reply(send, StatusCode::OK, body.clone());
        (body, leading_at_release)
    });
    let mut running = mk_running(client);
    running.leader.wait_for(|leads| *leads).await.expect("the elector runs");
    leader_probe_tx.send(running.leader.clone()).expect("the server waits");
    running.stop.send(()).expect("the elector is running");
    running.task.await.expect("no panic");
    let (release, leading_at_release) = server.await.expect("no panic");
    assert!(!leading_at_release, "the writers stop before the Lease is released");
    assert_eq!(release["metadata"]["resourceVersion"], "8", "the version we hold");
    assert_eq!(release["spec"]["holderIdentity"], "");
    assert_eq!(release["spec"]["leaseDurationSeconds"], 1);
    assert_eq!(release["spec"]["leaseTransitions"], 0);
}

#[tokio::test(start_paused = true)]
async fn a_follower_sends_nothing_on_shutdown() {
    let (client, mut api) = mk_client();
    let server = tokio::spawn(async move {
        held(&mut api, mk_lease("shunt-1", SignedDuration::ZERO, 3, 7)).await;
        api.0.next_request().await.map(|(request, _)| request.uri().to_string())
    });
    let running = mk_running(client);
    tokio::time::sleep(Duration::from_millis(100)).await;
    running.stop.send(()).expect("the elector is running");
    running.task.await.expect("no panic");
    assert!(!*running.leader.borrow());
    assert_eq!(server.await.expect("no panic"), None, "no release from a follower");
}

// === mocked API server ===

/// Defines, in the calling test module, the mocked API server the unit tests of `leader`,
/// `status` and `events` share: `mk_client()`, the scripted [`ApiServerVerifier`] side, `verify`
/// (scenario and code under test within 1 s, then no extra request), `reply` and `mk_status`.
/// A macro because those modules' `tests` are private and `fixtures.rs` is not ours to extend;
/// the body belongs in `fixtures.rs` as plain items.
#[macro_export]
macro_rules! mock_api_server {
    () => {
        type MockBody = ::kube::client::Body;
        type Responder = ::tower_test::mock::SendResponse<::http::Response<MockBody>>;

        /// The scripted side of a `kube::Client`: each test awaits the requests it expects, in order.
        struct ApiServerVerifier(::tower_test::mock::Handle<::http::Request<MockBody>, ::http::Response<MockBody>>);

        fn mk_client() -> (::kube::Client, ApiServerVerifier) {
            let (service, handle) = ::tower_test::mock::pair::<::http::Request<MockBody>, ::http::Response<MockBody>>();
            (::kube::Client::new(service, "default"), ApiServerVerifier(handle))
        }

        #[allow(dead_code, reason = "each test module uses what it needs")]
        impl ApiServerVerifier {
            /// Answers the next request, which must be `method path`, with `status` and `body`;
            /// returns the request's JSON body (null when empty).
            async fn answer(
                &mut self,
                method: ::http::Method,
                path: &str,
                status: ::http::StatusCode,
                body: ::serde_json::Value,
            ) -> ::serde_json::Value {
                let (request, send) = self.expect(method, path).await;
                reply(send, status, body);
                request
            }

            /// Answers the next request, which must be `method path`, with its own body (what a
            /// write returns) and returns that body for the test to check.
            async fn echo(&mut self, method: ::http::Method, path: &str, status: ::http::StatusCode) -> ::serde_json::Value {
                let (request, send) = self.expect(method, path).await;
                reply(send, status, request.clone());
                request
            }

            /// The next request, which must be `method path`, and its JSON body (null when empty).
            async fn expect(&mut self, method: ::http::Method, path: &str) -> (::serde_json::Value, Responder) {
                let next = self.0.next_request().await;
                let (request, send) = next.unwrap_or_else(|| panic!("no request; expected {method} {path}"));
                let (parts, body) = request.into_parts();
                let bytes = body.collect_bytes().await.expect("the request body is readable");
                let body = if bytes.is_empty() {
                    ::serde_json::Value::Null
                } else {
                    ::serde_json::from_slice(&bytes).expect("the request body is JSON")
                };
                let got = (&parts.method, parts.uri.path());
                assert_eq!(got, (&method, path), "unexpected request {} with {body}", parts.uri);
                (body, send)
            }
        }

        fn reply(send: Responder, status: ::http::StatusCode, body: ::serde_json::Value) {
            let bytes = ::serde_json::to_vec(&body).expect("serializable");
            let response = ::http::Response::builder().status(status).body(MockBody::from(bytes));
            send.send_response(response.expect("a valid response"));
        }

        /// A `Status` as the API server sends with an error code.
        #[allow(dead_code, reason = "each test module uses what it needs")]
        fn mk_status(code: u16, reason: &str) -> ::serde_json::Value {
            ::serde_json::json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": reason, "reason": reason, "code": code})
        }

        /// Runs the code under test against the scenario, both within 1 s (a missing request
        /// fails), then checks the code sent nothing more: it has dropped its client by now.
        #[allow(dead_code, reason = "each test module uses what it needs")]
        async fn verify<T>(
            scenario: impl ::std::future::Future<Output = ApiServerVerifier>,
            code: impl ::std::future::Future<Output = T>,
        ) -> T {
            let second = ::std::time::Duration::from_secs(1);
            let both = ::futures::future::join(scenario, code);
            let (mut api, out) = ::tokio::time::timeout(second, both).await.expect("the scenario completes within 1 s");
            let extra = ::tokio::time::timeout(second, api.0.next_request()).await.expect("the client is dropped");
            if let Some((request, _)) = extra {
                panic!("unexpected extra request {} {}", request.method(), request.uri());
            }
            out
        }
    };
}

crate::mock_api_server!();
