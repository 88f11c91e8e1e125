//! The serving certificate, read from PEM files and read again when they change: every handshake looks
//! at the files' modification times and sizes, and a changed pair that loads (and whose key matches the
//! certificate) replaces the one in use, without a restart. A pair caught half-written keeps the old
//! one until the next handshake finds the files whole.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

/// What identifies a version of a file: its modification time and size.
type Stamp = (Option<SystemTime>, u64);

#[derive(Debug, Default)]
struct Loaded {
    stamps: Option<(Stamp, Stamp)>,
    key: Option<Arc<CertifiedKey>>,
}

/// A certificate resolver that follows the files.
#[derive(Debug)]
pub struct ReloadingCert {
    cert_path: PathBuf,
    key_path: PathBuf,
    loaded: Mutex<Loaded>,
}

impl ReloadingCert {
    /// Reads the certificate chain at `cert_path` and the private key at `key_path`; fails when they
    /// cannot be read or do not make a pair.
    pub fn new(cert_path: &Path, key_path: &Path) -> Result<Self, String> {
        let resolver = ReloadingCert {
            cert_path: cert_path.to_path_buf(),
            key_path: key_path.to_path_buf(),
            loaded: Mutex::new(Loaded::default()),
        };
        resolver.refresh()?;
        Ok(resolver)
    }

    /// The pair in use, read again first when the files changed.
    pub fn current(&self) -> Option<Arc<CertifiedKey>> {
        let _ = self.refresh();
        self.loaded.lock().unwrap_or_else(std::sync::PoisonError::into_inner).key.clone()
    }

    /// Reads the files again when their stamps changed; on failure the pair in use stays.
    fn refresh(&self) -> Result<(), String> {
        let stamps = (stamp(&self.cert_path)?, stamp(&self.key_path)?);
        let mut loaded = self.loaded.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if loaded.stamps == Some(stamps) && loaded.key.is_some() {
            return Ok(());
        }
        let key = load(&self.cert_path, &self.key_path)?;
        *loaded = Loaded { stamps: Some(stamps), key: Some(Arc::new(key)) };
        Ok(())
    }
}

impl ResolvesServerCert for ReloadingCert {
    fn resolve(&self, _client_hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        self.current()
    }
}

fn stamp(path: &Path) -> Result<Stamp, String> {
    let metadata = std::fs::metadata(path).map_err(|error| format!("{}: {error}", path.display()))?;
    Ok((metadata.modified().ok(), metadata.len()))
}

/// The pair of PEM files as rustls serves them.
fn load(cert_path: &Path, key_path: &Path) -> Result<CertifiedKey, String> {
    let cert_pem = std::fs::read(cert_path).map_err(|error| format!("{}: {error}", cert_path.display()))?;
    let key_pem = std::fs::read(key_path).map_err(|error| format!("{}: {error}", key_path.display()))?;
    let chain = CertificateDer::pem_slice_iter(&cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| format!("{}: {error}", cert_path.display()))?;
    if chain.is_empty() {
        return Err(format!("{}: no certificate", cert_path.display()));
    }
    let key = PrivateKeyDer::from_pem_slice(&key_pem).map_err(|error| format!("{}: {error}", key_path.display()))?;
    let signing = rustls::crypto::ring::sign::any_supported_type(&key)
        .map_err(|error| format!("{}: {error}", key_path.display()))?;
    let certified = CertifiedKey::new(chain, signing);
    certified
        .keys_match()
        .map_err(|error| format!("{} and {} are not a pair: {error}", cert_path.display(), key_path.display()))?;
    Ok(certified)
}

/// The server's TLS configuration: TLS 1.2 and 1.3 on ring, HTTP/1.1, the certificate from `resolver`.
pub fn server_config(resolver: Arc<ReloadingCert>) -> Result<rustls::ServerConfig, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|error| error.to_string())?
        .with_no_client_auth()
        .with_cert_resolver(resolver);
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_pair(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
        let certified = rcgen::generate_simple_self_signed(vec![name.to_string()]).unwrap();
        let cert = dir.join("tls.crt");
        let key = dir.join("tls.key");
        std::fs::write(&cert, certified.cert.pem()).unwrap();
        std::fs::write(&key, certified.key_pair.serialize_pem()).unwrap();
        (cert, key)
    }

    #[test]
    fn a_rewritten_pair_is_served_and_a_broken_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let (cert, key) = write_pair(dir.path(), "one.test");
        let resolver = ReloadingCert::new(&cert, &key).unwrap();
        let first = resolver.current().unwrap().cert[0].clone();
        write_pair(dir.path(), "two.test");
        let second = resolver.current().unwrap().cert[0].clone();
        assert_ne!(first, second);
        std::fs::write(&key, "not a key, and a different size").unwrap();
        assert_eq!(resolver.current().unwrap().cert[0], second);
    }

    #[test]
    fn a_missing_or_mismatched_pair_is_refused_at_start() {
        let dir = tempfile::tempdir().unwrap();
        assert!(ReloadingCert::new(&dir.path().join("no.crt"), &dir.path().join("no.key")).is_err());
        let (cert, _) = write_pair(dir.path(), "one.test");
        let other = tempfile::tempdir().unwrap();
        let (_, key) = write_pair(other.path(), "two.test");
        let error = ReloadingCert::new(&cert, &key).unwrap_err();
        assert!(error.contains("not a pair"), "{error}");
    }
}
