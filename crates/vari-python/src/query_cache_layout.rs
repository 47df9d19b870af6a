//! The interpreter answers' cache as `vari cache` sees it ([`PythonCacheLayout`]): the names
//! are the ones the query (`query.rs`) writes, from the same constants.

use std::path::Path;

use vari_fs::cache_admin::layout::{each_child, is_hex, is_partial};
use vari_fs::cache_admin::{AreaLayout, CacheArea, CacheEntry, CacheIoError};

use crate::query::{CACHE_AREA_DIR, CACHE_FILE_SUFFIX, CACHE_HASH_BYTES};

/// The `python` area: one `python/HASH.json` per interpreter, last used at the file's time.
/// Keyed by the interpreter's path and modification time, so never stale, and small.
#[derive(Debug, Clone, Copy, Default)]
pub struct PythonCacheLayout;

impl AreaLayout for PythonCacheLayout {
    fn area(&self) -> CacheArea {
        CacheArea::Python
    }

    fn entries(&self, root: &Path) -> Result<Vec<CacheEntry>, CacheIoError> {
        each_child(CacheArea::Python, &root.join(CACHE_AREA_DIR), |name| {
            name.strip_suffix(CACHE_FILE_SUFFIX)
                .is_some_and(|hash| is_hex(hash, CACHE_HASH_BYTES * 2))
                || is_partial(name)
        })
    }
}
