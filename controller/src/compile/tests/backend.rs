//! Services and EndpointSlices to backends: ports, slices, conditions, families, protocol.

use crate::objects::{EndpointSlice, Service};

use super::*;

/// Compiles one Ingress routing `/` to `service`:`port` against exactly these objects, and
/// returns the backend it got (asserting the path compiled).
fn backend_of(port: impl Into<Port>, services: Vec<Service>, slices: Vec<EndpointSlice>) -> (String, BackendSpec) {
    let ingress = mk_ingress("shop", "a", vec![mk_rule("", vec![mk_prefix("/", "svc", port)])]);
    let state = ClusterState {
        ingresses: mk_shared([ingress]),
        services: mk_shared(services),
        endpoint_slices: mk_shared(slices),
        ..Default::default()
    };
    let compiled = compile(&state, &CompileOptions::default());
    let paths = &compiled.table.hosts.first().expect("the path compiled").paths;
    let id = paths[0].backend.clone();
    assert_eq!(compiled.table.backends.len(), 1);
    (id.clone(), compiled.table.backends[&id].clone())
}

fn h2c(endpoints: &[&str]) -> BackendSpec {
    BackendSpec {
        protocol: UpstreamProtocol::H2c,
        ..pods(endpoints)
    }
}

#[test]
fn a_port_by_number_uses_the_slice_port_of_the_same_name() {
    let service = mk_service("shop", "svc", &[("http", 80), ("admin", 81)]);
    let slice = mk_slice(
        "shop",
        "svc-a",
        "svc",
        &[("admin", 9000), ("http", 8080)],
        vec![mk_ready("10.0.0.1")],
    );
    assert_eq!(
        backend_of(80, vec![service], vec![slice]),
        ("shop/svc:80".into(), pods(&["10.0.0.1:8080"]))
    );
}

#[test]
fn a_port_by_name_uses_the_slice_port_of_the_same_name() {
    let service = mk_service("shop", "svc", &[("http", 80), ("admin", 81)]);
    let slice = mk_slice(
        "shop",
        "svc-a",
        "svc",
        &[("http", 8080), ("admin", 9000)],
        vec![mk_ready("10.0.0.1")],
    );
    assert_eq!(
        backend_of("admin", vec![service], vec![slice]),
        ("shop/svc:admin".into(), pods(&["10.0.0.1:9000"]))
    );
}

#[test]
fn unnamed_service_and_slice_ports_match_whether_absent_or_empty() {
    let service = mk_service("shop", "svc", &[("", 80)]);
    let mut empty_name = mk_slice("shop", "svc-b", "svc", &[("", 3001)], vec![mk_ready("10.0.0.2")]);
    empty_name.ports.as_mut().expect("fixture has ports")[0].name = Some("".into());
    let absent_name = mk_slice("shop", "svc-a", "svc", &[("", 3000)], vec![mk_ready("10.0.0.1")]);
    let (_, spec) = backend_of(80, vec![service], vec![absent_name, empty_name]);
    assert_eq!(spec, pods(&["10.0.0.1:3000", "10.0.0.2:3001"]));
}

#[test]
fn endpoints_from_every_slice_are_merged_sorted_and_deduplicated() {
    let service = mk_service("shop", "svc", &[("http", 80)]);
    let slices = vec![
        mk_slice(
            "shop",
            "svc-b",
            "svc",
            &[("http", 8080)],
            vec![mk_ready("10.0.0.3"), mk_ready("10.0.0.1")],
        ),
        mk_slice(
            "shop",
            "svc-a",
            "svc",
            &[("http", 8080)],
            vec![mk_ready("10.0.0.2"), mk_ready("10.0.0.1")],
        ),
        // Other Services' slices, here and in another namespace, are not ours.
        mk_slice(
            "shop",
            "other-a",
            "other",
            &[("http", 8080)],
            vec![mk_ready("10.0.9.9")],
        ),
        mk_slice("blog", "svc-a", "svc", &[("http", 8080)], vec![mk_ready("10.0.8.8")]),
    ];
    let (_, spec) = backend_of(80, vec![service], slices);
    assert_eq!(spec, pods(&["10.0.0.1:8080", "10.0.0.2:8080", "10.0.0.3:8080"]));
}

#[test]
fn ready_endpoints_win_over_terminating_ones() {
    let service = mk_service("shop", "svc", &[("http", 80)]);
    let slices = vec![
        mk_slice(
            "shop",
            "svc-a",
            "svc",
            &[("http", 80)],
            vec![
                mk_ready("10.0.0.1"),
                mk_endpoint("10.0.0.2", Some(false), Some(true), Some(true)),
            ],
        ),
        mk_slice(
            "shop",
            "svc-b",
            "svc",
            &[("http", 80)],
            vec![mk_endpoint("10.0.0.3", Some(false), Some(false), Some(false))],
        ),
    ];
    assert_eq!(backend_of(80, vec![service], slices).1, pods(&["10.0.0.1:80"]));
}

#[test]
fn without_ready_endpoints_serving_terminating_ones_are_used() {
    let service = mk_service("shop", "svc", &[("http", 80)]);
    let slice = mk_slice(
        "shop",
        "svc-a",
        "svc",
        &[("http", 80)],
        vec![
            mk_endpoint("10.0.0.1", Some(false), Some(true), Some(true)),
            // Not serving: gone even though terminating.
            mk_endpoint("10.0.0.2", Some(false), Some(false), Some(true)),
            // Serving but not terminating and not ready: starting up, not yet.
            mk_endpoint("10.0.0.3", Some(false), Some(true), Some(false)),
        ],
    );
    assert_eq!(backend_of(80, vec![service], vec![slice]).1, pods(&["10.0.0.1:80"]));
}

#[test]
fn unset_conditions_mean_ready_serving_not_terminating() {
    let service = mk_service("shop", "svc", &[("http", 80)]);
    let mut no_conditions = mk_ready("10.0.0.1");
    no_conditions.conditions = None;
    let slice = mk_slice(
        "shop",
        "svc-a",
        "svc",
        &[("http", 80)],
        vec![
            no_conditions,
            mk_endpoint("10.0.0.2", None, None, None),
            // Serving defaults to ready (false), so this one is not a fallback candidate.
            mk_endpoint("10.0.0.3", Some(false), None, Some(true)),
        ],
    );
    assert_eq!(
        backend_of(80, vec![service], vec![slice]).1,
        pods(&["10.0.0.1:80", "10.0.0.2:80"])
    );

    let service = mk_service("shop", "svc", &[("http", 80)]);
    // Terminating defaults to false, so a not-ready, serving endpoint is no fallback either.
    let slice = mk_slice(
        "shop",
        "svc-a",
        "svc",
        &[("http", 80)],
        vec![
            mk_endpoint("10.0.0.3", Some(false), None, Some(true)),
            mk_endpoint("10.0.0.4", Some(false), Some(true), None),
        ],
    );
    assert_eq!(backend_of(80, vec![service], vec![slice]).1, pods(&[]));
}

#[test]
fn fqdn_slices_are_skipped() {
    let service = mk_service("shop", "svc", &[("http", 80)]);
    let mut fqdn = mk_slice(
        "shop",
        "svc-b",
        "svc",
        &[("http", 80)],
        vec![mk_ready("pod.example.com")],
    );
    fqdn.address_type = "FQDN".into();
    let mut fqdn_with_ip = mk_slice("shop", "svc-c", "svc", &[("http", 80)], vec![mk_ready("10.0.0.9")]);
    fqdn_with_ip.address_type = "FQDN".into();
    let ipv4 = mk_slice("shop", "svc-a", "svc", &[("http", 80)], vec![mk_ready("10.0.0.1")]);
    assert_eq!(
        backend_of(80, vec![service], vec![fqdn, fqdn_with_ip, ipv4]).1,
        pods(&["10.0.0.1:80"])
    );
}

#[test]
fn ipv6_slices_give_ipv6_endpoints_and_mismatched_or_bad_addresses_are_skipped() {
    let service = mk_service("shop", "svc", &[("http", 80)]);
    let v6 = mk_slice(
        "shop",
        "svc-a",
        "svc",
        &[("http", 8080)],
        vec![
            mk_ready("fd00::2"),
            mk_ready("fd00::1"),
            mk_ready("10.0.0.7"),
            mk_ready("not-an-ip"),
        ],
    );
    let v4 = mk_slice(
        "shop",
        "svc-b",
        "svc",
        &[("http", 8080)],
        vec![mk_ready("10.0.0.1"), mk_ready("fd00::9")],
    );
    assert_eq!(
        backend_of(80, vec![service], vec![v6, v4]).1,
        pods(&["10.0.0.1:8080", "[fd00::1]:8080", "[fd00::2]:8080"])
    );
}

#[test]
fn only_the_first_address_of_an_endpoint_counts() {
    let service = mk_service("shop", "svc", &[("http", 80)]);
    let mut endpoint = mk_api_ready("10.0.0.1");
    endpoint.addresses.push("10.0.0.2".into());
    let slice = mk_slice("shop", "svc-a", "svc", &[("http", 80)], vec![endpoint.into()]);
    assert_eq!(backend_of(80, vec![service], vec![slice]).1, pods(&["10.0.0.1:80"]));
}

#[test]
fn a_slice_without_the_services_port_contributes_nothing() {
    let service = mk_service("shop", "svc", &[("http", 80)]);
    let other_port = mk_slice("shop", "svc-a", "svc", &[("metrics", 9100)], vec![mk_ready("10.0.0.1")]);
    let mut udp = mk_slice("shop", "svc-b", "svc", &[("http", 80)], vec![mk_ready("10.0.0.2")]);
    udp.ports.as_mut().expect("fixture has ports")[0].protocol = Some("UDP".into());
    let good = mk_slice("shop", "svc-c", "svc", &[("http", 80)], vec![mk_ready("10.0.0.3")]);
    assert_eq!(
        backend_of(80, vec![service], vec![other_port, udp, good]).1,
        pods(&["10.0.0.3:80"])
    );
}

#[test]
fn app_protocols_on_the_service_port_pick_h2c_https_or_http1() {
    let cases = [
        ("kubernetes.io/h2c", UpstreamProtocol::H2c),
        ("h2c", UpstreamProtocol::H2c),
        ("grpc", UpstreamProtocol::H2c),
        ("GRPC", UpstreamProtocol::H2c),
        ("Kubernetes.io/H2C", UpstreamProtocol::H2c),
        ("http", UpstreamProtocol::Http1),
        ("kubernetes.io/ws", UpstreamProtocol::Http1),
        ("https", UpstreamProtocol::Https),
        ("kubernetes.io/https", UpstreamProtocol::Https),
        ("HTTPS", UpstreamProtocol::Https),
    ];
    for (app_protocol, protocol) in cases {
        let mut service = mk_service("shop", "svc", &[("app", 50051)]);
        first_port(&mut service).app_protocol = Some(app_protocol.into());
        let slice = mk_slice("shop", "svc-a", "svc", &[("app", 50051)], vec![mk_ready("10.0.0.1")]);
        let expected = BackendSpec {
            protocol,
            ..pods(&["10.0.0.1:50051"])
        };
        assert_eq!(
            backend_of(50051, vec![service], vec![slice]).1,
            expected,
            "{app_protocol}"
        );
    }
}

#[test]
fn the_slice_ports_app_protocol_counts_when_the_service_port_has_none() {
    let service = mk_service("shop", "svc", &[("grpc", 50051)]);
    let mut slice = mk_slice("shop", "svc-a", "svc", &[("grpc", 50051)], vec![mk_ready("10.0.0.1")]);
    slice.ports.as_mut().expect("fixture has ports")[0].app_protocol = Some("kubernetes.io/h2c".into());
    assert_eq!(
        backend_of("grpc", vec![service], vec![slice]).1,
        h2c(&["10.0.0.1:50051"])
    );
}

#[test]
fn a_udp_service_port_with_the_number_does_not_match() {
    let mut service = mk_service("shop", "svc", &[("dns-udp", 53), ("dns-tcp", 53)]);
    first_port(&mut service).protocol = Some("UDP".into());
    let slice = mk_slice(
        "shop",
        "svc-a",
        "svc",
        &[("dns-udp", 5353), ("dns-tcp", 5354)],
        vec![mk_ready("10.0.0.1")],
    );
    assert_eq!(backend_of(53, vec![service], vec![slice]).1, pods(&["10.0.0.1:5354"]));
}

proptest::proptest! {
    /// The id is written digit by digit, not by `format!`: every port number reads back as itself.
    #[test]
    fn a_backend_id_names_its_port_number_in_decimal(port in 1..=65535i32) {
        let service = mk_service("shop", "svc", &[("http", port)]);
        let slice = mk_slice("shop", "svc-a", "svc", &[("http", 8080)], vec![mk_ready("10.0.0.1")]);
        let (id, spec) = backend_of(port, vec![service], vec![slice]);
        proptest::prop_assert_eq!(id, format!("shop/svc:{port}"));
        proptest::prop_assert_eq!(spec, pods(&["10.0.0.1:8080"]));
    }
}

#[test]
fn endpoint_hints_reach_the_backend_for_its_ready_endpoints_only() {
    use std::{collections::BTreeMap, net::SocketAddr};

    use shunt_spec::EndpointTopology;

    use crate::objects::{EndpointHints, HintName};
    let service = mk_service("shop", "svc", &[("http", 80)]);
    let mut near = mk_ready("10.0.0.1");
    near.hints = Some(Box::new(EndpointHints {
        for_nodes: vec![HintName { name: "node-1".into() }],
        for_zones: vec![HintName { name: "zone-a".into() }],
    }));
    let plain = mk_ready("10.0.0.2");
    let mut gone = mk_endpoint("10.0.0.3", Some(false), Some(false), Some(false));
    gone.hints = Some(Box::new(EndpointHints {
        for_nodes: Vec::new(),
        for_zones: vec![HintName { name: "zone-b".into() }],
    }));
    let slice = mk_slice("shop", "svc-a", "svc", &[("http", 8080)], vec![near, plain, gone]);
    let (_, backend) = backend_of(80, vec![service], vec![slice]);
    let expected = EndpointTopology {
        for_nodes: vec!["node-1".into()],
        for_zones: vec!["zone-a".into()],
    };
    let addr: SocketAddr = "10.0.0.1:8080".parse().unwrap();
    assert_eq!(*backend.topology, BTreeMap::from([(addr, expected)]));
    assert_eq!(backend.endpoints.len(), 2);
}
