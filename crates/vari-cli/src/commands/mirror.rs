//! `vari mirror`: a static index with exactly the files a fleet's machine classes install
//! (`vari_publish::mirror`), each class's files chosen by the lock planner (`vari_select::locked::plan`,
//! the one `vari sync` installs by), so a machine installing from the mirror gets what it would
//! have got from the upstream.
//!
//! The lock is read (`--lock`), or made from requirements for the targets by the lock maker
//! `vari lock` makes its locks with (`vari_lockmaker::make_lock`), kept in memory; either way it is a `vari_lock::LockFile` (the lock with its
//! directory, as `sync` opens it), and the same planner picks each target's files, each target with its own Python version and
//! platform (every class with every `--python-version` and `--python-platform`, or the lock's
//! targets as it records them), so that one run serves every class of a fleet. A resolution that fails stops the run before anything is downloaded or written.
//! Requirements need `--target`: without classes a mirror would hold every variant, which is
//! what a fleet mirror exists to avoid. A resolved lock lists only the variants the targets can
//! use, so the saved line then compares against every variant the index has of the resolved
//! releases for the targets' Pythons and platforms.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};

use vari_client::{ClientSettings, FileKind};
use vari_core::ordering::SelectionOptions;
use vari_lock::{Lock, LockFile};
use vari_lockmaker::{LockJob, LockingTarget, Made, Output, Requested, Sources, Upgrade};
use vari_publish::mirror::{
    MirrorError, MirrorOptions, MirrorPlan, MirrorProgress, SlimRequest, TargetFiles,
};
use vari_publish::Destination;
use vari_select::locked::PlanRequest;
use vari_select::Target;

use crate::cli::MirrorArgs;
use crate::error::{error_line, CliError};
use crate::lock_targets::{self, ClassTargets};
use crate::output;
use crate::settings::{
    client_settings, load_config, lock_target, selection_options, server_runtime,
};

/// Mirrors the lock (read, or resolved from the requirements) for the targets into the
/// destination and prints what it saved.
pub(super) fn run(args: &MirrorArgs) -> Result<ExitCode, CliError> {
    let config = load_config()?;
    let selection = config.selection(selection_options(&args.selection));
    let sources = client_settings(&args.index, &config)?;
    // The destination first: a bad `-o` fails before anything is resolved or downloaded.
    let (destination, store) = publish_destination(args)?;
    let slim_files_path = match (&args.lock_output, args.slim) {
        (Some(path), true) => Some(slim_files_path(path, &destination)?),
        _ => None,
    };
    if let (Some(path), Some(_)) = (&args.lock_output, &args.lock) {
        check_lock_output(path)?;
    }
    let input = match &args.lock {
        Some(path) => read_input(path, args)?,
        None => resolve_input(args, &sources, &selection)?,
    };
    let lock = input.lock.lock();
    let lock_dir = input.lock.dir();
    let mut targets = Vec::new();
    let mut families = Vec::new();
    for (name, target) in &input.targets {
        families.push(vari_slim::profile_families(&target.hardware.profile));
        // Everything the lock can install on this target: every extra and group it offers,
        // so that any install from the lock works from the mirror.
        let plan = vari_select::locked::plan(
            lock,
            &PlanRequest {
                target,
                options: &selection,
                extras: &lock.extras,
                groups: Some(&lock.dependency_groups),
                only_groups: false,
                lock_dir: input.lock.dir_url(),
            },
        )
        .map_err(|e| CliError::Other(format!("{}: target `{name}`: {e}", input.origin)))?;
        let files = plan
            .install
            .iter()
            .filter_map(|planned| {
                let filename = planned.artifact.file_name()?;
                Some((planned.package, filename))
            })
            .collect();
        targets.push(TargetFiles {
            name: name.clone(),
            files,
        });
    }
    let mut plan = MirrorPlan::new(lock, Some(lock_dir), &targets)
        .map_err(|e| CliError::Other(format!("{}: {e}", input.origin)))?;
    if let Some((every, without_size)) = input.every_variant {
        plan.every_variant = every;
        plan.without_size = without_size;
    }
    let mut sources = sources;
    if plan.files.iter().any(|f| f.url.scheme() == "file") {
        // Files the lock names by `path` are read from under its directory: a local source
        // the lock names.
        sources
            .find_links
            .push(vari_client::FindLinks::Directory(lock_dir.to_owned()));
    }
    let client = vari_client::IndexClient::new(sources).map(std::sync::Arc::new)?;
    let runtime = vari_publish::mirror::download_runtime()
        .map_err(|e| CliError::Other(format!("cannot start the network runtime: {e}")))?;
    let bar = Bar::new();
    let slim = args.slim.then(|| SlimRequest {
        wheels: vari_publish::mirror::slim_requests(&targets, &families),
        valid: crate::load::built_in_valid_values(),
    });
    let options = MirrorOptions {
        destination,
        store,
        keep: args.keep,
        progress: &bar,
        slim,
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
        Err(e) => return Err(e.into()),
    };
    for warning in &report.warnings {
        output::warn(warning);
    }
    if let Some(path) = &args.lock_output {
        // The sizes as the files arrived (the index's, checked, or measured where it gave none).
        let mut lock = with_received_sizes(lock, &report.received);
        if let (Some(slim), Some(files_path)) = (&report.slim, &slim_files_path) {
            lock = vari_publish::mirror::lock_with_slim_wheels(&lock, slim, files_path);
        }
        let text = vari_lock::write_lock(&lock).map_err(|e| CliError::Other(e.to_string()))?;
        vari_fs::write_atomic(path, text.as_bytes())?;
    }
    output::print(&format!("{}\n  {}\n", report.summary(), report.activity()))?;
    Ok(ExitCode::SUCCESS)
}

/// `lock` with each file's size as it arrived in the mirror (by file name).
fn with_received_sizes(lock: &Lock, received: &std::collections::BTreeMap<String, u64>) -> Lock {
    let mut lock = lock.clone();
    for package in &mut lock.packages {
        for artifact in package.wheels.iter_mut().chain(package.sdist.iter_mut()) {
            let size = artifact
                .file_name()
                .and_then(|name| received.get(name.as_str()).copied());
            if size.is_some() {
                artifact.size = size;
            }
        }
    }
    lock
}

/// Where the site goes (`-o DIR|URL`) and where its store is kept (`--store`, else
/// [`vari_publish::mirror::default_store`]).
fn publish_destination(args: &MirrorArgs) -> Result<(Destination, PathBuf), CliError> {
    let destination = Destination::parse(args.output.as_os_str())?;
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

/// Where the lock at `lock_output` names the slim wheels of `--slim`: the site's `files/`
/// directory relative to the lock's (`site/files/`), which must therefore hold it (a lock's
/// `path` stays inside its directory). An object store has no path: refused.
fn slim_files_path(lock_output: &Path, destination: &Destination) -> Result<String, CliError> {
    let refuse = |why: &str| {
        CliError::Other(format!(
            "--lock-output {} with --slim: {why}",
            lock_output.display()
        ))
    };
    let Destination::Directory(site) = destination else {
        return Err(refuse(
            "the lock names the slim wheels by their path in the site, and an object store \
             has none; write the lock without --lock-output or mirror to a directory",
        ));
    };
    let lock_dir = absolute_lock_dir(lock_output)?;
    let files = std::path::absolute(site.join("files")).map_err(|e| CliError::io(site, e))?;
    let relative = files.strip_prefix(&lock_dir).map_err(|_| {
        refuse(&format!(
            "the lock names the slim wheels by their path in the site, so it must be in {} or a \
             directory above it",
            site.display()
        ))
    })?;
    let mut text = String::new();
    for part in relative.components() {
        match part {
            std::path::Component::Normal(name) => match name.to_str() {
                Some(name) => {
                    text.push_str(name);
                    text.push('/');
                }
                None => return Err(refuse("the site's path is not UTF-8")),
            },
            _ => {
                return Err(refuse(
                    "the site's path is not a plain path under the lock's",
                ))
            }
        }
    }
    Ok(text)
}

/// The absolute directory of the lock at `lock` (its `path` entries are relative to it).
fn absolute_lock_dir(lock: &Path) -> Result<PathBuf, CliError> {
    let dir = vari_fs::safe_path::parent_dir(lock);
    std::path::absolute(&dir).map_err(|e| CliError::io(&dir, e))
}

/// The lock to mirror, what errors call it, and the machine classes to plan it for.
struct MirrorInput {
    /// The lock, with its absolute directory (its `path` entries are relative to it).
    lock: LockFile,
    /// The lock file's path, or what the lock was resolved from.
    origin: String,
    /// Each target's name and what it is.
    targets: Vec<(String, Target)>,
    /// Files and bytes of every variant of the lock's releases, when the lock lists fewer (one
    /// resolved for the targets lists only the variants they can use).
    every_variant: Option<EveryVariant>,
}

/// `--lock`: the lock read, for the `--target`s given (each with every `--python-version` and
/// `--python-platform`), else the lock's own targets, each with the profile (relative to the
/// lock), Python version and platform it records.
fn read_input(path: &Path, args: &MirrorArgs) -> Result<MirrorInput, CliError> {
    let file = crate::lock_plan::open(path)?;
    let lock = file.lock();
    let lock_dir = file.dir();
    let classes = crate::classes::given_classes(&args.targets, "--target")?;
    let targets = match classes.is_empty() {
        false => lock_targets::targets(
            &classes,
            &args.python_versions,
            &args.python_platforms,
            lock_dir,
            &lock_target,
        )?,
        true => {
            if !args.python_versions.is_empty() || !args.python_platforms.is_empty() {
                return Err(CliError::Other(format!(
                    "{}: --python-version and --python-platform need --target: without it \
                     the lock's own targets are mirrored, each with its own Python and platform",
                    path.display()
                )));
            }
            // Targets that describe no hardware would mirror every variant.
            let recorded: Vec<vari_lock::LockTarget> = lock
                .vari
                .iter()
                .flat_map(|info| &info.targets)
                .filter(|t| t.profile.is_some() || t.profile_hash.is_some())
                .cloned()
                .collect();
            lock_targets::recorded_targets(&recorded, path, &lock_target)?
        }
    };
    if targets.is_empty() {
        return Err(CliError::Other(format!(
            "{}: the lock names no target profile; give at least one --target PROFILE",
            path.display()
        )));
    }
    Ok(MirrorInput {
        lock: file,
        origin: path.display().to_string(),
        targets: targets
            .into_iter()
            .map(|t| (t.lock.name, t.files.target))
            .collect(),
        every_variant: None,
    })
}

/// Requirements: made into the lock `vari lock` would write for the same inputs
/// (`vari_lockmaker::make_lock`, kept in memory) for the `--target`s, each with its own Python
/// and platform.
fn resolve_input(
    args: &MirrorArgs,
    sources: &ClientSettings,
    selection: &SelectionOptions,
) -> Result<MirrorInput, CliError> {
    // Without targets a mirror would hold every variant of every release: what a fleet mirror
    // exists to avoid, so the classes must be named.
    let classes = crate::classes::given_classes(&args.targets, "--target")?;
    if classes.is_empty() {
        return Err(CliError::Other(
            "mirroring requirements needs the machine classes to mirror for: give at least one \
             --target [NAME=]PROFILE"
                .to_owned(),
        ));
    }
    if let Some(path) = &args.lock_output {
        check_lock_output(path)?;
    }
    // The lock's directory: the written lock's; a lock kept in memory only names the local
    // files it lists relative to the root, so that a wheelhouse anywhere can be mirrored.
    let lock_dir = match &args.lock_output {
        Some(path) => absolute_lock_dir(path)?,
        None => {
            let here = std::env::current_dir().map_err(|e| CliError::io(".", e))?;
            here.ancestors().last().unwrap_or(&here).to_path_buf()
        }
    };
    let targets = ClassTargets {
        classes,
        versions: &args.python_versions,
        platforms: &args.python_platforms,
        resolve: &lock_target,
    };
    // Each class mirrors the builds the family catalog chooses for it.
    let families =
        crate::settings::FamilySettings::resolve(&args.selection.families, &load_config()?)?
            .catalog()?
            .map(std::sync::Arc::new);
    let progress = crate::progress::Resolving::new();
    let job = LockJob {
        requested: Requested::Given {
            requirements: args.requirements.clone(),
            files: args.requirement_files.clone(),
            project: args.project.clone(),
        },
        output: Output::Memory {
            dir: lock_dir.clone(),
        },
        targets: &targets,
        sources: Sources {
            settings: sources.clone(),
            indexes_given: !args.index.index_url.is_empty()
                || !args.index.extra_index_url.is_empty(),
            find_links_given: !args.index.find_links.is_empty(),
        },
        selection: selection.clone(),
        pre: args.index.pre,
        upgrade: Upgrade::default(),
        progress: &progress,
        families,
    };
    let made = vari_lockmaker::make_lock(&job);
    progress.finish();
    let Made::Lock { lock, targets } = made? else {
        return Err(CliError::Other(
            "the lock maker checked a lock instead of making one".to_owned(),
        ));
    };
    let client = vari_client::IndexClient::new(sources.clone())?;
    let every_variant = server_runtime()?.block_on(every_variant(&client, &lock, &targets))?;
    if args.lock_output.is_some() {
        // A lock that cannot be written fails before anything is downloaded.
        vari_lock::write_lock(&lock).map_err(|e| CliError::Other(e.to_string()))?;
    }
    let origin = "the lock resolved from the requirements";
    Ok(MirrorInput {
        lock: LockFile::from_lock(*lock, origin, &lock_dir)
            .map_err(|e| CliError::Other(e.to_string()))?,
        origin: origin.to_owned(),
        targets: targets
            .into_iter()
            .map(|t| (t.lock.name, t.files.target))
            .collect(),
        every_variant: Some(every_variant),
    })
}

/// Files and bytes of every file, and the files whose size nobody gives.
type EveryVariant = ((usize, u64), Vec<String>);

/// Files and bytes (sizes from the index, else from the lock) of every file the index lists for the
/// lock's releases that one of the targets' Pythons and platforms can install, whatever its
/// variant, and the source distributions the lock lists: what mirroring every variant would
/// take, with the files whose size neither gives. The pages were read by the resolution
/// already (the HTTP cache answers).
async fn every_variant(
    client: &vari_client::IndexClient,
    lock: &Lock,
    targets: &[LockingTarget],
) -> Result<EveryVariant, CliError> {
    let mut every = (0usize, 0u64);
    let mut without_size = Vec::new();
    for package in &lock.packages {
        let Some(version) = &package.version else {
            continue;
        };
        let name = vari_client::ProjectName::new(&package.name)
            .map_err(|e| CliError::Other(format!("{}: {e}", package.name)))?;
        let project = client.project(&name).await?;
        let sdist = package.sdist.as_ref().and_then(|s| s.file_name());
        for file in project.files_of(version) {
            let counted = match &file.kind {
                FileKind::Wheel(wheel) => targets.iter().any(|t| {
                    let tags = t.files.target.python.tags();
                    tags.wheel_priority(wheel).is_some()
                }),
                FileKind::Sdist { .. } => sdist.as_deref() == Some(file.filename.as_str()),
                _ => false,
            };
            if !counted {
                continue;
            }
            every.0 += 1;
            // The index's size, else the lock's (it measured the files it lists), else unknown:
            // PEP 503 pages (download.pytorch.org's) give none.
            let listed = || {
                package
                    .wheels
                    .iter()
                    .chain(package.sdist.iter())
                    .find(|a| a.file_name().as_deref() == Some(file.filename.as_str()))
                    .and_then(|a| a.size)
            };
            match file.size.or_else(listed) {
                Some(size) => every.1 += size,
                None => without_size.push(file.filename.clone()),
            }
        }
    }
    Ok((every, without_size))
}

/// `--lock-output` must be writable where it is: its directory exists (checked before
/// resolving, so that a complete mirror is not followed by a lock that cannot be written).
fn check_lock_output(path: &Path) -> Result<(), CliError> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    match dir.is_dir() {
        true => Ok(()),
        false => Err(CliError::Other(format!(
            "--lock-output {}: the directory {} does not exist",
            path.display(),
            dir.display()
        ))),
    }
}

/// One progress bar on stderr for all the downloads (bytes, rate, files done), drawn only on a
/// terminal.
struct Bar {
    bar: crate::progress::Bytes,
    files: AtomicUsize,
    done: AtomicUsize,
}

impl Bar {
    fn new() -> Self {
        Self {
            bar: crate::progress::Bytes::hidden(),
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
    fn start(&self, files: usize, bytes: Option<u64>) {
        self.files.store(files, Ordering::Relaxed);
        self.message();
        self.bar.start(bytes);
    }

    fn advance(&self, bytes: u64) {
        self.bar.inc(bytes);
    }

    fn file_done(&self) {
        self.done.fetch_add(1, Ordering::Relaxed);
        self.message();
    }

    fn finish(&self) {
        self.bar.finish();
    }

    fn blocked(&self, lock: &Path) {
        crate::error::note(&format!(
            "blocking: waiting for the lock {} (another `vari mirror` is using this store)",
            lock.display()
        ));
    }
}
