//! Where host files are read from: `/` on this machine, or a directory (`--sysroot`): a snapshot
//! taken by [`crate::snapshot`], or any file tree laid out like `/`.
//!
//! Every provider reads `/proc`, `/sys`, `/dev` and `/opt/rocm` through a [`Sysroot`], so the same
//! code runs against this machine, a fixture tree in tests, or a snapshot taken on another node.
//! A directory a user names is opened with [`Sysroot::open`], which reads its snapshot manifest
//! strictly and says when it has none.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::manifest::{ManifestError, SnapshotManifest};

/// A root directory that absolute host paths are resolved under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sysroot {
    root: PathBuf,
    manifest: Option<Arc<SnapshotManifest>>,
    note: Option<String>,
}

impl Default for Sysroot {
    fn default() -> Self {
        Self::host()
    }
}

/// Why a directory cannot be read as a sysroot.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SysrootError {
    /// The path is not a directory.
    #[error("{}: not a directory", .0.display())]
    NotADirectory(PathBuf),
    /// The directory is a snapshot whose manifest cannot be used.
    #[error(transparent)]
    Manifest(#[from] ManifestError),
}

impl Sysroot {
    /// This machine (`/`).
    pub fn host() -> Self {
        Self {
            root: PathBuf::from("/"),
            manifest: None,
            note: None,
        }
    }

    /// A file tree rooted at `dir`, read as it is: its snapshot manifest, if any, is not read
    /// (fixtures; a directory a user gives goes through [`Sysroot::open`]).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            root: dir.into(),
            manifest: None,
            note: None,
        }
    }

    /// A directory read as a sysroot, with its snapshot manifest and what a user should know
    /// about it (how [`Sysroot::open`] ends).
    pub(crate) fn opened(
        root: PathBuf,
        manifest: Option<SnapshotManifest>,
        note: Option<String>,
    ) -> Self {
        Self {
            root,
            manifest: manifest.map(Arc::new),
            note,
        }
    }

    /// Whether this is the live machine (libraries may be loaded, commands run).
    pub fn is_host(&self) -> bool {
        self.root == Path::new("/")
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The snapshot manifest, when [`Sysroot::open`] found one.
    pub fn manifest(&self) -> Option<&SnapshotManifest> {
        self.manifest.as_deref()
    }

    /// What a user should know about the directory (no manifest, nothing to read).
    pub fn note(&self) -> Option<&str> {
        self.note.as_deref()
    }

    /// Maps an absolute host path such as `/proc/cpuinfo` under the root.
    pub fn path(&self, absolute: impl AsRef<Path>) -> PathBuf {
        let absolute = absolute.as_ref();
        let relative = absolute.strip_prefix("/").unwrap_or(absolute);
        self.root.join(relative)
    }

    /// Reads a host file as text.
    /// Like every system file vari reads, it must be a regular file (a FIFO or device planted
    /// in a `--sysroot` is an error, never a hang) of at most
    /// [`vari_fs::InputKind::System`]'s ceiling.
    pub fn read_to_string(&self, absolute: impl AsRef<Path>) -> io::Result<String> {
        crate::system_file::read_system_file(&self.path(absolute))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::MANIFEST_FILE;

    #[test]
    fn maps_paths_under_the_root() {
        let s = Sysroot::new("/tmp/snap");
        assert_eq!(
            s.path("/proc/cpuinfo"),
            PathBuf::from("/tmp/snap/proc/cpuinfo")
        );
        assert!(!s.is_host());
        assert_eq!(
            Sysroot::host().path("/proc/cpuinfo"),
            PathBuf::from("/proc/cpuinfo")
        );
        assert!(Sysroot::host().is_host());
    }

    #[test]
    fn opening_says_what_the_directory_is() {
        let dir = tempfile::tempdir().unwrap();
        let empty = Sysroot::open(dir.path()).unwrap();
        assert!(
            empty.note().unwrap().contains("none of the files"),
            "{:?}",
            empty.note()
        );
        std::fs::create_dir_all(dir.path().join("proc")).unwrap();
        std::fs::write(dir.path().join("proc/cpuinfo"), "processor : 0\n").unwrap();
        let plain = Sysroot::open(dir.path()).unwrap();
        assert!(
            plain.note().unwrap().contains("plain file tree"),
            "{:?}",
            plain.note()
        );
        assert!(plain.manifest().is_none());
        std::fs::write(
            dir.path().join(MANIFEST_FILE),
            "{\"schema\": \"vari-snapshot/9\"}",
        )
        .unwrap();
        let err = Sysroot::open(dir.path()).unwrap_err();
        assert!(
            matches!(&err, SysrootError::Manifest(e) if e.key == "schema"),
            "{err}"
        );
        assert!(matches!(
            Sysroot::open(dir.path().join("proc/cpuinfo")),
            Err(SysrootError::NotADirectory(_))
        ));
    }
}
