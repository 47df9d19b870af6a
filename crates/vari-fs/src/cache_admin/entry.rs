//! The cache's areas and entries as values: what is reported, and removed together, and why
//! removing failed. The walking (`walk.rs`), the layouts (`layout.rs`, implemented by the
//! writers) and the clean and prune rules (`mod.rs`) all speak of these, so they sit below all
//! three.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::SystemTime;

/// A part of the cache, reported and removed on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CacheArea {
    /// `http/`: index pages, metadata files and `*-variants.json` responses (`vari-client`).
    Http,
    /// `python/`: what each interpreter answered (`vari-python`); keyed by the interpreter's
    /// path and modification time, so never stale, and small.
    Python,
    /// `detect-v*.json`: the detection cache (`vari-detect`); re-validated on every run.
    Detect,
    /// `proxy/`: the proxy's rewritten wheels (`vari-proxy`), each as large as its upstream
    /// wheel.
    Proxy,
    /// `locked/`: the files `vari sync` and `vari export` fetched from locks, checked against
    /// their SHA-256 (`vari-install`), each as large as the file.
    Locked,
    /// `mirror/`: the stores of mirrors published to object storage (`vari-publish`), each
    /// the files of one destination and what the last run knew of them.
    Mirror,
    /// `profiles/`: copies of the target profiles locks record by hash only (`vari-install`),
    /// so the machine that made a lock can make it again.
    Profiles,
}

impl CacheArea {
    /// Every area, in the order they are reported.
    pub const ALL: [Self; 7] = [
        Self::Http,
        Self::Python,
        Self::Detect,
        Self::Proxy,
        Self::Locked,
        Self::Mirror,
        Self::Profiles,
    ];

    /// The name `vari cache` uses: `http`, `python`, `detect`, `proxy`, `locked`, `mirror`,
    /// `profiles`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Http => "http",
            Self::Python => "python",
            Self::Detect => "detect",
            Self::Proxy => "proxy",
            Self::Locked => "locked",
            Self::Mirror => "mirror",
            Self::Profiles => "profiles",
        }
    }

    /// Whether [`prune`](super::prune) removes its unused entries: the HTTP responses, the
    /// rewritten wheels and the locked files (fetched again from the lock's URL when next
    /// needed). The interpreter answers and the detection result are small and checked
    /// against what they describe on every use, so their age says nothing. A mirror's store is
    /// removed only when asked for by name: it is what the next run to that destination
    /// starts from, however long ago the last one was.
    pub fn prunable(self) -> bool {
        matches!(self, Self::Http | Self::Proxy | Self::Locked)
    }
}

impl fmt::Display for CacheArea {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not a [`CacheArea`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown cache area `{0}`: expected http, python, detect, proxy, locked, mirror or profiles"
)]
pub struct UnknownArea(pub String);

impl FromStr for CacheArea {
    type Err = UnknownArea;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|area| area.name() == name)
            .ok_or_else(|| UnknownArea(name.to_owned()))
    }
}

/// A file or directory of the cache that could not be read or removed.
#[derive(Debug, thiserror::Error)]
#[error("{}: {source}", .path.display())]
pub struct CacheIoError {
    /// The path at fault.
    pub path: PathBuf,
    /// The operating system's reason.
    pub source: std::io::Error,
}

impl CacheIoError {
    /// `path` could not be read or removed, for `source`.
    pub fn new(path: &Path, source: std::io::Error) -> Self {
        Self {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// One entry of an area: what is removed together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheEntry {
    pub(super) area: CacheArea,
    /// What to remove, in this order.
    pub(super) paths: Vec<PathBuf>,
    /// The index in `paths` of the one that names the entry.
    pub(super) named: usize,
    pub(super) bytes: u64,
    pub(super) last_used: SystemTime,
}

impl CacheEntry {
    /// An entry of `area` made of `paths`, removed in that order (the file that makes the
    /// entry trusted first); `paths[named]` names it (see [`path`](Self::path)).
    pub fn new(
        area: CacheArea,
        paths: Vec<PathBuf>,
        named: usize,
        bytes: u64,
        last_used: SystemTime,
    ) -> Self {
        Self {
            area,
            paths,
            named,
            bytes,
            last_used,
        }
    }

    /// Its area.
    pub fn area(&self) -> CacheArea {
        self.area
    }

    /// The file or directory that is the entry (a rewritten wheel's `KEY` directory, an HTTP
    /// response's `.entry` file).
    pub fn path(&self) -> &Path {
        self.paths
            .get(self.named)
            .map_or(Path::new(""), PathBuf::as_path)
    }

    /// What is removed, in order.
    pub fn paths(&self) -> &[PathBuf] {
        &self.paths
    }

    /// The size of its files.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// When it was last used, as far as its files tell (see [`CacheArea`]).
    pub fn last_used(&self) -> SystemTime {
        self.last_used
    }

    /// Removes the entry's files and directories in order; one already gone is not an error
    /// (another process removed or replaced it).
    pub fn remove(&self) -> Result<(), CacheIoError> {
        for path in &self.paths {
            let removed = match std::fs::symlink_metadata(path) {
                Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(path),
                Ok(_) => std::fs::remove_file(path),
                Err(e) => Err(e),
            };
            match removed {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(CacheIoError::new(path, e))
                }
                _ => {}
            }
        }
        Ok(())
    }
}
