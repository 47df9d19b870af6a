//! The on-disk HTTP cache: one file per (URL, `Accept`) holding the response's cache policy
//! and its body.
//!
//! Freshness, revalidation and what may be stored are decided by `http-cache-semantics`
//! (RFC 9111 as browsers implement it), never by rules written here. The policy is built from
//! a request without the `Authorization` header, so credentials never reach the disk.
//! Entries are written atomically with `vari_fs`; an unreadable entry counts as absent.

use std::path::{Path, PathBuf};

use http_cache_semantics::CachePolicy;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use url::Url;

/// A cached response.
pub(crate) struct Entry {
    pub(crate) policy: CachePolicy,
    /// The URL the body was served from (after redirects).
    pub(crate) final_url: Url,
    pub(crate) content_type: Option<String>,
    pub(crate) body: Vec<u8>,
}

/// The first line of an entry file; the body follows the newline.
#[derive(Serialize, Deserialize)]
struct Header {
    /// Format version of the entry file, so a later layout can ignore old entries.
    format: u32,
    url: String,
    final_url: String,
    content_type: Option<String>,
    policy: CachePolicy,
}

const FORMAT: u32 = 1;

#[derive(Debug)]
pub(crate) struct HttpCache {
    dir: PathBuf,
}

impl HttpCache {
    pub(crate) fn new(dir: PathBuf) -> Self {
        Self { dir }
    }

    fn path(&self, url: &Url, accept: &str) -> PathBuf {
        let mut hasher = Sha256::new();
        hasher.update(url.as_str().as_bytes());
        hasher.update(b"\n");
        hasher.update(accept.as_bytes());
        let digest = hasher.finalize();
        let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
        // Two levels, as git does, so no directory grows to millions of entries.
        self.dir
            .join(&hex[..2])
            .join(format!("{}.entry", &hex[2..]))
    }

    pub(crate) fn load(&self, url: &Url, accept: &str) -> Option<Entry> {
        let path = self.path(url, accept);
        let mut bytes = std::fs::read(&path).ok()?;
        let newline = bytes.iter().position(|&b| b == b'\n')?;
        let header: Header = match serde_json::from_slice(&bytes[..newline]) {
            Ok(header) => header,
            Err(e) => {
                tracing::debug!("ignoring unreadable cache entry {}: {e}", path.display());
                return None;
            }
        };
        if header.format != FORMAT || header.url != url.as_str() {
            return None;
        }
        let final_url = Url::parse(&header.final_url).ok()?;
        // The body is the rest of the file: drop the header line in place rather than copy a
        // page of thousands of files.
        bytes.drain(..=newline);
        Some(Entry {
            policy: header.policy,
            final_url,
            content_type: header.content_type,
            body: bytes,
        })
    }

    /// Stores an entry; a failure only costs a later refetch, so it is logged, not returned.
    pub(crate) fn store(&self, url: &Url, accept: &str, entry: &Entry) {
        let path = self.path(url, accept);
        if let Err(e) = write_entry(&path, url, entry) {
            tracing::warn!("cannot write the HTTP cache entry for {url}: {e}");
        }
    }
}

fn write_entry(path: &Path, url: &Url, entry: &Entry) -> Result<(), String> {
    let header = Header {
        format: FORMAT,
        url: url.to_string(),
        final_url: entry.final_url.to_string(),
        content_type: entry.content_type.clone(),
        policy: entry.policy.clone(),
    };
    let mut bytes = serde_json::to_vec(&header).map_err(|e| e.to_string())?;
    bytes.push(b'\n');
    bytes.extend_from_slice(&entry.body);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    vari_fs::write_atomic(path, &bytes).map_err(|e| e.to_string())
}
