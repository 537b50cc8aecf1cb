//! Election rounds against a mocked API server: each test scripts the Lease the server holds and
//! asserts the exact request the round sends back (or that it sends none).

use std::time::Duration;

use http::{Method, StatusCode};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::Client;
use serde_json::{Value, json};
use tokio::sync::watch;

use super::*;

const LEASE_PATH: &str = "/apis/coordination.k8s.io/v1/namespaces/shunt-system/leases/shunt-leader";
const LEASES_PATH: &str = "/apis/coordination.k8s.io/v1/namespaces/shunt-system/leases";

fn mk_elector(client: Client, identity: &str) -> Elector {
    Elector::new(
        client,
        LeaseConfig {
            namespace: "shunt-system".to_string(),
            name: "shunt-leader".to_string(),
            identity: identity.to_string(),
            lease_duration: Duration::from_secs(15),
            renew_interval: Duration::from_secs(5),
        },
    )
}

/// One round of replica `shunt-0`, which drops its client when done.
async fn round(client: Client) -> kube::Result<bool> {
    mk_elector(client, "shunt-0").try_acquire_or_renew().await
}

/// The Lease as the API server returns it, renewed `renewed_ago` before now.
fn mk_lease(holder: &str, renewed_ago: SignedDuration, transitions: i32) -> Value {
    let renewed = Timestamp::now() - renewed_ago;
    json!({
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "shunt-leader", "namespace": "shunt-system", "resourceVersion": "7"},
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
        let lease = mk_lease("shunt-0", SignedDuration::from_secs(5), 3);
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

#[tokio::test]
async fn a_fresh_lease_of_another_replica_is_left_alone() {
    let (client, mut api) = mk_client();
    let scenario = async move {
        held(&mut api, mk_lease("shunt-1", SignedDuration::from_secs(14), 3)).await;
        api
    };
    let leads = verify(scenario, round(client)).await;
    assert!(!leads.expect("the round succeeds"), "we follow");
}

#[tokio::test]
async fn an_expired_lease_of_another_replica_is_taken_over() {
    let (client, mut api) = mk_client();
    let since = Timestamp::now();
    let scenario = async move {
        held(&mut api, mk_lease("shunt-1", SignedDuration::from_secs(16), 3)).await;
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
    let leads = verify(scenario, round(client)).await;
    assert!(leads.expect("the round succeeds"), "taking over makes us leader");
}

#[tokio::test]
async fn a_lease_without_holder_is_taken_whatever_its_renew_time() {
    let (client, mut api) = mk_client();
    let scenario = async move {
        held(&mut api, mk_lease("", SignedDuration::ZERO, 3)).await;
        let body = api.echo(Method::PUT, LEASE_PATH, StatusCode::OK).await;
        assert_eq!(body["spec"]["holderIdentity"], "shunt-0");
        api
    };
    let leads = verify(scenario, round(client)).await;
    assert!(leads.expect("the round succeeds"));
}

/// Someone else wrote the Lease between our read and our write: a replace of an expired Lease,
/// or a create of a vacant one, answered 409.
#[tokio::test]
async fn losing_the_write_race_with_a_conflict_makes_us_follow() {
    let expired = mk_lease("shunt-1", SignedDuration::from_secs(60), 3);
    let races = [
        (StatusCode::OK, expired, Method::PUT, LEASE_PATH, "Conflict"),
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
async fn a_server_error_is_an_error_not_a_verdict() {
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

/// `run` keeps a leader's role through API errors while its Lease would still be valid, and
/// steps down once it would have expired.
#[tokio::test]
async fn a_leader_that_cannot_renew_steps_down_when_its_lease_would_expire() {
    let (client, mut api) = mk_client();
    let elector = Elector::new(
        client,
        LeaseConfig {
            namespace: "shunt-system".to_string(),
            name: "shunt-leader".to_string(),
            identity: "shunt-0".to_string(),
            lease_duration: Duration::from_millis(300),
            renew_interval: Duration::from_millis(50),
        },
    );
    let (leader_tx, mut leader) = watch::channel(false);
    let (stop_tx, stop) = tokio::sync::oneshot::channel::<()>();
    let election = tokio::spawn(elector.run(leader_tx, async move {
        let _ = stop.await;
    }));
    let server = tokio::spawn(async move {
        vacant(&mut api).await;
        api.echo(Method::POST, LEASES_PATH, StatusCode::CREATED).await;
        // From now on the API server fails every round.
        let mut failed = 0;
        while let Some((request, send)) = api.0.next_request().await {
            assert_eq!(request.uri().path(), LEASE_PATH);
            reply(send, StatusCode::INTERNAL_SERVER_ERROR, mk_status(500, "InternalError"));
            failed += 1;
        }
        failed
    });
    let became = tokio::time::Instant::now();
    tokio::time::timeout(Duration::from_secs(1), leader.wait_for(|leads| *leads))
        .await
        .expect("creating the Lease makes us leader within a round")
        .expect("the elector runs");
    tokio::time::timeout(Duration::from_secs(2), leader.wait_for(|leads| !*leads))
        .await
        .expect("a leader that cannot renew steps down")
        .expect("the elector runs");
    assert!(
        became.elapsed() >= Duration::from_millis(250),
        "stepped down after {:?}, before the Lease expired",
        became.elapsed()
    );
    stop_tx.send(()).expect("the elector is running");
    tokio::time::timeout(Duration::from_secs(1), election)
        .await
        .expect("the elector stops on shutdown")
        .expect("no panic");
    let failed = tokio::time::timeout(Duration::from_secs(1), server)
        .await
        .expect("the client is gone")
        .expect("no panic");
    assert!(failed >= 3, "only {failed} failed rounds");
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
