//! `--check`: whether the lock on disk was made from the inputs as they are now, compared by
//! the inputs hash it records (no network), and when not, the first of its inputs that changed.

use std::path::PathBuf;

use vari_lock::{Lock, LockTarget};

use crate::inputs::Requirements;
use crate::locking::LockingTarget;

/// Whether the lock is up to date.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Staleness {
    /// Its inputs hash is the inputs'.
    UpToDate(PathBuf),
    /// There is no lock.
    Missing(PathBuf),
    /// It was made from other inputs.
    OutOfDate {
        /// The lock file.
        path: PathBuf,
        /// What changed, as a front-end says it after "is out of date: ".
        what: String,
    },
}

impl Staleness {
    /// Whether the lock is up to date.
    pub fn is_up_to_date(&self) -> bool {
        matches!(self, Staleness::UpToDate(_))
    }
}

impl std::fmt::Display for Staleness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Staleness::UpToDate(path) => write!(f, "{} is up to date", path.display()),
            Staleness::Missing(path) => write!(f, "{} is missing: run `vari lock`", path.display()),
            Staleness::OutOfDate { path, what } => write!(
                f,
                "{} is out of date: {what}; run `vari lock`",
                path.display()
            ),
        }
    }
}

/// Compares the lock at `path` (`existing`, none when missing) with the inputs' `hash`; when
/// they differ, says what changed: the requirements, the targets, or the other inputs.
pub(crate) fn staleness(
    path: PathBuf,
    existing: Option<&Lock>,
    hash: &str,
    requirements: &Requirements,
    targets: &[LockingTarget],
) -> Staleness {
    let Some(lock) = existing else {
        return Staleness::Missing(path);
    };
    let info = lock.vari.clone().unwrap_or_default();
    if info.inputs_hash.as_deref() == Some(hash) {
        return Staleness::UpToDate(path);
    }
    let mut current: Vec<LockTarget> = targets.iter().map(|t| t.lock.clone()).collect();
    let mut locked = info.targets.clone();
    current.sort_by(|a, b| a.name.cmp(&b.name));
    locked.sort_by(|a, b| a.name.cmp(&b.name));
    let what = if info.inputs_hash.is_none() {
        "it records no inputs hash (not written by vari lock)".to_owned()
    } else if info.requirements != requirements.base {
        format!(
            "the requirements changed (locked: {}; now: {})",
            info.requirements.join(", "),
            requirements.base.join(", ")
        )
    } else if locked != current {
        "the targets changed (their profiles, Python versions or platforms)".to_owned()
    } else {
        "its inputs changed (extras, dependency groups, requires-python, index options or the \
         build-family catalog)"
            .to_owned()
    };
    Staleness::OutOfDate { path, what }
}
