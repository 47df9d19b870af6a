//! What one entry is in an area of the cache, as the crate that writes the area says
//! ([`AreaLayout`]), and the walking helpers each layout is written with. The layouts live next
//! to their writers, which name their directories with the same constants they write with:
//!
//! | area | written and laid out by | an entry | last used |
//! |---|---|---|---|
//! | `http` | `vari-client` | `http/XX/HASH.entry` (the body, with its policy) and `HASH.policy` (a revalidation's newer policy) | the newer of the two files' times |
//! | `python` | `vari-python` | one `python/HASH.json` per interpreter | the file's time |
//! | `detect` | `vari-detect` | `detect-vN.json` in the cache directory itself | the file's time |
//! | `proxy` | `vari-proxy` | a rewritten wheel, `proxy/wheels/KEY/` (the copy and its `info.json`), or a build's scratch directory `proxy/tmp/.tmp*` | `info.json`'s time (the proxy refreshes it when it serves the copy), else the newest time in the directory |
//! | `locked` | `vari-install` | a locked file's directory, `locked/SHA256/` (the file, its copies with variant markers evaluated, their records) | the newest time in the directory (a sync refreshes a record's time when it uses the file) |
//! | `mirror` | `vari-publish` | an object-store mirror's store, `mirror/KEY/` (its files, the last run's state, its lock); left out while a run holds it | the newest time in the directory |
//!
//! A layout counts or removes only names of the shapes its writer writes, and leftover
//! temporary files of interrupted atomic writes ([`is_partial`], see [`crate::AtomicFile`]) in
//! the directories that hold them: a cache directory pointed at the wrong place
//! (`VARI_CACHE_DIR=$HOME`) loses nothing but what vari would have written there. The area
//! directories themselves are kept: a proxy that is running builds its copies in them.

use std::io;
use std::path::{Path, PathBuf};

use super::entry::{CacheArea, CacheEntry, CacheIoError};
use super::walk;

pub use super::walk::{modified_at, stats, Stats};

/// How one area of the cache is laid out: implemented by the crate that writes the area, and
/// given to [`usage`](super::usage), [`clean`](super::clean) and [`prune`](super::prune).
pub trait AreaLayout: Send + Sync {
    /// The area.
    fn area(&self) -> CacheArea;

    /// Its entries in the cache directory `root` (none when they do not exist), each removed
    /// whole, in the order of its paths.
    fn entries(&self, root: &Path) -> Result<Vec<CacheEntry>, CacheIoError>;

    /// After the area was emptied: removes the directories inside it that only hold entries,
    /// best effort (one that a writer fills again meanwhile stays). Nothing by default.
    fn tidy(&self, root: &Path) {
        let _ = root;
    }
}

/// Every child of `dir` whose name `wanted` accepts, one entry each.
pub fn each_child(
    area: CacheArea,
    dir: &Path,
    wanted: impl Fn(&str) -> bool,
) -> Result<Vec<CacheEntry>, CacheIoError> {
    each(area, dir, wanted, |_| true)
}

/// `path` as an entry of its own (`None` when it is gone).
pub fn single(area: CacheArea, path: PathBuf) -> Result<Option<CacheEntry>, CacheIoError> {
    Ok(walk::stats(&path)?
        .map(|found| CacheEntry::new(area, vec![path], 0, found.bytes, found.newest)))
}

/// Every child of `dir` that is a directory itself (a symbolic link planted there names
/// something that is not vari's) and whose name `wanted` accepts, one entry each, removed whole.
pub fn each_dir(
    area: CacheArea,
    dir: &Path,
    wanted: impl Fn(&str) -> bool,
) -> Result<Vec<CacheEntry>, CacheIoError> {
    each(area, dir, wanted, is_dir)
}

/// Every child of `dir` whose name `wanted` accepts and whose path `kept` does, one entry each.
fn each(
    area: CacheArea,
    dir: &Path,
    wanted: impl Fn(&str) -> bool,
    kept: impl Fn(&Path) -> bool,
) -> Result<Vec<CacheEntry>, CacheIoError> {
    let mut entries = Vec::new();
    for child in children(dir, wanted)? {
        if kept(&child) {
            entries.extend(single(area, child)?);
        }
    }
    Ok(entries)
}

/// The children of `dir` whose names `wanted` accepts, sorted; none when `dir` does not exist.
/// Names that are not UTF-8 are never vari's, and never accepted.
pub fn children(dir: &Path, wanted: impl Fn(&str) -> bool) -> Result<Vec<PathBuf>, CacheIoError> {
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
pub fn is_dir(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
}

/// The last component of `path`, lossily as text (empty when there is none).
pub fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// `len` lowercase hex digits, as vari's hashes are written.
pub fn is_hex(name: &str, len: usize) -> bool {
    name.len() == len && name.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Whether `name` is a temporary file of [`crate::AtomicFile`] (its prefix and suffix).
pub fn is_partial(name: &str) -> bool {
    crate::stale::is_partial_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_names_have_the_length_asked_and_lowercase_digits() {
        assert!(is_hex("0a", 2));
        assert!(!is_hex("0A", 2));
        assert!(!is_hex("0a1", 2));
        assert!(!is_hex("zz", 2));
    }

    #[test]
    fn partial_names_are_atomic_files_temporaries() {
        assert!(is_partial(".vari-Xy12.partial"));
        assert!(!is_partial("vari-Xy12.partial"));
        assert!(!is_partial(".vari-Xy12.json"));
    }
}
