//! `allowlist-source-range` (and its old name `whitelist-source-range`) and
//! `denylist-source-range`: nginx's `deny` / `allow` lines judged on the caller's address
//! (`nginx.tmpl`, the location's access rules; 403 otherwise).
//!
//! The address is the caller's as shunt sees it: a pod's. Behind the load balancer ingress-nginx
//! saw, for the same in-cluster caller, a node's or the NAT's address instead. Both are private
//! (cluster and node networks are), so a list that names no private, shared or link-local range
//! judges both the same (neither admitted by an allowlist, neither refused by a denylist) and is
//! reproduced; a list naming such a range could tell a node from a pod, and refuses the host.

use ipnet::IpNet;
use shunt_spec::SourceRanges;

/// What a range list is to the profile.
#[derive(Debug, PartialEq, Eq)]
pub enum RangeList {
    /// `0.0.0.0/0` and `::/0` among the ranges: every address (cert-manager's solver sets it).
    AllowAll,
    /// Ranges that name no internal address: judged on the caller's address.
    Public(Vec<IpNet>),
    /// A range overlapping internal space: the answer could depend on which address is judged.
    Internal,
    /// A range that does not parse (nginx would refuse the configuration).
    Invalid,
}

/// Address space a pod, a node or a NAT in front of them can have.
const INTERNAL: [&str; 10] = [
    "10.0.0.0/8",
    "172.16.0.0/12",
    "192.168.0.0/16",
    "100.64.0.0/10",
    "127.0.0.0/8",
    "169.254.0.0/16",
    "fc00::/7",
    "fe80::/10",
    "::1/128",
    "::ffff:0:0/96",
];

/// Reads an annotation's comma-separated list.
pub fn read(value: &str) -> RangeList {
    let mut ranges = Vec::new();
    for part in value.split(',').map(str::trim).filter(|part| !part.is_empty()) {
        let parsed = part
            .parse::<IpNet>()
            .or_else(|_| part.parse::<std::net::IpAddr>().map(IpNet::from));
        match parsed {
            Ok(range) => ranges.push(range.trunc()),
            Err(_) => return RangeList::Invalid,
        }
    }
    let all: [IpNet; 2] = ["0.0.0.0/0", "::/0"].map(|all| all.parse().expect("a valid range"));
    if all.iter().all(|all| ranges.contains(all)) {
        return RangeList::AllowAll;
    }
    if ranges.iter().any(internal) {
        return RangeList::Internal;
    }
    RangeList::Public(ranges)
}

fn internal(range: &IpNet) -> bool {
    INTERNAL.iter().any(|space| {
        let space: IpNet = space.parse().expect("a valid range");
        space.contains(&range.network()) || range.contains(&space.network())
    })
}

/// The route's rule from the two lists (`None`: no rule).
pub fn rule(allow: Option<Vec<IpNet>>, deny: Option<Vec<IpNet>>) -> Option<SourceRanges> {
    if allow.is_none() && deny.is_none() {
        return None;
    }
    Some(SourceRanges {
        allow: allow.unwrap_or_default(),
        deny: deny.unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests;
