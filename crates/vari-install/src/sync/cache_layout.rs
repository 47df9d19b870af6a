//! The store as `vari cache` sees it ([`LockedCacheLayout`]): the names are the ones
//! [`fetch`](super::fetch) writes.

use std::path::Path;

use vari_fs::cache_admin::layout::{each_dir, is_hex};
use vari_fs::cache_admin::{AreaLayout, CacheArea, CacheEntry, CacheIoError};

use super::STORE_AREA;

/// The `locked` area: one entry per locked file, its directory `locked/SHA256/` (the file as
/// the installer sees it, the copies with its variant markers evaluated for a target, their
/// records, and temporary files of interrupted fetches), last used at the newest time in it (a
/// sync sets a record's time when it uses the file, at most once an hour). The directory is
/// removed whole: a record never vouches for a file other than the one it describes (see
/// `record`), so an interrupted removal leaves nothing that is trusted wrongly. Each entry is
/// as large as its file, and can be fetched again from the lock's URL.
#[derive(Debug, Clone, Copy, Default)]
pub struct LockedCacheLayout;

impl AreaLayout for LockedCacheLayout {
    fn area(&self) -> CacheArea {
        CacheArea::Locked
    }

    fn entries(&self, root: &Path) -> Result<Vec<CacheEntry>, CacheIoError> {
        each_dir(CacheArea::Locked, &root.join(STORE_AREA), |name| {
            is_hex(name, 64)
        })
    }
}
