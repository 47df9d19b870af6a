//! Built pages kept on disk across runs (`pages/KEY` under the proxy's cache directory), so
//! that a proxy started again (each `vari install` starts one) answers an installer's
//! revalidation of an unchanged page without building it again: reading the upstream page
//! from the HTTP cache, parsing it (numpy's lists over 4,000 files), presenting every file to
//! the target and rendering cost a few tens of milliseconds a page that plain uv, which keeps
//! its pages parsed, does not spend.
//!
//! The key is a digest of everything the rendered body depends on: the upstream pages'
//! bytes, URLs and content types ([`vari_client::ProjectSource::digest`], so a `304` or the
//! same bytes give the same key and a changed page another), the target's URL segment (its
//! fingerprint: hardware facts, markers, tags, selection options and sources, and the class
//! name), the project, the format and vari's version (the rendering code). Only pages whose
//! build depends on nothing else are kept ([`Storable`]): no variants (their `variants.json`
//! and METADATA texts are read separately), no build family of that name (its catalog and
//! other indexes decide), a single target, index pages only.
//!
//! An entry is a JSON header line (its key again, the body's SHA-256, what else the build
//! derived) and the body, written atomically; an entry that is not valid UTF-8 JSON, names
//! another key, is larger than [`MAX_ENTRY`] or whose body does not match its SHA-256 is
//! ignored and the page built again (and the entry replaced). The directory is bounded: a
//! starting proxy removes entries unused for 30 days, as the other caches, and the oldest
//! beyond [`MAX_BYTES`] in all ([`trim`]).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The directory of the entries, under the proxy's cache directory.
pub(crate) const PAGES_DIR: &str = "pages";

/// The hex digits of an entry's name (a SHA-256 of its key, cut short).
pub(crate) const KEY_HEX: usize = 32;

/// The largest kept page read or written, header included (PyPI's largest pages render to a
/// few megabytes).
pub const MAX_ENTRY: u64 = 64 * 1024 * 1024;

/// How many bytes of kept pages a starting proxy leaves (the least recently used beyond are
/// removed).
pub const MAX_BYTES: u64 = 512 * 1024 * 1024;

/// How stale an entry's time may get before a hit refreshes it (eviction counts days).
const TOUCH_AFTER: Duration = Duration::from_secs(3600);

/// Bumped when the entry layout or what the key covers changes.
const LAYOUT: &str = "vari-proxy page 1";

/// What decides a rendered page besides the upstream pages, for [`key`].
pub(crate) struct KeyParts<'a> {
    /// The target's URL segment (`{fingerprint}` or `{class}.{fingerprint}`).
    pub(crate) segment: &'a str,
    pub(crate) project: &'a str,
    /// `json` or `html`.
    pub(crate) format: &'a str,
    /// [`vari_client::ProjectSource::digest`].
    pub(crate) source: &'a str,
}

/// The full key (hex SHA-256) of a page.
pub(crate) fn key(parts: &KeyParts<'_>) -> String {
    let mut hash = Sha256::new();
    for part in [
        LAYOUT,
        env!("CARGO_PKG_VERSION"),
        parts.segment,
        parts.project,
        parts.format,
        parts.source,
    ] {
        hash.update((part.len() as u64).to_le_bytes());
        hash.update(part.as_bytes());
    }
    hex::encode(hash.finalize())
}

/// What a build derived besides the body, kept with it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Derived {
    /// The presentation's warnings, logged again when the entry is used.
    pub(crate) warnings: Vec<String>,
    /// Whether the page advertises metadata as `true` for wheels whose METADATA the proxy had
    /// not read (`crate::pages::offered`): such a page is not used once this process has
    /// read any text, since a build would now give some of them their hash.
    pub(crate) offers_unread_metadata: bool,
}

#[derive(Serialize, Deserialize)]
struct Header {
    key: String,
    sha256: String,
    #[serde(flatten)]
    derived: Derived,
}

/// A page read back.
#[derive(Debug)]
pub(crate) struct Stored {
    pub(crate) body: Bytes,
    /// The body's SHA-256 (hex), checked.
    pub(crate) sha256: String,
    pub(crate) derived: Derived,
}

/// Counts of pages built and pages taken from disk, for tests and the log.
#[derive(Debug, Default)]
pub(crate) struct Counts {
    pub(crate) built: AtomicUsize,
    pub(crate) from_disk: AtomicUsize,
}

/// How many project pages a proxy built from the upstream and how many it took from the
/// pages it kept on disk ([`crate::RunningProxy::page_builds`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PageBuilds {
    /// Pages built from the upstream's files (kept on disk afterwards when they may be).
    pub built: usize,
    /// Pages taken from disk: the upstream page was the one they were built from.
    pub from_disk: usize,
}

impl Counts {
    pub(crate) fn snapshot(&self) -> PageBuilds {
        PageBuilds {
            built: self.built.load(Ordering::Relaxed),
            from_disk: self.from_disk.load(Ordering::Relaxed),
        }
    }
}

/// The entries under one cache directory.
pub(crate) struct PageStore {
    /// The proxy's cache directory: nothing below it is written through a symbolic link.
    root: PathBuf,
}

impl PageStore {
    pub(crate) fn new(root: &Path) -> Self {
        Self {
            root: root.to_path_buf(),
        }
    }

    fn path(&self, key: &str) -> PathBuf {
        self.root.join(PAGES_DIR).join(&key[..KEY_HEX])
    }

    /// The page kept under `key`, when there is a valid one (blocking).
    pub(crate) fn load(&self, key: &str) -> Option<Stored> {
        let path = self.path(key);
        let bytes = vari_fs::read_cache_file(&path, MAX_ENTRY)?;
        let stored = parse(key, bytes);
        match &stored {
            Some(_) => touch(&path),
            None => tracing::debug!("{}: not a valid kept page; building it", path.display()),
        }
        stored
    }

    /// Keeps `body` and `derived` under `key` (blocking); a page that cannot be kept is built
    /// again next time: logged, not fatal.
    pub(crate) fn save(&self, key: &str, body: &[u8], derived: Derived) {
        let header = Header {
            key: key.to_owned(),
            sha256: hex::encode(Sha256::digest(body)),
            derived,
        };
        let Ok(mut entry) = serde_json::to_vec(&header) else {
            return;
        };
        entry.push(b'\n');
        entry.extend_from_slice(body);
        if entry.len() as u64 > MAX_ENTRY {
            return;
        }
        if let Err(e) = vari_fs::write_cache_file(&self.root, &self.path(key), &entry) {
            tracing::debug!("cannot keep a built page: {e}");
        }
    }
}

/// The entry `bytes` when it is a valid one for `key`.
fn parse(key: &str, mut bytes: Vec<u8>) -> Option<Stored> {
    let end = bytes.iter().position(|&b| b == b'\n')?;
    let header: Header = serde_json::from_slice(&bytes[..end]).ok()?;
    if header.key != key {
        return None;
    }
    let body = bytes.split_off(end + 1);
    if hex::encode(Sha256::digest(&body)) != header.sha256 {
        return None;
    }
    Some(Stored {
        body: Bytes::from(body),
        sha256: header.sha256,
        derived: header.derived,
    })
}

/// Marks the entry at `path` used now, when its time is older than [`TOUCH_AFTER`] (one
/// small system call, and only then).
fn touch(path: &Path) {
    let Some(file) = vari_fs::open_cache_file(path) else {
        return;
    };
    let stale = file
        .metadata()
        .and_then(|m| m.modified())
        .ok()
        .and_then(|at| at.elapsed().ok())
        .is_none_or(|age| age > TOUCH_AFTER);
    if stale {
        let _ = file.set_modified(SystemTime::now());
    }
}

/// Removes the oldest entries under the cache directory `dir` until at most `cap` bytes are
/// left; returns how many were removed. Entries that cannot be read are left to the age
/// pruning.
pub(crate) fn trim(dir: &Path, cap: u64) -> usize {
    let Ok(listing) = std::fs::read_dir(dir.join(PAGES_DIR)) else {
        return 0;
    };
    let mut entries: Vec<(SystemTime, u64, PathBuf)> = listing
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let meta = entry.metadata().ok()?;
            let ours = meta.is_file() && entry.file_name().len() == KEY_HEX;
            ours.then_some(())?;
            Some((meta.modified().ok()?, meta.len(), entry.path()))
        })
        .collect();
    let mut total: u64 = entries.iter().map(|(_, size, _)| size).sum();
    entries.sort();
    let mut removed = 0;
    for (_, size, path) in entries {
        if total <= cap {
            break;
        }
        if std::fs::remove_file(&path).is_ok() {
            total -= size;
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts<'a>(format: &'a str, source: &'a str) -> KeyParts<'a> {
        KeyParts {
            segment: "abc123",
            project: "numpy",
            format,
            source,
        }
    }

    #[test]
    fn keys_follow_every_part() {
        let base = key(&parts("json", "d1"));
        assert_eq!(base.len(), 64);
        assert_eq!(base, key(&parts("json", "d1")));
        assert_ne!(base, key(&parts("html", "d1")));
        assert_ne!(base, key(&parts("json", "d2")));
        let other = KeyParts {
            segment: "abc124",
            ..parts("json", "d1")
        };
        assert_ne!(base, key(&other));
    }

    #[test]
    fn a_page_comes_back_as_saved() {
        let dir = tempfile::tempdir().unwrap();
        let store = PageStore::new(dir.path());
        let key = key(&parts("json", "d1"));
        assert!(store.load(&key).is_none());
        let derived = Derived {
            warnings: vec!["numpy: a skipped link".into()],
            offers_unread_metadata: true,
        };
        store.save(&key, b"{\"name\":\"numpy\"}\n", derived.clone());
        let stored = store.load(&key).unwrap();
        assert_eq!(&stored.body[..], b"{\"name\":\"numpy\"}\n");
        assert_eq!(stored.derived, derived);
    }

    #[test]
    fn corrupt_or_foreign_entries_are_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let store = PageStore::new(dir.path());
        let key = key(&parts("json", "d1"));
        store.save(&key, b"body", Derived::default());
        let path = store.path(&key);
        let good = std::fs::read(&path).unwrap();
        // A body changed on disk.
        let mut flipped = good.clone();
        *flipped.last_mut().unwrap() ^= 1;
        std::fs::write(&path, &flipped).unwrap();
        assert!(store.load(&key).is_none());
        // Cut short, no header line, not JSON.
        for bad in [&good[..good.len() - 1], b"body".as_slice(), b"{]\nbody"] {
            std::fs::write(&path, bad).unwrap();
            assert!(store.load(&key).is_none());
        }
        // Another key's entry under this name (the name is only a prefix of the key).
        let other = key.replace(&key[KEY_HEX..], &"0".repeat(64 - KEY_HEX));
        store.save(&other, b"body", Derived::default());
        std::fs::write(&path, std::fs::read(store.path(&other)).unwrap()).unwrap();
        assert!(store.load(&key).is_none());
        // Larger than an entry may be: not read.
        let huge = vec![b' '; MAX_ENTRY as usize + 1];
        std::fs::write(&path, &huge).unwrap();
        assert!(store.load(&key).is_none());
        // And not written.
        store.save(&key, &huge, Derived::default());
        assert!(store.load(&key).is_none());
    }

    #[test]
    fn trimming_removes_the_oldest_first() {
        let dir = tempfile::tempdir().unwrap();
        let store = PageStore::new(dir.path());
        let keys: Vec<String> = ["a", "b", "c"]
            .iter()
            .map(|s| key(&parts("json", s)))
            .collect();
        let now = SystemTime::now();
        for (age, key) in [3u64, 2, 1].iter().zip(&keys) {
            store.save(key, &[b'x'; 1000], Derived::default());
            let file = std::fs::File::options()
                .write(true)
                .open(store.path(key))
                .unwrap();
            file.set_modified(now - Duration::from_secs(age * 86_400))
                .unwrap();
        }
        let size = std::fs::metadata(store.path(&keys[0])).unwrap().len();
        assert_eq!(trim(dir.path(), size * 2), 1);
        assert!(store.load(&keys[0]).is_none());
        assert!(store.load(&keys[1]).is_some() && store.load(&keys[2]).is_some());
        assert_eq!(trim(dir.path(), size * 2), 0);
    }
}
