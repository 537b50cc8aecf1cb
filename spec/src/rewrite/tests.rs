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
