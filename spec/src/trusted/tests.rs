use super::*;

#[test]
fn ipv4_mapped_peers_match_ipv4_cidrs() {
    let trusted: TrustedProxies = "127.0.0.0/8".parse().unwrap();
    assert!(trusted.contains("::ffff:127.0.0.1".parse().unwrap()));
    assert!(!trusted.contains("::1".parse().unwrap()));
}

#[test]
fn bad_trusted_proxy_lists_are_rejected() {
    assert!("10.0.0.0/33".parse::<TrustedProxies>().is_err());
    assert!("not-an-ip".parse::<TrustedProxies>().is_err());
    assert!("".parse::<TrustedProxies>().unwrap().0.is_empty());
}
