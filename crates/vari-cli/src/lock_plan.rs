//! What `vari sync`, `vari install -r pylock.toml` and `vari export` share: the lock read
//! (bounded, checked), the plan for the target (`vari_lock::plan`), and the files it installs.
//! The commands word the plan's refusal themselves (`explain::plan_error_text`).

use std::path::{Path, PathBuf};

use vari_core::ordering::SelectionOptions;
use vari_install::sync::{load_lock, planned_files, LoadError, LockedFile};
use vari_lock::{Lock, Plan, PlanError, PlanRequest};
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
    let lock = load_lock(path).map_err(|e| load_error(path, e))?;
    let dir = lock_dir(path)?;
    let lock_dir = url::Url::from_directory_path(&dir)
        .map_err(|()| CliError::Other(format!("{}: not an absolute directory", dir.display())))?;
    let extras = match choice.all_extras {
        true => lock.extras.clone(),
        false => choice.extras.clone(),
    };
    let groups = vari_lock::chosen_groups(
        &lock,
        &vari_lock::GroupChoice {
            groups: &choice.groups,
            all_groups: choice.all_groups,
            no_default_groups: choice.no_default_groups,
            no_groups: &choice.no_groups,
            only_groups: &choice.only_groups,
        },
    )
    .map_err(Failure::Plan)?;
    let plan = vari_lock::plan(
        &lock,
        &PlanRequest {
            target,
            options,
            extras: &extras,
            groups: Some(&groups.groups),
            only_groups: groups.only,
            lock_dir: &lock_dir,
        },
    )
    .map_err(Failure::Plan)?;
    let files = planned_files(&lock, &plan, &dir).map_err(|e| CliError::from(e.in_file(path)))?;
    Ok(LockPlan {
        path: path.to_owned(),
        lock,
        plan,
        files,
    })
}

/// The absolute directory the lock's `path` entries are relative to.
fn lock_dir(path: &Path) -> Result<PathBuf, CliError> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::canonicalize(&parent).map_err(|e| CliError::io(&parent, e))
}

fn load_error(path: &Path, error: LoadError) -> CliError {
    match error {
        LoadError::Invalid { path, error } => error.in_file(path).into(),
        LoadError::NotUtf8(_) => CliError::invalid(path, None, "is not UTF-8"),
        LoadError::Input(e) => e.into(),
        too_large @ LoadError::TooLarge { .. } => too_large.into(),
    }
}
