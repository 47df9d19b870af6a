//! Opening a directory a user names as a sysroot ([`Sysroot::open`]): its snapshot manifest is
//! read strictly ([`read_manifest`]: a recorded answer must belong to a provider that records
//! its answers) and a plain file tree gets a note saying what it holds. Both ask the registry of
//! providers, so they sit above the providers, while the [`Sysroot`] type they all read through
//! sits below them.

use std::path::{Path, PathBuf};

use crate::context::DetectContext;
use crate::manifest::{self, ManifestError, SnapshotManifest, MANIFEST_FILE};
use crate::provider::SnapshotFile;
use crate::registry;
use crate::sysroot::{Sysroot, SysrootError};

/// Reads the manifest of the snapshot at `root`; `Ok(None)` when the tree has none (a plain
/// sysroot or a hand-made fixture).
pub fn read_manifest(root: &Path) -> Result<Option<SnapshotManifest>, ManifestError> {
    manifest::read_manifest_with(root, &|namespace| {
        registry::provider(namespace).is_some_and(|p| p.records_answer())
    })
}

impl Sysroot {
    /// A directory a user gave: a snapshot (its manifest is read, and must be valid), or a plain
    /// file tree (with a [note](Sysroot::note) saying so, and saying when it holds none of the
    /// files detection reads).
    pub fn open(dir: impl Into<PathBuf>) -> Result<Self, SysrootError> {
        let root: PathBuf = dir.into();
        if !root.is_dir() {
            return Err(SysrootError::NotADirectory(root));
        }
        let manifest = read_manifest(&root)?;
        let plain = Self::new(root.clone());
        let note = match &manifest {
            Some(_) => None,
            None if has_any_detection_file(&plain) => Some(format!(
                "{} has no {MANIFEST_FILE}: reading it as a plain file tree (no recorded driver \
                 answers)",
                root.display()
            )),
            None => Some(format!(
                "{} has no {MANIFEST_FILE} and none of the files detection reads (such as \
                 /proc/cpuinfo): every hardware namespace will be absent",
                root.display()
            )),
        };
        Ok(Self::opened(root, manifest, note))
    }
}

/// Whether any file a provider reads (or its parent directory, for patterns) exists here.
fn has_any_detection_file(sysroot: &Sysroot) -> bool {
    let mut ctx = DetectContext::from_process_env(sysroot.clone());
    ctx.env.clear();
    registry::providers()
        .iter()
        .flat_map(|p| p.snapshot_files(&ctx))
        .any(|file| {
            let pattern = match &file {
                SnapshotFile::Copy(p) | SnapshotFile::Marker(p) => p,
            };
            // The fixed part of a pattern: up to the first component with a `*`.
            let fixed: Vec<&str> = pattern
                .split('/')
                .take_while(|c| !c.contains('*'))
                .collect();
            let fixed = fixed.join("/");
            !fixed.is_empty() && sysroot.path(&fixed).exists()
        })
}
