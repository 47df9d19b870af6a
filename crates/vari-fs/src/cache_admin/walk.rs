//! The size and the newest modification time of a file or a directory tree, walked without
//! following symbolic links, tolerating files that disappear while it is walked (a proxy or
//! another `vari` may be removing or replacing entries at the same time).

use std::io;
use std::path::Path;

use super::entry::CacheIoError;
use std::time::{SystemTime, UNIX_EPOCH};

/// What a walk found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stats {
    /// The sum of the file sizes (symbolic links count their own size).
    pub bytes: u64,
    /// The newest modification time of anything in the tree, the directories included (a
    /// directory's changes when a file is added or removed in it).
    pub newest: SystemTime,
}

/// The stats of `path`; `None` when it no longer exists.
pub fn stats(path: &Path) -> Result<Option<Stats>, CacheIoError> {
    let fail = |e| CacheIoError::new(path, e);
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(fail(e)),
    };
    let mut total = Stats {
        bytes: if meta.is_dir() { 0 } else { meta.len() },
        newest: modified(&meta),
    };
    if meta.is_dir() {
        let children = match std::fs::read_dir(path) {
            Ok(children) => children,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(fail(e)),
        };
        for child in children {
            let child = child.map_err(fail)?;
            if let Some(found) = stats(&child.path())? {
                total.bytes += found.bytes;
                total.newest = total.newest.max(found.newest);
            }
        }
    }
    Ok(Some(total))
}

/// The modification time of `meta`, the epoch when the platform has none (an entry without a
/// time looks unused, which only matters to a prune: the entry is cache, never the only copy).
pub(super) fn modified(meta: &std::fs::Metadata) -> SystemTime {
    meta.modified().unwrap_or(UNIX_EPOCH)
}

/// The modification time of `path`; `None` when it does not exist.
pub fn modified_at(path: &Path) -> Result<Option<SystemTime>, CacheIoError> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) => Ok(Some(modified(&meta))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(CacheIoError::new(path, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    // Directory times are set through a handle, which Windows opens only for files.
    #[cfg(unix)]
    #[test]
    fn sizes_add_up_and_the_newest_time_wins() {
        let dir = tempfile::tempdir().unwrap();
        let tree = dir.path().join("tree");
        std::fs::create_dir_all(tree.join("sub")).unwrap();
        std::fs::write(tree.join("a"), b"12345").unwrap();
        std::fs::write(tree.join("sub/b"), b"123").unwrap();
        let old = SystemTime::now() - Duration::from_secs(86_400 * 100);
        let newest = SystemTime::now() - Duration::from_secs(86_400);
        for path in [tree.join("sub"), tree.clone()] {
            std::fs::File::open(&path)
                .unwrap()
                .set_modified(old)
                .unwrap();
        }
        std::fs::File::options()
            .write(true)
            .open(tree.join("a"))
            .unwrap()
            .set_modified(old)
            .unwrap();
        std::fs::File::options()
            .write(true)
            .open(tree.join("sub/b"))
            .unwrap()
            .set_modified(newest)
            .unwrap();
        let found = stats(&tree).unwrap().unwrap();
        assert_eq!(found.bytes, 8);
        assert_eq!(found.newest, newest);
        assert_eq!(stats(&dir.path().join("missing")).unwrap(), None);
    }
}
