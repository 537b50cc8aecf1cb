//! TLS to pods under a backend's own [`UpstreamTls`]: ingress-nginx's `proxy_ssl_verify`
//! (chain, name and depth as OpenSSL checks them), SNI, versions and a client certificate.
//!
//! OpenSSL builds the chain from what the pod sends plus the trusted file, and accepts it only
//! at a self-issued certificate of that file (nginx sets no partial-chain flag), with at most
//! `proxy_ssl_verify_depth` certificates between the pod's and the anchor; then nginx checks
//! the name (`ngx_ssl_check_host`).

use std::{fmt, sync::Arc};

use rustls::{
    ClientConfig, DigitallySignedStruct, Error, OtherError, SignatureScheme,
    client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier},
    crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature},
    pki_types::{CertificateDer, PrivateKeyDer, ServerName, TrustAnchor, UnixTime, pem::PemObject},
    version::{TLS12, TLS13},
};
use webpki::{EndEntityCert, KeyUsage, VerifiedPath};

use super::{certificate::provider, upstream::PodVerifier};
use crate::spec::{PodVerification, TlsVersions, UpstreamTls};

#[derive(Debug, thiserror::Error)]
pub enum PodTlsError {
    #[error("trusted certificates: {0}")]
    Trusted(String),
    #[error("no self-issued certificate among the trusted ones: no chain can be accepted")]
    NoAnchor,
    #[error("name {0:?} is not a DNS name")]
    Name(String),
    #[error("client certificate: {0}")]
    Client(String),
}

/// Checks the pod's chain, its depth and its name as OpenSSL and nginx do.
struct CheckedPodVerifier {
    provider: Arc<CryptoProvider>,
    anchors: Vec<TrustAnchor<'static>>,
    /// Trusted certificates that are not self-issued: they only help build the chain.
    helpers: Vec<CertificateDer<'static>>,
    name: ServerName<'static>,
    max_intermediates: usize,
}

impl fmt::Debug for CheckedPodVerifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CheckedPodVerifier")
            .field("anchors", &self.anchors.len())
            .field("name", &self.name)
            .field("max_intermediates", &self.max_intermediates)
            .finish_non_exhaustive()
    }
}

fn invalid(error: webpki::Error) -> Error {
    use rustls::CertificateError as C;
    Error::InvalidCertificate(match error {
        webpki::Error::UnknownIssuer => C::UnknownIssuer,
        webpki::Error::CertNotValidForName(_) => C::NotValidForName,
        webpki::Error::CertExpired { .. } => C::Expired,
        other => C::Other(OtherError(Arc::new(other))),
    })
}

impl ServerCertVerifier for CheckedPodVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        let cert = EndEntityCert::try_from(end_entity).map_err(invalid)?;
        let pool: Vec<CertificateDer<'_>> = intermediates.iter().chain(&self.helpers).cloned().collect();
        let depth = |path: &VerifiedPath<'_>| match path.intermediate_certificates().count() {
            n if n > self.max_intermediates => Err(webpki::Error::MaximumPathDepthExceeded),
            _ => Ok(()),
        };
        let algorithms = self.provider.signature_verification_algorithms.all;
        let usage = KeyUsage::server_auth();
        cert.verify_for_usage(algorithms, &self.anchors, &pool, now, usage, None, Some(&depth))
            .map_err(invalid)?;
        cert.verify_is_valid_for_subject_name(&self.name).map_err(invalid)?;
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

/// A DNS name as rustls takes it (for SNI and the name check).
pub fn dns_name(name: &str) -> Result<ServerName<'static>, PodTlsError> {
    match ServerName::try_from(name.to_string()) {
        Ok(dns @ ServerName::DnsName(_)) => Ok(dns),
        _ => Err(PodTlsError::Name(name.to_string())),
    }
}

fn checked(provider: Arc<CryptoProvider>, verify: &PodVerification) -> Result<CheckedPodVerifier, PodTlsError> {
    let (mut anchors, mut helpers) = (Vec::new(), Vec::new());
    for der in &verify.trusted {
        let (_, parsed) =
            x509_parser::parse_x509_certificate(der).map_err(|error| PodTlsError::Trusted(error.to_string()))?;
        let der = CertificateDer::from(der.clone());
        if parsed.subject().as_raw() == parsed.issuer().as_raw() {
            let anchor = webpki::anchor_from_trusted_cert(&der).map_err(|e| PodTlsError::Trusted(e.to_string()))?;
            anchors.push(anchor.to_owned());
        } else {
            helpers.push(der);
        }
    }
    if anchors.is_empty() {
        return Err(PodTlsError::NoAnchor);
    }
    Ok(CheckedPodVerifier {
        provider,
        anchors,
        helpers,
        name: dns_name(&verify.name)?,
        max_intermediates: usize::from(verify.max_intermediates),
    })
}

/// The certificates of a PEM bundle as DER, as ingress-nginx's `CheckCACert` takes them: every
/// PEM block must be a certificate that parses, and there must be one.
pub fn trusted_from_pem(pem: &[u8]) -> Result<Vec<Vec<u8>>, PodTlsError> {
    use rustls::pki_types::pem::SectionKind;
    let mut certificates = Vec::new();
    for section in <(SectionKind, Vec<u8>)>::pem_slice_iter(pem) {
        let (kind, der) = section.map_err(|error| PodTlsError::Trusted(error.to_string()))?;
        if kind != SectionKind::Certificate {
            return Err(PodTlsError::Trusted(format!("a {kind:?} block is not a certificate")));
        }
        x509_parser::parse_x509_certificate(&der).map_err(|error| PodTlsError::Trusted(error.to_string()))?;
        certificates.push(der);
    }
    if certificates.is_empty() {
        return Err(PodTlsError::Trusted("no PEM certificate".to_string()));
    }
    Ok(certificates)
}

/// The client config for one [`UpstreamTls`], offering `alpn`.
pub fn pod_client_config(spec: &UpstreamTls, alpn: &[u8]) -> Result<ClientConfig, PodTlsError> {
    let provider = provider();
    let verifier: Arc<dyn ServerCertVerifier> = match &spec.verify {
        Some(verify) => Arc::new(checked(provider.clone(), verify)?),
        None => Arc::new(PodVerifier::unchecked(provider.clone())),
    };
    let versions: &[&rustls::SupportedProtocolVersion] = match spec.versions {
        TlsVersions::Tls12 => &[&TLS12],
        TlsVersions::Tls13 => &[&TLS13],
        TlsVersions::Both => &[&TLS12, &TLS13],
    };
    let builder = ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(versions)
        .expect("the ring provider supports TLS 1.2 and 1.3")
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    let mut config = match &spec.client_certificate {
        None => builder.with_no_client_auth(),
        Some(client) => {
            let chain = CertificateDer::pem_slice_iter(&client.chain_pem)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|error| PodTlsError::Client(error.to_string()))?;
            let key = PrivateKeyDer::from_pem_slice(&client.key_pem)
                .map_err(|error| PodTlsError::Client(error.to_string()))?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|error| PodTlsError::Client(error.to_string()))?
        }
    };
    config.alpn_protocols = vec![alpn.to_vec()];
    Ok(config)
}

#[cfg(test)]
mod tests;
