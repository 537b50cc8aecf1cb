use std::time::Duration;

use http::Version;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::*;

const TIMEOUTS: Timeouts = Timeouts {
    header: Duration::from_secs(10),
    idle: Duration::from_secs(75),
};

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

#[test]
fn a_new_connection_has_the_header_timeout_from_its_start() {
    let s = Snapshot::default();
    assert_eq!(next_deadline(&s, &TIMEOUTS), Some((secs(10), Expiry::Header)));
    // Bytes of a first head do not extend it.
    let s = Snapshot {
        read_since_idle: Some(secs(9)),
        ..s
    };
    assert_eq!(next_deadline(&s, &TIMEOUTS), Some((secs(10), Expiry::Header)));
}

#[test]
fn nothing_expires_while_a_request_is_in_flight() {
    let s = Snapshot {
        in_flight: 1,
        requests: 1,
        ..Snapshot::default()
    };
    assert_eq!(next_deadline(&s, &TIMEOUTS), None);
}

#[test]
fn an_idle_keep_alive_connection_gets_the_idle_timeout_from_its_last_response() {
    let s = Snapshot {
        requests: 3,
        idle_since: secs(100),
        ..Snapshot::default()
    };
    assert_eq!(next_deadline(&s, &TIMEOUTS), Some((secs(175), Expiry::Idle)));
}

#[test]
fn a_started_http1_head_gets_the_header_timeout_from_its_first_byte() {
    let s = Snapshot {
        requests: 1,
        idle_since: secs(100),
        read_since_idle: Some(secs(150)),
        ..Snapshot::default()
    };
    assert_eq!(next_deadline(&s, &TIMEOUTS), Some((secs(160), Expiry::Header)));
}

#[test]
fn http2_reads_while_idle_do_not_keep_the_connection_open() {
    let s = Snapshot {
        requests: 1,
        h2: true,
        idle_since: secs(100),
        read_since_idle: Some(secs(150)),
        ..Snapshot::default()
    };
    assert_eq!(next_deadline(&s, &TIMEOUTS), Some((secs(175), Expiry::Idle)));
}

#[tokio::test(start_paused = true)]
async fn the_watchdog_follows_requests_and_expires_when_idle() {
    let activity = ConnActivity::new();
    let request = activity.request_started(Version::HTTP_11);
    let expired = tokio::time::timeout(secs(200), activity.expired(&TIMEOUTS)).await;
    assert!(expired.is_err(), "nothing may expire while a request is in flight");
    drop(request);
    let started = Instant::now();
    let expiry = activity.expired(&TIMEOUTS).await;
    assert_eq!(expiry, Expiry::Idle);
    assert_eq!(started.elapsed(), TIMEOUTS.idle);
}

#[tokio::test(start_paused = true)]
async fn one_watchdog_sees_a_request_end_without_being_told_and_expires_on_time() {
    let activity = ConnActivity::new();
    let request = activity.request_started(Version::HTTP_11);
    let watchdog = tokio::spawn({
        let activity = activity.clone();
        async move {
            let started = Instant::now();
            (activity.expired(&TIMEOUTS).await, started.elapsed())
        }
    });
    tokio::time::sleep(secs(101)).await;
    drop(request);
    let (expiry, after) = watchdog.await.expect("watchdog task");
    assert_eq!(expiry, Expiry::Idle);
    assert_eq!(after, secs(101) + TIMEOUTS.idle);
}

#[tokio::test(start_paused = true)]
async fn a_byte_after_idle_switches_to_the_header_timeout_at_once() {
    let (client, server) = tokio::io::duplex(64);
    let activity = ConnActivity::new();
    drop(activity.request_started(Version::HTTP_11));
    let mut tracked = Tracked::new(server, activity.clone());
    let (mut client, activity2) = (client, activity.clone());
    let watchdog = tokio::spawn(async move {
        let started = Instant::now();
        (activity2.expired(&TIMEOUTS).await, started.elapsed())
    });
    tokio::time::sleep(secs(30)).await;
    client.write_all(b"GE").await.expect("write");
    let mut buf = [0u8; 8];
    let n = tracked.read(&mut buf).await.expect("read");
    assert_eq!(&buf[..n], b"GE");
    let (expiry, after) = watchdog.await.expect("watchdog task");
    assert_eq!(expiry, Expiry::Header);
    assert_eq!(after, secs(40));
}

#[tokio::test]
async fn a_killed_connection_answers_408_to_a_started_head_then_ends() {
    let (mut client, server) = tokio::io::duplex(256);
    let activity = ConnActivity::new();
    let mut tracked = Tracked::new(server, activity.clone());
    client.write_all(b"GET / HT").await.expect("write");
    let mut buf = [0u8; 8];
    tracked.read_exact(&mut buf).await.expect("read");
    activity.kill();
    assert_eq!(tracked.read(&mut buf).await.expect("read after kill"), 0);
    drop(tracked);
    let mut answer = String::new();
    client.read_to_string(&mut answer).await.expect("read answer");
    assert!(answer.starts_with("HTTP/1.1 408 "), "{answer:?}");
}

#[tokio::test]
async fn a_killed_http2_preface_gets_no_http1_answer() {
    let (mut client, server) = tokio::io::duplex(256);
    let activity = ConnActivity::new();
    let mut tracked = Tracked::new(server, activity.clone());
    client.write_all(b"PRI").await.expect("write");
    let mut buf = [0u8; 3];
    tracked.read_exact(&mut buf).await.expect("read");
    activity.kill();
    assert_eq!(tracked.read(&mut buf).await.expect("read after kill"), 0);
    drop(tracked);
    let mut answer = Vec::new();
    client.read_to_end(&mut answer).await.expect("read answer");
    assert!(answer.is_empty(), "{answer:?}");
}

#[tokio::test]
async fn a_killed_silent_connection_gets_no_answer() {
    let (mut client, server) = tokio::io::duplex(256);
    let activity = ConnActivity::new();
    let mut tracked = Tracked::new(server, activity.clone());
    activity.kill();
    let mut buf = [0u8; 16];
    assert_eq!(tracked.read(&mut buf).await.expect("read after kill"), 0);
    drop(tracked);
    let mut answer = Vec::new();
    client.read_to_end(&mut answer).await.expect("read answer");
    assert!(answer.is_empty());
}

#[tokio::test]
async fn bytes_handed_back_are_read_first_then_the_stream() {
    let (mut client, server) = tokio::io::duplex(64);
    let activity = ConnActivity::new();
    let mut tracked = Tracked::new(server, activity.clone());
    tracked.unread(Bytes::from_static(b"hello"));
    client.write_all(b" world").await.expect("write");
    drop(client);
    let mut all = String::new();
    tracked.read_to_string(&mut all).await.expect("read");
    assert_eq!(all, "hello world");
}
