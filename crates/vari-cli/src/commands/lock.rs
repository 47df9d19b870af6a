//! `vari lock`: one `pylock.toml` for several machine classes. Argument mapping and rendering;
//! resolving and listing the files each target can use is `vari_lockmaker::resolve_releases`'
//! (uv through the proxy, targets made to agree on versions, preferring the existing lock's
//! pins less those `--upgrade`/`--upgrade-package` name), the lock's arrangement is
//! `vari_lock::build_lock`'s.
//!
//! `--check` reads the inputs only: no network when the lock is up to date.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use vari_lock::{Lock, LockTarget};
use vari_lockmaker::{LockingRequest, LockingTarget};

use crate::cli::LockArgs;
use crate::error::{error_line, CliError};
use crate::output;
use crate::settings::{client_settings, load_config, lock_target, server_runtime};

use crate::lock_inputs::{self as inputs, Requirements};
use crate::lock_targets;

/// Locks (or with `--check`, checks the lock).
pub(super) fn run(args: &LockArgs) -> Result<ExitCode, CliError> {
    // Where the time goes, at debug level (`-v`): the phases, from the command's start.
    let clock = std::time::Instant::now();
    let relock = Relock::of(args);
    let output_path = output_path(args);
    let existing = read_existing(&output_path)?;
    let requirements = match (&relock, existing.as_ref()) {
        (Some(Relock { project: None }), Some(lock)) => recorded_requirements(lock, &output_path)?,
        (Some(Relock { project }), _) => inputs::read(&[], &[], project.as_deref())?,
        (None, _) => inputs::read(
            &args.requirements,
            &args.requirement_files,
            args.project.as_deref(),
        )?,
    };
    let config = load_config()?;
    let mut sources = client_settings(&args.index, &config)?;
    let recorded = relock
        .as_ref()
        .and(existing.as_ref())
        .and_then(|lock| lock.vari.as_ref());
    if let Some(info) = recorded {
        recorded_indexes(&mut sources, info, args, &output_path)?;
        if args.index.find_links.is_empty() && !info.find_links.is_empty() {
            sources.find_links = inputs::recorded_sources(&info.find_links, &output_path)?;
        }
    }
    // `--pre`, or the lock being made again allowed pre-releases.
    let pre = args.index.pre || recorded.is_some_and(|info| info.pre);
    let lock_dir = vari_fs::safe_path::parent_dir(&output_path);
    let targets = match recorded.filter(|i| !i.targets.is_empty() && no_target_flags(args)) {
        Some(info) => lock_targets::recorded_targets(&info.targets, &output_path, &lock_target)?,
        None => targets(args, &output_path)?,
    };
    tracing::debug!("targets resolved after {:.1?}", clock.elapsed());
    let hash = inputs::inputs_hash(&requirements, &targets, &sources, &lock_dir, pre);
    if args.check {
        return Ok(check(
            &output_path,
            existing.as_ref(),
            &hash,
            &requirements,
            &targets,
        ));
    }
    let uv = vari_lockmaker::find_uv(std::env::var_os("PATH").as_deref())
        .map_err(|e| CliError::Other(e.to_string()))?;
    let selection = config.selection(vari_core::ordering::SelectionOptions::default());
    let preferences = preferences(existing.as_ref(), args);
    let runtime = server_runtime()?;
    // On a terminal: the targets resolved so far, then the releases whose files are listed.
    let progress = crate::progress::Resolving::new();
    let request = LockingRequest {
        uv: &uv,
        sources: &sources,
        selection: &selection,
        pre,
        requirements: &requirements.all(),
        targets: &targets,
        preferences: &preferences,
        lock_dir: &lock_dir,
        progress: &progress,
    };
    let releases = runtime.block_on(vari_lockmaker::resolve_releases(&request));
    progress.finish();
    let releases = releases.map_err(|e| CliError::Other(e.to_string()))?;
    tracing::debug!("releases listed after {:.1?}", clock.elapsed());
    let lock_inputs = inputs::lock_inputs(&requirements, &targets, &sources, &lock_dir, pre, hash);
    let lock = vari_lock::build_lock(&lock_inputs, releases)
        .map_err(|e| CliError::Other(e.to_string()))?;
    let text = vari_lock::write_lock(&lock).map_err(|e| CliError::Other(e.to_string()))?;
    vari_fs::write_atomic(&output_path, text.as_bytes())
        .map_err(|e| CliError::Other(e.to_string()))?;
    tracing::debug!("lock written after {:.1?}", clock.elapsed());
    output::print(&summary(&lock, &output_path))?;
    Ok(ExitCode::SUCCESS)
}

/// `vari lock` (or `vari lock --check`) without requirements, `-r` or `--project`: the lock is
/// made again from what its directory and the existing lock say. The project is the current
/// directory when it has a `pyproject.toml` (its requirements then come from there), else the
/// existing lock's recorded requirements are locked again; the lock's recorded targets and
/// indexes stand unless the command line gives its own.
struct Relock {
    project: Option<PathBuf>,
}

impl Relock {
    fn of(args: &LockArgs) -> Option<Self> {
        let given = !args.requirements.is_empty()
            || !args.requirement_files.is_empty()
            || args.project.is_some();
        if given {
            return None;
        }
        let project = Path::new("pyproject.toml")
            .is_file()
            .then(|| PathBuf::from("."));
        Some(Self { project })
    }
}

/// Whether the command line names no target, Python version or platform.
fn no_target_flags(args: &LockArgs) -> bool {
    args.targets.is_empty() && args.python_versions.is_empty() && args.python_platforms.is_empty()
}

/// The requirements the existing lock records (`[tool.vari] requirements`), checked.
fn recorded_requirements(lock: &Lock, path: &Path) -> Result<Requirements, CliError> {
    let recorded = lock
        .vari
        .as_ref()
        .map(|i| i.requirements.clone())
        .unwrap_or_default();
    if recorded.is_empty() {
        return Err(CliError::invalid(
            path,
            Some("tool.vari.requirements".into()),
            "records no requirements to lock again: give requirements, -r FILE or --project DIR",
        ));
    }
    for (i, requirement) in recorded.iter().enumerate() {
        vari_select::Request::parse(requirement).map_err(|e| {
            CliError::invalid(
                path,
                Some(format!("tool.vari.requirements[{i}]")),
                e.to_string(),
            )
        })?;
    }
    Ok(Requirements {
        base: recorded,
        ..Requirements::default()
    })
}

/// The indexes the existing lock records, in its order (none, for a lock made from find-links
/// alone), unless the command line names its own.
fn recorded_indexes(
    sources: &mut vari_client::ClientSettings,
    info: &vari_lock::LockInfo,
    args: &LockArgs,
    path: &Path,
) -> Result<(), CliError> {
    let given = !args.index.index_url.is_empty() || !args.index.extra_index_url.is_empty();
    // A lock made from find-links alone records no index: none is added again.
    if given || (info.indexes.is_empty() && info.find_links.is_empty()) {
        return Ok(());
    }
    sources.indexes = info
        .indexes
        .iter()
        .enumerate()
        .map(|(i, url)| {
            vari_client::IndexUrl::parse(url).map_err(|e| {
                CliError::invalid(path, Some(format!("tool.vari.indexes[{i}]")), e.to_string())
            })
        })
        .collect::<Result<_, _>>()?;
    Ok(())
}

/// `-o`, else `pylock.toml` in the project directory, else here.
fn output_path(args: &LockArgs) -> PathBuf {
    match (&args.output, &args.project) {
        (Some(path), _) => path.clone(),
        (None, Some(dir)) => dir.join("pylock.toml"),
        (None, None) => PathBuf::from("pylock.toml"),
    }
}

/// The targets of the command line: every profile (named after its file) with every Python
/// version and platform.
fn targets(args: &LockArgs, lock_path: &Path) -> Result<Vec<LockingTarget>, CliError> {
    let classes: Vec<lock_targets::Class> = args
        .targets
        .iter()
        .map(|profile| lock_targets::Class {
            name: profile
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "any".to_owned()),
            profile: Some(profile.clone()),
        })
        .collect();
    lock_targets::targets(
        &classes,
        &args.python_versions,
        &args.python_platforms,
        &vari_fs::safe_path::parent_dir(lock_path),
        &lock_target,
    )
}

/// The lock at `path`, when there is one: read bounded and checked.
fn read_existing(path: &Path) -> Result<Option<Lock>, CliError> {
    if !path.exists() {
        return Ok(None);
    }
    let text =
        vari_install::sync::read_lock_text(path).map_err(|e| CliError::Other(e.to_string()))?;
    vari_lock::read_lock(&text)
        .map(Some)
        .map_err(|e| CliError::invalid(path, Some(e.path), e.message))
}

/// `--check`: 0 when the lock's inputs hash is this one, else 1 with one line saying what
/// changed.
fn check(
    path: &Path,
    existing: Option<&Lock>,
    hash: &str,
    requirements: &Requirements,
    targets: &[LockingTarget],
) -> ExitCode {
    let Some(lock) = existing else {
        error_line(&format!("{} is missing: run `vari lock`", path.display()));
        return ExitCode::from(1);
    };
    let info = lock.vari.clone().unwrap_or_default();
    if info.inputs_hash.as_deref() == Some(hash) {
        let _ = output::print(&format!("{} is up to date\n", path.display()));
        return ExitCode::SUCCESS;
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
        "its inputs changed (extras, dependency groups, requires-python or index options)"
            .to_owned()
    };
    error_line(&format!(
        "{} is out of date: {what}; run `vari lock`",
        path.display()
    ));
    ExitCode::from(1)
}

/// The existing lock's pins that uv should prefer: none with `--upgrade`, and not those of
/// `--upgrade-package`.
fn preferences(existing: Option<&Lock>, args: &LockArgs) -> BTreeMap<String, String> {
    let Some(lock) = existing.filter(|_| !args.upgrade) else {
        return BTreeMap::new();
    };
    let upgraded: Vec<String> = args
        .upgrade_packages
        .iter()
        .map(|n| vari_core::project::normalize(n))
        .collect();
    lock.packages
        .iter()
        .filter(|p| !upgraded.contains(&p.name))
        .filter_map(|p| Some((p.name.clone(), p.version.as_ref()?.to_string())))
        .collect()
}

/// One line per package (its version and the wheels kept: labels, or the plain wheel), then
/// where the lock went.
fn summary(lock: &Lock, path: &Path) -> String {
    let mut text = String::new();
    for package in &lock.packages {
        let mut labels: Vec<String> = Vec::new();
        for wheel in &package.wheels {
            let label = wheel
                .wheel_filename()
                .and_then(|w| w.label.map(|l| l.to_string()))
                .unwrap_or_else(|| "plain".to_owned());
            if !labels.contains(&label) {
                labels.push(label);
            }
        }
        let version = package
            .version
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default();
        let mut line = format!("{} {version}: ", package.name);
        line.push_str(&match (package.wheels.len(), labels.as_slice()) {
            (0, _) => "source distribution".to_owned(),
            (n, [only]) if only == "plain" => format!("{n} wheel{}", if n == 1 { "" } else { "s" }),
            (n, _) => format!("{n} wheels ({})", labels.join(", ")),
        });
        let info = package.vari.as_ref();
        if info.is_some_and(|i| i.through_variants) {
            line.push_str(", only with the variants that ask for it");
        }
        if let Some(marker) = &package.marker {
            line.push_str(&format!(", only when {marker}"));
        }
        text.push_str(&line);
        text.push('\n');
    }
    let targets: Vec<String> = lock
        .vari
        .iter()
        .flat_map(|i| &i.targets)
        .map(|t| t.name.clone())
        .collect();
    text.push_str(&format!(
        "locked {} packages for {} target{} ({}) in {}\n",
        lock.packages.len(),
        targets.len(),
        if targets.len() == 1 { "" } else { "s" },
        targets.join(", "),
        path.display()
    ));
    text
}
