//! Edits the Corefile the way an operator would by hand: only the lines between this
//! release's `# BEGIN shunt NS/NAME` and `# END shunt NS/NAME` inside the `.:53 {` server block,
//! adding the markers at the top of that block the first time. Other releases' blocks and
//! everything else stay byte for byte; a block from before identities (`# BEGIN shunt`) is
//! taken over in place when this release has none yet.

use super::{
    release::{Marker, Release},
    stanza::Stanza,
};

pub mod blocks;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CorefileError {
    #[error("the Corefile has no `.:53 {{` server block to put the shunt block in")]
    NoRootServerBlock,
    #[error("the Corefile has `# BEGIN shunt {0}` without a matching `# END shunt {0}` after it")]
    UnmatchedMarker(Release),
    #[error("the Corefile has more than one `# BEGIN shunt {0}` block")]
    DuplicateMarkers(Release),
    #[error("the shunt {0} markers are not inside the `.:53 {{` server block")]
    MarkersOutsideRootBlock(Release),
    #[error("another shunt marker sits inside the `# BEGIN shunt {0}` block")]
    TangledMarkers(Release),
    #[error("the Corefile has `{0}` without one matching end marker after it")]
    UnmatchedBlock(String),
    #[error("the Corefile has more than one `{0}` block")]
    DuplicateBlock(String),
    #[error("the `{0}` block is inside a server block; it belongs at top level")]
    BlockNotTopLevel(String),
}

/// The Corefile with this release's block holding the stanza's rules; the same text when
/// nothing changes.
pub fn replace_block(corefile: &str, stanza: &Stanza) -> Result<String, CorefileError> {
    let release = stanza.release();
    let identity = release.to_string();
    let lines: Vec<&str> = corefile.lines().collect();
    let (open, close) = root_block(&lines).ok_or(CorefileError::NoRootServerBlock)?;
    let markers: Vec<(usize, Marker<'_>)> = lines
        .iter()
        .enumerate()
        .filter_map(|(index, line)| Marker::parse(line).map(|marker| (index, marker)))
        .collect();
    let pair = |id: Option<&str>| {
        let begins: Vec<usize> = markers
            .iter()
            .filter(|(_, m)| *m == Marker::Begin(id))
            .map(|(i, _)| *i)
            .collect();
        let ends: Vec<usize> = markers
            .iter()
            .filter(|(_, m)| *m == Marker::End(id))
            .map(|(i, _)| *i)
            .collect();
        (begins, ends)
    };
    // No other marker between a begin and its end: replacing the range must not swallow one.
    let clean = |begin: usize, end: usize| !markers.iter().any(|(i, _)| begin < *i && *i < end);
    let inside = |begin: usize, end: usize| open < begin && end < close;
    let (start, end, indent) = match pair(Some(&identity)) {
        (b, e) if b.len() > 1 || e.len() > 1 => return Err(CorefileError::DuplicateMarkers(release.clone())),
        (b, e) if b.len() == 1 && e.len() == 1 && b[0] < e[0] => {
            let (begin, end) = (b[0], e[0]);
            if !inside(begin, end) {
                return Err(CorefileError::MarkersOutsideRootBlock(release.clone()));
            }
            if !clean(begin, end) {
                return Err(CorefileError::TangledMarkers(release.clone()));
            }
            (begin, end + 1, leading_whitespace(lines[begin]).to_string())
        }
        (b, e) if !b.is_empty() || !e.is_empty() => return Err(CorefileError::UnmatchedMarker(release.clone())),
        _ => match pair(None) {
            // A block an older shunt wrote: adopt it, in place, rather than add a second one.
            (b, e) if b.len() == 1 && e.len() == 1 && b[0] < e[0] && inside(b[0], e[0]) && clean(b[0], e[0]) => {
                (b[0], e[0] + 1, leading_whitespace(lines[b[0]]).to_string())
            }
            _ => (open + 1, open + 1, body_indent(&lines, open, close)),
        },
    };
    let mut out: Vec<String> = lines[..start].iter().map(|l| l.to_string()).collect();
    out.push(format!("{indent}{}", release.begin_marker()));
    out.extend(stanza.rules().iter().map(|line| format!("{indent}{line}")));
    out.push(format!("{indent}{}", release.end_marker()));
    out.extend(lines[end..].iter().map(|l| l.to_string()));
    let mut text = out.join("\n");
    if corefile.ends_with('\n') || corefile.is_empty() {
        text.push('\n');
    }
    Ok(text)
}

/// The zones the Corefile's `kubernetes` plugins serve (`kubernetes cluster.local in-addr.arpa {`),
/// lowercase, without trailing dots. A plugin naming no zone serves its server block's zones,
/// which for `.:53` is every name: nothing narrower to protect, so none is returned for it.
pub fn kubernetes_zones(corefile: &str) -> Vec<String> {
    let mut zones = Vec::new();
    for line in corefile.lines() {
        let mut words = strip_comment(line).split_whitespace();
        if words.next() != Some("kubernetes") {
            continue;
        }
        for word in words.take_while(|w| *w != "{") {
            // Reverse zones in CIDR form (10.0.0.0/8) lie under in-addr.arpa, protected anyway.
            let zone = word.trim_start_matches("dns://").to_ascii_lowercase();
            let zone = zone.rsplit_once(':').map_or(zone.as_str(), |(zone, _port)| zone);
            let zone = zone.trim_end_matches('.');
            if !zone.is_empty() && !zone.contains('/') && !zones.iter().any(|z| z == zone) {
                zones.push(zone.to_string());
            }
        }
    }
    zones
}

/// The lines opening and closing the `.:53 {` block (`.:53`, `.`, or `dns://.:53` spellings):
/// the first root block without a `view` (a view's block only takes the queries it selects).
fn root_block(lines: &[&str]) -> Option<(usize, usize)> {
    blocks::server_blocks(lines)
        .into_iter()
        .find(|block| block.is_root() && block.directives(lines, "view").is_empty())
        .map(|block| (block.open, block.close))
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
mod tests;
