//! `vari lock`: one `pylock.toml` for several machine classes. Argument mapping and rendering;
//! resolving and listing the files each target can use is `vari_install::resolve_releases`'
//! (uv through the proxy, targets made to agree on versions, preferring the existing lock's
//! pins less those `--upgrade`/`--upgrade-package` name), the lock's arrangement is
//! `vari_lock::build_lock`'s.
//!
//! `--check` reads the inputs only: no network when the lock is up to date.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use vari_install::{LockFilesTarget, LockingRequest, LockingTarget};
use vari_lock::{Lock, LockTarget, LockedRelease};

use crate::cli::{LockArgs, TargetArgs};
use crate::error::{error_line, CliError};
use crate::output;
use crate::settings::{
    client_settings, configured_target_settings, load_config, resolve_target, server_runtime,
};

use crate::lock_inputs::{self as inputs, Requirements};

/// Locks (or with `--check`, checks the lock).
pub(super) fn run(args: &LockArgs) -> Result<ExitCode, CliError> {
    // Where the time goes, at debug level (`-v`): the phases, from the command's start.
    let clock = std::time::Instant::now();
    let output_path = output_path(args);
    let requirements = inputs::read(
        &args.requirements,
        &args.requirement_files,
        args.project.as_deref(),
    )?;
    let config = load_config()?;
    let sources = client_settings(&args.index, &config)?;
    let targets = targets(args)?;
    tracing::debug!("targets resolved after {:.1?}", clock.elapsed());
    let hash = inputs::inputs_hash(&requirements, &targets, &sources, args.index.pre);
    let existing = read_existing(&output_path)?;
    if args.check {
        return Ok(check(
            &output_path,
            existing.as_ref(),
            &hash,
            &requirements,
            &targets,
        ));
    }
    let uv = vari_install::find_uv(std::env::var_os("PATH").as_deref())
        .map_err(|e| CliError::Other(e.to_string()))?;
    let selection = config.selection(vari_core::ordering::SelectionOptions::default());
    let preferences = preferences(existing.as_ref(), args);
    let runtime = server_runtime()?;
    let request = LockingRequest {
        uv: &uv,
        sources: &sources,
        selection: &selection,
        pre: args.index.pre,
        requirements: &requirements.all(),
        targets: &targets,
        preferences: &preferences,
    };
    let mut releases = runtime
        .block_on(vari_install::resolve_releases(&request))
        .map_err(|e| CliError::Other(e.to_string()))?;
    tracing::debug!("releases listed after {:.1?}", clock.elapsed());
    local_paths(&mut releases, &output_path)?;
    let lock_inputs = inputs::lock_inputs(&requirements, &targets, &sources, hash);
    let lock = vari_lock::build_lock(&lock_inputs, releases)
        .map_err(|e| CliError::Other(e.to_string()))?;
    let text = vari_lock::write_lock(&lock).map_err(|e| CliError::Other(e.to_string()))?;
    vari_fs::write_atomic(&output_path, text.as_bytes())
        .map_err(|e| CliError::Other(e.to_string()))?;
    tracing::debug!("lock written after {:.1?}", clock.elapsed());
    output::print(&summary(&lock, &output_path))?;
    Ok(ExitCode::SUCCESS)
}

/// `-o`, else `pylock.toml` in the project directory, else here.
fn output_path(args: &LockArgs) -> PathBuf {
    match (&args.output, &args.project) {
        (Some(path), _) => path.clone(),
        (None, Some(dir)) => dir.join("pylock.toml"),
        (None, None) => PathBuf::from("pylock.toml"),
    }
}

/// The targets: every profile with every Python version and platform (each list standing for
/// one unspecified value when empty).
fn targets(args: &LockArgs) -> Result<Vec<LockingTarget>, CliError> {
    let profiles: Vec<Option<&PathBuf>> = match args.targets.is_empty() {
        true => vec![None],
        false => args.targets.iter().map(Some).collect(),
    };
    let versions: Vec<Option<&String>> = match args.python_versions.is_empty() {
        true => vec![None],
        false => args.python_versions.iter().map(Some).collect(),
    };
    let platforms: Vec<Option<&String>> = match args.python_platforms.is_empty() {
        true => vec![None],
        false => args.python_platforms.iter().map(Some).collect(),
    };
    let mut resolved: Vec<LockingTarget> = Vec::new();
    for profile in &profiles {
        for version in &versions {
            for platform in &platforms {
                let mut name = profile
                    .and_then(|p| p.file_stem())
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "any".to_owned());
                if versions.len() > 1 {
                    name.push_str(&format!("-py{}", version.map(String::as_str).unwrap_or("")));
                }
                if platforms.len() > 1 {
                    name.push_str(&format!("-{}", platform.map(String::as_str).unwrap_or("")));
                }
                while resolved.iter().any(|t| t.lock.name == name) {
                    name.push('_');
                }
                let target_args = TargetArgs {
                    profile: profile.cloned(),
                    sysroot: None,
                    python: None,
                    python_version: version.cloned(),
                    python_platform: platform.cloned(),
                };
                // Not the configured profile: a lock without --target lists every variant,
                // whatever profile this machine is configured with.
                let settings = configured_target_settings(&target_args, None)?;
                let target = resolve_target(&settings)?;
                let profile_hash = profile.map(|p| inputs::profile_hash(p)).transpose()?;
                resolved.push(LockingTarget {
                    lock: LockTarget {
                        name: name.clone(),
                        profile: profile.map(|p| p.display().to_string()),
                        profile_hash,
                        python_version: version.cloned(),
                        python_platform: platform.cloned(),
                    },
                    files: LockFilesTarget {
                        name,
                        target,
                        has_hardware: profile.is_some(),
                    },
                });
            }
        }
    }
    Ok(resolved)
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
    let current: Vec<LockTarget> = targets.iter().map(|t| t.lock.clone()).collect();
    let what = if info.inputs_hash.is_none() {
        "it records no inputs hash (not written by vari lock)".to_owned()
    } else if info.requirements != requirements.base {
        format!(
            "the requirements changed (locked: {}; now: {})",
            info.requirements.join(", "),
            requirements.base.join(", ")
        )
    } else if info.targets != current {
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

/// Files from a find-links directory come as `file:` URLs; a lock names them by a path
/// relative to its own directory (PEP 751 `path`), which must lie under that directory, so
/// that the lock can be moved with its files and never names a file elsewhere.
fn local_paths(releases: &mut [LockedRelease], lock_path: &Path) -> Result<(), CliError> {
    let parent = match lock_path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_owned(),
        _ => PathBuf::from("."),
    };
    let dir = std::fs::canonicalize(&parent).map_err(|e| CliError::io(&parent, e))?;
    let artifacts = releases
        .iter_mut()
        .flat_map(|r| r.wheels.iter_mut().chain(r.sdist.as_mut()));
    for artifact in artifacts {
        let Some(url) = artifact.url.as_deref().filter(|u| u.starts_with("file:")) else {
            continue;
        };
        let outside = || {
            CliError::Other(format!(
                "{url}: a local file outside the lock's directory {}; a lock names local files \
                 by a path under its own directory",
                dir.display()
            ))
        };
        let file = url::Url::parse(url)
            .ok()
            .and_then(|u| u.to_file_path().ok())
            .and_then(|p| std::fs::canonicalize(p).ok())
            .ok_or_else(outside)?;
        let relative = file.strip_prefix(&dir).map_err(|_| outside())?;
        let relative: Vec<String> = relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let relative = relative.join("/");
        vari_fs::safe_path::check_relative(&relative).map_err(|_| outside())?;
        artifact.url = None;
        artifact.path = Some(relative);
    }
    Ok(())
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
