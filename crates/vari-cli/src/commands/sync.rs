//! `vari sync` and `vari install -r pylock.toml`: a lock installed on this machine (or a
//! target), one line per package with its variant and why. The sync itself (the early
//! installer, planning by `vari select`'s rules, the survey, fetching and checking every file
//! before anything is installed, the installer) is `vari_install::sync::sync`; this module
//! maps the flags and words the result. `sync` removes what the lock does not list
//! (`--inexact` keeps it); `install -r` never removes anything.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use vari_install::sync::{RequestError, SyncFailure, SyncJob, SyncRequest};
use vari_install::InstallerChoice;

use crate::cli::{InstallArgs, LockChoiceArgs, SyncArgs};
use crate::error::CliError;
use crate::explain::{plan_error_text, synced_report};
use crate::lock_plan::{lock_choice, plan_failure};
use crate::settings::{environment_to_change, name_environment, Selecting};
use crate::{output, progress};

/// `vari sync`.
pub(super) fn run(args: &SyncArgs) -> Result<ExitCode, CliError> {
    sync(&Job {
        lock: &args.lock,
        choice: &args.lock_choice,
        wheelhouses: args.files.wheelhouses.clone(),
        offline: args.files.offline,
        installer: args.installer.as_ref(),
        exact: !args.inexact,
        dry_run: args.dry_run,
        json: args.json,
        system: args.system,
        selecting: &Selecting::resolve(&args.target, &args.selection)?,
    })
}

/// `vari install -r pylock.toml`: `sync` without removing anything; `--find-links`
/// directories are wheelhouses.
pub(super) fn install_lock(args: &InstallArgs) -> Result<ExitCode, CliError> {
    let lock = args.lock.as_ref();
    let lock = lock.ok_or_else(|| CliError::Other("no lock file given".to_owned()))?;
    let wheelhouses = args
        .index
        .find_links
        .iter()
        .filter_map(|links| match links {
            vari_client::FindLinks::Directory(dir) => Some(dir.clone()),
            vari_client::FindLinks::Page { .. } => None,
        });
    sync(&Job {
        lock,
        choice: &args.lock_choice,
        wheelhouses: wheelhouses.collect(),
        offline: args.index.offline,
        installer: args.installer.as_ref(),
        exact: false,
        dry_run: args.dry_run,
        json: args.json,
        system: args.system,
        selecting: &Selecting::resolve(&args.target, &args.selection)?,
    })
}

/// What one sync is asked to do.
struct Job<'a> {
    lock: &'a Path,
    choice: &'a LockChoiceArgs,
    wheelhouses: Vec<PathBuf>,
    offline: bool,
    installer: Option<&'a InstallerChoice>,
    exact: bool,
    dry_run: bool,
    json: bool,
    /// `--system`: an interpreter that is not a virtual environment may be changed.
    system: bool,
    selecting: &'a Selecting,
}

fn sync(job: &Job<'_>) -> Result<ExitCode, CliError> {
    let target = &job.selecting.target;
    // Refused (a dry run too: it lists what would be removed from an interpreter nobody
    // chose) unless the rule allows changing it; named just before it changes.
    let environment = environment_to_change(target, job.system)?;
    // The environment and its installer: their errors come after the lock's.
    let (exact, offline, dry_run) = (job.exact, job.offline, job.dry_run);
    let request = SyncRequest::for_target(&target.python, job.installer, exact, offline, dry_run)
        .map_err(|e| match e {
            RequestError::NoInterpreter => CliError::Other(
                "no Python environment to install into: the target is described \
                 (--python-version, --python-platform) without an interpreter; give --python \
                 PATH, or use vari export"
                    .to_owned(),
            ),
            other => CliError::Other(other.to_string()),
        });
    let sync_job = SyncJob {
        lock: job.lock,
        choice: lock_choice(job.choice),
        target,
        options: &job.selecting.selection,
        fetch: &job.selecting.lock_files(job.wheelhouses.clone(), offline),
        dry_run,
    };
    let events = progress::LockFiles::new(environment.as_ref());
    let synced = vari_install::sync::sync(&sync_job, request, &events).map_err(|e| match e {
        SyncFailure::Plan(failure) => plan_failure(failure, target, plan_error_text),
        SyncFailure::Environment(e) => e,
        SyncFailure::Sync(e) => CliError::Other(e.to_string()),
    })?;
    if dry_run {
        name_environment(environment.as_ref());
    }
    let (text, document) = synced_report(&synced, target, dry_run);
    match job.json {
        true => output::print_data(&output::json_text(&document))?,
        false => output::print(&text)?,
    }
    Ok(ExitCode::SUCCESS)
}
