//! What the commands that read a lock share: the lock opened (`vari_install::sync::open_lock`:
//! bounded, checked, its directory found) for `mirror --lock` and `lock`; the extras and
//! groups asked for and the words for a lock that cannot be planned, for `sync`, `install -r`
//! and `export` (which plan through `vari_install::sync`).

use std::path::Path;

use vari_install::sync::{open_lock, LoadError, PlanFailure};
use vari_lock::LockFile;
use vari_select::locked::{GroupChoice, LockChoice, PlanError};
use vari_select::Target;

use crate::cli::LockChoiceArgs;
use crate::error::CliError;

/// Opens the lock at `path` (a file, or a directory holding `pylock.toml`): read within the
/// lock ceiling, checked, its directory resolved.
pub(crate) fn open(path: &Path) -> Result<LockFile, CliError> {
    open_lock(path).map_err(load_error)
}

/// The extras and groups the flags ask for.
pub(crate) fn lock_choice(args: &LockChoiceArgs) -> LockChoice<'_> {
    LockChoice {
        extras: &args.extras,
        all_extras: args.all_extras,
        groups: GroupChoice {
            groups: &args.groups,
            all_groups: args.all_groups,
            no_default_groups: args.no_default_groups,
            no_groups: &args.no_groups,
            only_groups: &args.only_groups,
        },
    }
}

/// A lock that cannot be planned, in one line; the plan's refusal worded by `plan_text`
/// (`explain::plan_error_text`).
pub(crate) fn plan_failure(
    failure: PlanFailure,
    target: &Target,
    plan_text: fn(&PlanError, &Target) -> String,
) -> CliError {
    match failure {
        PlanFailure::Load(e) => load_error(e),
        PlanFailure::Plan { path, error } => {
            CliError::Other(format!("{}: {}", path.display(), plan_text(&error, target)))
        }
        PlanFailure::File { path, error } => {
            CliError::invalid(path, Some(error.path), error.message)
        }
    }
}

fn load_error(error: LoadError) -> CliError {
    match error {
        LoadError::Invalid { path, error } => CliError::invalid(
            path,
            (!error.path.is_empty()).then_some(error.path),
            error.message,
        ),
        LoadError::NotUtf8(path) => CliError::invalid(path, None, "is not UTF-8"),
        LoadError::Input(e) => CliError::Other(e.to_string()),
        other @ (LoadError::TooLarge { .. } | LoadError::Directory(_)) => {
            CliError::Other(other.to_string())
        }
    }
}
