//! Address records only: a server block in front of the Corefile's `.:53 {`, chosen by a `view`
//! for every query type except A and AAAA of the rewritten names, forwarding them the way
//! `.:53 {` does. The `rewrite` rules then see only address queries, so SOA, TXT, CAA, MX … of a
//! served name keep their public answers (or the upstream's NXDOMAIN/NODATA with its SOA).
//!
//! ```text
//! query ─▶ view shunt-NS-NAME: type not A/AAAA and a rewritten name? ─yes─▶ forward (copied)
//!                                 └─no─▶ .:53 { rewrite … (A/AAAA) ─▶ kubernetes │ forward }
//! ```
//!
//! CoreDNS picks among blocks of one zone by their views in file order and the block without a
//! view last, so this block must come before `.:53 {` (CoreDNS refuses it after). `view` arrived
//! in CoreDNS 1.10.0.

use shunt_spec::HostMatch;

use super::{
    corefile::{
        CorefileError,
        blocks::{ServerBlock, replace_top_level, server_blocks},
    },
    release::Release,
    stanza::{any_depth_regex, one_label_regex},
};

/// What stock Corefiles (kubeadm, TKE, k3s, AKS) forward to, for `shunt dns` without a Corefile.
pub const STOCK_FORWARD: &str = "forward . /etc/resolv.conf";

/// The view block's zone, what it listens on, and how it forwards: copied from `.:53 {`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Upstream {
    /// The root block's keys (`.:53`).
    pub header: String,
    /// Its `bind` and `forward` directives, as written.
    pub copied: Vec<String>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ViewError {
    #[error(transparent)]
    Corefile(#[from] CorefileError),
    #[error("the Corefile's `.:53 {{` block has no `forward` to send other query types to")]
    NoForward,
}

impl Upstream {
    /// The stock `.:53` with `forward . /etc/resolv.conf`, for a block printed without a Corefile.
    pub fn stock() -> Self {
        Upstream {
            header: ".:53".to_string(),
            copied: vec![STOCK_FORWARD.to_string()],
        }
    }

    /// From the Corefile's root block (the first `.` block without a view).
    pub fn from_corefile(corefile: &str) -> Result<(Self, usize), ViewError> {
        let lines: Vec<&str> = corefile.lines().collect();
        let root: ServerBlock = server_blocks(&lines)
            .into_iter()
            .find(|block| block.is_root() && block.directives(&lines, "view").is_empty())
            .ok_or(CorefileError::NoRootServerBlock)?;
        let forward = root.directives(&lines, "forward");
        if forward.is_empty() {
            return Err(ViewError::NoForward);
        }
        let copied = root
            .directives(&lines, "bind")
            .into_iter()
            .chain(forward)
            .flatten()
            .collect();
        let upstream = Upstream {
            header: root.zones.join(" "),
            copied,
        };
        Ok((upstream, root.open))
    }
}

pub fn markers(release: &Release) -> (String, String) {
    (
        format!("# BEGIN shunt-view {release}"),
        format!("# END shunt-view {release}"),
    )
}

/// The `view` expression selecting the non-address queries of `hosts`; `None` without hosts.
/// `name()` is the query name lowercased and fully qualified.
pub fn expression(hosts: &[HostMatch]) -> Option<String> {
    let exact: Vec<String> = hosts
        .iter()
        .filter_map(|host| match host {
            HostMatch::Exact(name) => Some(format!("'{name}.'")),
            _ => None,
        })
        .collect();
    let mut names = Vec::new();
    if !exact.is_empty() {
        names.push(format!("name() in [{}]", exact.join(", ")));
    }
    for host in hosts {
        let regex = match host {
            HostMatch::Wildcard(suffix) => one_label_regex(suffix),
            HostMatch::DeepWildcard(suffix) => any_depth_regex(suffix),
            _ => continue,
        };
        // The expression's strings take backslash escapes: `\.` is written `\\.`.
        names.push(format!("name() matches '{}'", regex.replace('\\', r"\\")));
    }
    if names.is_empty() {
        return None;
    }
    Some(format!("type() != 'A' && type() != 'AAAA' && ({})", names.join(" || ")))
}

/// The block's lines between its markers (none without hosts).
pub fn body(release: &Release, hosts: &[HostMatch], upstream: &Upstream) -> Vec<String> {
    let Some(expression) = expression(hosts) else {
        return Vec::new();
    };
    let view = release.to_string().replace('/', "-");
    let mut lines = vec![
        format!("{} {{", upstream.header),
        format!("    view shunt-{view} {{"),
        format!("        expr {expression}"),
        "    }".to_string(),
    ];
    lines.extend(upstream.copied.iter().map(|line| format!("    {line}")));
    lines.push("}".to_string());
    lines
}

/// The whole block, markers included, as `shunt dns` prints it.
pub fn block(release: &Release, hosts: &[HostMatch], upstream: &Upstream) -> String {
    let (begin, end) = markers(release);
    let mut text = format!("{begin}\n");
    for line in body(release, hosts, upstream) {
        text.push_str(&line);
        text.push('\n');
    }
    text.push_str(&end);
    text.push('\n');
    text
}

/// The Corefile with this release's view block in front of `.:53 {` holding `hosts`.
pub fn replace_view(corefile: &str, release: &Release, hosts: &[HostMatch]) -> Result<String, ViewError> {
    let (upstream, root_open) = Upstream::from_corefile(corefile)?;
    let lines = body(release, hosts, &upstream);
    let (begin, end) = markers(release);
    Ok(replace_top_level(corefile, (&begin, &end), &lines, Some(root_open))?)
}

/// The Corefile without this release's view block (for CoreDNS too old for `view`).
pub fn remove_view(corefile: &str, release: &Release) -> Result<String, ViewError> {
    let (begin, end) = markers(release);
    if !corefile.lines().any(|line| line.trim() == begin) {
        return Ok(corefile.to_string());
    }
    let kept = replace_top_level(corefile, (&begin, &end), &[], None)?;
    Ok(kept
        .lines()
        .filter(|line| line.trim() != begin && line.trim() != end)
        .map(|line| format!("{line}\n"))
        .collect())
}

#[cfg(test)]
mod tests;
