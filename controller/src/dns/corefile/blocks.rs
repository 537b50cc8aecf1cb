//! The Corefile's top-level structure: its server blocks (zones, first and last line), the
//! directives inside one (with their `{ … }` sub-blocks), and blocks of our own between two
//! marker lines at top level, replaced in place or added before a given line.

use super::{CorefileError, strip_comment};

/// One top-level server block: `ZONE… {` on line `open`, `}` on line `close`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerBlock {
    pub open: usize,
    pub close: usize,
    /// The keys as written (`.:53`, `cluster.local:53`, `dns://.`).
    pub zones: Vec<String>,
}

/// Every top-level server block, in file order. A block whose braces never close ends the list.
pub fn server_blocks(lines: &[&str]) -> Vec<ServerBlock> {
    let mut blocks = Vec::new();
    let mut depth = 0usize;
    let mut open = None;
    for (index, line) in lines.iter().enumerate() {
        let code = strip_comment(line);
        for c in code.chars() {
            match c {
                '{' => {
                    if depth == 0 {
                        open = Some(index);
                    }
                    depth += 1;
                }
                '}' if depth > 0 => {
                    depth -= 1;
                    if depth == 0
                        && let Some(open) = open.take()
                    {
                        let header = strip_comment(lines[open]);
                        let zones = header.split('{').next().unwrap_or_default();
                        blocks.push(ServerBlock {
                            open,
                            close: index,
                            zones: zones.split_whitespace().map(str::to_string).collect(),
                        });
                    }
                }
                _ => {}
            }
        }
    }
    blocks
}

impl ServerBlock {
    /// Whether one of its keys is the root zone (`.:53`, `.`, `dns://.:53`).
    pub fn is_root(&self) -> bool {
        self.zones.iter().any(|zone| {
            let zone = zone.trim_start_matches("dns://");
            zone == "." || zone.starts_with(".:")
        })
    }

    /// Whether one of its keys is `zone` (any port or scheme), e.g. `cluster.local`.
    pub fn serves(&self, zone: &str) -> bool {
        self.zones.iter().any(|key| {
            let key = key.trim_start_matches("dns://");
            let name = key.rsplit_once(':').map_or(key, |(name, _port)| name);
            name.trim_end_matches('.').eq_ignore_ascii_case(zone)
        })
    }

    /// The port its first key names (`:53` of `.:53`), if any.
    pub fn port(&self) -> Option<&str> {
        let key = self.zones.first()?.trim_start_matches("dns://");
        key.rsplit_once(':').map(|(_, port)| port)
    }

    /// Each `name` directive directly inside the block, as its lines (a `{ … }` sub-block
    /// included), with the block's indentation removed.
    pub fn directives(&self, lines: &[&str], name: &str) -> Vec<Vec<String>> {
        let mut found = Vec::new();
        let mut index = self.open + 1;
        while index < self.close {
            let start = index;
            let mut depth = 0i32;
            // A directive runs until its own braces balance.
            loop {
                for c in strip_comment(lines[index]).chars() {
                    match c {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        _ => {}
                    }
                }
                index += 1;
                if depth <= 0 || index >= self.close {
                    break;
                }
            }
            if strip_comment(lines[start]).split_whitespace().next() == Some(name) {
                let indent = super::leading_whitespace(lines[start]).len();
                let text = lines[start..index]
                    .iter()
                    .map(|line| line.get(indent..).unwrap_or(line.trim_start()).trim_end().to_string())
                    .collect();
                found.push(text);
            }
        }
        found
    }
}

/// `corefile` with the lines from `begin` to `end` (both marker lines, at top level) replaced by
/// `begin`, `body` and `end`; added before line `before` (at the end for `None`) when absent.
pub fn replace_top_level(
    corefile: &str,
    (begin, end): (&str, &str),
    body: &[String],
    before: Option<usize>,
) -> Result<String, CorefileError> {
    let lines: Vec<&str> = corefile.lines().collect();
    let find = |marker: &str| -> Vec<usize> {
        lines
            .iter()
            .enumerate()
            .filter(|(_, line)| line.trim() == marker)
            .map(|(index, _)| index)
            .collect()
    };
    let (begins, ends) = (find(begin), find(end));
    let (start, stop) = match (begins.as_slice(), ends.as_slice()) {
        ([], []) => {
            let at = before.unwrap_or(lines.len());
            (at, at)
        }
        ([b], [e]) if b < e => {
            let blocks = server_blocks(&lines);
            if blocks.iter().any(|block| block.open < *b && *b < block.close) {
                return Err(CorefileError::BlockNotTopLevel(begin.to_string()));
            }
            (*b, *e + 1)
        }
        (b, e) if b.len() > 1 || e.len() > 1 => return Err(CorefileError::DuplicateBlock(begin.to_string())),
        _ => return Err(CorefileError::UnmatchedBlock(begin.to_string())),
    };
    let mut out: Vec<String> = lines[..start].iter().map(|l| l.to_string()).collect();
    out.push(begin.to_string());
    out.extend(body.iter().cloned());
    out.push(end.to_string());
    out.extend(lines[stop..].iter().map(|l| l.to_string()));
    let mut text = out.join("\n");
    if corefile.ends_with('\n') || corefile.is_empty() || stop == lines.len() {
        text.push('\n');
    }
    Ok(text)
}
