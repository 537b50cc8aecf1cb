use proptest::prelude::*;

use super::*;

fn nets(list: &[&str]) -> Vec<IpNet> {
    list.iter().map(|n| n.parse().expect("a range")).collect()
}

#[test]
fn allow_all_public_internal_and_invalid_lists_are_told_apart() {
    assert_eq!(read("0.0.0.0/0, ::/0"), RangeList::AllowAll);
    assert_eq!(read("::/0,0.0.0.0/0,10.0.0.0/8"), RangeList::AllowAll);
    assert_eq!(
        read("203.0.113.0/24, 198.51.100.7"),
        RangeList::Public(nets(&["203.0.113.0/24", "198.51.100.7/32"]))
    );
    for internal in [
        "10.1.0.0/16",
        "0.0.0.0/0",
        "172.20.0.1",
        "100.100.0.0/16",
        "fd00::/8",
        "192.0.0.0/2",
    ] {
        assert_eq!(read(internal), RangeList::Internal, "{internal}");
    }
    assert_eq!(read("203.0.113.0/33"), RangeList::Invalid);
    assert_eq!(read("office"), RangeList::Invalid);
}

#[test]
fn the_rule_denies_first_then_admits_only_the_allowed() {
    let rule = rule(Some(nets(&["203.0.113.0/24"])), Some(nets(&["203.0.113.9/32"]))).expect("a rule");
    assert!(rule.admits("203.0.113.1".parse().unwrap()));
    assert!(!rule.admits("203.0.113.9".parse().unwrap()));
    assert!(!rule.admits("198.51.100.1".parse().unwrap()));
    // An IPv4-mapped peer (a dual-stack socket) is judged as the IPv4 address it is.
    assert!(rule.admits("::ffff:203.0.113.1".parse().unwrap()));
    assert_eq!(super::rule(None, None), None);
}

proptest! {
    /// A list read as public never contains an internal address: a pod's or a node's address is
    /// judged the same by it (never allowed, never denied).
    #[test]
    fn a_public_list_admits_no_internal_address(a in any::<u8>(), b in any::<u8>(), c in any::<u8>(), len in 0u8..=32, probe in any::<u32>()) {
        if let RangeList::Public(ranges) = read(&format!("{a}.{b}.{c}.0/{len}")) {
            let internal: [IpNet; 4] = ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10"].map(|n| n.parse().unwrap());
            for space in internal {
                let IpNet::V4(space) = space else { unreachable!() };
                let offset = probe % (1u32 << (32 - space.prefix_len()));
                let addr = std::net::Ipv4Addr::from(u32::from(space.network()) + offset);
                prop_assert!(!ranges.iter().any(|r| r.contains(&std::net::IpAddr::V4(addr))), "{addr} in {ranges:?}");
            }
        }
    }
}
