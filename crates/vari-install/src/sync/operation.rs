//! One sync, start to end: what `vari sync` and `vari install -r pylock.toml` run, and the
//! parts of it `vari export` shares (the lock opened and planned, its files fetched).
//!
//! 1. The installer starts early ([`EarlyInstall`]) when the environment is known, so that
//!    its own start-up overlaps the lock's reading and planning.
//! 2. The lock is opened ([`open_lock`]) and planned for the target
//!    ([`vari_select::locked::plan_chosen`]); each planned entry keeps its chosen file
//!    ([`Entry`]).
//! 3. The environment is taken (one sync at a time) and surveyed ([`survey`]).
//! 4. Unless it is a dry run: what is to be installed is fetched and checked ([`fetch`]),
//!    then installed and what the lock does not list removed ([`apply`]).
//!
//! The caller words what happens on the way ([`SyncEvents`]) and the result ([`Synced`]).

use std::path::{Path, PathBuf};

use vari_client::ClientSettings;
use vari_core::ordering::SelectionOptions;
use vari_lock::{LockError, LockFile};
use vari_select::locked::{plan_chosen, BuildTaken, LockChoice, PlanError, Planned};
use vari_select::Target;

use super::{
    apply, fetch_locked_reporting, open_lock, planned_files, survey, EarlyInstall, FetchOptions,
    LoadError, LockedFile, Staged, Store, SyncError, SyncRequest,
};

/// A planned entry of a lock with its file: everything fetching, installing and reporting
/// need of it, in one value.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The entry, its chosen file and why ([`Planned`]).
    pub planned: Planned,
    /// That file as the fetcher and the installer need it.
    pub file: LockedFile,
}

/// An opened lock planned for a target.
#[derive(Debug)]
pub struct LockedPlan {
    /// The lock, with its directory.
    pub lock: LockFile,
    /// What the target installs, in the lock's order.
    pub entries: Vec<Entry>,
    /// The build each family of the lock takes on the target (empty without families).
    pub builds: Vec<BuildTaken>,
}

/// Why a lock cannot be planned.
#[derive(Debug, thiserror::Error)]
pub enum PlanFailure {
    /// The lock cannot be read.
    #[error(transparent)]
    Load(LoadError),
    /// The lock is not for the target, or a package has no file for it.
    #[error("{}: {error}", .path.display())]
    Plan {
        /// The lock file.
        path: PathBuf,
        /// The plan's refusal.
        error: Box<PlanError>,
    },
    /// A planned file cannot be checked (no SHA-256, no name, a bad URL).
    #[error("{}: {error}", .path.display())]
    File {
        /// The lock file.
        path: PathBuf,
        /// The key path and what is wrong.
        error: LockError,
    },
}

impl LockedPlan {
    /// Opens the lock at `path` (a file or its directory) and plans it for `target`.
    pub fn open(
        path: &Path,
        choice: &LockChoice<'_>,
        target: &Target,
        options: &SelectionOptions,
    ) -> Result<Self, PlanFailure> {
        let lock = open_lock(path).map_err(PlanFailure::Load)?;
        let plan =
            plan_chosen(&lock, choice, target, options).map_err(|error| PlanFailure::Plan {
                path: path.to_owned(),
                error: Box::new(error),
            })?;
        let files = planned_files(&plan, lock.dir()).map_err(|error| PlanFailure::File {
            path: path.to_owned(),
            error,
        })?;
        let entries = plan
            .install
            .into_iter()
            .zip(files)
            .map(|(planned, file)| Entry { planned, file })
            .collect();
        Ok(Self {
            lock,
            entries,
            builds: plan.builds,
        })
    }
}

/// Where a lock's files come from (the store is vari's own: [`Store::open`]).
#[derive(Debug, Clone)]
pub struct FetchSettings {
    /// The client for URLs.
    pub client: ClientSettings,
    /// Directories where a file is looked up by its name first.
    pub wheelhouses: Vec<PathBuf>,
    /// Never use the network.
    pub offline: bool,
}

/// What a sync tells its caller on the way (progress, notes); every method does nothing
/// unless the caller says otherwise.
pub trait SyncEvents: Sync {
    /// Another sync holds the environment's lock at `lock`: this one waits.
    fn waiting(&self, _lock: &Path) {}
    /// These files are about to be fetched and checked.
    fn fetching(&self, _files: &[&LockedFile]) {}
    /// `bytes` more of them are ready.
    fn fetched(&self, _bytes: u64) {}
    /// Every file is fetched and checked, or one failed.
    fn fetch_done(&self) {}
    /// Every file is here and checked: the environment changes next.
    fn changing(&self) {}
}

/// Fetches and checks `files` into vari's store (a few at a time; the first failure is the
/// error, and then none may be used).
pub fn fetch(
    files: &[&LockedFile],
    settings: &FetchSettings,
    events: &dyn SyncEvents,
) -> Result<(Vec<Staged>, Store), SyncError> {
    let store = Store::open()?;
    let options = FetchOptions {
        client: settings.client.clone(),
        wheelhouses: settings.wheelhouses.clone(),
        offline: settings.offline,
        store: store.path().to_path_buf(),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| SyncError::Client(format!("cannot start the network runtime: {e}")))?;
    let owned: Vec<LockedFile> = files.iter().map(|f| (*f).clone()).collect();
    events.fetching(files);
    let staged = runtime.block_on(fetch_locked_reporting(&owned, &options, &|n| {
        events.fetched(n)
    }));
    events.fetch_done();
    Ok((staged?, store))
}

/// One sync.
#[derive(Debug, Clone, Copy)]
pub struct SyncJob<'a> {
    /// The lock file, or its directory.
    pub lock: &'a Path,
    /// The extras and groups asked for.
    pub choice: LockChoice<'a>,
    /// The machine and Python environment.
    pub target: &'a Target,
    /// The selection options.
    pub options: &'a SelectionOptions,
    /// Where files come from.
    pub fetch: &'a FetchSettings,
    /// Say what would change, change nothing.
    pub dry_run: bool,
}

/// What a sync did (or, dry, would do).
#[derive(Debug)]
pub struct Synced {
    /// The lock.
    pub lock: LockFile,
    /// Each planned entry, with whether it is installed now (`false`: installed already as
    /// the lock wants it).
    pub entries: Vec<(Entry, bool)>,
    /// The distributions removed: (name, version).
    pub removed: Vec<(String, String)>,
    /// The build each family of the lock took (empty without families).
    pub builds: Vec<BuildTaken>,
}

/// Why a sync stopped.
#[derive(Debug, thiserror::Error)]
pub enum SyncFailure<E: std::error::Error + 'static> {
    /// The lock cannot be read or planned.
    #[error(transparent)]
    Plan(PlanFailure),
    /// The environment or its installer cannot be had (reported after the lock's problems).
    #[error(transparent)]
    Environment(E),
    /// Fetching, checking or installing failed.
    #[error(transparent)]
    Sync(SyncError),
}

/// Runs `job` into `environment` (the environment and its installer, or why they cannot be
/// had: reported once the lock is known to be good, as a lock's problems come first).
pub fn sync<E: std::error::Error + 'static>(
    job: &SyncJob<'_>,
    environment: Result<SyncRequest, E>,
    events: &dyn SyncEvents,
) -> Result<Synced, SyncFailure<E>> {
    // uv starts now, while the lock is read, planned and its files checked; it is stopped,
    // having installed nothing, if this returns early.
    let early = match (&environment, job.dry_run) {
        (Ok(request), false) => EarlyInstall::start(request),
        _ => None,
    };
    let planned = LockedPlan::open(job.lock, &job.choice, job.target, job.options)
        .map_err(SyncFailure::Plan)?;
    let request = environment.map_err(SyncFailure::Environment)?;
    // One writer per environment: from the survey to the end of the installer, another sync
    // of the same environment waits (a dry run changes nothing).
    let _environment = match job.dry_run {
        true => None,
        false => request
            .lock_environment(|path| events.waiting(path))
            .map_err(SyncFailure::Sync)?,
    };
    let files: Vec<LockedFile> = planned.entries.iter().map(|e| e.file.clone()).collect();
    let outcome = survey(&request, &files);
    if !job.dry_run {
        // Only what will be installed is fetched; every file is checked before any is
        // installed.
        let wanted: Vec<&LockedFile> = outcome.installed.iter().map(|&i| &files[i]).collect();
        let (staged, _store) = fetch(&wanted, job.fetch, events).map_err(SyncFailure::Sync)?;
        events.changing();
        apply(&request, &files, &staged, &outcome, early).map_err(SyncFailure::Sync)?;
    }
    let entries = planned
        .entries
        .into_iter()
        .enumerate()
        .map(|(at, entry)| (entry, outcome.installed.contains(&at)))
        .collect();
    Ok(Synced {
        lock: planned.lock,
        entries,
        removed: outcome.removed,
        builds: planned.builds,
    })
}

#[cfg(test)]
mod tests {
    use vari_select::TargetSettings;

    use super::*;

    const SHA: &str = "1111111111111111111111111111111111111111111111111111111111111111";

    /// Python 3.12 on Linux x86_64 with an empty profile: nothing detected, nothing probed.
    fn target(dir: &Path) -> Target {
        let profile = dir.join("empty.json");
        std::fs::write(
            &profile,
            r#"{"schema": "vari-profile/1", "namespaces": []}"#,
        )
        .unwrap();
        let mut settings = TargetSettings {
            profile: Some(profile),
            ..TargetSettings::default()
        };
        settings.python.version = Some("3.12".parse().unwrap());
        settings.python.platform = Some("x86_64-manylinux_2_28".parse().unwrap());
        Target::resolve(&settings).unwrap()
    }

    #[test]
    fn each_planned_entry_carries_its_file_found_under_the_lock_directory() {
        let dir = tempfile::tempdir().unwrap();
        let lock = format!(
            "lock-version = \"1.0\"\ncreated-by = \"tests\"\n\n\
             [[packages]]\nname = \"demo\"\nversion = \"1.0\"\nwheels = [\n    \
             {{ name = \"demo-1.0-py3-none-any.whl\", path = \"wheels/demo-1.0-py3-none-any.whl\", \
             size = 3, hashes = {{ sha256 = \"{SHA}\" }} }},\n]\n\n\
             [[packages]]\nname = \"winonly\"\nversion = \"2.0\"\nmarker = \"sys_platform == 'win32'\"\n\
             wheels = [\n    {{ url = \"https://files.example/winonly-2.0-py3-none-any.whl\", \
             hashes = {{ sha256 = \"{SHA}\" }} }},\n]\n"
        );
        std::fs::write(dir.path().join("pylock.toml"), lock).unwrap();
        let target = target(dir.path());
        // The directory stands for its pylock.toml.
        let planned = LockedPlan::open(
            dir.path(),
            &LockChoice::default(),
            &target,
            &SelectionOptions::default(),
        )
        .unwrap();
        let real = std::fs::canonicalize(dir.path()).unwrap();
        assert_eq!(planned.lock.dir(), real);
        let names: Vec<&str> = planned
            .entries
            .iter()
            .map(|e| e.planned.name.as_str())
            .collect();
        assert_eq!(names, ["demo"]);
        let entry = &planned.entries[0];
        assert_eq!(entry.file.filename, "demo-1.0-py3-none-any.whl");
        assert_eq!(
            entry.file.path.as_deref(),
            Some(real.join("wheels/demo-1.0-py3-none-any.whl").as_path())
        );
        assert_eq!(entry.file.size, Some(3));
        assert_eq!(
            entry.planned.artifact.path.as_deref(),
            Some("wheels/demo-1.0-py3-none-any.whl")
        );
    }

    #[test]
    fn a_lock_not_for_the_target_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pylock.toml");
        std::fs::write(
            &path,
            "lock-version = \"1.0\"\ncreated-by = \"tests\"\nrequires-python = \">=3.13\"\npackages = []\n",
        )
        .unwrap();
        let target = target(dir.path());
        let failure = LockedPlan::open(
            &path,
            &LockChoice::default(),
            &target,
            &SelectionOptions::default(),
        )
        .unwrap_err();
        assert!(matches!(failure, PlanFailure::Plan { .. }), "{failure}");
        assert_eq!(
            failure.to_string(),
            format!(
                "{}: requires-python: the lock is for Python >=3.13, the target has 3.12.0",
                path.display()
            )
        );
    }
}
