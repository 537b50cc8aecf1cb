//! Editing real Corefiles (k3s, AKS, TKE samples), several releases in one file, adoption of
//! pre-identity blocks, and properties over generated Corefiles.

use proptest::prelude::*;
use shunt_spec::HostMatch;

use super::*;
use crate::dns::{DnsPolicy, Release};

const K3S: &str = include_str!("../testdata/k3s.Corefile");
const AKS: &str = include_str!("../testdata/aks.Corefile");
const TKE: &str = include_str!("../testdata/tke.Corefile");
const TARGET: &str = "shunt.shunt-system.svc.cluster.local";

fn mk_release(s: &str) -> Release {
    s.parse().expect("a valid release")
}

fn mk_stanza_for(release: &str, hosts: &[&str]) -> Stanza {
    let hosts: Vec<HostMatch> = hosts.iter().map(|h| HostMatch::from_rule_host(h)).collect();
    let plan = DnsPolicy::new("cluster.local", Vec::new(), Vec::new()).plan(&hosts);
    Stanza::new(&mk_release(release), &plan, TARGET)
}

fn stanza(hosts: &[&str]) -> Stanza {
    mk_stanza_for("shunt-system/shunt", hosts)
}

/// The Corefile with `release`'s block (markers included) cut out.
fn without_block(corefile: &str, release: &str) -> String {
    let mut inside = false;
    let mut kept = Vec::new();
    for line in corefile.lines() {
        match Marker::parse(line) {
            Some(Marker::Begin(Some(id))) if id == release => inside = true,
            Some(Marker::End(Some(id))) if id == release => inside = false,
            _ if !inside => kept.push(line),
            _ => {}
        }
    }
    let mut text = kept.join("\n");
    if corefile.ends_with('\n') {
        text.push('\n');
    }
    text
}

#[test]
fn the_block_goes_at_the_top_of_the_root_block_of_each_sample() {
    for (name, corefile) in [("k3s", K3S), ("aks", AKS), ("tke", TKE)] {
        let edited = replace_block(corefile, &stanza(&["shop.example.com", "*.apps.example.com"])).expect(name);
        let lines: Vec<&str> = edited.lines().collect();
        let open = lines.iter().position(|l| l.trim() == ".:53 {").expect("the root block");
        assert_eq!(lines[open + 1], "    # BEGIN shunt shunt-system/shunt", "{name}");
        assert_eq!(
            lines[open + 2],
            format!("    rewrite name exact shop.example.com {TARGET}"),
            "{name}"
        );
        assert!(
            lines[open + 3].starts_with(r"    rewrite stop name regex ^[^.]+\.apps\.example\.com\.$ "),
            "{name}"
        );
        assert_eq!(lines[open + 4], "    # END shunt shunt-system/shunt", "{name}");
        assert_eq!(
            without_block(&edited, "shunt-system/shunt"),
            corefile,
            "{name}: nothing outside the markers changes"
        );
    }
}

#[test]
fn editing_is_idempotent_and_replaces_only_the_block() {
    for corefile in [K3S, AKS, TKE] {
        let once = replace_block(corefile, &stanza(&["shop.example.com"])).expect("edits");
        assert_eq!(
            replace_block(&once, &stanza(&["shop.example.com"])).expect("edits"),
            once
        );
        let changed = replace_block(&once, &stanza(&["api.example.com"])).expect("edits");
        assert!(changed.contains("exact api.example.com") && !changed.contains("exact shop.example.com"));
        assert_eq!(without_block(&changed, "shunt-system/shunt"), corefile);
    }
}

#[test]
fn two_releases_keep_two_blocks_and_edit_only_their_own() {
    let a = replace_block(TKE, &mk_stanza_for("team-a/shunt", &["a.example.com"])).expect("edits");
    let both = replace_block(&a, &mk_stanza_for("team-b/shunt", &["b.example.com"])).expect("edits");
    let a_again = replace_block(&both, &mk_stanza_for("team-a/shunt", &["a2.example.com"])).expect("edits");
    assert!(a_again.contains(&format!(
        "    # BEGIN shunt team-b/shunt\n    rewrite name exact b.example.com {TARGET}\n    # END shunt team-b/shunt\n"
    )));
    assert!(a_again.contains(&format!(
        "    # BEGIN shunt team-a/shunt\n    rewrite name exact a2.example.com {TARGET}\n    # END shunt team-a/shunt\n"
    )));
    assert!(!a_again.contains("exact a.example.com"));
    assert_eq!(
        without_block(&without_block(&a_again, "team-a/shunt"), "team-b/shunt"),
        TKE
    );
}

#[test]
fn a_block_without_identity_is_adopted_in_place_not_duplicated() {
    let old = TKE.replace(
        "    cache 30\n",
        "    cache 30\n    # BEGIN shunt\n    rewrite name exact old.example.com x\n    # END shunt\n",
    );
    let edited = replace_block(&old, &stanza(&["shop.example.com"])).expect("edits");
    assert!(edited.contains(&format!(
        "    cache 30\n    # BEGIN shunt shunt-system/shunt\n    rewrite name exact shop.example.com {TARGET}\n    # END shunt shunt-system/shunt\n"
    )));
    assert!(!edited.contains("old.example.com") && !edited.contains("# BEGIN shunt\n"));
    assert_eq!(without_block(&edited, "shunt-system/shunt"), TKE);
    // Once this release has a block of its own, an old block (another, older release still
    // running) is left alone.
    let again = edited.replace("    reload\n", "    reload\n    # BEGIN shunt\n    # END shunt\n");
    let kept = replace_block(&again, &stanza(&["shop.example.com"])).expect("edits");
    assert_eq!(kept, again);
}

#[test]
fn no_hosts_leave_an_empty_block_and_the_corefile_as_it_was() {
    let once = replace_block(TKE, &stanza(&["shop.example.com"])).expect("edits");
    let emptied = replace_block(&once, &stanza(&[])).expect("edits");
    assert!(emptied.contains("    # BEGIN shunt shunt-system/shunt\n    # END shunt shunt-system/shunt\n"));
    assert_eq!(without_block(&emptied, "shunt-system/shunt"), TKE);
    assert_balanced(&emptied);
}

#[test]
fn a_block_the_operator_moved_and_reindented_stays_where_it_is() {
    let moved = TKE.replace(
        "    cache 30\n",
        "    cache 30\n\t# BEGIN shunt shunt-system/shunt\n\trewrite name exact old.example.com x\n\t# END shunt shunt-system/shunt\n",
    );
    let edited = replace_block(&moved, &stanza(&["shop.example.com"])).expect("edits");
    assert!(edited.contains(&format!(
        "    cache 30\n\t# BEGIN shunt shunt-system/shunt\n\trewrite name exact shop.example.com {TARGET}\n\t# END shunt shunt-system/shunt\n"
    )));
    assert!(!edited.contains("old.example.com"));
}

#[test]
fn broken_or_misplaced_markers_and_a_missing_root_block_are_refused() {
    let s = stanza(&["shop.example.com"]);
    let ours = mk_release("shunt-system/shunt");
    let unmatched = TKE.replace("    cache 30\n", "    cache 30\n    # BEGIN shunt shunt-system/shunt\n");
    assert_eq!(
        replace_block(&unmatched, &s),
        Err(CorefileError::UnmatchedMarker(ours.clone()))
    );
    let twice = replace_block(TKE, &s).expect("edits").replace(
        "    cache 30\n",
        "    cache 30\n    # BEGIN shunt shunt-system/shunt\n    # END shunt shunt-system/shunt\n",
    );
    assert_eq!(
        replace_block(&twice, &s),
        Err(CorefileError::DuplicateMarkers(ours.clone()))
    );
    let outside = format!("{TKE}# BEGIN shunt shunt-system/shunt\n# END shunt shunt-system/shunt\n");
    assert_eq!(
        replace_block(&outside, &s),
        Err(CorefileError::MarkersOutsideRootBlock(ours.clone()))
    );
    let tangled = TKE.replace(
        "    cache 30\n",
        "    cache 30\n    # BEGIN shunt shunt-system/shunt\n    # BEGIN shunt other/x\n    # END shunt shunt-system/shunt\n    # END shunt other/x\n",
    );
    assert_eq!(replace_block(&tangled, &s), Err(CorefileError::TangledMarkers(ours)));
    let no_root = "example.org:53 {\n    forward . 8.8.8.8\n}\n";
    assert_eq!(replace_block(no_root, &s), Err(CorefileError::NoRootServerBlock));
}

#[test]
fn kubernetes_zones_are_read_from_every_kubernetes_plugin() {
    assert_eq!(kubernetes_zones(TKE), ["cluster.local", "in-addr.arpa", "ip6.arpa"]);
    let custom = "corp.example:53 {\n    kubernetes Corp.Example. 10.0.0.0/8 { # ours\n    }\n}\n\
                  .:53 {\n    # kubernetes commented.out\n    kubernetes\n    kubernetes k8s.internal.:53 dns://corp.example\n}\n";
    assert_eq!(kubernetes_zones(custom), ["corp.example", "k8s.internal"]);
}

/// Braces still pair up: CoreDNS would refuse the file otherwise.
fn assert_balanced(corefile: &str) {
    let mut depth = 0i32;
    for c in corefile
        .lines()
        .flat_map(|l| strip_comment(l).chars().collect::<Vec<_>>())
    {
        depth += match c {
            '{' => 1,
            '}' => -1,
            _ => 0,
        };
        assert!(depth >= 0);
    }
    assert_eq!(depth, 0);
}

#[test]
fn edited_samples_stay_balanced() {
    for corefile in [K3S, AKS, TKE] {
        assert_balanced(&replace_block(corefile, &stanza(&["a.example.com", "*.b.example.com"])).expect("edits"));
    }
}

// === properties ===

/// Lines a root block may hold besides shunt blocks: directives, comments, nested blocks.
fn mk_body_piece() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("    errors".to_string()),
        Just("    cache 30".to_string()),
        Just("    # a comment about # BEGIN things".to_string()),
        Just("".to_string()),
        Just("    kubernetes cluster.local in-addr.arpa ip6.arpa {\n        pods insecure\n    }".to_string()),
        Just("\tforward . /etc/resolv.conf {\n\t\tprefer_udp\n\t}".to_string()),
        "[a-z]{1,8}( [a-z0-9.]{1,12}){0,2}".prop_map(|line| format!("    {line}")),
        // Another release's block, or one from before identities.
        ("[a-z]{1,5}", prop::collection::vec("[a-z]{1,6}", 0..3)).prop_map(|(team, hosts)| {
            let mut block = format!("    # BEGIN shunt {team}/shunt\n");
            for host in hosts {
                block.push_str(&format!("    rewrite name exact {host}.example {team}.svc\n"));
            }
            block + &format!("    # END shunt {team}/shunt")
        }),
    ]
}

prop_compose! {
    fn mk_corefile()(
        before in prop::option::of(Just("example.org:53 {\n    whoami\n}")),
        pieces in prop::collection::vec(mk_body_piece(), 0..8),
        after in prop::option::of(Just("import /etc/coredns/custom/*.server")),
        trailing_newline in any::<bool>(),
    ) -> String {
        let mut lines: Vec<String> = before.into_iter().map(str::to_string).collect();
        lines.push(".:53 {".to_string());
        lines.extend(pieces);
        lines.push("}".to_string());
        lines.extend(after.map(str::to_string));
        let mut text = lines.join("\n");
        if trailing_newline {
            text.push('\n');
        }
        text
    }
}

fn mk_hosts() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec("(\\*\\.)?[a-z]{1,6}\\.(example|shop)\\.(com|org)", 0..5)
}

/// Each `# BEGIN shunt ID` … `# END shunt ID` block of other releases, verbatim.
fn other_blocks(corefile: &str, ours: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<Vec<&str>> = None;
    for line in corefile.lines() {
        match Marker::parse(line) {
            Some(Marker::Begin(Some(id))) if id != ours => current = Some(vec![line]),
            Some(Marker::End(Some(id))) if id != ours => {
                if let Some(mut block) = current.take() {
                    block.push(line);
                    blocks.push(block.join("\n"));
                }
            }
            _ => {
                if let Some(block) = current.as_mut() {
                    block.push(line);
                }
            }
        }
    }
    blocks
}

proptest! {
    #[test]
    fn editing_is_idempotent_and_touches_nothing_outside_its_markers(
        corefile in mk_corefile(),
        first in mk_hosts(),
        second in mk_hosts(),
    ) {
        let ours = "shunt-system/shunt";
        let first: Vec<&str> = first.iter().map(String::as_str).collect();
        let second: Vec<&str> = second.iter().map(String::as_str).collect();
        let once = replace_block(&corefile, &stanza(&first)).expect("a root block is always there");
        prop_assert_eq!(&replace_block(&once, &stanza(&first)).expect("edits"), &once);
        prop_assert_eq!(without_block(&once, ours), corefile.clone());
        let twice = replace_block(&once, &stanza(&second)).expect("edits");
        prop_assert_eq!(without_block(&twice, ours), corefile.clone());
        prop_assert_eq!(other_blocks(&twice, ours), other_blocks(&corefile, ours));
        assert_balanced(&twice);
    }

    #[test]
    fn two_releases_alternating_never_lose_a_block(
        corefile in mk_corefile(),
        changes in prop::collection::vec((any::<bool>(), mk_hosts()), 1..12),
    ) {
        let mut text = corefile.clone();
        let mut last = [None::<Vec<String>>, None];
        for (team_b, hosts) in changes {
            let release = if team_b { "team-b/shunt" } else { "team-a/shunt" };
            let names: Vec<&str> = hosts.iter().map(String::as_str).collect();
            text = replace_block(&text, &mk_stanza_for(release, &names)).expect("edits");
            last[usize::from(team_b)] = Some(hosts);
        }
        for (index, release) in ["team-a/shunt", "team-b/shunt"].into_iter().enumerate() {
            let Some(hosts) = &last[index] else { continue };
            let names: Vec<&str> = hosts.iter().map(String::as_str).collect();
            let expected = mk_stanza_for(release, &names);
            let block = other_blocks(&text, "none/none")
                .into_iter()
                .find(|b| b.trim_start().starts_with(&expected.release().begin_marker()));
            let block = block.expect("the release's block is there");
            let rules: Vec<&str> = block.lines().skip(1).map(str::trim).filter(|l| !l.starts_with('#')).collect();
            prop_assert_eq!(rules, expected.rules().iter().map(String::as_str).collect::<Vec<_>>());
        }
        prop_assert_eq!(without_block(&without_block(&text, "team-a/shunt"), "team-b/shunt"), corefile);
    }
}
