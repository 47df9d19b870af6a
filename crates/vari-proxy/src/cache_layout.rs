//! The proxy's cache as `vari cache` and a starting proxy see it ([`ProxyCacheLayout`]): the
//! names are the ones the rewritten wheels' cache (`rewrite.rs`) writes, from the same
//! constants.

use std::path::Path;
use std::time::{Duration, SystemTime};

use vari_fs::cache_admin::layout::{children, is_hex, is_partial, modified_at, single, stats};
use vari_fs::cache_admin::{
    prune_listed, AreaLayout, CacheArea, CacheEntry, CacheIoError, Removed,
};

use crate::metadata_texts::{KEY_HEX, METADATA_DIR};
use crate::rewrite::{AREA_DIR, INFO_FILE, KEY_BYTES, SCRATCH_DIR, SCRATCH_PREFIX, WHEELS_DIR};
use crate::stored_pages::{KEY_HEX as PAGE_KEY_HEX, PAGES_DIR};

/// The `proxy` area: a rewritten wheel, `proxy/wheels/KEY/` (the copy and its `info.json`),
/// last used at `info.json`'s time (the proxy refreshes it when it serves the copy), else at the
/// newest time in the directory; or a build's scratch directory `proxy/tmp/.tmp*`. Each copy is
/// as large as its upstream wheel. Also the METADATA texts read from wheels
/// (`proxy/metadata/KEY`), last used when written, the built pages kept across runs
/// (`proxy/pages/KEY`, last used when written or, at most an hour off, last served), and what
/// an interrupted write of either left.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProxyCacheLayout;

impl AreaLayout for ProxyCacheLayout {
    fn area(&self) -> CacheArea {
        CacheArea::Proxy
    }

    fn entries(&self, root: &Path) -> Result<Vec<CacheEntry>, CacheIoError> {
        entries_in(&root.join(AREA_DIR))
    }
}

/// Removes from the proxy cache directory `dir` (`vari_fs::cache_dir()/proxy`, or the one a
/// proxy was given) the rewritten wheels not served for `max_unused` before `now`, and the
/// scratch directories that builds left behind and the METADATA texts written as long ago:
/// what a starting proxy evicts.
pub fn prune_proxy_dir(dir: &Path, max_unused: Duration, now: SystemTime) -> Removed {
    prune_listed(CacheArea::Proxy, entries_in(dir), max_unused, now)
}

/// The entries of a proxy's cache directory (`vari_fs::cache_dir()/proxy`, or the directory a
/// proxy was given). A copy's entry removes `info.json` first, so a copy whose removal is
/// interrupted is never trusted half-removed; its directory names it.
fn entries_in(dir: &Path) -> Result<Vec<CacheEntry>, CacheIoError> {
    let mut entries = Vec::new();
    for key in children(&dir.join(WHEELS_DIR), |name| is_hex(name, KEY_BYTES * 2))? {
        let info = key.join(INFO_FILE);
        let Some(found) = stats(&key)? else {
            continue;
        };
        // A copy without `info.json` is one being built (its files are new) or what an
        // interrupted build or removal left (its files are old).
        let last_used = modified_at(&info)?.unwrap_or(found.newest);
        entries.push(CacheEntry::new(
            CacheArea::Proxy,
            vec![info, key],
            1,
            found.bytes,
            last_used,
        ));
    }
    let scratch_dirs = children(&dir.join(SCRATCH_DIR), |name| {
        name.starts_with(SCRATCH_PREFIX)
    })?;
    for scratch in scratch_dirs {
        entries.extend(single(CacheArea::Proxy, scratch)?);
    }
    let texts = children(&dir.join(METADATA_DIR), |name| {
        is_hex(name, KEY_HEX) || is_partial(name)
    })?;
    for text in texts {
        entries.extend(single(CacheArea::Proxy, text)?);
    }
    let pages = children(&dir.join(PAGES_DIR), |name| {
        is_hex(name, PAGE_KEY_HEX) || is_partial(name)
    })?;
    for page in pages {
        entries.extend(single(CacheArea::Proxy, page)?);
    }
    Ok(entries)
}
