//! The stores of object-store mirrors as `vari cache` sees them ([`MirrorCacheLayout`]): the
//! names are the ones [`default_store`](super::default_store) gives.

use std::path::Path;

use vari_fs::cache_admin::layout::{each_dir, is_hex};
use vari_fs::cache_admin::{AreaLayout, CacheArea, CacheEntry, CacheIoError};

use super::store::LOCK_FILE;
use super::STORES_DIR;

/// The `mirror` area: one entry per store, `mirror/{scheme}-{host}-{16 hex digits}/` (the
/// files of one destination, the state of the last run, its lock), last used at the newest time
/// in it, removed whole. A store a mirror run holds is left out (not counted, not removed):
/// that run is reading and writing it. Removing a store costs the next run to its destination
/// the downloads again; what is published stays.
#[derive(Debug, Clone, Copy, Default)]
pub struct MirrorCacheLayout;

impl AreaLayout for MirrorCacheLayout {
    fn area(&self) -> CacheArea {
        CacheArea::Mirror
    }

    fn entries(&self, root: &Path) -> Result<Vec<CacheEntry>, CacheIoError> {
        let mut entries = Vec::new();
        for entry in each_dir(CacheArea::Mirror, &root.join(STORES_DIR), is_store_key)? {
            let lock = entry.path().join(LOCK_FILE);
            if !vari_fs::lock::is_held(&lock).map_err(|e| CacheIoError::new(&lock, e))? {
                entries.push(entry);
            }
        }
        Ok(entries)
    }
}

/// Whether `name` is a store's key: a readable part of lowercase letters, digits, `-`, `.`
/// and `_`, then `-` and 16 hex digits.
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
