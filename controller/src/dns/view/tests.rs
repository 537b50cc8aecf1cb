//! The view block: its expression for exact and wildcard hosts, where it goes in real Corefiles
//! (before `.:53 {`, with `.:53`'s `bind` and `forward` copied), and that it is replaced in place.

use regex::Regex;
use shunt_spec::HostMatch;

use super::*;

const TKE: &str = include_str!("../testdata/tke.Corefile");

fn mk_release() -> Release {
    "shunt-system/shunt".parse().expect("valid")
}

fn hosts(names: &[&str]) -> Vec<HostMatch> {
    names.iter().map(|name| HostMatch::from_rule_host(name)).collect()
}

#[test]
fn the_expression_selects_every_type_but_addresses_of_exact_and_wildcard_hosts() {
    let expression = expression(&hosts(&["shop.example.com", "api.example.com", "*.apps.example.com"]));
    assert_eq!(
        expression.as_deref(),
        Some(
            r"type() != 'A' && type() != 'AAAA' && (name() in ['shop.example.com.', 'api.example.com.'] || name() matches '^[^.]+\\.apps\\.example\\.com\\.$')"
        )
    );
    assert_eq!(super::expression(&[]), None, "no hosts, no view");
}

#[test]
fn the_wildcard_pattern_unescaped_once_is_the_rules_regex() {
    let expression = expression(&[HostMatch::DeepWildcard("example.com".into())]).expect("a view");
    let quoted = expression.split('\'').nth(5).expect("the pattern");
    let regex = Regex::new(&quoted.replace(r"\\", r"\")).expect("a valid regex");
    assert!(regex.is_match("a.b.example.com."));
    assert!(!regex.is_match("example.com."));
}

#[test]
fn the_block_goes_before_the_root_block_with_its_forward_copied() {
    let edited = replace_view(TKE, &mk_release(), &hosts(&["shop.example.com"])).expect("edited");
    let expected_head = "# BEGIN shunt-view shunt-system/shunt\n\
        .:53 {\n    view shunt-shunt-system-shunt {\n        expr type() != 'A' && type() != 'AAAA' && (name() in ['shop.example.com.'])\n    }\n\
        \x20   forward . /etc/resolv.conf {\n        prefer_udp\n    }\n}\n\
        # END shunt-view shunt-system/shunt\n";
    assert_eq!(edited, format!("{expected_head}{TKE}"));
    let again = replace_view(&edited, &mk_release(), &hosts(&["a.example.com"])).expect("edited");
    assert_eq!(again.matches("# BEGIN shunt-view").count(), 1, "replaced in place");
    assert!(again.contains("['a.example.com.']"), "{again}");
    assert!(again.ends_with(TKE), "the root block untouched:\n{again}");
}

#[test]
fn bind_lines_are_copied_and_other_releases_views_are_skipped() {
    let corefile = "# BEGIN shunt-view other/one\n.:53 {\n    view shunt-other-one {\n        expr type() == 'TXT'\n    }\n    forward . 1.1.1.1\n}\n# END shunt-view other/one\n\
        .:53 {\n    bind 10.0.0.10\n    errors\n    forward . 10.0.0.1 10.0.0.2\n}\n";
    let edited = replace_view(corefile, &mk_release(), &hosts(&["shop.example.com"])).expect("edited");
    let ours = edited
        .split("# BEGIN shunt-view shunt-system/shunt\n")
        .nth(1)
        .expect("our block");
    assert!(
        ours.starts_with(".:53 {\n    view shunt-shunt-system-shunt {\n"),
        "{edited}"
    );
    assert!(
        ours.contains("    }\n    bind 10.0.0.10\n    forward . 10.0.0.1 10.0.0.2\n}\n# END"),
        "{edited}"
    );
    assert!(edited.starts_with("# BEGIN shunt-view other/one\n"), "{edited}");
}

#[test]
fn a_root_block_without_forward_gets_no_view() {
    let corefile = ".:53 {\n    kubernetes cluster.local\n}\n";
    assert_eq!(
        replace_view(corefile, &mk_release(), &hosts(&["a.example.com"])),
        Err(ViewError::NoForward)
    );
}

#[test]
fn removing_the_view_restores_the_corefile() {
    let edited = replace_view(TKE, &mk_release(), &hosts(&["shop.example.com"])).expect("edited");
    assert_eq!(remove_view(&edited, &mk_release()), Ok(TKE.to_string()));
    assert_eq!(remove_view(TKE, &mk_release()), Ok(TKE.to_string()));
}

#[test]
fn the_rule_block_still_goes_into_the_root_block_after_a_view() {
    let edited = replace_view(TKE, &mk_release(), &hosts(&["shop.example.com"])).expect("edited");
    let plan = crate::dns::DnsPolicy::new("cluster.local", Vec::new(), Vec::new()).plan(&hosts(&["shop.example.com"]));
    let stanza = crate::dns::Stanza::new(&mk_release(), &plan, "shunt.shunt-system.svc.cluster.local");
    let both = crate::dns::replace_block(&edited, &stanza).expect("the rules");
    let root = both.find("# END shunt-view").expect("view first");
    assert!(
        both[root..].contains(".:53 {\n    # BEGIN shunt shunt-system/shunt\n    rewrite name exact shop.example.com"),
        "{both}"
    );
}
