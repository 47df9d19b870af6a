//! The on-disk HTTP cache: one file per (URL, `Accept`) holding the response's cache policy
//! and its body, and beside it, once the response has been revalidated, a small file with
//! the newer policy.
//!
//! A revalidation (`304 Not Modified`) changes only the policy; rewriting the entry would
//! copy the whole body (a megabyte for a large project page) on every warm run. The policy
//! file names the entry it refreshes by the entry's `id`, so a policy never applies to a
//! body other than the one it was revalidated with, whatever order concurrent writers finish
//! in.
//!
//! Freshness, revalidation and what may be stored are decided by `http-cache-semantics`
//! (RFC 9111 as browsers implement it), never by rules written here. The policy is built from
//! a request without the `Authorization` header, so credentials never reach the disk.
//! Entries are written atomically with `vari_fs`; an unreadable entry counts as absent.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

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
    /// Which stored body this is (see [`new_id`]); `None` for a response not stored yet.
    pub(crate) id: Option<String>,
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
    /// Names this body for the policy file.
    id: String,
}

/// The policy file: a revalidated policy for the entry whose header has this `id`.
#[derive(Serialize, Deserialize)]
struct Refreshed {
    format: u32,
    id: String,
    policy: CachePolicy,
}

/// Room for an entry's header line beyond its body's ceiling.
const HEADER_ROOM: u64 = 1024 * 1024;

/// 2: entries have an `id` and may have a policy file.
const FORMAT: u32 = 2;

/// The HTTP cache's directory in vari's cache directory.
pub(crate) const AREA_DIR: &str = "http";
/// The hex digits of an entry's hash that name its shard directory (the rest name the file).
pub(crate) const SHARD_DIGITS: usize = 2;
/// The bytes of the SHA-256 of (URL, `Accept`) an entry is named by.
pub(crate) const HASH_BYTES: usize = 16;
/// The extension of an entry file.
pub(crate) const ENTRY_EXTENSION: &str = "entry";
/// The extension of a policy file.
pub(crate) const POLICY_EXTENSION: &str = "policy";

#[derive(Debug)]
pub(crate) struct HttpCache {
    dir: PathBuf,
}

impl HttpCache {
    pub(crate) fn new(dir: PathBuf) -> Self {
        Self { dir }
    }

    /// The cache root the HTTP directory lives in: below it nothing is a link vari follows
    /// (a linked `http/` is replaced, see `vari_fs::cache_write`).
    fn root(&self) -> &Path {
        self.dir.parent().unwrap_or(&self.dir)
    }

    /// The entry file; its policy file is the same path with the extension `policy`.
    fn path(&self, url: &Url, accept: &str) -> PathBuf {
        let mut hasher = Sha256::new();
        hasher.update(url.as_str().as_bytes());
        hasher.update(b"\n");
        hasher.update(accept.as_bytes());
        let digest = hasher.finalize();
        let hex = hex::encode(&digest[..HASH_BYTES]);
        // Two levels, as git does, so no directory grows to millions of entries.
        let (shard, rest) = hex.split_at(SHARD_DIGITS);
        self.dir
            .join(shard)
            .join(format!("{rest}.{ENTRY_EXTENSION}"))
    }

    /// The entry for (`url`, `accept`); `None` when there is none, it is unreadable, or it is
    /// larger than `limit` bytes of body (the ceiling of what may be fetched is the ceiling of
    /// what may be read back).
    pub(crate) fn load(&self, url: &Url, accept: &str, limit: u64) -> Option<Entry> {
        let path = self.path(url, accept);
        // Never through a link planted in the cache, never a FIFO (vari_fs::cache_write).
        let file = vari_fs::open_cache_file(&path)?;
        let metadata = file.metadata().ok()?;
        let size = metadata.len();
        // The header line is a URL or two and a cache policy: well under this.
        if size > limit.saturating_add(HEADER_ROOM) {
            return None;
        }
        mark_used(&file, &metadata, &path);
        // The header line first, then the body read straight into a buffer of its size (no
        // copy of a page of thousands of files to drop the header from its front).
        let mut reader = BufReader::new(file);
        let mut line = Vec::new();
        reader.read_until(b'\n', &mut line).ok()?;
        let header: Header = match serde_json::from_slice(&line) {
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
        let rest = usize::try_from(size).ok()?.saturating_sub(line.len());
        let mut body = Vec::with_capacity(rest);
        reader.read_to_end(&mut body).ok()?;
        let policy = refreshed_policy(&path, &header.id).unwrap_or(header.policy);
        Some(Entry {
            policy,
            final_url,
            content_type: header.content_type,
            body,
            id: Some(header.id),
        })
    }

    /// Stores an entry; a failure only costs a later refetch, so it is logged, not returned.
    pub(crate) fn store(&self, url: &Url, accept: &str, entry: &Entry) {
        let path = self.path(url, accept);
        if let Err(e) = write_entry(self.root(), &path, url, entry) {
            tracing::warn!("cannot write the HTTP cache entry for {url}: {e}");
            return;
        }
        // The old policy file names the old id and would be ignored; removing it is tidiness.
        let _ = std::fs::remove_file(path.with_extension(POLICY_EXTENSION));
    }

    /// Stores the policy of a revalidated entry, leaving its body where it is.
    pub(crate) fn store_policy(&self, url: &Url, accept: &str, entry: &Entry) {
        let Some(id) = &entry.id else {
            return self.store(url, accept, entry);
        };
        let path = self.path(url, accept).with_extension(POLICY_EXTENSION);
        let refreshed = Refreshed {
            format: FORMAT,
            id: id.clone(),
            policy: entry.policy.clone(),
        };
        let written = serde_json::to_vec(&refreshed)
            .map_err(|e| e.to_string())
            .and_then(|bytes| {
                vari_fs::write_cache_file(self.root(), &path, &bytes).map_err(|e| e.to_string())
            });
        if let Err(e) = written {
            tracing::warn!("cannot write the HTTP cache policy for {url}: {e}");
        }
    }
}

/// How stale an entry's time may get before a cache hit refreshes it. `vari cache prune`
/// removes entries unused for days (`vari_fs::cache_admin`): a fresh hit, which rewrites
/// nothing, must still count as a use, and a day's precision is plenty for that.
const USE_RESOLUTION: std::time::Duration = std::time::Duration::from_secs(24 * 60 * 60);

/// Sets the entry's modification time to now when it is older than [`USE_RESOLUTION`]: at
/// most one small metadata write a day per entry, never a copy of its body.
fn mark_used(file: &std::fs::File, metadata: &std::fs::Metadata, path: &Path) {
    let now = SystemTime::now();
    let stale = metadata
        .modified()
        .ok()
        .and_then(|t| now.duration_since(t).ok())
        .is_some_and(|age| age > USE_RESOLUTION);
    if stale {
        if let Err(e) = file.set_modified(now) {
            tracing::debug!("cannot mark {} as used: {e}", path.display());
        }
    }
}

/// The policy in `entry`'s policy file, when there is one for the body with `id`.
fn refreshed_policy(entry: &Path, id: &str) -> Option<CachePolicy> {
    let bytes = vari_fs::read_cache_file(&entry.with_extension(POLICY_EXTENSION), 1 << 20)?;
    let refreshed: Refreshed = serde_json::from_slice(&bytes).ok()?;
    (refreshed.format == FORMAT && refreshed.id == id).then_some(refreshed.policy)
}

/// A name for a newly stored body, unique among the writers of one cache: the time, the
/// process and a counter within it.
fn new_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{nanos:x}-{:x}-{count:x}", std::process::id())
}

fn write_entry(root: &Path, path: &Path, url: &Url, entry: &Entry) -> Result<(), String> {
    let header = Header {
        format: FORMAT,
        url: url.to_string(),
        final_url: entry.final_url.to_string(),
        content_type: entry.content_type.clone(),
        policy: entry.policy.clone(),
        id: new_id(),
    };
    let mut line = serde_json::to_vec(&header).map_err(|e| e.to_string())?;
    line.push(b'\n');
    // Header and body written one after the other, not joined into one buffer first: the
    // body may be a megabyte. Directories made real and the entry renamed into place, never
    // written through a link planted in the cache.
    let mut file = vari_fs::AtomicFile::create_in_cache(root, path).map_err(|e| e.to_string())?;
    file.write_all(&line)
        .and_then(|()| file.write_all(&entry.body))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    file.commit().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_cache_semantics::CacheOptions;

    fn entry(body: &[u8], max_age: u32) -> Entry {
        let request = http::Request::get("https://example.com/simple/foo/")
            .body(())
            .unwrap();
        let response = http::Response::builder()
            .header("cache-control", format!("max-age={max_age}"))
            .body(())
            .unwrap();
        Entry {
            policy: CachePolicy::new_options(
                &request,
                &response,
                SystemTime::now(),
                CacheOptions::default(),
            ),
            final_url: Url::parse("https://example.com/simple/foo/").unwrap(),
            content_type: Some("text/html".into()),
            body: body.to_vec(),
            id: None,
        }
    }

    #[test]
    fn what_is_written_is_one_entry_of_the_http_area() {
        use vari_fs::cache_admin::AreaLayout;
        let root = tempfile::tempdir().unwrap();
        let cache = HttpCache::new(root.path().join(AREA_DIR));
        let url = Url::parse("https://example.com/simple/foo/").unwrap();
        cache.store(&url, "*/*", &entry(b"body", 10));
        let stored = cache.load(&url, "*/*", u64::MAX).unwrap();
        cache.store_policy(&url, "*/*", &stored);
        let path = cache.path(&url, "*/*");
        let listed = super::super::HttpCacheLayout.entries(root.path()).unwrap();
        assert_eq!(listed.len(), 1);
        // The body first: a policy never outlives it.
        assert_eq!(
            listed[0].paths(),
            [path.clone(), path.with_extension(POLICY_EXTENSION)]
        );
        assert_eq!(listed[0].path(), path);
        super::super::HttpCacheLayout.tidy(root.path());
        assert!(path.is_file(), "tidy removes empty shards only");
    }

    #[test]
    fn a_hit_marks_a_stale_entry_as_used_and_leaves_a_recent_one() {
        let dir = tempfile::tempdir().unwrap();
        let cache = HttpCache::new(dir.path().to_path_buf());
        let url = Url::parse("https://example.com/simple/foo/").unwrap();
        cache.store(&url, "*/*", &entry(b"body", 10));
        let path = cache.path(&url, "*/*");
        let modified = || std::fs::metadata(&path).unwrap().modified().unwrap();
        let set = |age: u64| {
            let when = SystemTime::now() - std::time::Duration::from_secs(age);
            std::fs::File::options()
                .write(true)
                .open(&path)
                .unwrap()
                .set_modified(when)
                .unwrap();
            when
        };

        let recent = set(3_600);
        cache.load(&url, "*/*", u64::MAX).unwrap();
        assert_eq!(modified(), recent, "refreshed within the day");

        let old = set(40 * 86_400);
        let before = SystemTime::now() - std::time::Duration::from_secs(60);
        cache.load(&url, "*/*", u64::MAX).unwrap();
        assert!(
            modified() > before,
            "{:?} not refreshed from {old:?}",
            modified()
        );
    }

    #[test]
    fn a_refreshed_policy_applies_to_its_own_body_only() {
        let dir = tempfile::tempdir().unwrap();
        let cache = HttpCache::new(dir.path().to_path_buf());
        let url = Url::parse("https://example.com/simple/foo/").unwrap();
        cache.store(&url, "*/*", &entry(b"first body\nwith lines", 10));
        let loaded = cache.load(&url, "*/*", u64::MAX).unwrap();
        assert_eq!(loaded.body, b"first body\nwith lines");
        assert_eq!(
            loaded.policy.time_to_live(SystemTime::now()).as_secs() / 100,
            0
        );

        // A revalidation writes only the policy; the body stays and the new policy is read.
        let mut refreshed = entry(b"", 86_400);
        refreshed.id = loaded.id.clone();
        cache.store_policy(&url, "*/*", &refreshed);
        let again = cache.load(&url, "*/*", u64::MAX).unwrap();
        assert_eq!(again.body, b"first body\nwith lines");
        assert!(again.policy.time_to_live(SystemTime::now()).as_secs() > 3_600);

        // A new body gets a new id: the old policy file does not apply to it, even if it is
        // written after the new body (a slower concurrent writer).
        cache.store(&url, "*/*", &entry(b"second", 10));
        cache.store_policy(&url, "*/*", &refreshed);
        let newest = cache.load(&url, "*/*", u64::MAX).unwrap();
        assert_eq!(newest.body, b"second");
        assert_ne!(newest.id, loaded.id);
        assert!(newest.policy.time_to_live(SystemTime::now()).as_secs() <= 10);
    }
}
