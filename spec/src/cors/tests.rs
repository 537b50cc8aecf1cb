use super::{OriginHost, OriginPattern, OriginScheme};

fn parts(text: &str) -> Option<(OriginScheme, OriginHost, u16)> {
    OriginPattern::parse(text).map(|p| (p.scheme(), p.host().clone(), p.port()))
}

#[test]
fn origins_get_their_schemes_default_port_and_a_lowercase_host() {
    assert_eq!(
        parts("https://WWW.Foo.com"),
        Some((OriginScheme::Https, OriginHost::Exact("www.foo.com".into()), 443))
    );
    assert_eq!(
        parts("http://a:8080"),
        Some((OriginScheme::Http, OriginHost::Exact("a".into()), 8080))
    );
    assert_eq!(
        parts("https://*.bar.com"),
        Some((OriginScheme::Https, OriginHost::Suffix(".bar.com".into()), 443))
    );
    assert_eq!(parts("http://*:81"), Some((OriginScheme::Http, OriginHost::Any, 81)));
}

#[test]
fn what_the_crds_pattern_refuses_is_refused() {
    for refused in [
        "*",
        "ftp://a.example",
        "HTTPS://a.example",
        "https://",
        "https://a..example",
        "https://a.*.example",
        "https://*a.example",
        "https://a.example:0",
        "https://a.example:65536",
        "https://a.example:123456",
        "https://a.example:",
        "https://a.example/",
        "https://a_b.example",
        "null",
    ] {
        assert_eq!(parts(refused), None, "{refused}");
    }
    assert_eq!(parts(&format!("https://{}.example", "a".repeat(250))), None);
}

fn json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap()
}

#[test]
fn lists_and_origins_serialise_as_their_text() {
    assert_eq!(json(&super::CorsList::Listed("GET, PUT".into())), "\"GET, PUT\"");
    assert_eq!(json(&super::CorsList::Requested), "\"*\"");
    let origin = OriginPattern::parse("https://*.Bar.com").unwrap();
    assert_eq!(json(&origin), "\"https://*.bar.com:443\"");
}
