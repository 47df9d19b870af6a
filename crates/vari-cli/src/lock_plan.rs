//! What `vari sync`, `vari install -r pylock.toml`, `vari export`, `vari mirror --lock` and
//! `vari lock` share: the lock opened (bounded, checked, its directory found:
//! [`vari_lock::LockFile`]), and for the first three the plan for the target
//! (`vari_select::locked::plan`) and the files it installs. The commands word the plan's refusal
//! themselves (`explain::plan_error_text`).

use std::path::{Path, PathBuf};

use vari_core::ordering::SelectionOptions;
use vari_install::sync::{open_lock, planned_files, LoadError, LockedFile};
use vari_lock::{Lock, LockFile};
use vari_select::locked::{Plan, PlanError, PlanRequest};
use vari_select::Target;

use crate::cli::LockChoiceArgs;
use crate::error::CliError;

/// A lock with its plan for one target.
pub(crate) struct LockPlan {
    /// The lock file, as given.
    pub(crate) path: PathBuf,
    /// The lock.
    pub(crate) lock: Lock,
    /// What the target installs from it.
    pub(crate) plan: Plan,
    /// The planned files, in the plan's order.
    pub(crate) files: Vec<LockedFile>,
}

/// Why a lock cannot be planned: a file problem, or the plan's refusal.
pub(crate) enum Failure {
    /// The lock cannot be read, or an entry cannot be checked.
    Cli(CliError),
    /// The lock is not for the target, or a package has no file for it.
    Plan(PlanError),
}

impl From<CliError> for Failure {
    fn from(e: CliError) -> Self {
        Self::Cli(e)
    }
}

/// Reads the lock at `path` and plans it for `target`.
pub(crate) fn plan_lock(
    path: &Path,
    choice: &LockChoiceArgs,
    target: &Target,
    options: &SelectionOptions,
) -> Result<LockPlan, Failure> {
    let file = open(path)?;
    let lock = file.lock();
    let extras = match choice.all_extras {
        true => lock.extras.clone(),
        false => choice.extras.clone(),
    };
    let groups = vari_select::locked::chosen_groups(
        lock,
        &vari_select::locked::GroupChoice {
            groups: &choice.groups,
            all_groups: choice.all_groups,
            no_default_groups: choice.no_default_groups,
            no_groups: &choice.no_groups,
            only_groups: &choice.only_groups,
        },
    )
    .map_err(Failure::Plan)?;
    let plan = vari_select::locked::plan(
        lock,
        &PlanRequest {
            target,
            options,
            extras: &extras,
            groups: Some(&groups.groups),
            only_groups: groups.only,
            lock_dir: file.dir_url(),
        },
    )
    .map_err(Failure::Plan)?;
    let files = planned_files(&plan, file.dir()).map_err(|e| CliError::Invalid {
        path: path.to_owned(),
        key: Some(e.path),
        message: e.message,
    })?;
    Ok(LockPlan {
        path: path.to_owned(),
        lock: file.into_lock(),
        plan,
        files,
    })
}

/// Opens the lock at `path` (a file, or a directory holding `pylock.toml`): read within the
/// lock ceiling, checked, its directory resolved.
pub(crate) fn open(path: &Path) -> Result<LockFile, CliError> {
    open_lock(path).map_err(|e| load_error(path, e))
}

fn load_error(path: &Path, error: LoadError) -> CliError {
    match error {
        LoadError::Invalid { path, error } => CliError::Invalid {
            path,
            key: (!error.path.is_empty()).then_some(error.path),
            message: error.message,
        },
        LoadError::NotUtf8(_) => CliError::invalid(path, None, "is not UTF-8"),
        LoadError::Input(e) => CliError::Other(e.to_string()),
        other @ (LoadError::TooLarge { .. } | LoadError::Directory(_)) => {
            CliError::Other(other.to_string())
        }
    }
}
