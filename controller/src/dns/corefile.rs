//! Edits the Corefile the way an operator would by hand: only the lines between
//! `# BEGIN shunt` and `# END shunt` inside the `.:53 {` server block, adding the markers at
//! the top of that block the first time. Everything else stays byte for byte.

use super::stanza::{BEGIN_MARKER, END_MARKER, Stanza};

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CorefileError {
    #[error("the Corefile has no `.:53 {{` server block to put the shunt block in")]
    NoRootServerBlock,
    #[error("the Corefile has `{BEGIN_MARKER}` without a matching `{END_MARKER}` after it")]
    UnmatchedMarker,
    #[error("the Corefile has more than one `{BEGIN_MARKER}` block")]
    DuplicateMarkers,
    #[error("the shunt markers are not inside the `.:53 {{` server block")]
    MarkersOutsideRootBlock,
}

/// The Corefile with the shunt block holding `stanza`; the same text when nothing changes.
pub fn replace_block(corefile: &str, stanza: &Stanza) -> Result<String, CorefileError> {
    let lines: Vec<&str> = corefile.lines().collect();
    let (open, close) = root_block(&lines).ok_or(CorefileError::NoRootServerBlock)?;
    let begins: Vec<usize> = positions(&lines, BEGIN_MARKER);
    let ends: Vec<usize> = positions(&lines, END_MARKER);
    let (start, end, indent) = match (begins.as_slice(), ends.as_slice()) {
        ([], []) => (open + 1, open + 1, body_indent(&lines, open, close)),
        ([begin], [end]) if begin < end => {
            if *begin <= open || *end >= close {
                return Err(CorefileError::MarkersOutsideRootBlock);
            }
            (*begin, *end + 1, leading_whitespace(lines[*begin]).to_string())
        }
        (b, e) if b.len() > 1 || e.len() > 1 => return Err(CorefileError::DuplicateMarkers),
        _ => return Err(CorefileError::UnmatchedMarker),
    };
    let mut out: Vec<String> = lines[..start].iter().map(|l| l.to_string()).collect();
    out.push(format!("{indent}{BEGIN_MARKER}"));
    out.extend(stanza.lines().iter().map(|line| format!("{indent}{line}")));
    out.push(format!("{indent}{END_MARKER}"));
    out.extend(lines[end..].iter().map(|l| l.to_string()));
    let mut text = out.join("\n");
    if corefile.ends_with('\n') || corefile.is_empty() {
        text.push('\n');
    }
    Ok(text)
}

/// The lines opening and closing the `.:53 {` block (`.:53`, `.`, or `dns://.:53` spellings).
fn root_block(lines: &[&str]) -> Option<(usize, usize)> {
    let open = lines.iter().position(|line| {
        let line = strip_comment(line).trim();
        let Some(zones) = line.strip_suffix('{') else {
            return false;
        };
        zones
            .split_whitespace()
            .any(|zone| matches!(zone.trim_start_matches("dns://"), ".:53" | "."))
    })?;
    let mut depth = 0usize;
    for (index, line) in lines.iter().enumerate().skip(open) {
        for c in strip_comment(line).chars() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return Some((open, index));
                    }
                }
                _ => {}
            }
        }
    }
    None
}

fn positions(lines: &[&str], marker: &str) -> Vec<usize> {
    lines
        .iter()
        .enumerate()
        .filter(|(_, line)| line.trim() == marker)
        .map(|(index, _)| index)
        .collect()
}

/// The indentation of the block's first directive, so the new lines look hand-written.
fn body_indent(lines: &[&str], open: usize, close: usize) -> String {
    lines[open + 1..close]
        .iter()
        .find(|line| !line.trim().is_empty())
        .map_or_else(|| "    ".to_string(), |line| leading_whitespace(line).to_string())
}

fn leading_whitespace(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

fn strip_comment(line: &str) -> &str {
    line.split_once('#').map_or(line, |(code, _)| code)
}

#[cfg(test)]
mod tests {
    use shunt_proxy::routes::spec::HostMatch;

    use super::*;

    const K3S: &str = include_str!("testdata/k3s.Corefile");
    const AKS: &str = include_str!("testdata/aks.Corefile");
    const TKE: &str = include_str!("testdata/tke.Corefile");
    const TARGET: &str = "shunt.shunt-system.svc.cluster.local";

    fn stanza(hosts: &[&str]) -> Stanza {
        let hosts: Vec<HostMatch> = hosts.iter().map(|h| HostMatch::from_rule_host(h)).collect();
        Stanza::new(&hosts, TARGET, &[])
    }

    /// The Corefile with the shunt block (markers included) cut out.
    fn without_block(corefile: &str) -> String {
        let mut inside = false;
        let mut kept = Vec::new();
        for line in corefile.lines() {
            match line.trim() {
                BEGIN_MARKER => inside = true,
                END_MARKER => inside = false,
                _ if !inside => kept.push(line),
                _ => {}
            }
        }
        kept.join("\n") + "\n"
    }

    #[test]
    fn the_block_goes_at_the_top_of_the_root_block_of_each_sample() {
        for (name, corefile) in [("k3s", K3S), ("aks", AKS), ("tke", TKE)] {
            let edited = replace_block(corefile, &stanza(&["shop.example.com", "*.apps.example.com"])).expect(name);
            let lines: Vec<&str> = edited.lines().collect();
            let open = lines.iter().position(|l| l.trim() == ".:53 {").expect("the root block");
            assert_eq!(lines[open + 1], "    # BEGIN shunt", "{name}");
            assert_eq!(
                lines[open + 2],
                format!("    rewrite name exact shop.example.com {TARGET}"),
                "{name}"
            );
            assert!(
                lines[open + 3].starts_with(r"    rewrite stop name regex ^[^.]+\.apps\.example\.com\.$ "),
                "{name}"
            );
            assert_eq!(lines[open + 4], "    # END shunt", "{name}");
            assert_eq!(
                without_block(&edited),
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
            assert_eq!(without_block(&changed), corefile);
        }
    }

    #[test]
    fn no_hosts_leave_an_empty_block_and_the_corefile_as_it_was() {
        let once = replace_block(TKE, &stanza(&["shop.example.com"])).expect("edits");
        let emptied = replace_block(&once, &stanza(&[])).expect("edits");
        assert!(emptied.contains("    # BEGIN shunt\n    # END shunt\n"));
        assert_eq!(without_block(&emptied), TKE);
        assert_balanced(&emptied);
    }

    #[test]
    fn a_block_the_operator_moved_and_reindented_stays_where_it_is() {
        let moved = TKE.replace(
            "    cache 30\n",
            "    cache 30\n\t# BEGIN shunt\n\trewrite name exact old.example.com x\n\t# END shunt\n",
        );
        let edited = replace_block(&moved, &stanza(&["shop.example.com"])).expect("edits");
        assert!(edited.contains(&format!(
            "    cache 30\n\t# BEGIN shunt\n\trewrite name exact shop.example.com {TARGET}\n\t# END shunt\n"
        )));
        assert!(!edited.contains("old.example.com"));
    }

    #[test]
    fn broken_or_misplaced_markers_and_a_missing_root_block_are_refused() {
        let s = stanza(&["shop.example.com"]);
        let unmatched = TKE.replace("    cache 30\n", "    cache 30\n    # BEGIN shunt\n");
        assert_eq!(replace_block(&unmatched, &s), Err(CorefileError::UnmatchedMarker));
        let twice = replace_block(TKE, &s)
            .expect("edits")
            .replace("    cache 30\n", "    cache 30\n    # BEGIN shunt\n    # END shunt\n");
        assert_eq!(replace_block(&twice, &s), Err(CorefileError::DuplicateMarkers));
        let outside = format!("{TKE}# BEGIN shunt\n# END shunt\n");
        assert_eq!(replace_block(&outside, &s), Err(CorefileError::MarkersOutsideRootBlock));
        let no_root = "example.org:53 {\n    forward . 8.8.8.8\n}\n";
        assert_eq!(replace_block(no_root, &s), Err(CorefileError::NoRootServerBlock));
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
}
