use super::*;

#[test]
fn dns_names_take_underscores_and_refuse_addresses() {
    // nginx's default name is the upstream block's, `upstream_balancer`.
    assert!(dns_name("upstream_balancer").is_ok());
    assert!(dns_name("web.default.svc").is_ok());
    assert!(matches!(dns_name("10.0.0.1"), Err(PodTlsError::Name(_))));
}
