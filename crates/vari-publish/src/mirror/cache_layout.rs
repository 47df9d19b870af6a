//! The stores of object-store mirrors as `vari cache` sees them ([`MirrorCacheLayout`]): the
//! names are the ones [`default_store`](super::default_store) gives, and beside them the
//! destinations' locks ([`destination_lock`](super::destination_lock)) and publish journals
//! ([`Destination::journal`](crate::Destination::journal)).

use std::path::Path;

use vari_fs::cache_admin::layout::{children, each_dir, file_name, is_hex, single};
use vari_fs::cache_admin::{AreaLayout, CacheArea, CacheEntry, CacheIoError};

use super::store::LOCK_FILE;
use super::{DESTINATION_LOCK_SUFFIX, STORES_DIR};
use crate::publish::destination::JOURNAL_SUFFIX;

/// The `mirror` area: one entry per store, `mirror/{scheme}-{host}-{16 hex digits}/` (the
/// files of one destination, the state of the last run, its lock), last used at the newest time
/// in it, removed whole. A store a mirror run holds is left out (not counted, not removed):
/// that run is reading and writing it. Removing a store costs the next run to its destination
/// the downloads again; what is published stays. Each destination's lock file
/// (`mirror/KEY.lock`) and publish journal (`mirror/KEY.journal`) is an entry of its own,
/// left out while a mirror holds that lock; removing a journal costs uploads again.
#[derive(Debug, Clone, Copy, Default)]
pub struct MirrorCacheLayout;

impl AreaLayout for MirrorCacheLayout {
    fn area(&self) -> CacheArea {
        CacheArea::Mirror
    }

    fn entries(&self, root: &Path) -> Result<Vec<CacheEntry>, CacheIoError> {
        let stores = root.join(STORES_DIR);
        let mut entries = Vec::new();
        for entry in each_dir(CacheArea::Mirror, &stores, is_store_key)? {
            let lock = entry.path().join(LOCK_FILE);
            if !is_held(&lock)? {
                entries.push(entry);
            }
        }
        // An object-store destination's lock and publish journal, beside the stores: left out
        // while a mirror holds that destination's lock.
        let beside = |name: &str| {
            [DESTINATION_LOCK_SUFFIX, JOURNAL_SUFFIX]
                .iter()
                .any(|suffix| name.strip_suffix(suffix).is_some_and(is_store_key))
        };
        for path in children(&stores, beside)? {
            if !std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
                continue; // not vari's
            }
            let name = file_name(&path);
            let key = name.rsplit_once('.').map_or(name.as_str(), |(key, _)| key);
            if !is_held(&stores.join(format!("{key}{DESTINATION_LOCK_SUFFIX}")))? {
                entries.extend(single(CacheArea::Mirror, path)?);
            }
        }
        Ok(entries)
    }
}

/// Whether `name` is a store's key: a readable part of lowercase letters, digits, `-`, `.`
/// and `_`, then `-` and 16 hex digits.
fn is_held(lock: &Path) -> Result<bool, CacheIoError> {
    vari_fs::lock::is_held(lock).map_err(|e| CacheIoError::new(lock, e))
}

fn is_store_key(name: &str) -> bool {
    match name.rsplit_once('-') {
        Some((readable, digest)) => {
            is_hex(digest, 16)
                && !readable.is_empty()
                && readable.bytes().all(|b| {
                    b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'-' | b'.' | b'_')
                })
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mirror::default_store;
    use crate::Destination;

    #[test]
    fn the_names_default_store_gives_are_entries_and_nothing_else() {
        let cache = tempfile::tempdir().unwrap();
        let s3 = Destination::parse("s3://Bucket.One/pypi".as_ref()).unwrap();
        let store = default_store(&s3, Some(cache.path())).unwrap();
        std::fs::create_dir_all(store.join("files")).unwrap();
        std::fs::write(store.join("files/a-1.0-py3-none-any.whl"), [0u8; 300]).unwrap();
        std::fs::write(store.join("state.json"), "{}").unwrap();
        // Not a store's name, a file, and a link: none is an entry.
        let stores = cache.path().join(STORES_DIR);
        std::fs::create_dir(stores.join("notes")).unwrap();
        std::fs::write(stores.join("s3-x-0123456789abcdef"), "file").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(cache.path(), stores.join("s3-y-0123456789abcdef")).unwrap();
        let entries = MirrorCacheLayout.entries(cache.path()).unwrap();
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0].path(), store);
        assert_eq!(entries[0].bytes(), 302);
        // Held by a run: left out.
        let held = vari_fs::lock::lock_exclusive(&store.join(LOCK_FILE), || {}).unwrap();
        assert!(MirrorCacheLayout.entries(cache.path()).unwrap().is_empty());
        drop(held);
        assert_eq!(MirrorCacheLayout.entries(cache.path()).unwrap().len(), 1);
    }

    #[test]
    fn destination_locks_and_journals_are_entries_unless_a_mirror_holds_the_lock() {
        let cache = tempfile::tempdir().unwrap();
        let stores = cache.path().join(STORES_DIR);
        std::fs::create_dir_all(&stores).unwrap();
        let lock = stores.join(format!("s3-b-0123456789abcdef{DESTINATION_LOCK_SUFFIX}"));
        let journal = stores.join(format!("s3-b-0123456789abcdef{JOURNAL_SUFFIX}"));
        std::fs::write(&lock, "").unwrap();
        std::fs::write(&journal, "{}\n").unwrap();
        // Not a key's: left alone.
        std::fs::write(stores.join("notes.lock"), "").unwrap();
        let named = |entries: Vec<CacheEntry>| -> Vec<std::path::PathBuf> {
            entries.iter().map(|e| e.path().to_owned()).collect()
        };
        let held = vari_fs::lock::lock_exclusive(&lock, || {}).unwrap();
        assert!(MirrorCacheLayout.entries(cache.path()).unwrap().is_empty());
        drop(held);
        assert_eq!(
            named(MirrorCacheLayout.entries(cache.path()).unwrap()),
            [journal.clone(), lock.clone()]
        );
        vari_fs::cache_admin::clean(cache.path(), &[&MirrorCacheLayout], &[CacheArea::Mirror]);
        assert!(!lock.exists() && !journal.exists());
        assert!(stores.join("notes.lock").exists());
    }

    #[test]
    fn store_keys() {
        assert!(is_store_key("s3-bucket.one-0123456789abcdef"));
        assert!(is_store_key("gs-b_1-0123456789abcdef"));
        assert!(!is_store_key("s3-bucket-0123456789abcde"));
        assert!(!is_store_key("S3-bucket-0123456789abcdef"));
        assert!(!is_store_key("-0123456789abcdef"));
        assert!(!is_store_key("0123456789abcdef"));
        assert!(!is_store_key("../x-0123456789abcdef"));
    }
}
