//! The HTTP cache as `vari cache` sees it ([`HttpCacheLayout`]): the names are the ones the
//! cache (`cache.rs`) writes, from the same constants.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use vari_fs::cache_admin::layout::{self, children, file_name, is_dir, is_hex, is_partial, Stats};
use vari_fs::cache_admin::{AreaLayout, CacheArea, CacheEntry, CacheIoError};

use super::cache::{AREA_DIR, ENTRY_EXTENSION, HASH_BYTES, POLICY_EXTENSION, SHARD_DIGITS};

/// The `http` area: `http/XX/HASH.entry` (the body, with its policy) and `HASH.policy` (a
/// revalidation's newer policy) are one entry, last used at the newer of the two files' times.
/// A response read while still fresh gets its entry's time set to now when that time is more
/// than a day old, so an entry's time is its last use, to within a day.
#[derive(Debug, Clone, Copy, Default)]
pub struct HttpCacheLayout;

impl AreaLayout for HttpCacheLayout {
    fn area(&self) -> CacheArea {
        CacheArea::Http
    }

    fn entries(&self, root: &Path) -> Result<Vec<CacheEntry>, CacheIoError> {
        let hash_digits = HASH_BYTES * 2 - SHARD_DIGITS;
        let mut entries = Vec::new();
        for shard in children(&root.join(AREA_DIR), |name| is_hex(name, SHARD_DIGITS))? {
            if !is_dir(&shard) {
                continue;
            }
            // Hash → its files, the entry first, so that a policy never outlives its body.
            let mut by_hash: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
            for file in children(&shard, |_| true)? {
                let name = file_name(&file);
                let hash = [ENTRY_EXTENSION, POLICY_EXTENSION].iter().find_map(|ext| {
                    name.strip_suffix(ext)
                        .and_then(|stem| stem.strip_suffix('.'))
                });
                match hash {
                    Some(hash) if is_hex(hash, hash_digits) => {
                        by_hash.entry(hash.to_owned()).or_default().push(file)
                    }
                    _ if is_partial(&name) => {
                        entries.extend(layout::single(CacheArea::Http, file)?)
                    }
                    _ => {}
                }
            }
            for (_, mut files) in by_hash {
                files.sort_by_key(|f| f.extension().is_some_and(|e| e != ENTRY_EXTENSION));
                let mut total: Option<Stats> = None;
                for file in &files {
                    if let Some(found) = layout::stats(file)? {
                        total = Some(match total {
                            None => found,
                            Some(t) => Stats {
                                bytes: t.bytes + found.bytes,
                                newest: t.newest.max(found.newest),
                            },
                        });
                    }
                }
                if let Some(total) = total {
                    entries.push(CacheEntry::new(
                        CacheArea::Http,
                        files,
                        0,
                        total.bytes,
                        total.newest,
                    ));
                }
            }
        }
        Ok(entries)
    }

    /// Removes the empty `XX` directories, best effort (one that a writer fills again meanwhile
    /// stays; a writer that created one just before it went fails to store that response, which
    /// is logged, and fetches it again next time).
    fn tidy(&self, root: &Path) {
        let shards = children(&root.join(AREA_DIR), |name| is_hex(name, SHARD_DIGITS));
        for shard in shards.unwrap_or_default() {
            if is_dir(&shard) {
                // Fails, harmlessly, unless empty.
                let _ = std::fs::remove_dir(&shard);
            }
        }
    }
}
