//! The detection cache as `vari cache` sees it ([`DetectCacheLayout`]): the names are the ones
//! the cache (`cache.rs`) writes, from the same constants.

use std::path::Path;

use vari_fs::cache_admin::layout::{each_child, is_partial};
use vari_fs::cache_admin::{AreaLayout, CacheArea, CacheEntry, CacheIoError};

use crate::cache::{CACHE_FILE_PREFIX, CACHE_FILE_SUFFIX};

/// The `detect` area: the cache file of every format version, `detect-vN.json` in the cache
/// directory itself, last used at the file's time. Re-validated on every run.
#[derive(Debug, Clone, Copy, Default)]
pub struct DetectCacheLayout;

impl AreaLayout for DetectCacheLayout {
    fn area(&self) -> CacheArea {
        CacheArea::Detect
    }

    fn entries(&self, root: &Path) -> Result<Vec<CacheEntry>, CacheIoError> {
        each_child(CacheArea::Detect, root, |name| {
            is_cache_file(name) || is_partial(name)
        })
    }
}

/// `detect-vN.json`, `N` decimal digits.
fn is_cache_file(name: &str) -> bool {
    let version = name
        .strip_prefix(CACHE_FILE_PREFIX)
        .and_then(|rest| rest.strip_suffix(CACHE_FILE_SUFFIX));
    version.is_some_and(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_written_is_the_file_counted() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(crate::cache::CACHE_FILE), b"{}").unwrap();
        std::fs::write(dir.path().join("detect-v12.json"), b"{}").unwrap();
        for other in ["detect-notes.json", "detect-v.json", "detect-v1.json.bak"] {
            std::fs::write(dir.path().join(other), b"{}").unwrap();
        }
        let found = DetectCacheLayout.entries(dir.path()).unwrap();
        let names: Vec<_> = found.iter().map(|e| e.path().to_owned()).collect();
        assert_eq!(
            names,
            [
                dir.path().join(crate::cache::CACHE_FILE),
                dir.path().join("detect-v12.json")
            ]
        );
    }
}
