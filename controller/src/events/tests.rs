//! `EventReporter::report` against a mocked API server: one Event per new diagnostic, none for a
//! repeat, at most `per_round` per call.

use http::{Method, StatusCode};
use serde_json::{Value, json};

use super::*;
use crate::compile::Reason;

const EVENTS_PATH: &str = "/apis/events.k8s.io/v1/namespaces/shop/events";

fn mk_missing_service(name: &str) -> Diagnostic {
    Diagnostic::new(
        "shop",
        name,
        Reason::MissingService,
        format!("path \"/\": service \"{name}-svc\" not found"),
    )
}

/// A reporter (instance `shunt-0`) given these diagnostics, one compile round each; it drops
/// its client when done.
async fn rounds(client: Client, rounds: Vec<Vec<Diagnostic>>) {
    let mut events = EventReporter::new(client, Some("shunt-0".to_string()));
    for diagnostics in rounds {
        events.report(&diagnostics, uid_of).await;
    }
}

fn uid_of(namespace: &str, name: &str) -> Option<String> {
    Some(format!("uid-{namespace}-{name}"))
}

#[tokio::test]
async fn a_new_diagnostic_becomes_one_warning_event_on_its_ingress() {
    let (client, mut api) = mk_client();
    let scenario = async move {
        let body = api.echo(Method::POST, EVENTS_PATH, StatusCode::CREATED).await;
        assert_eq!(body["type"], "Warning");
        assert_eq!(body["reason"], "MissingService");
        assert_eq!(body["note"], "path \"/\": service \"web-svc\" not found");
        assert_eq!(body["action"], "Route");
        assert_eq!(body["reportingController"], "shunt");
        assert_eq!(body["reportingInstance"], "shunt-0");
        assert_eq!(
            body["regarding"],
            json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "namespace": "shop", "name": "web", "uid": "uid-shop-web"})
        );
        assert_eq!(body["metadata"]["namespace"], "shop");
        assert_eq!(
            body["metadata"]["generateName"],
            Value::Null,
            "a `web.` prefix is refused"
        );
        let name = body["metadata"]["name"].as_str().expect("a name");
        assert_valid_name(name, "web");
        api
    };
    verify(scenario, rounds(client, vec![vec![mk_missing_service("web")]])).await;
}

/// A longest-possible Ingress name: `NAME.HEXTIME` whole would pass 253 characters.
#[tokio::test]
async fn an_ingress_with_a_253_character_name_still_gets_its_event() {
    let name = mk_long_name(253);
    let (client, mut api) = mk_client();
    let expected_regarding = name.clone();
    let scenario = async move {
        let body = api.echo(Method::POST, EVENTS_PATH, StatusCode::CREATED).await;
        assert_eq!(body["regarding"]["name"], expected_regarding.as_str());
        let name = body["metadata"]["name"].as_str().expect("a name");
        assert_valid_name(name, &expected_regarding);
        api
    };
    verify(scenario, rounds(client, vec![vec![mk_missing_service(&name)]])).await;
}

#[test]
fn every_event_name_is_a_dns_subdomain_whatever_the_ingress_name() {
    let names = [
        "a".to_string(),
        "web".to_string(),
        // `-` or `.` right where a 16-digit time leaves no more room (index 235).
        format!("{}{}-b", mk_long_name(191), ".".to_string() + &"a".repeat(43)),
        format!("{}{}.b", mk_long_name(191), ".".to_string() + &"a".repeat(43)),
        format!("{}{}--b", mk_long_name(191), ".".to_string() + &"a".repeat(42)),
        mk_long_name(236),
        mk_long_name(237),
        mk_long_name(253),
    ];
    for name in names {
        for stamp in [0, 1, 0x187b_3c4d_5e6f_7a8b, u64::MAX] {
            assert_valid_name(&event_name(&name, stamp), &name);
        }
    }
}

proptest::proptest! {
    /// Any Ingress name the API server accepts (a DNS subdomain), at any time.
    #[test]
    fn an_event_name_is_a_dns_subdomain_for_any_valid_ingress_name(
        labels in proptest::collection::vec("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?", 1..5),
        stamp in proptest::num::u64::ANY,
    ) {
        let mut name = labels.join(".");
        name.truncate(253);
        let name = name.trim_end_matches(['-', '.']).to_string();
        proptest::prop_assume!(!name.is_empty());
        assert_valid_name(&event_name(&name, stamp), &name);
    }
}

#[tokio::test]
async fn names_of_events_written_one_after_another_differ() {
    let (client, _api) = mk_client();
    let mut events = EventReporter::new(client, None);
    let regarding = ObjectReference::default();
    let first = events.event(&mk_missing_service("web"), regarding.clone());
    let second = events.event(&mk_missing_service("web"), regarding);
    assert_ne!(first.metadata.name, second.metadata.name);
}

/// `event` is `INGRESS.HEXTIME` (INGRESS cut if need be) and a DNS subdomain, which the API
/// server requires of an Event's name.
fn assert_valid_name(event: &str, ingress: &str) {
    let (start, stamp) = event.rsplit_once('.').expect("NAME.HEXTIME");
    assert!(stamp.bytes().all(|b| b.is_ascii_hexdigit()), "{event:?}");
    assert!(ingress.starts_with(start), "{event:?} of {ingress:?}");
    let labels_valid = event.split('.').all(|label| {
        !label.is_empty()
            && label.len() <= 63
            && !label.starts_with('-')
            && !label.ends_with('-')
            && label
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    });
    assert!(labels_valid && event.len() <= 253, "{event:?} is no DNS subdomain");
}

/// A valid Ingress name (DNS subdomain) of exactly `len` characters: 63-character labels.
fn mk_long_name(len: usize) -> String {
    let mut name = String::new();
    while name.len() < len {
        if !name.is_empty() && name.len() % 64 == 63 {
            name.push('.');
        } else {
            name.push(if name.len() % 64 == 62 { 'z' } else { 'a' });
        }
    }
    if name.ends_with('.') {
        name.pop();
        name.push('b');
    }
    name
}

#[tokio::test]
async fn a_repeated_diagnostic_is_reported_once_within_the_window() {
    let (client, mut api) = mk_client();
    let scenario = async move {
        let body = api.echo(Method::POST, EVENTS_PATH, StatusCode::CREATED).await;
        assert_eq!(body["regarding"]["name"], "web");
        let body = api.echo(Method::POST, EVENTS_PATH, StatusCode::CREATED).await;
        assert_eq!(
            body["regarding"]["name"], "api",
            "only the new diagnostic of the third round"
        );
        api
    };
    let web = mk_missing_service("web");
    let given = vec![
        vec![web.clone()],
        vec![web.clone()],
        vec![web, mk_missing_service("api")],
    ];
    verify(scenario, rounds(client, given)).await;
}

#[tokio::test]
async fn a_diagnostic_with_another_message_is_a_new_event() {
    let (client, mut api) = mk_client();
    let notes = ["service \"a\" not found", "service \"b\" not found"];
    let scenario = async move {
        for note in notes {
            // A PATCH of the first Event (a series) would publish the first note again.
            let body = api.echo(Method::POST, EVENTS_PATH, StatusCode::CREATED).await;
            assert_eq!(body["note"], note, "the new message is published");
        }
        api
    };
    let diagnostic = |note: &str| vec![Diagnostic::new("shop", "web", Reason::MissingService, note.to_string())];
    verify(scenario, rounds(client, notes.map(diagnostic).to_vec())).await;
}

#[tokio::test]
async fn a_round_sends_at_most_per_round_events_and_the_rest_follow_next_round() {
    let (client, mut api) = mk_client();
    let diagnostics: Vec<Diagnostic> = (0..25).map(|i| mk_missing_service(&format!("web-{i:02}"))).collect();
    let all: Vec<String> = diagnostics.iter().map(|d| d.name.clone()).collect();
    let per_round = EventReporter::new(client.clone(), None).per_round;
    assert!(
        per_round < diagnostics.len(),
        "the test needs more diagnostics than one round sends"
    );

    let total = all.len();
    let (sent_tx, mut sent) = tokio::sync::mpsc::unbounded_channel();
    let scenario = async move {
        for _ in 0..total {
            let body = api.echo(Method::POST, EVENTS_PATH, StatusCode::CREATED).await;
            sent_tx
                .send(body["regarding"]["name"].as_str().expect("a name").to_string())
                .expect("the test listens");
        }
        api
    };
    let code = async move {
        let mut events = EventReporter::new(client, Some("shunt-0".to_string()));
        let mut per_call = Vec::new();
        for _ in 0..2 {
            events.report(&diagnostics, uid_of).await;
            let mut names = Vec::new();
            while let Ok(name) = sent.try_recv() {
                names.push(name);
            }
            per_call.push(names);
        }
        per_call
    };
    let per_call = verify(scenario, code).await;
    assert_eq!(per_call[0].len(), per_round, "the first call sends one round's worth");
    assert_eq!(
        per_call.concat(),
        all,
        "the rest follow in order on the next call, none twice"
    );
}

#[tokio::test]
async fn an_event_the_api_refused_is_sent_again_next_round() {
    let (client, mut api) = mk_client();
    let scenario = async move {
        api.answer(
            Method::POST,
            EVENTS_PATH,
            StatusCode::INTERNAL_SERVER_ERROR,
            mk_status(500, "InternalError"),
        )
        .await;
        let body = api.echo(Method::POST, EVENTS_PATH, StatusCode::CREATED).await;
        assert_eq!(body["regarding"]["name"], "web");
        api
    };
    let web = vec![mk_missing_service("web")];
    verify(scenario, rounds(client, vec![web.clone(), web])).await;
}

#[test]
fn long_messages_are_cut_on_a_character_boundary() {
    assert_eq!(truncate("short", 10), "short");
    assert_eq!(truncate("abcdef", 3), "abc...");
    // "é" is two bytes: cutting at byte 2 would split it.
    assert_eq!(truncate("aéb", 2), "a...");
}

#[test]
fn the_uid_comes_from_the_stored_ingress_of_that_namespace_and_name() {
    let mut web = crate::fixtures::mk_ingress("shop", "web", Vec::new());
    web.metadata.uid = Some("1234".to_string());
    let mut other = crate::fixtures::mk_ingress("blog", "web", Vec::new());
    other.metadata.uid = Some("5678".to_string());
    let stored: [crate::objects::Ingress; 2] = [other.into(), web.into()];
    assert_eq!(uid_in(stored.iter(), "shop", "web"), Some("1234".to_string()));
    assert_eq!(uid_in(stored.iter(), "shop", "api"), None);
}

// === mocked API server ===

crate::mock_api_server!();
