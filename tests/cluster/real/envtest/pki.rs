//! The credentials a fresh control plane needs, made per start: a CA, the API server's serving
//! certificate for `127.0.0.1` signed by it, the ServiceAccount signing key and an admin token.

use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose, SanType,
};

/// The files kube-apiserver reads, all inside one directory.
pub struct Pki {
    pub ca_pem: String,
    pub ca_crt: PathBuf,
    pub serving_crt: PathBuf,
    pub serving_key: PathBuf,
    pub sa_pub: PathBuf,
    pub sa_key: PathBuf,
    pub tokens: PathBuf,
    /// A bearer token in `system:masters`: allowed everything, RBAC aside.
    pub admin_token: String,
}

impl Pki {
    /// Writes a new set into `dir`.
    pub fn create(dir: &Path) -> Pki {
        let mut ca = CertificateParams::new(Vec::<String>::new()).expect("CA parameters without names");
        ca.distinguished_name.push(DnType::CommonName, "shunt test cluster CA");
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let ca_key = KeyPair::generate().expect("a CA key");
        let issuer = CertifiedIssuer::self_signed(ca, ca_key).expect("self-signing the CA");

        let mut serving = CertificateParams::new(vec!["localhost".to_string()]).expect("valid DNS names");
        serving
            .subject_alt_names
            .push(SanType::IpAddress([127, 0, 0, 1].into()));
        serving.distinguished_name.push(DnType::CommonName, "kube-apiserver");
        serving.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let serving_key = KeyPair::generate().expect("a serving key");
        let serving_cert = serving
            .signed_by(&serving_key, &issuer)
            .expect("signing the serving certificate");

        // ES256 ServiceAccount tokens: kube-apiserver reads PKCS#8 and PKIX PEM.
        let sa = KeyPair::generate().expect("a ServiceAccount signing key");
        let admin_token = format!("admin-{:016x}", fastrand::u64(..));

        let write = |name: &str, text: &str| {
            let path = dir.join(name);
            std::fs::write(&path, text).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
            path
        };
        Pki {
            ca_pem: issuer.pem(),
            ca_crt: write("ca.crt", &issuer.pem()),
            serving_crt: write("apiserver.crt", &serving_cert.pem()),
            serving_key: write("apiserver.key", &serving_key.serialize_pem()),
            sa_pub: write("sa.pub", &sa.public_key_pem()),
            sa_key: write("sa.key", &sa.serialize_pem()),
            tokens: write("tokens.csv", &format!("{admin_token},admin,admin,\"system:masters\"\n")),
            admin_token,
        }
    }
}
