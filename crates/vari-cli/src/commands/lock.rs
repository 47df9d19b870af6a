//! `vari lock`: one `pylock.toml` for several machine classes. Argument mapping and rendering;
//! making the lock (its inputs, the existing lock's preferences less those
//! `--upgrade`/`--upgrade-package` name, resolving through uv and vari's proxy, the files each
//! target can use, writing it) is `vari_lockmaker::make_lock`'s.
//!
//! `--check` reads the inputs only: no network when the lock is up to date.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use vari_lock::Lock;
use vari_lockmaker::{LockJob, Made, Output, Requested, Sources, Upgrade};

use crate::cli::LockArgs;
use crate::error::{error_line, CliError};
use crate::output;
use crate::settings::{client_settings, load_config, lock_target, FamilySettings};

use crate::lock_targets::ClassTargets;

/// Locks (or with `--check`, checks the lock).
pub(super) fn run(args: &LockArgs) -> Result<ExitCode, CliError> {
    let output_path = output_path(args);
    let config = load_config()?;
    let targets = ClassTargets {
        classes: crate::classes::given_classes(&args.targets, "--target")?,
        versions: &args.python_versions,
        platforms: &args.python_platforms,
        resolve: &lock_target,
    };
    // Each class locks the builds the family catalog chooses for it.
    let families = FamilySettings::resolve(&args.families, &config)?
        .catalog()?
        .map(std::sync::Arc::new);
    // On a terminal: the targets resolved so far, then the releases whose files are listed.
    let progress = crate::progress::Resolving::new();
    let job = LockJob {
        requested: Requested::from_command_line(
            &args.requirements,
            &args.requirement_files,
            args.project.as_deref(),
        ),
        output: match args.check {
            true => Output::Check(output_path.clone()),
            false => Output::File(output_path.clone()),
        },
        targets: &targets,
        sources: Sources {
            settings: client_settings(&args.index, &config)?,
            indexes_given: !args.index.index_url.is_empty()
                || !args.index.extra_index_url.is_empty(),
            find_links_given: !args.index.find_links.is_empty(),
        },
        selection: config.selection(vari_core::ordering::SelectionOptions::default()),
        pre: args.index.pre,
        upgrade: Upgrade {
            all: args.upgrade,
            packages: args.upgrade_packages.clone(),
        },
        progress: &progress,
        families,
    };
    let made = vari_lockmaker::make_lock(&job);
    progress.finish();
    match made? {
        Made::Checked(staleness) if staleness.is_up_to_date() => {
            let _ = output::print(&format!("{staleness}\n"));
            Ok(ExitCode::SUCCESS)
        }
        Made::Checked(staleness) => {
            error_line(&staleness.to_string());
            Ok(ExitCode::from(1))
        }
        Made::Lock { lock, .. } => {
            output::print(&summary(&lock, &output_path))?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `-o`, else `pylock.toml` in the project directory, else here.
fn output_path(args: &LockArgs) -> PathBuf {
    match (&args.output, &args.project) {
        (Some(path), _) => path.clone(),
        (None, Some(dir)) => dir.join("pylock.toml"),
        (None, None) => PathBuf::from("pylock.toml"),
    }
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
