use super::*;

#[test]
fn targets_nginx_would_read_as_variables_or_that_leave_the_path_are_refused() {
    for bad in ["/$host", "/a$", "/$0", "relative/$1", "/a?b=1", "/a b", "https://x/$1"] {
        assert!(bad.parse::<RewriteTarget>().is_err(), "{bad}");
    }
    assert_eq!(
        "/a/$12".parse::<RewriteTarget>().expect("valid").parts(),
        [
            RewritePart::Text("/a/".into()),
            RewritePart::Group(1),
            RewritePart::Text("2".into())
        ]
    );
}

#[test]
fn an_absolute_target_is_a_url_with_groups_and_never_a_path_target() {
    let url = RewriteTarget::parse_absolute("https://docs.example.com/$1").expect("valid");
    assert!(url.is_absolute());
    assert_eq!(
        url.parts(),
        [
            RewritePart::Text("https://docs.example.com/".into()),
            RewritePart::Group(1)
        ]
    );
    for bad in ["/a", "ftp://x/", "https://x/a?b", "https://$host/"] {
        assert!(RewriteTarget::parse_absolute(bad).is_err(), "{bad}");
    }
    assert!(!"/a".parse::<RewriteTarget>().expect("valid").is_absolute());
}
