//! The TLS configuration of the HTTP client, with the system's root certificates read on the
//! first TLS handshake rather than when the client is built.
//!
//! Reading and parsing the roots (`rustls-platform-verifier`, which on Linux reads every file
//! of the system's certificate bundle and directory) costs about 2 ms of CPU — a tenth of a
//! `vari select` against a local `http://` or `file:` index, which never needs them. The
//! verifier here is the same platform verifier reqwest would build, made on first use; the
//! rest of the configuration is what reqwest builds by default (TLS 1.2 and 1.3, SNI, ALPN
//! `h2` then `http/1.1`).

use std::sync::{Arc, OnceLock};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, SignatureScheme};

/// The rustls configuration for reqwest: the process's crypto provider, the platform verifier
/// built lazily, ALPN `h2` and `http/1.1`.
pub(super) fn client_config() -> Result<(ClientConfig, Arc<LazyVerifier>), rustls::Error> {
    // reqwest is built without a default TLS crypto provider (its default, aws-lc-rs,
    // needs cmake and a long C build); ring is installed as the process default unless
    // the program chose one already.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let provider = CryptoProvider::get_default()
        .cloned()
        .unwrap_or_else(|| Arc::new(rustls::crypto::ring::default_provider()));
    let verifier = Arc::new(LazyVerifier::new(provider.clone()));
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .dangerous()
        .with_custom_certificate_verifier(verifier.clone())
        .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    // Session tickets for resumption: vari talks to a handful of hosts; rustls's default
    // table of 256 is allocated (and its pages touched) by every process.
    config.resumption = rustls::client::Resumption::in_memory_sessions(16);
    Ok((config, verifier))
}

/// `rustls_platform_verifier::Verifier`, built on the first certificate to check.
#[derive(Debug)]
pub(super) struct LazyVerifier {
    provider: Arc<CryptoProvider>,
    /// The verifier, or why the system's roots could not be loaded (kept so every handshake
    /// reports the same error instead of retrying the disk).
    inner: OnceLock<Result<rustls_platform_verifier::Verifier, rustls::Error>>,
}

impl LazyVerifier {
    fn new(provider: Arc<CryptoProvider>) -> Self {
        Self {
            provider,
            inner: OnceLock::new(),
        }
    }

    fn verifier(&self) -> Result<&rustls_platform_verifier::Verifier, rustls::Error> {
        self.inner
            .get_or_init(|| rustls_platform_verifier::Verifier::new(self.provider.clone()))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Whether the system's roots have been read.
    #[cfg(test)]
    pub(super) fn is_loaded(&self) -> bool {
        self.inner.get().is_some()
    }
}

impl ServerCertVerifier for LazyVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.verifier()?.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        )
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.verifier()?.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.verifier()?.verify_tls13_signature(message, cert, dss)
    }

    /// Asked when the `ClientHello` is written, before any certificate: answered from the
    /// provider, exactly as the platform verifier answers it, without loading the roots.
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_wait_for_the_first_certificate() {
        let (config, verifier) = client_config().unwrap();
        assert_eq!(
            config.alpn_protocols,
            [b"h2".to_vec(), b"http/1.1".to_vec()]
        );
        let provider = CryptoProvider::get_default().unwrap().clone();
        assert_eq!(
            verifier.supported_verify_schemes(),
            provider
                .signature_verification_algorithms
                .supported_schemes()
        );
        assert!(!verifier.is_loaded());
    }
}
