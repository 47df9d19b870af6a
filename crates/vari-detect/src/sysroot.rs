//! Where host files are read from: `/` on this machine, or a snapshot directory (`--sysroot`).
//!
//! Every provider reads `/proc`, `/sys`, `/dev` and `/opt/rocm` through a [`Sysroot`], so the same
//! code runs against this machine, a fixture tree in tests, or a snapshot taken on another node.

use std::io;
use std::path::{Path, PathBuf};

/// A root directory that absolute host paths are resolved under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sysroot {
    root: PathBuf,
}

impl Default for Sysroot {
    fn default() -> Self {
        Self::host()
    }
}

impl Sysroot {
    /// This machine (`/`).
    pub fn host() -> Self {
        Self {
            root: PathBuf::from("/"),
        }
    }

    /// A snapshot or fixture tree rooted at `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { root: dir.into() }
    }

    /// Whether this is the live machine (libraries may be loaded, commands run).
    pub fn is_host(&self) -> bool {
        self.root == Path::new("/")
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Maps an absolute host path such as `/proc/cpuinfo` under the root.
    pub fn path(&self, absolute: impl AsRef<Path>) -> PathBuf {
        let absolute = absolute.as_ref();
        let relative = absolute.strip_prefix("/").unwrap_or(absolute);
        self.root.join(relative)
    }

    /// Reads a host file as text.
    pub fn read_to_string(&self, absolute: impl AsRef<Path>) -> io::Result<String> {
        std::fs::read_to_string(self.path(absolute))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
