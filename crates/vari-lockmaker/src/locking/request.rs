//! What [`resolve_releases`](super::resolve_releases) is asked, and why it fails: shared by
//! both ways of resolving (per target, and once for the targets' union).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use vari_client::ClientSettings;
use vari_core::ordering::SelectionOptions;
use vari_lock::LockTarget;

use crate::compile::CompileError;
use crate::lock_files::{LockFilesError, LockFilesTarget};

/// One machine class to lock for.
#[derive(Debug, Clone)]
pub struct LockingTarget {
    /// As the lock records it.
    pub lock: LockTarget,
    /// As resolution and the file listing read it.
    pub files: LockFilesTarget,
}

impl LockingTarget {
    /// The platform uv resolves for (`--python-platform`): the one the lock records, else the
    /// one the target's profile decided (`vari_select::Target` names it), else none (uv's own
    /// machine).
    pub fn uv_platform(&self) -> Option<String> {
        self.lock.python_platform.clone().or_else(|| {
            match &self.files.target.python.origin.platform {
                vari_python::PlatformOrigin::Named(name) => Some(name.to_string()),
                _ => None,
            }
        })
    }
}

/// What to resolve, for which targets, from where.
#[derive(Debug, Clone, Copy)]
pub struct LockingRequest<'a> {
    /// The uv that resolves ([`find_uv`](crate::steps::find_uv)).
    pub uv: &'a Path,
    /// The indexes and find-links.
    pub sources: &'a ClientSettings,
    /// The variant selection options (as `vari select` takes them).
    pub selection: &'a SelectionOptions,
    /// Allow pre-releases.
    pub pre: bool,
    /// Every requirement to resolve (every scope's).
    pub requirements: &'a [String],
    /// The targets (at least one).
    pub targets: &'a [LockingTarget],
    /// Pins to keep when they still fit (an existing lock's): name to version.
    pub preferences: &'a BTreeMap<String, String>,
    /// The directory of the lock being made: files from a local find-links directory are
    /// named by a `path` relative to it (PEP 751), and must lie under it.
    pub lock_dir: &'a Path,
    /// Told how far resolving and listing have come ([`NoProgress`] to be told nothing).
    pub progress: &'a dyn LockingProgress,
    /// The build-family catalog the targets' proxies choose through (`None`: no family).
    /// With one, every target is resolved through its own proxy: a proxy serving a union of
    /// targets cannot choose one build per target.
    pub families: Option<&'a std::sync::Arc<vari_family::Catalog>>,
}

/// What [`resolve_releases`](super::resolve_releases) says as it goes, for a progress display:
/// how many resolutions (one per target, or one per group of alike targets resolved together)
/// and how many releases' files are listed, and each one done. Resolutions and listings run
/// several at once, so what is told is how many are done, not which runs now. A phase can be
/// told again (the targets resolved one by one after their union did not hold).
pub trait LockingProgress: Sync {
    /// `total` resolutions start.
    fn resolving(&self, total: usize) {
        let _ = total;
    }

    /// One resolution is done: the target's name, or the names of a group.
    fn resolved(&self, name: &str) {
        let _ = name;
    }

    /// Listing the files of `total` pinned releases starts.
    fn listing(&self, total: usize) {
        let _ = total;
    }

    /// The files of the release of `name` are listed (read from the index, hashed where the
    /// index gives no hash).
    fn listed(&self, name: &str) {
        let _ = name;
    }
}

impl std::fmt::Debug for dyn LockingProgress + '_ {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LockingProgress")
    }
}

/// Progress told to nobody.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl LockingProgress for NoProgress {}

/// Why requirements could not be resolved into releases.
#[derive(Debug, thiserror::Error)]
pub enum LockingError {
    /// No uv to resolve with.
    #[error("resolving needs uv: {0}")]
    NoUv(String),
    /// The scratch directory or a file in it.
    #[error("cannot write {}: {source}", path.display())]
    Scratch {
        /// The directory or file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// One target's resolution failed.
    #[error("cannot resolve for target {target}: {source}")]
    Resolve {
        /// The target's name.
        target: String,
        /// uv's or the proxy's error.
        source: Box<CompileError>,
    },
    /// Targets pin different versions of a package even after preferring each other's pins.
    #[error(
        "targets disagree on {name}: {versions}; pin it in the requirements, or lock these \
         targets separately"
    )]
    Disagree {
        /// The package.
        name: String,
        /// Each version with the targets that pinned it: `2.0 (a100), 1.0 (cpu)`.
        versions: String,
    },
    /// What a kept variant's dependencies resolve to differs from the targets' pin.
    #[error(
        "targets disagree on {name}: {pinned} ({targets}), {wanted} (the dependencies of its \
         variants)"
    )]
    VariantDependencies {
        /// The package.
        name: String,
        /// The targets' version.
        pinned: String,
        /// The targets that pinned it.
        targets: String,
        /// The version the variants' dependencies resolved to.
        wanted: String,
    },
    /// A target's resolution succeeded but pins nothing for a requirement that applies to it.
    #[error(
        "cannot resolve for target {target}: uv reported success but pinned nothing for \
         `{requirement}`; no lock is written"
    )]
    Unpinned {
        /// The target's name.
        target: String,
        /// The requirement left out.
        requirement: String,
    },
    /// A requirement that cannot be given to uv as one line.
    #[error("requirement {requirement}: {message}")]
    Requirement {
        /// The requirement, escaped.
        requirement: String,
        /// What is wrong.
        message: String,
    },
    /// Listing the pinned releases' files.
    #[error(transparent)]
    Files(#[from] LockFilesError),
    /// A family build's own index or links page cannot be asked.
    #[error("{url}: {message}")]
    FamilySource {
        /// The family's index or links page.
        url: String,
        /// Why.
        message: String,
    },
    /// A requested family has no build that fits a target.
    #[error("cannot lock {family} for target {target}: {reasons}")]
    NoBuild {
        /// The family.
        family: String,
        /// The target.
        target: String,
        /// Each build with why it does not fit (`no build of cupy fits: cu13 (cupy-cuda13x):
        /// …`).
        reasons: String,
    },
    /// The family choices could not be made (an index of the family failed).
    #[error("target {target}: {message}")]
    Families {
        /// The target.
        target: String,
        /// What failed.
        message: String,
    },
    /// A release's variant requirements could not be read.
    #[error(transparent)]
    VariantRequirements(#[from] vari_lock::BuildError),
    /// A local file (from a find-links directory) that the lock cannot name by a path under
    /// its own directory.
    #[error(
        "{url}: a local file outside the lock's directory {}; a lock names local files by a \
         path under its own directory",
        dir.display()
    )]
    OutsideLock {
        /// The file's `file:` URL.
        url: String,
        /// The lock's directory.
        dir: PathBuf,
    },
    /// The lock's directory cannot be read.
    #[error("{}: {source}", path.display())]
    LockDir {
        /// The directory.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
}
