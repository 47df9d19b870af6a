//! `vari sync` and `vari install -r pylock.toml`: a lock installed on this machine (or a
//! target), one line per package with its variant and why. Planning is `vari_lock::plan`'s
//! (the rules of `vari select`), fetching, checking and running the installer
//! `vari_install::sync`'s; this module maps the flags and words the result.
//!
//! Every file is fetched and checked against the lock before anything is installed: a
//! mismatch is one `error:` line naming the file and where it came from, and the environment
//! is left as it was. A file already in vari's store (`{cache}/locked`, the `locked` area of
//! `vari cache`) is hashed again unless the record written when vari last hashed it vouches
//! that it has not changed since (`vari_install::sync` says what that catches). `sync` removes what the lock does not list (`--inexact` keeps it);
//! `install -r` never removes anything.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::{json, Value};
use vari_install::sync::{
    fetch_locked_reporting, EarlyInstall, FetchOptions, Store, SyncOutcome, SyncRequest,
};
use vari_install::{Installer, InstallerChoice};

use crate::cli::{InstallArgs, LockChoiceArgs, SyncArgs};
use crate::error::CliError;
use crate::explain::{choice_line, plan_error_text, planned_text};
use crate::lock_plan::{plan_lock, Failure, LockPlan};
use crate::output;
use crate::settings::{environment_to_change, name_environment, runtime, Selecting};

/// `vari sync`.
pub(super) fn run(args: &SyncArgs) -> Result<ExitCode, CliError> {
    let selecting = Selecting::resolve(&args.target, &args.selection)?;
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
        selecting: &selecting,
    })
}

/// `vari install -r pylock.toml`: `sync` without removing anything; `--find-links`
/// directories are wheelhouses.
pub(super) fn install_lock(args: &InstallArgs) -> Result<ExitCode, CliError> {
    let Some(lock) = &args.lock else {
        return Err(CliError::Other("no lock file given".to_owned()));
    };
    let selecting = Selecting::resolve(&args.target, &args.selection)?;
    let wheelhouses = args
        .index
        .find_links
        .iter()
        .filter_map(|links| match links {
            vari_client::FindLinks::Directory(dir) => Some(dir.clone()),
            vari_client::FindLinks::Page { .. } => None,
        })
        .collect();
    sync(&Job {
        lock,
        choice: &args.lock_choice,
        wheelhouses,
        offline: args.index.offline,
        installer: args.installer.as_ref(),
        exact: false,
        dry_run: args.dry_run,
        json: args.json,
        system: args.system,
        selecting: &selecting,
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
    // The environment and its installer, when they can be found: uv starts now, while the
    // lock is read, planned and its files checked (`EarlyInstall`: it gets them on its input,
    // and is stopped, having installed nothing, if this returns early). Their errors are
    // reported after the lock's, as before.
    let prepared = sync_request(job).ok();
    let early = match (job.dry_run, &prepared) {
        (false, Some(request)) => EarlyInstall::start(request),
        _ => None,
    };
    let planned = match plan_lock(job.lock, job.choice, target, &job.selecting.selection) {
        Ok(planned) => planned,
        Err(Failure::Cli(e)) => return Err(e),
        Err(Failure::Plan(e)) => {
            return Err(CliError::Other(format!(
                "{}: {}",
                job.lock.display(),
                plan_error_text(&e, target)
            )))
        }
    };
    let request = match prepared {
        Some(request) => request,
        None => sync_request(job)?,
    };
    // One writer per environment: from the survey of what is installed to the end of the
    // installer, another sync of the same environment waits (a dry run changes nothing).
    let _environment = match job.dry_run {
        true => None,
        false => request.lock_environment(|path| {
            eprintln!("{}", vari_install::sync::waiting_note(path));
        })?,
    };
    let outcome = vari_install::sync::survey(&request, &planned.files);
    if job.dry_run {
        name_environment(environment.as_ref());
    } else {
        let store = Store::open()?;
        let options = FetchOptions {
            client: job
                .selecting
                .config
                .client_settings(vari_client::ClientSettings {
                    indexes: Vec::new(),
                    ..vari_client::ClientSettings::default()
                }),
            wheelhouses: job.wheelhouses.clone(),
            offline: job.offline,
            store: store.path().to_path_buf(),
        };
        // Only what will be installed is fetched; every file is checked before any is installed.
        let wanted: Vec<_> = outcome
            .installed
            .iter()
            .map(|&i| planned.files[i].clone())
            .collect();
        // On a terminal, the bytes fetched and checked of the lock's sizes (the installer's
        // own output follows).
        let bar = crate::progress::Bytes::for_files(
            format!("fetching {}", crate::table::count(wanted.len(), "file")),
            wanted.iter().map(|f| f.size),
        );
        let staged =
            runtime()?.block_on(fetch_locked_reporting(&wanted, &options, &|n| bar.inc(n)));
        bar.finish();
        let staged = staged?;
        // Every file is here and checked: what follows changes the environment.
        name_environment(environment.as_ref());
        vari_install::sync::apply(&request, &planned.files, &staged, &outcome, early)?;
    }
    report(job, &planned, &outcome)?;
    Ok(ExitCode::SUCCESS)
}

/// Where to install and with what: the target's interpreter and the installer for it.
fn sync_request(job: &Job<'_>) -> Result<SyncRequest, CliError> {
    let target = &job.selecting.target;
    let python = target
        .python
        .interpreter
        .as_ref()
        .map(|i| i.executable.clone())
        .ok_or_else(|| {
            CliError::Other(
                "no Python environment to install into: the target is described \
                 (--python-version, --python-platform) without an interpreter; give --python \
                 PATH, or use vari export"
                    .to_owned(),
            )
        })?;
    let installer = Installer::find(
        job.installer,
        std::env::var_os("PATH").as_deref(),
        &python,
        match job.dry_run {
            true => &[],
            false => &target.python.site_packages,
        },
    )?;
    Ok(SyncRequest {
        installer,
        python,
        site_packages: target.python.site_packages.clone(),
        prefix: target.python.prefix().map(Path::to_path_buf),
        exact: job.exact,
        offline: job.offline,
    })
}

/// One line per package (and per removal), or the JSON document.
fn report(job: &Job<'_>, planned: &LockPlan, outcome: &SyncOutcome) -> Result<(), CliError> {
    let target = &job.selecting.target;
    let (verb_new, verb_old, verb_removed) = match job.dry_run {
        true => ("would install", "unchanged", "would remove"),
        false => ("installed", "unchanged", "removed"),
    };
    let mut text = String::new();
    let mut packages: Vec<Value> = Vec::new();
    for (index, entry) in planned.plan.install.iter().enumerate() {
        let action = match outcome.installed.contains(&index) {
            true => verb_new,
            false => verb_old,
        };
        let why = planned_text(entry, target);
        let version = entry
            .version
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default();
        let label = entry.label.as_ref().map(|l| l.as_str());
        let properties = entry.label.as_ref().and_then(|label| {
            planned.lock.packages[entry.package]
                .variants_json
                .as_ref()?
                .variants
                .get(label)
        });
        text.push_str(&choice_line(
            action,
            &entry.name,
            &version,
            label,
            properties,
            &why,
        ));
        packages.push(json!({
            "name": entry.name,
            "version": version,
            "label": label,
            "filename": planned.files[index].filename,
            "reason": why,
            "action": action,
        }));
    }
    for (name, version) in &outcome.removed {
        text.push_str(&format!(
            "{verb_removed} {name} {version}: the lock does not list it\n"
        ));
    }
    match job.json {
        true => output::print_data(&output::json_text(&json!({
            "lock": planned.path.display().to_string(),
            "packages": packages,
            "removed": outcome.removed.iter().map(|(name, version)| json!({
                "name": name, "version": version,
            })).collect::<Vec<_>>(),
        }))),
        false => output::print(&text),
    }
}
