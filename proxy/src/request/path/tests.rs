use proptest::prelude::*;

use super::*;

fn normal(path: &str) -> String {
    normalize_path(path)
        .unwrap_or_else(|error| panic!("{path:?} refused: {error}"))
        .into_owned()
}

#[test]
fn normal_paths_are_borrowed_untouched() {
    for path in [
        "/",
        "/api",
        "/api/orders/",
        "/a%20b",
        "/%C3%A9t%C3%A9",
        "/a.b/c..d/...",
        "/~user/x-y_z",
    ] {
        assert!(
            matches!(normalize_path(path), Ok(Cow::Borrowed(p)) if p == path),
            "{path:?} should be normal"
        );
    }
}

#[test]
fn dot_segments_are_resolved() {
    assert_eq!(normal("/x/../api/orders"), "/api/orders");
    assert_eq!(normal("/a/./b"), "/a/b");
    assert_eq!(normal("/a/b/.."), "/a/");
    assert_eq!(normal("/a/b/."), "/a/b/");
    assert_eq!(normal("/a/.."), "/");
    assert_eq!(normal("/."), "/");
    assert_eq!(normal("/a/b/../../c"), "/c");
}

#[test]
fn runs_of_slashes_are_merged() {
    assert_eq!(normal("//api/orders"), "/api/orders");
    assert_eq!(normal("/a///b//"), "/a/b/");
    assert_eq!(normal("///"), "/");
}

#[test]
fn unreserved_escapes_are_decoded_and_others_uppercased() {
    assert_eq!(normal("/%61pi/orders"), "/api/orders");
    assert_eq!(normal("/%7Euser"), "/~user");
    assert_eq!(normal("/a%2db%5f"), "/a-b_");
    assert_eq!(normal("/a%20b%3f"), "/a%20b%3F");
    assert_eq!(normal("/%c3%a9"), "/%C3%A9");
    assert_eq!(normal("/%25%32%66"), "/%252f", "only one level is decoded");
}

#[test]
fn encoded_dots_are_dot_segments() {
    assert_eq!(normal("/x/%2e%2e/api"), "/api");
    assert_eq!(normal("/x/.%2E/api"), "/api");
    assert_eq!(normal("/x/%2e/api"), "/x/api");
}

#[test]
fn structural_escapes_nul_and_bad_escapes_are_refused() {
    for (path, error) in [
        ("/a%2Fb", PathError::EncodedSlash),
        ("/a%2fb", PathError::EncodedSlash),
        ("/a%5Cb", PathError::EncodedBackslash),
        ("/a%5cb", PathError::EncodedBackslash),
        ("/a%00b", PathError::Nul),
        ("/a\0b", PathError::Nul),
        ("/a%zzb", PathError::InvalidEscape),
        ("/a%4", PathError::InvalidEscape),
        ("/a%", PathError::InvalidEscape),
        ("/a%+1", PathError::InvalidEscape),
        ("/..", PathError::AboveRoot),
        ("/../etc/passwd", PathError::AboveRoot),
        ("/a/../../b", PathError::AboveRoot),
        ("/%2e%2e/x", PathError::AboveRoot),
        ("", PathError::NotAbsolute),
        ("*", PathError::NotAbsolute),
        ("a/b", PathError::NotAbsolute),
    ] {
        assert_eq!(normalize_path(path), Err(error), "{path:?}");
    }
}

#[test]
fn non_ascii_bytes_survive_a_rewrite() {
    assert_eq!(normal("//caf\u{e9}/./x"), "/caf\u{e9}/x");
}

// === properties ===

/// Pieces a path is made of in the generators: plain names, dots, escapes of every kind.
fn piece() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "a", "b", "api", ".", "..", "...", "a.", "", "%2e", "%2E", "%2e%2e", ".%2E", "%61", "%7e", "%7E", "%41", "%20",
        "%3f", "%3F", "%c3%a9", "%25", "%252F", "~", "-", "_",
    ])
}

/// A path as segments joined by `/`: the model works on these segments, the code on bytes.
fn segmented_path() -> impl Strategy<Value = Vec<Vec<&'static str>>> {
    prop::collection::vec(prop::collection::vec(piece(), 0..3), 0..8)
}

fn join(segments: &[Vec<&str>]) -> String {
    let mut path = String::new();
    for segment in segments {
        path.push('/');
        path.extend(segment.iter().copied());
    }
    if path.is_empty() { "/".to_string() } else { path }
}

/// The reference: decode each piece by table, then resolve segments with a stack.
fn model(segments: &[Vec<&str>]) -> Option<String> {
    fn decode(piece: &str) -> String {
        match piece {
            "%2e" | "%2E" => ".".into(),
            "%2e%2e" | ".%2E" => "..".into(),
            "%61" => "a".into(),
            "%7e" | "%7E" => "~".into(),
            "%41" => "A".into(),
            "%3f" => "%3F".into(),
            "%c3%a9" => "%C3%A9".into(),
            other => other.into(),
        }
    }
    let mut stack: Vec<String> = Vec::new();
    let mut trailing = segments.is_empty();
    for segment in segments {
        let decoded: String = segment.iter().map(|p| decode(p)).collect();
        trailing = matches!(decoded.as_str(), "" | "." | "..");
        match decoded.as_str() {
            "" | "." => {}
            ".." => {
                stack.pop()?;
            }
            _ => stack.push(decoded),
        }
    }
    let mut out: String = stack.iter().map(|s| format!("/{s}")).collect();
    if trailing || stack.is_empty() {
        out.push('/');
    }
    Some(out)
}

proptest! {
    #[test]
    fn normalisation_matches_the_reference_model(segments in segmented_path()) {
        let path = join(&segments);
        let got = normalize_path(&path).ok().map(Cow::into_owned);
        prop_assert_eq!(got, model(&segments), "path {:?}", path);
    }

    #[test]
    fn normalised_paths_are_stable_and_well_formed(segments in segmented_path()) {
        let path = join(&segments);
        if let Ok(once) = normalize_path(&path) {
            prop_assert!(once.starts_with('/'));
            prop_assert!(!once.contains("//"), "{:?}", once);
            for dots in ["/./", "/../"] {
                prop_assert!(!once.contains(dots), "{:?}", once);
            }
            prop_assert!(!once.ends_with("/.") && !once.ends_with("/.."), "{:?}", once);
            prop_assert!(!once.to_ascii_uppercase().contains("%2F"), "{:?}", once);
            let twice = normalize_path(&once).expect("a normalised path is valid");
            prop_assert!(matches!(twice, Cow::Borrowed(_)), "normalising {:?} again rewrote it", once);
        }
    }

    #[test]
    fn any_input_is_answered_without_panicking(path in "/[a-zA-Z0-9%./\\\\~_-]{0,40}") {
        if let Ok(normal) = normalize_path(&path) {
            prop_assert!(normal.starts_with('/') && !normal.contains("//"));
            prop_assert_eq!(normalize_path(&normal).ok(), Some(normal.clone()));
        }
    }

    #[test]
    fn an_escaped_slash_anywhere_is_refused(prefix in "/[a-z./]{0,10}", suffix in "[a-z./]{0,10}", upper in any::<bool>()) {
        let path = format!("{prefix}{}{suffix}", if upper { "%2F" } else { "%2f" });
        prop_assert_eq!(normalize_path(&path), Err(PathError::EncodedSlash));
    }
}
