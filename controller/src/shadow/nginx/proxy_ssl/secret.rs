//! The Secret `proxy-ssl-secret` names, read as ingress-nginx's store reads it
//! (internal/ingress/controller/store/backend_ssl.go, `getPemCertificate`):
//!
//! ```text
//! tls.crt + tls.key ─▶ keypair checked ─┬ ca.crt: trusted file = tls.crt's certificates + ca.crt's,
//!                                       │         client certificate = the keypair
//!                                       └ none:   neither (nginx writes no trust or certificate line)
//! ca.crt alone ─▶ trusted file = its certificates
//! neither ─▶ unusable: nginx denies the Ingress's locations
//! ```

use k8s_openapi::api::core::v1::Secret;
use shunt_proxy::publish::{LoadedCertificate, trusted_from_pem};
use shunt_spec::{ClientCertificate, MAX_CLIENT_PEM_BYTES, MAX_TRUSTED_BYTES};

/// What the Secret gives nginx's `proxy_ssl_*` lines.
#[derive(Debug)]
pub struct SecretTls {
    /// DER, the trusted file's certificates; `None` without `ca.crt`.
    pub trusted: Option<Vec<Vec<u8>>>,
    /// Presented to the pod; only with `ca.crt` (ingress-nginx sets `PemFileName` there alone).
    pub client: Option<ClientCertificate>,
}

/// Why the Secret cannot be reproduced.
#[derive(Debug, PartialEq, Eq)]
pub enum SecretProblem {
    /// ingress-nginx fails to read it and denies the Ingress's locations (503).
    Unusable,
    /// Larger than shunt keeps, or carries `ca.crl` (checked by ingress-nginx, not by shunt).
    Unsupported,
}

/// A key of the Secret, present even when empty (Go's `okcert`), `stringData` over `data`.
fn key<'s>(secret: &'s Secret, name: &str) -> Option<&'s [u8]> {
    if let Some(value) = secret.string_data.as_ref().and_then(|data| data.get(name)) {
        return Some(value.as_bytes());
    }
    secret.data.as_ref()?.get(name).map(|bytes| bytes.0.as_slice())
}

pub fn read(secret: &Secret) -> Result<SecretTls, SecretProblem> {
    let (cert, pem_key) = (key(secret, "tls.crt"), key(secret, "tls.key"));
    let ca = key(secret, "ca.crt").filter(|ca| !ca.is_empty());
    let too_large = |bytes: Option<&[u8]>, max| bytes.is_some_and(|bytes| bytes.len() > max);
    if too_large(ca, MAX_TRUSTED_BYTES)
        || too_large(cert, MAX_CLIENT_PEM_BYTES)
        || too_large(pem_key, MAX_CLIENT_PEM_BYTES)
    {
        return Err(SecretProblem::Unsupported);
    }
    if key(secret, "ca.crl").is_some_and(|crl| !crl.is_empty()) {
        return Err(SecretProblem::Unsupported);
    }
    let trusted = |pem: &[u8]| trusted_from_pem(pem).map_err(|_| SecretProblem::Unusable);
    match (cert, pem_key, ca) {
        (Some(cert), Some(pem_key), ca) => {
            let loaded = LoadedCertificate::from_pem(cert, pem_key).map_err(|_| SecretProblem::Unusable)?;
            let Some(ca) = ca else {
                return Ok(SecretTls {
                    trusted: None,
                    client: None,
                });
            };
            // The trusted file is tls.crt, tls.key and ca.crt in one (`ConfigureCACertWithCertAndKey`);
            // OpenSSL trusts every certificate in it.
            let mut all: Vec<Vec<u8>> = loaded.key.cert.iter().map(|der| der.to_vec()).collect();
            all.extend(trusted(ca)?);
            Ok(SecretTls {
                trusted: Some(all),
                client: Some(ClientCertificate {
                    chain_pem: cert.to_vec(),
                    key_pem: pem_key.to_vec(),
                }),
            })
        }
        (_, _, Some(ca)) => Ok(SecretTls {
            trusted: Some(trusted(ca)?),
            client: None,
        }),
        _ => Err(SecretProblem::Unusable),
    }
}
