//! TLS to backends whose Service port says `appProtocol: https`.
//!
//! shunt dials pod IPs, and pod certificates name the Service (or nothing useful), never the
//! pod's IP, so a name check would fail every time. By default the connection is encrypted but
//! not authenticated, which is what ingress-nginx does with `backend-protocol: HTTPS` too. With
//! a CA bundle the chain must lead to that CA (so only certificates the operator's CA issued are
//! accepted); the name is still not checked, for the same reason.

use std::{fmt, sync::Arc};

use rustls::{
    ClientConfig, DigitallySignedStruct, Error, RootCertStore, SignatureScheme,
    client::{
        danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier},
        verify_server_cert_signed_by_trust_anchor,
    },
    crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature},
    pki_types::{CertificateDer, ServerName, UnixTime, pem::PemObject},
    server::ParsedCertificate,
};

use super::certificate::provider;

/// Checks signatures always, and the chain against `roots` when there are any.
pub(super) struct PodVerifier {
    provider: Arc<CryptoProvider>,
    /// Empty: chains are not checked.
    roots: Arc<RootCertStore>,
}

impl fmt::Debug for PodVerifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PodVerifier").field("roots", &self.roots.len()).finish()
    }
}

impl PodVerifier {
    /// Encrypts without authenticating the pod.
    pub(super) fn unchecked(provider: Arc<CryptoProvider>) -> Self {
        PodVerifier {
            provider,
            roots: Arc::new(RootCertStore::empty()),
        }
    }
}

impl ServerCertVerifier for PodVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        if !self.roots.is_empty() {
            let parsed = ParsedCertificate::try_from(end_entity)?;
            let algorithms = self.provider.signature_verification_algorithms.all;
            verify_server_cert_signed_by_trust_anchor(&parsed, &self.roots, intermediates, now, algorithms)?;
        }
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        verify_tls12_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        verify_tls13_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider.signature_verification_algorithms.supported_schemes()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CaBundleError {
    #[error("no PEM certificate in the CA bundle")]
    Empty,
    #[error("CA bundle: {0}")]
    Invalid(String),
}

/// Roots from a PEM bundle, for `--upstream-ca-bundle`.
pub fn roots_from_pem(pem: &[u8]) -> Result<RootCertStore, CaBundleError> {
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(pem) {
        let cert = cert.map_err(|error| CaBundleError::Invalid(error.to_string()))?;
        roots
            .add(cert)
            .map_err(|error| CaBundleError::Invalid(error.to_string()))?;
    }
    if roots.is_empty() {
        return Err(CaBundleError::Empty);
    }
    Ok(roots)
}

/// The client side for HTTPS backends; `roots` empty means "encrypt, do not authenticate".
pub fn client_config(roots: RootCertStore) -> ClientConfig {
    let provider = provider();
    let verifier = Arc::new(PodVerifier {
        provider: provider.clone(),
        roots: Arc::new(roots),
    });
    ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("the ring provider supports the default protocol versions")
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth()
}
