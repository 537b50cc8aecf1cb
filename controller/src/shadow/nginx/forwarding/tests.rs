use proptest::prelude::*;

use super::*;

fn contract(keys: &[(&str, &str)]) -> Result<Option<NginxForwarding>, &'static str> {
    let mut read = ForwardingKeys::default();
    for (key, value) in keys {
        read.read(key, value).expect("a valid value");
    }
    read.contract()
}

fn nets(text: &str) -> TrustedProxies {
    text.parse().unwrap()
}

#[test]
fn either_key_turns_realip_on_with_every_ipv4_address_trusted_by_default() {
    for key in ["use-forwarded-headers", "enable-real-ip"] {
        let forwarding = contract(&[(key, "true")]).unwrap().expect("not the defaults");
        let real_ip = forwarding.real_ip.expect("realip on");
        assert_eq!(real_ip.field, "x-forwarded-for");
        assert!(real_ip.every_line);
        assert_eq!(real_ip.from, nets("0.0.0.0/0"));
        assert_eq!(forwarding.pass_forwarded, key == "use-forwarded-headers");
    }
    assert_eq!(contract(&[]), Ok(None));
    assert_eq!(contract(&[("proxy-real-ip-cidr", "10.0.0.0/8")]), Ok(None));
}

#[test]
fn the_full_chain_needs_use_forwarded_headers() {
    let alone = contract(&[("compute-full-forwarded-for", "true")]);
    assert_eq!(alone, Ok(None));
    let both = contract(&[
        ("compute-full-forwarded-for", "true"),
        ("use-forwarded-headers", "true"),
    ]);
    assert!(both.unwrap().unwrap().full_forwarded_for);
}

#[test]
fn another_field_is_read_on_its_first_line_and_copied_to_x_original_forwarded_for() {
    let forwarding = contract(&[("enable-real-ip", "true"), ("forwarded-for-header", "CF-Connecting-IP")])
        .unwrap()
        .unwrap();
    let real_ip = forwarding.real_ip.unwrap();
    assert_eq!(
        (real_ip.field.as_str(), real_ip.every_line),
        ("cf-connecting-ip", false)
    );
    assert_eq!(forwarding.original_for, "cf-connecting-ip");
    // nginx compares `X-Forwarded-For` exactly: another spelling is read as any field is.
    let lower = contract(&[("enable-real-ip", "true"), ("forwarded-for-header", "x-forwarded-for")]);
    assert!(!lower.unwrap().unwrap().real_ip.unwrap().every_line);
}

#[test]
fn the_proxy_protocol_alone_or_beside_enable_real_ip_leaves_the_peer_the_caller() {
    let beside = contract(&[("enable-real-ip", "true"), ("use-proxy-protocol", "true")]);
    assert_eq!(beside, Ok(None));
    let with_forwarded = contract(&[("use-forwarded-headers", "true"), ("use-proxy-protocol", "true")]);
    assert_eq!(with_forwarded, Err("use-proxy-protocol"));
}

#[test]
fn cidr_lists_are_split_and_trimmed_as_configmap_go_does() {
    assert_eq!(cidrs("10.0.0.0/8, 192.168.1.1,,fd00::/8").unwrap().len(), 3);
    assert!(matches!(cidrs("10.0.0.0/8, "), Err(Refusal::Invalid)));
    assert!(matches!(cidrs("lb.internal"), Err(Refusal::Unsupported)));
    let many = vec!["10.0.0.1"; MAX_CIDRS + 1].join(",");
    assert!(matches!(cidrs(&many), Err(Refusal::Unsupported)));
}

proptest! {
    #[test]
    fn any_value_is_read_or_refused_and_never_panics(key in prop::sample::select(FORWARDING_KEYS.to_vec()), value in ".{0,80}") {
        let mut read = ForwardingKeys::default();
        if read.read(key, &value).is_ok() {
            let contract = read.contract();
            if let Ok(Some(forwarding)) = contract {
                prop_assert!(forwarding.original_for.len() <= MAX_FIELD_NAME_LEN);
                prop_assert!(!forwarding.original_for.contains('_'));
            }
        }
    }
}
