//! `vari mirror`: a static index with exactly the files a fleet's machine classes install from
//! a lock (`vari_publish::mirror`), each class's files chosen by the lock planner
//! (`vari_lock::plan`, the one `vari sync` installs by), so a machine installing from the mirror
//! gets what it would have got from the upstream.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use vari_lock::{Lock, PlanRequest};
use vari_publish::mirror::{MirrorError, MirrorOptions, MirrorPlan, MirrorProgress, TargetFiles};
use vari_publish::Destination;

use crate::cli::{MirrorArgs, TargetArgs};
use crate::error::{error_line, CliError};
use crate::output;
use crate::settings::{
    client_settings, configured_target_settings, load_config, resolve_target, selection_options,
};

/// Mirrors the lock for the targets into the destination and prints what it saved.
pub(super) fn run(args: &MirrorArgs) -> Result<ExitCode, CliError> {
    let lock = read_lock(&args.lock)?;
    let config = load_config()?;
    let selection = config.selection(selection_options(&args.selection));
    let lock_dir = lock_dir_url(&args.lock)?;
    let mut targets = Vec::new();
    for (name, profile) in named_targets(args, &lock)? {
        let target_args = TargetArgs {
            profile: Some(profile),
            sysroot: None,
            python: None,
            python_version: args.python_version.clone(),
            python_platform: args.python_platform.clone(),
        };
        let target = resolve_target(&configured_target_settings(&target_args, Some(&config))?)?;
        // Everything the lock can install on this target: every extra and group it offers,
        // so that any install from the lock works from the mirror.
        let plan = vari_lock::plan(
            &lock,
            &PlanRequest {
                target: &target,
                options: &selection,
                extras: &lock.extras,
                groups: Some(&lock.dependency_groups),
                lock_dir: &lock_dir,
            },
        )
        .map_err(|e| CliError::Other(format!("{}: target `{name}`: {e}", args.lock.display())))?;
        let files = plan
            .install
            .iter()
            .filter_map(|planned| {
                let filename = planned.artifact(&lock)?.file_name()?;
                Some((planned.package, filename))
            })
            .collect();
        targets.push(TargetFiles { name, files });
    }
    let plan = MirrorPlan::new(&lock, &targets)
        .map_err(|e| CliError::Other(format!("{}: {e}", args.lock.display())))?;
    let client = vari_client::IndexClient::new(client_settings(&args.index, &config)?)
        .map(std::sync::Arc::new)
        .map_err(|e| CliError::Other(e.to_string()))?;
    let runtime = vari_publish::mirror::download_runtime()
        .map_err(|e| CliError::Other(format!("cannot start the network runtime: {e}")))?;
    let bar = Bar::new();
    let (destination, store) = publish_destination(args)?;
    let options = MirrorOptions {
        destination,
        store,
        keep: args.keep,
        progress: &bar,
    };
    let report = match vari_publish::mirror::mirror(&client, &runtime, &plan, &options) {
        Ok(report) => report,
        Err(MirrorError::Files(failures)) => {
            for failure in &failures {
                error_line(&failure.to_string());
            }
            error_line(&format!(
                "{}: nothing was published; the files that arrived are kept for the next run",
                options.destination
            ));
            return Ok(ExitCode::FAILURE);
        }
        Err(e) => return Err(CliError::Other(e.to_string())),
    };
    for warning in &report.warnings {
        output::warn(warning);
    }
    output::print(&format!("{}\n  {}\n", report.summary(), report.activity()))?;
    Ok(ExitCode::SUCCESS)
}

/// Where the site goes (`-o DIR|URL`) and where its store is kept (`--store`, else
/// [`vari_publish::mirror::default_store`]).
fn publish_destination(args: &MirrorArgs) -> Result<(Destination, PathBuf), CliError> {
    let destination =
        Destination::parse(args.output.as_os_str()).map_err(|e| CliError::Other(e.to_string()))?;
    let store = match &args.store {
        Some(store) => store.clone(),
        None => vari_publish::mirror::default_store(&destination, vari_fs::cache_dir().as_deref())
            .ok_or_else(|| {
                CliError::Other(format!(
                    "{destination}: no cache directory to keep the mirror's files in (set \
                     VARI_CACHE_DIR or HOME); give --store DIR"
                ))
            })?,
    };
    Ok((destination, store))
}

/// The lock, read within the lock size limit and checked.
fn read_lock(path: &Path) -> Result<Lock, CliError> {
    let bytes = vari_fs::read_input_limited(path, vari_lock::MAX_LOCK_BYTES)
        .map_err(|e| CliError::invalid(path, None, e.problem()))?;
    let text = String::from_utf8(bytes).map_err(|_| CliError::invalid(path, None, "not UTF-8"))?;
    vari_lock::read_lock(&text).map_err(|e| CliError::invalid(path, Some(e.path), e.message))
}

/// The lock's directory as a `file:` URL ending in `/` (its `path` entries are relative to it).
fn lock_dir_url(lock: &Path) -> Result<url::Url, CliError> {
    let dir = std::path::absolute(lock)
        .map_err(|e| CliError::io(lock, e))?
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    url::Url::from_directory_path(&dir)
        .map_err(|()| CliError::Other(format!("{}: not a usable directory", dir.display())))
}

/// `(name, profile)` of each target: `--target [NAME=]PROFILE` (the name defaults to the
/// profile's file stem), else the lock's own targets (profiles relative to the lock).
fn named_targets(args: &MirrorArgs, lock: &Lock) -> Result<Vec<(String, PathBuf)>, CliError> {
    let mut targets: Vec<(String, PathBuf)> = Vec::new();
    for given in &args.targets {
        let (name, profile) = match given.split_once('=') {
            Some((name, profile)) if !name.is_empty() && !name.contains('/') => {
                (name.to_owned(), PathBuf::from(profile))
            }
            _ => {
                let path = PathBuf::from(given);
                let stem = path
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_else(|| given.clone());
                (stem, path)
            }
        };
        targets.push((name, profile));
    }
    if targets.is_empty() {
        let base = args.lock.parent().unwrap_or(Path::new("."));
        for target in lock.vari.iter().flat_map(|info| &info.targets) {
            if let Some(profile) = &target.profile {
                targets.push((target.name.clone(), base.join(profile)));
            }
        }
    }
    if targets.is_empty() {
        return Err(CliError::Other(format!(
            "{}: the lock names no target profile; give at least one --target PROFILE",
            args.lock.display()
        )));
    }
    Ok(targets)
}

/// One progress bar on stderr for all the downloads (bytes, rate, files done), drawn only on a
/// terminal.
struct Bar {
    bar: ProgressBar,
    files: AtomicUsize,
    done: AtomicUsize,
}

impl Bar {
    fn new() -> Self {
        Self {
            bar: ProgressBar::hidden(),
            files: AtomicUsize::new(0),
            done: AtomicUsize::new(0),
        }
    }

    fn message(&self) {
        self.bar.set_message(format!(
            "{}/{} files",
            self.done.load(Ordering::Relaxed),
            self.files.load(Ordering::Relaxed)
        ));
    }
}

impl MirrorProgress for Bar {
    fn start(&self, files: usize, bytes: u64) {
        self.files.store(files, Ordering::Relaxed);
        if !std::io::stderr().is_terminal() {
            return;
        }
        self.bar.set_length(bytes);
        if let Ok(style) = ProgressStyle::with_template(
            "{msg:>12} {wide_bar} {bytes:>10}/{total_bytes:10} {bytes_per_sec:>12} {eta}",
        ) {
            self.bar.set_style(style);
        }
        self.message();
        self.bar.set_draw_target(ProgressDrawTarget::stderr());
    }

    fn advance(&self, bytes: u64) {
        self.bar.inc(bytes);
    }

    fn file_done(&self) {
        self.done.fetch_add(1, Ordering::Relaxed);
        self.message();
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }

    fn blocked(&self, lock: &Path) {
        crate::error::note(&format!(
            "blocking: waiting for the lock {} (another `vari mirror` is using this store)",
            lock.display()
        ));
    }
}
