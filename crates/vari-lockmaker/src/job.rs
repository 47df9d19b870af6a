//! What [`make_lock`](crate::make_lock) is asked ([`LockJob`]) and what it answers
//! ([`Made`]): everything a front-end gathers from its command line, in one value, so that the
//! walk from requirements to the written lock stays inside the lock maker.

use std::path::{Path, PathBuf};

use vari_client::ClientSettings;
use vari_core::ordering::SelectionOptions;
use vari_lock::{Lock, LockTarget};

use crate::locking::{LockingProgress, LockingTarget};
use crate::staleness::Staleness;

/// One lock to make (or, with [`Output::Check`], to check).
#[derive(Debug)]
pub struct LockJob<'a> {
    /// What the lock is made from.
    pub requested: Requested,
    /// Where the lock goes, and whether it is made or only checked.
    pub output: Output,
    /// Makes the targets from the front-end's machine classes.
    pub targets: &'a dyn MakeTargets,
    /// The indexes and find-links, as the command line and the configuration give them.
    pub sources: Sources,
    /// The variant selection options (as `vari select` takes them).
    pub selection: SelectionOptions,
    /// Allow pre-releases (`--pre`; a lock made again that allowed them allows them again).
    pub pre: bool,
    /// Which of the existing lock's pins are not preferred.
    pub upgrade: Upgrade,
    /// Told how far resolving and listing have come.
    pub progress: &'a dyn LockingProgress,
    /// The build-family catalog (`None`: turned off). It applies when a requirement names a
    /// family or a build's distribution: each target then locks the builds the catalog
    /// chooses for it, and the inputs hash covers the catalog.
    pub families: Option<std::sync::Arc<vari_family::Catalog>>,
}

/// What a lock is made from.
#[derive(Debug, Clone)]
pub enum Requested {
    /// Requirements, requirements files (`-r`, nested ones followed) and a project directory
    /// (its `pyproject.toml`: dependencies, extras, PEP 735 groups, uv's `default-groups`).
    Given {
        /// Requirements as given.
        requirements: Vec<String>,
        /// Requirements files.
        files: Vec<PathBuf>,
        /// The project's directory.
        project: Option<PathBuf>,
    },
    /// Nothing given: the lock is made again. The project is `project` when given (the
    /// current directory when it has a `pyproject.toml`), else the existing lock's recorded
    /// requirements are locked again; the lock's recorded targets and indexes stand unless
    /// the command line gives its own.
    Again {
        /// The project's directory.
        project: Option<PathBuf>,
    },
}

impl Requested {
    /// The requirements, files and project of a command line: [`Requested::Again`] when it
    /// gives none of them, with the current directory as the project when it has a
    /// `pyproject.toml`.
    pub fn from_command_line(
        requirements: &[String],
        files: &[PathBuf],
        project: Option<&Path>,
    ) -> Self {
        if requirements.is_empty() && files.is_empty() && project.is_none() {
            let project = Path::new("pyproject.toml")
                .is_file()
                .then(|| PathBuf::from("."));
            return Self::Again { project };
        }
        Self::Given {
            requirements: requirements.to_vec(),
            files: files.to_vec(),
            project: project.map(Path::to_path_buf),
        }
    }
}

/// Where the lock goes.
#[derive(Debug, Clone)]
pub enum Output {
    /// The lock file: read first when it exists (its pins are preferred, it is made again from
    /// what it records), then written.
    File(PathBuf),
    /// `--check`: the lock file's inputs hash compared with the inputs' (no network).
    Check(PathBuf),
    /// Kept in memory only (a mirror's): local files are named relative to `dir`, which is
    /// absolute (the lock that may be written there later, or the file system's root).
    Memory {
        /// The lock's directory.
        dir: PathBuf,
    },
}

impl Output {
    /// The lock file, when there is one.
    fn file(&self) -> Option<&Path> {
        match self {
            Output::File(path) | Output::Check(path) => Some(path),
            Output::Memory { .. } => None,
        }
    }

    /// The existing lock's path (read when it exists).
    pub(crate) fn existing(&self) -> Option<&Path> {
        self.file()
    }

    /// The lock's directory: its `path` entries, profiles and find-links are named relative to
    /// it.
    pub(crate) fn dir(&self) -> PathBuf {
        match self {
            Output::File(path) | Output::Check(path) => vari_fs::safe_path::parent_dir(path),
            Output::Memory { dir } => dir.clone(),
        }
    }
}

/// The sources to resolve from, and which the command line named itself (a lock made again
/// keeps its recorded indexes and find-links otherwise).
#[derive(Debug, Clone)]
pub struct Sources {
    /// Indexes, find-links, strategy, cache: configuration and command line merged.
    pub settings: ClientSettings,
    /// The command line names indexes (`--index-url`, `--extra-index-url`).
    pub indexes_given: bool,
    /// The command line names find-links.
    pub find_links_given: bool,
}

/// Which of the existing lock's pins are dropped from the preferences.
#[derive(Debug, Clone, Default)]
pub struct Upgrade {
    /// `--upgrade`: none is preferred.
    pub all: bool,
    /// `--upgrade-package`: these are not preferred.
    pub packages: Vec<String>,
}

/// A failure of the front-end's target making, kept as raised.
pub type TargetsError = Box<dyn std::error::Error + Send + Sync>;

/// How the targets of a lock are made: the front-end's, which knows its machine classes and
/// how a profile becomes a target. The lock maker decides which of the two is asked.
pub trait MakeTargets {
    /// Whether the command line names targets, Python versions or platforms: when it names
    /// none, a lock made again keeps the targets it records.
    fn given(&self) -> bool;

    /// The command line's targets (every machine class with every Python version and
    /// platform), profiles named relative to `lock_dir`.
    fn make(&self, lock_dir: &Path) -> Result<Vec<LockingTarget>, TargetsError>;

    /// The targets a lock at `lock_path` records, each with its own profile (relative to the
    /// lock's directory), Python version and platform.
    fn recorded(
        &self,
        recorded: &[LockTarget],
        lock_path: &Path,
    ) -> Result<Vec<LockingTarget>, TargetsError>;
}

impl std::fmt::Debug for dyn MakeTargets + '_ {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MakeTargets")
    }
}

/// What [`make_lock`](crate::make_lock) did.
#[derive(Debug)]
pub enum Made {
    /// The lock, made (and with [`Output::File`], written).
    Lock {
        /// The lock (boxed: it is much larger than a staleness).
        lock: Box<Lock>,
        /// The targets it was made for.
        targets: Vec<LockingTarget>,
    },
    /// [`Output::Check`]: whether the lock is up to date.
    Checked(Staleness),
}
