use super::*;

#[test]
fn dns_names_take_underscores_and_refuse_addresses() {
    // nginx's default name is the upstream block's, `upstream_balancer`.
    assert!(dns_name("upstream_balancer").is_ok());
    assert!(dns_name("web.default.svc").is_ok());
    assert!(matches!(dns_name("10.0.0.1"), Err(PodTlsError::Name(_))));
}

fn mk_ca() -> (String, String) {
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("CA parameters");
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let key = rcgen::KeyPair::generate().expect("a key");
    let cert = params.self_signed(&key).expect("a CA");
    (cert.pem(), key.serialize_pem())
}

#[test]
fn a_trusted_bundle_is_certificates_only_as_check_ca_cert_takes_it() {
    let (ca, key) = mk_ca();
    assert_eq!(
        trusted_from_pem(format!("junk\n{ca}{ca}").as_bytes())
            .map(|c| c.len())
            .ok(),
        Some(2)
    );
    assert!(matches!(
        trusted_from_pem(format!("{ca}{key}").as_bytes()),
        Err(PodTlsError::Trusted(_))
    ));
    assert!(matches!(trusted_from_pem(b"no PEM here"), Err(PodTlsError::Trusted(_))));
}

#[test]
fn a_setting_without_a_self_issued_certificate_cannot_verify() {
    let (ca, _) = mk_ca();
    let mut spec = UpstreamTls {
        verify: Some(PodVerification {
            trusted: trusted_from_pem(ca.as_bytes()).expect("a CA"),
            name: "web.shop.svc".to_string(),
            max_intermediates: 1,
        }),
        sni: None,
        versions: TlsVersions::Tls12,
        client_certificate: None,
    };
    assert!(pod_client_config(&spec, b"http/1.1").is_ok());
    // A leaf in the trusted file anchors nothing (OpenSSL without partial chains).
    let leaf = rcgen::generate_simple_self_signed(vec!["x".to_string()]).expect("a leaf");
    let mut issued = rcgen::CertificateParams::new(vec!["y".to_string()]).expect("parameters");
    issued.distinguished_name.push(rcgen::DnType::CommonName, "y");
    let mut above = rcgen::CertificateParams::default();
    above.distinguished_name.push(rcgen::DnType::CommonName, "x");
    let issuer = rcgen::Issuer::new(above, leaf.signing_key);
    let child = issued
        .signed_by(&rcgen::KeyPair::generate().expect("a key"), &issuer)
        .expect("signed");
    spec.verify.as_mut().expect("set above").trusted = vec![child.der().to_vec()];
    assert!(matches!(
        pod_client_config(&spec, b"http/1.1"),
        Err(PodTlsError::NoAnchor)
    ));
}

proptest::proptest! {
    #[test]
    fn no_bundle_panics(text in "(-----BEGIN CERTIFICATE-----\n[A-Za-z0-9+/=\n]{0,80}-----END CERTIFICATE-----\n|[ -~\n]{0,40}){0,4}") {
        let _ = trusted_from_pem(text.as_bytes());
    }

    #[test]
    fn no_name_panics(name in "\\PC{0,70}") {
        if let Ok(ServerName::DnsName(dns)) = dns_name(&name) {
            proptest::prop_assert_eq!(dns.as_ref(), name.as_str());
        }
    }
}
