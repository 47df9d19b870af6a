//! [`make_lock`]: the one walk from a job to the lock, every step in order without returning to
//! the front-end: the existing lock, the requirements, the sources and targets (recorded ones
//! when the lock is made again), the inputs hash (`--check` stops there), the preferences, the
//! resolution and the files, the lock built, and written.

use vari_lock::Lock;

use crate::error::LockMakeError;
use crate::existing::{preferences, read_existing, recorded_indexes, recorded_requirements};
use crate::inputs::{self, Requirements};
use crate::job::{LockJob, Made, Output, Requested};
use crate::locking::{find_uv, resolve_releases, LockingRequest};
use crate::staleness::staleness;

/// Makes the lock `job` asks for: reads the existing lock (with [`Output::File`] or
/// [`Output::Check`]), the requirements and the targets; with [`Output::Check`] compares the
/// inputs hash and stops; else resolves with uv through vari's proxy, lists each pinned
/// release's files the targets can use, builds the lock and, with [`Output::File`], writes it.
///
/// Nothing is resolved before every input has been read and checked, and nothing is written
/// when resolving fails.
pub fn make_lock(job: &LockJob<'_>) -> Result<Made, LockMakeError> {
    // Where the time goes, at debug level: the phases, from the start.
    let clock = std::time::Instant::now();
    let lock_dir = job.output.dir();
    let existing = match job.output.existing() {
        Some(path) => read_existing(path)?,
        None => None,
    };
    let again = matches!(job.requested, Requested::Again { .. });
    let requirements = read_requirements(job, existing.as_ref())?;
    let mut sources = job.sources.settings.clone();
    let recorded = existing
        .as_ref()
        .filter(|_| again)
        .and_then(|lock| lock.vari.as_ref());
    let lock_path = job.output.existing();
    if let (Some(info), Some(path)) = (recorded, lock_path) {
        recorded_indexes(&mut sources, info, job.sources.indexes_given, path)?;
        if !job.sources.find_links_given && !info.find_links.is_empty() {
            sources.find_links = inputs::recorded_sources(&info.find_links, path)?;
        }
    }
    // `--pre`, or the lock being made again allowed pre-releases.
    let pre = job.pre || recorded.is_some_and(|info| info.pre);
    let keep_recorded = recorded.filter(|i| !i.targets.is_empty() && !job.targets.given());
    let targets = match (keep_recorded, lock_path) {
        (Some(info), Some(path)) => job.targets.recorded(&info.targets, path),
        _ => job.targets.make(&lock_dir),
    }
    .map_err(LockMakeError::Targets)?;
    tracing::debug!("targets resolved after {:.1?}", clock.elapsed());
    let all = requirements.all();
    // Only for machine classes: a lock without them (its one target `any`, no hardware) lists
    // every variant and chooses no build, as before.
    let described = !targets.is_empty() && targets.iter().all(|t| t.files.has_hardware);
    let families = job
        .families
        .as_ref()
        .filter(|catalog| described && crate::family_pins::engaged(catalog, &all));
    let hash = inputs::inputs_hash(
        &requirements,
        &targets,
        &sources,
        &lock_dir,
        pre,
        families.map(|c| &**c),
    );
    if let Output::Check(path) = &job.output {
        return Ok(Made::Checked(staleness(
            path.clone(),
            existing.as_ref(),
            &hash,
            &requirements,
            &targets,
        )));
    }
    let uv = find_uv(std::env::var_os("PATH").as_deref())?;
    let preferences = preferences(existing.as_ref(), &job.upgrade);
    let runtime = vari_proxy::server_runtime().map_err(LockMakeError::Runtime)?;
    let request = LockingRequest {
        uv: &uv,
        sources: &sources,
        selection: &job.selection,
        pre,
        requirements: &all,
        targets: &targets,
        preferences: &preferences,
        lock_dir: &lock_dir,
        progress: job.progress,
        families: None,
    };
    let (releases, locked_families) = match families {
        None => (runtime.block_on(resolve_releases(&request))?, Vec::new()),
        Some(catalog) => runtime.block_on(crate::families::resolve_by_class(&request, catalog))?,
    };
    tracing::debug!("releases listed after {:.1?}", clock.elapsed());
    let lock_inputs = inputs::lock_inputs(
        &requirements,
        &targets,
        &sources,
        &lock_dir,
        pre,
        hash,
        locked_families,
    );
    let lock = vari_lock::build_lock(&lock_inputs, releases)
        .map_err(|e| LockMakeError::Build(e.to_string()))?;
    if let Output::File(path) = &job.output {
        let text = vari_lock::write_lock(&lock).map_err(|e| LockMakeError::Build(e.to_string()))?;
        vari_fs::write_atomic(path, text.as_bytes())
            .map_err(|e| LockMakeError::Write(e.to_string()))?;
        tracing::debug!("lock written after {:.1?}", clock.elapsed());
    }
    Ok(Made::Lock {
        lock: Box::new(lock),
        targets,
    })
}

/// The requirements: those given, else (made again) the project's, else those the existing
/// lock records.
fn read_requirements(
    job: &LockJob<'_>,
    existing: Option<&Lock>,
) -> Result<Requirements, LockMakeError> {
    match (&job.requested, existing, job.output.existing()) {
        (Requested::Again { project: None }, Some(lock), Some(path)) => {
            recorded_requirements(lock, path)
        }
        (Requested::Again { project }, _, _) => inputs::read(&[], &[], project.as_deref()),
        (
            Requested::Given {
                requirements,
                files,
                project,
            },
            _,
            _,
        ) => inputs::read(requirements, files, project.as_deref()),
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use vari_lock::LockTarget;

    use super::*;
    use crate::job::{MakeTargets, Sources, TargetsError, Upgrade};
    use crate::locking::{LockingTarget, NoProgress};
    use crate::staleness::Staleness;

    /// No machine class: the inputs hash then covers requirements and sources alone, which is
    /// all `--check` needs to be tested without a Python or a profile.
    struct NoTargets {
        given: bool,
    }

    impl MakeTargets for NoTargets {
        fn given(&self) -> bool {
            self.given
        }

        fn make(&self, _: &Path) -> Result<Vec<LockingTarget>, TargetsError> {
            Ok(Vec::new())
        }

        fn recorded(&self, _: &[LockTarget], _: &Path) -> Result<Vec<LockingTarget>, TargetsError> {
            Err("the recorded targets were asked for".into())
        }
    }

    fn job<'a>(requested: Requested, output: Output, targets: &'a NoTargets) -> LockJob<'a> {
        LockJob {
            requested,
            output,
            targets,
            sources: Sources {
                settings: vari_client::ClientSettings::default(),
                indexes_given: false,
                find_links_given: false,
            },
            selection: Default::default(),
            pre: false,
            upgrade: Upgrade::default(),
            progress: &NoProgress,
            families: None,
        }
    }

    fn given(requirements: &[&str]) -> Requested {
        Requested::Given {
            requirements: requirements.iter().map(|r| r.to_string()).collect(),
            files: Vec::new(),
            project: None,
        }
    }

    /// Writes the lock `make_lock` would write for `requirements` and no target, without
    /// resolving (no release).
    fn write_lock_of(path: &Path, requirements: &[&str]) {
        let requirements = Requirements {
            base: requirements.iter().map(|r| r.to_string()).collect(),
            ..Requirements::default()
        };
        let sources = vari_client::ClientSettings::default();
        let dir = vari_fs::safe_path::parent_dir(path);
        let hash = inputs::inputs_hash(&requirements, &[], &sources, &dir, false, None);
        let built =
            inputs::lock_inputs(&requirements, &[], &sources, &dir, false, hash, Vec::new());
        let lock = vari_lock::build_lock(&built, Vec::new()).unwrap();
        std::fs::write(path, vari_lock::write_lock(&lock).unwrap()).unwrap();
    }

    fn check(requested: Requested, path: &Path, targets: &NoTargets) -> Staleness {
        match make_lock(&job(requested, Output::Check(path.to_owned()), targets)) {
            Ok(Made::Checked(staleness)) => staleness,
            other => panic!("not a check: {other:?}"),
        }
    }

    #[test]
    fn check_says_missing_up_to_date_or_what_changed() {
        let dir = tempfile::tempdir().unwrap();
        let path: PathBuf = dir.path().join("pylock.toml");
        let none = NoTargets { given: false };
        assert_eq!(
            check(given(&["demo"]), &path, &none),
            Staleness::Missing(path.clone())
        );
        write_lock_of(&path, &["demo"]);
        assert!(check(given(&["demo"]), &path, &none).is_up_to_date());
        let changed = check(given(&["other"]), &path, &none);
        assert_eq!(
            changed.to_string(),
            format!(
                "{} is out of date: the requirements changed (locked: demo; now: other); run \
                 `vari lock`",
                path.display()
            )
        );
    }

    #[test]
    fn made_again_from_nothing_new_the_lock_checks_with_what_it_records() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pylock.toml");
        write_lock_of(&path, &["demo"]);
        // The lock records no target, so the command line's are made (none here).
        let again = Requested::Again { project: None };
        assert!(check(again, &path, &NoTargets { given: false }).is_up_to_date());
    }

    #[test]
    fn a_lock_recording_no_requirements_cannot_be_made_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pylock.toml");
        write_lock_of(&path, &[]);
        let again = Requested::Again { project: None };
        let job = job(
            again,
            Output::Check(path.clone()),
            &NoTargets { given: false },
        );
        let err = make_lock(&job).unwrap_err();
        assert!(
            err.to_string()
                .ends_with("tool.vari.requirements: records no requirements to lock again: give requirements, -r FILE or --project DIR"),
            "{err}"
        );
    }
}
