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
        assert_eq!(body["metadata"]["generateName"], "web.");
        assert_eq!(body["metadata"]["name"], Value::Null, "the API server names it");
        api
    };
    verify(scenario, rounds(client, vec![vec![mk_missing_service("web")]])).await;
}

/// A longest-possible Ingress name: `NAME.` plus a suffix of our own would pass 253 characters,
/// and the API server refused every such Event with 422.
#[tokio::test]
async fn an_ingress_with_a_253_character_name_still_gets_its_event() {
    let name = mk_long_name(253);
    let (client, mut api) = mk_client();
    let expected_regarding = name.clone();
    let scenario = async move {
        let body = api.echo(Method::POST, EVENTS_PATH, StatusCode::CREATED).await;
        assert_eq!(body["regarding"]["name"], expected_regarding.as_str());
        let prefix = body["metadata"]["generateName"].as_str().expect("a generateName");
        assert_valid_prefix(prefix, &expected_regarding);
        api
    };
    verify(scenario, rounds(client, vec![vec![mk_missing_service(&name)]])).await;
}

#[test]
fn every_prefix_makes_a_valid_event_name_whatever_the_ingress_name() {
    let names = [
        "a".to_string(),
        "web".to_string(),
        "a".repeat(56),
        "a".repeat(57),
        "a".repeat(58),
        format!("{}-b", "a".repeat(56)),
        format!("{}.b", "a".repeat(56)),
        format!("{}--b", "a".repeat(55)),
        format!("{}.-b", "a".repeat(55)),
        mk_long_name(237),
        mk_long_name(253),
    ];
    for name in names {
        assert_valid_prefix(&name_prefix(&name), &name);
    }
}

/// `prefix` starts like `name`, ends with `.`, and with the API server's 5 random characters
/// makes a DNS subdomain the API server keeps whole.
fn assert_valid_prefix(prefix: &str, name: &str) {
    assert!(prefix.len() <= MAX_PREFIX, "{prefix:?} is {} characters", prefix.len());
    assert!(prefix.ends_with('.'), "{prefix:?}");
    assert!(name.starts_with(prefix.trim_end_matches('.')), "{prefix:?} of {name:?}");
    let generated = format!("{prefix}x7k2q");
    let labels_valid = generated.split('.').all(|label| {
        !label.is_empty()
            && !label.starts_with('-')
            && !label.ends_with('-')
            && label
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    });
    assert!(
        labels_valid && generated.len() <= 253,
        "{generated:?} is no DNS subdomain"
    );
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
    let stored = [other, web];
    assert_eq!(uid_in(stored.iter(), "shop", "web"), Some("1234".to_string()));
    assert_eq!(uid_in(stored.iter(), "shop", "api"), None);
}

// === mocked API server ===

crate::mock_api_server!();
