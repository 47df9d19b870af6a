//! What one entry is in each area of the cache: the only place that knows how the other crates
//! lay their caches out. Each area lists its entries; an entry is removed whole, in the order
//! its paths are listed.
//!
//! | area | written by | an entry | last used |
//! |---|---|---|---|
//! | `http` | `vari-client` | `http/XX/HASH.entry` (the body, with its policy) and `HASH.policy` (a revalidation's newer policy) | the newer of the two files' times |
//! | `python` | `vari-python` | one `python/HASH.json` per interpreter | the file's time |
//! | `detect` | `vari-detect` | `detect-vN.json` in the cache directory itself | the file's time |
//! | `proxy` | `vari-proxy` | a rewritten wheel, `proxy/wheels/KEY/` (the copy and its `info.json`), or a build's scratch directory `proxy/tmp/.tmp*` | `info.json`'s time (the proxy refreshes it when it serves the copy), else the newest time in the directory |
//!
//! `XX` is 2 lowercase hex digits, `HASH` 30 (`http`) or 32 (`python`), `KEY` 32. Only names of
//! these shapes are counted or removed, and leftover temporary files of interrupted atomic writes
//! (`.vari-*.partial`, see [`crate::AtomicFile`]) in the directories that hold them: a cache
//! directory pointed at the wrong place (`VARI_CACHE_DIR=$HOME`) loses nothing but what vari
//! would have written there. The area directories themselves (`http/`, `proxy/wheels/`,
//! `proxy/tmp/`, …) are kept: a proxy that is running builds its copies in them.
//!
//! An HTTP entry is rewritten when its response is stored and its policy file when it is
//! revalidated; a response read while still fresh gets its entry's time set to now when that
//! time is more than a day old (`vari-client`'s cache). Its time is therefore its last use, to
//! within a day.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use super::entry::{CacheArea, CacheEntry, CacheIoError};
use super::walk::{self, modified_at, Stats};

/// The entries of `area` in the cache directory `root`.
pub(super) fn entries(root: &Path, area: CacheArea) -> Result<Vec<CacheEntry>, CacheIoError> {
    match area {
        CacheArea::Http => http(&root.join("http")),
        CacheArea::Python => each_child(CacheArea::Python, &root.join("python"), |name| {
            name.strip_suffix(".json").is_some_and(|h| is_hex(h, 32)) || is_partial(name)
        }),
        CacheArea::Detect => each_child(CacheArea::Detect, root, |name| {
            let version = name
                .strip_prefix("detect-v")
                .and_then(|rest| rest.strip_suffix(".json"));
            version.is_some_and(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
                || is_partial(name)
        }),
        CacheArea::Proxy => proxy(&root.join("proxy")),
    }
}

/// The entries of a proxy cache directory (`vari_fs::cache_dir()/proxy`, or the directory a
/// proxy was given).
pub(super) fn proxy(dir: &Path) -> Result<Vec<CacheEntry>, CacheIoError> {
    let mut entries = Vec::new();
    for key in children(&dir.join("wheels"), |name| is_hex(name, 32))? {
        let info = key.join("info.json");
        let Some(found) = walk::stats(&key)? else {
            continue;
        };
        // A copy without `info.json` is one being built (its files are new) or what an
        // interrupted build or removal left (its files are old).
        let last_used = modified_at(&info)?.unwrap_or(found.newest);
        entries.push(CacheEntry {
            area: CacheArea::Proxy,
            paths: vec![info, key],
            bytes: found.bytes,
            last_used,
        });
    }
    // `tempfile`'s default names.
    for scratch in children(&dir.join("tmp"), |name| name.starts_with(".tmp"))? {
        entries.extend(single(CacheArea::Proxy, scratch)?);
    }
    Ok(entries)
}

/// `http/XX/HASH.entry` with its `HASH.policy`: one entry per hash.
fn http(dir: &Path) -> Result<Vec<CacheEntry>, CacheIoError> {
    let mut entries = Vec::new();
    for shard in children(dir, |name| is_hex(name, 2))? {
        if !is_dir(&shard) {
            continue;
        }
        // Hash → its files, `.entry` first, so that a policy never outlives its body.
        let mut by_hash: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
        for file in children(&shard, |_| true)? {
            let name = file_name(&file);
            match name
                .strip_suffix(".entry")
                .or_else(|| name.strip_suffix(".policy"))
            {
                Some(hash) if is_hex(hash, 30) => {
                    by_hash.entry(hash.to_owned()).or_default().push(file)
                }
                _ if is_partial(&name) => entries.extend(single(CacheArea::Http, file)?),
                _ => {}
            }
        }
        for (_, mut files) in by_hash {
            files.sort_by_key(|f| f.extension().is_some_and(|e| e != "entry"));
            let mut total: Option<Stats> = None;
            for file in &files {
                if let Some(found) = walk::stats(file)? {
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
                entries.push(CacheEntry {
                    area: CacheArea::Http,
                    paths: files,
                    bytes: total.bytes,
                    last_used: total.newest,
                });
            }
        }
    }
    Ok(entries)
}

/// After `area` was emptied: removes the HTTP cache's empty `XX` directories, best effort (one
/// that a writer fills again meanwhile stays; a writer that created one just before it went
/// fails to store that response, which `vari-client` logs, and fetches it again next time).
/// The other areas' directories are kept.
pub(super) fn tidy(root: &Path, area: CacheArea) {
    if area == CacheArea::Http {
        for shard in children(&root.join("http"), |name| is_hex(name, 2)).unwrap_or_default() {
            if is_dir(&shard) {
                // Fails, harmlessly, unless empty.
                let _ = std::fs::remove_dir(&shard);
            }
        }
    }
}

/// Every child of `dir` whose name `wanted` accepts, one entry each.
fn each_child(
    area: CacheArea,
    dir: &Path,
    wanted: impl Fn(&str) -> bool,
) -> Result<Vec<CacheEntry>, CacheIoError> {
    let mut entries = Vec::new();
    for child in children(dir, wanted)? {
        entries.extend(single(area, child)?);
    }
    Ok(entries)
}

/// `path` as an entry of its own (`None` when it is gone).
fn single(area: CacheArea, path: PathBuf) -> Result<Option<CacheEntry>, CacheIoError> {
    Ok(walk::stats(&path)?.map(|found| CacheEntry {
        area,
        paths: vec![path],
        bytes: found.bytes,
        last_used: found.newest,
    }))
}

/// The children of `dir` whose names `wanted` accepts, sorted; none when `dir` does not exist.
fn children(dir: &Path, wanted: impl Fn(&str) -> bool) -> Result<Vec<PathBuf>, CacheIoError> {
    let fail = |e| CacheIoError::new(dir, e);
    let listing = match std::fs::read_dir(dir) {
        Ok(listing) => listing,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(fail(e)),
    };
    let mut paths = Vec::new();
    for child in listing {
        let child = child.map_err(fail)?;
        if child.file_name().to_str().is_some_and(&wanted) {
            paths.push(child.path());
        }
    }
    paths.sort();
    Ok(paths)
}

/// Whether `path` is a directory itself (not a symbolic link to one, whose target is not the
/// cache's to empty).
fn is_dir(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// `len` lowercase hex digits, as vari's hashes are written.
fn is_hex(name: &str, len: usize) -> bool {
    name.len() == len && name.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The prefix and suffix of [`crate::AtomicFile`]'s temporary files.
fn is_partial(name: &str) -> bool {
    name.starts_with(".vari-") && name.ends_with(".partial")
}
