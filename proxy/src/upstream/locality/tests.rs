use super::*;

fn mk_addr(last: u8) -> SocketAddr {
    ([10, 0, 0, last], 80).into()
}

fn mk_topology(for_nodes: &[&str], for_zones: &[&str]) -> EndpointTopology {
    let names = |names: &[&str]| names.iter().map(|n| n.to_string()).collect();
    EndpointTopology {
        for_nodes: names(for_nodes),
        for_zones: names(for_zones),
    }
}

fn mk_us(node: &str, zone: &str) -> Topology {
    Topology {
        node: Some(node.into()),
        zone: Some(zone.into()),
    }
}

#[test]
fn zone_hints_naming_our_zone_are_preferred() {
    let endpoints = [mk_addr(1), mk_addr(2), mk_addr(3)];
    let topology = BTreeMap::from([
        (mk_addr(1), mk_topology(&[], &["a"])),
        (mk_addr(2), mk_topology(&[], &["b"])),
        (mk_addr(3), mk_topology(&[], &["a"])),
    ]);
    let (preferred, locality) = classify(&mk_us("n9", "a"), &endpoints, &topology);
    assert_eq!(preferred, vec![0, 2]);
    assert_eq!(locality, vec![Locality::SameZone, Locality::Other, Locality::SameZone]);
}

#[test]
fn node_hints_come_before_zone_hints() {
    let endpoints = [mk_addr(1), mk_addr(2)];
    let topology = BTreeMap::from([
        (mk_addr(1), mk_topology(&["n1"], &["a"])),
        (mk_addr(2), mk_topology(&["n2"], &["a"])),
    ]);
    let (preferred, locality) = classify(&mk_us("n2", "a"), &endpoints, &topology);
    assert_eq!(preferred, vec![1]);
    assert_eq!(locality, vec![Locality::SameZone, Locality::SameNode]);
    // No endpoint hinted for our node: the zone's hints decide.
    let (preferred, _) = classify(&mk_us("n7", "a"), &endpoints, &topology);
    assert_eq!(preferred, vec![0, 1]);
}

#[test]
fn without_hints_for_us_or_a_place_of_our_own_nothing_is_preferred() {
    let endpoints = [mk_addr(1), mk_addr(2)];
    let topology = BTreeMap::from([(mk_addr(1), mk_topology(&[], &["a"]))]);
    assert!(classify(&mk_us("n1", "b"), &endpoints, &topology).0.is_empty());
    let (preferred, locality) = classify(&Topology::default(), &endpoints, &topology);
    assert!(preferred.is_empty() && locality.is_empty());
    assert!(classify(&mk_us("n1", "a"), &endpoints, &BTreeMap::new()).0.is_empty());
}

#[test]
fn localities_are_spelled_as_the_metric_labels() {
    let labels: Vec<String> = Locality::ALL.iter().map(ToString::to_string).collect();
    assert_eq!(labels, ["same_node", "same_zone", "other"]);
}
