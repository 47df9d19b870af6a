//! The targets of a lock: machine classes as the command line gives them (`crate::classes`),
//! crossed with Python versions and platforms, or the targets a lock records; each source read
//! once, for its hardware and its hash, and kept in vari's cache when the lock can only record
//! that hash.

use std::path::{Path, PathBuf};

use vari_lock::{InputsHash, LockTarget};
use vari_lockmaker::{LockFilesTarget, LockingTarget, TargetsError};
use vari_select::{ClassSource, MachineClass, ResolvedClass};

use crate::error::CliError;

/// How a target is made from its hardware source (none: no hardware), Python version and
/// platform (`crate::settings::lock_target`; passed in, so that reading inputs stays apart from
/// the command line's settings).
pub(crate) type ResolveTarget<'a> =
    &'a dyn Fn(Option<&ClassSource>, Option<&str>, Option<&str>) -> Result<ResolvedClass, CliError>;

/// The targets of a lock: every class with every Python version and every platform (each list
/// standing for one unspecified value when empty: the Python here, this platform). A target is
/// named after its class, with `-pyX.Y` when there are several versions and `-PLATFORM` when
/// there are several platforms. Profiles are recorded relative to the lock's directory
/// `lock_dir` ([`recorded_profile`]).
pub(crate) fn targets(
    classes: &[MachineClass],
    versions: &[String],
    platforms: &[String],
    lock_dir: &Path,
    resolve: ResolveTarget<'_>,
) -> Result<Vec<LockingTarget>, CliError> {
    // No class: one target, `any`, whose hardware is not described.
    let classes: Vec<(&str, Option<&ClassSource>)> = match classes.is_empty() {
        true => vec![("any", None)],
        false => classes
            .iter()
            .map(|c| (c.name.as_str(), c.source.as_ref()))
            .collect(),
    };
    let versions: Vec<Option<&String>> = match versions.is_empty() {
        true => vec![None],
        false => versions.iter().map(Some).collect(),
    };
    let platforms: Vec<Option<&String>> = match platforms.is_empty() {
        true => vec![None],
        false => platforms.iter().map(Some).collect(),
    };
    let mut resolved: Vec<LockingTarget> = Vec::new();
    for (class, source) in classes {
        for version in &versions {
            for platform in &platforms {
                let mut name = class.to_owned();
                if versions.len() > 1 {
                    name.push_str(&format!("-py{}", version.map(String::as_str).unwrap_or("")));
                }
                if platforms.len() > 1 {
                    name.push_str(&format!("-{}", platform.map(String::as_str).unwrap_or("")));
                }
                while resolved.iter().any(|t| t.lock.name == name) {
                    name.push('_');
                }
                resolved.push(target(
                    name,
                    source,
                    version.cloned(),
                    platform.cloned(),
                    lock_dir,
                    resolve,
                )?);
            }
        }
    }
    Ok(resolved)
}

/// The targets a lock at `lock_path` records, each with its own profile (relative to the lock's
/// directory), Python version and platform. A target whose profile was outside the lock's
/// directory is recorded by its hash and name alone: one error naming it, as on a machine
/// without that file.
pub(crate) fn recorded_targets(
    recorded: &[LockTarget],
    lock_path: &Path,
    resolve: ResolveTarget<'_>,
) -> Result<Vec<LockingTarget>, CliError> {
    let lock_dir = vari_fs::safe_path::parent_dir(lock_path);
    let mut resolved = Vec::new();
    for t in recorded {
        let profile: Option<PathBuf> = match (&t.profile, &t.profile_hash) {
            (Some(_), _) => Some(
                // The lock's own rule first (no absolute path, `..` or drive), then the
                // file-system join that also refuses links out of the directory.
                t.profile_in_lock_dir()
                    .map_err(|message| {
                        CliError::invalid(
                            lock_path,
                            Some(format!("tool.vari.targets.{}.profile", t.name)),
                            message,
                        )
                    })
                    .and_then(|profile| {
                        let profile = profile.unwrap_or_default();
                        vari_fs::safe_path::join_under(&lock_dir, profile).map_err(|e| {
                            CliError::invalid(
                                lock_path,
                                Some(format!("tool.vari.targets.{}.profile", t.name)),
                                format!("{e}; a lock names its profiles relative to its directory"),
                            )
                        })
                    })?,
            ),
            (None, Some(hash)) if kept_profile(hash).is_some() => kept_profile(hash),
            (None, Some(hash)) => {
                return Err(CliError::invalid(
                    lock_path,
                    Some(format!("tool.vari.targets.{}", t.name)),
                    format!(
                        "its profile was outside the lock's directory, so the lock records only \
                         its hash ({hash}), and vari's cache has no copy of it (kept on the \
                         machine that made the lock); give the targets again with --target \
                         PROFILE, or keep the profiles beside the lock"
                    ),
                ))
            }
            (None, None) => None,
        };
        let source = profile.as_deref().map(ClassSource::of);
        resolved.push(target(
            t.name.clone(),
            source.as_ref(),
            t.python_version.clone(),
            t.python_platform.clone(),
            &lock_dir,
            resolve,
        )?);
    }
    Ok(resolved)
}

/// The copy in vari's cache of the profile whose recorded hash is `hash`, when there is one and
/// its bytes still have that hash.
fn kept_profile(hash: &str) -> Option<PathBuf> {
    let root = vari_fs::cache_dir()?;
    let path = vari_install::profile_store::find(&root, hash)?;
    let bytes = vari_fs::input::read_input(&path, vari_fs::input::InputKind::Metadata).ok()?;
    (profile_hash(&bytes) == hash).then_some(path)
}

/// Keeps a copy of what describes `source` (its `bytes` as read, recorded by their hash `hash`
/// only) in vari's cache, so that this machine can lock again from the lock alone. A snapshot
/// is kept as the `vari-profile/1` JSON detected from it. Best effort: without it, locking
/// again is the error that names the target.
fn keep_profile(source: &ClassSource, hash: &str, bytes: &[u8]) {
    let Some(root) = vari_fs::cache_dir() else {
        return;
    };
    if kept_profile(hash).is_some() {
        return;
    }
    // The copy's name keeps the original's extension, which tells a facts file from a profile.
    let named_like = match source {
        ClassSource::Snapshot(_) => Path::new("profile.json"),
        ClassSource::Profile(path) | ClassSource::Facts(path) => path,
    };
    if let Err(e) = vari_install::profile_store::keep(&root, hash, named_like, bytes) {
        tracing::warn!(
            "could not keep a copy of {} in vari's cache: {e}",
            source.path().display()
        );
    }
}

/// One target: its name, its hardware source (none: no hardware), its Python version and
/// platform.
fn target(
    name: String,
    source: Option<&ClassSource>,
    python_version: Option<String>,
    python_platform: Option<String>,
    lock_dir: &Path,
    resolve: ResolveTarget<'_>,
) -> Result<LockingTarget, CliError> {
    let resolved = resolve(
        source,
        python_version.as_deref(),
        python_platform.as_deref(),
    )?;
    let described = source.and(resolved.described_by.as_deref());
    let profile_hash = described.map(profile_hash);
    let recorded = source.and_then(|s| recorded_profile(s.path(), lock_dir));
    if let (Some(source), Some(bytes), Some(hash), None) =
        (source, described, &profile_hash, &recorded)
    {
        keep_profile(source, hash, bytes);
    }
    Ok(LockingTarget {
        lock: LockTarget {
            name: name.clone(),
            profile: recorded,
            profile_hash,
            python_version,
            python_platform,
        },
        files: LockFilesTarget {
            name,
            target: resolved.target,
            has_hardware: source.is_some(),
        },
    })
}

/// How a lock in `lock_dir` records the profile at `profile`: its path relative to the lock's
/// directory, `/`-separated, when it lies under it; else nothing (the lock keeps its hash and
/// the target's name, never a path of this machine).
pub(crate) fn recorded_profile(profile: &Path, lock_dir: &Path) -> Option<String> {
    vari_fs::safe_path::relative_under(profile, lock_dir).filter(|relative| relative != ".")
}

/// The hash of what describes a target's hardware (a profile's bytes, or the JSON detected
/// from a snapshot), as a lock records it.
fn profile_hash(bytes: &[u8]) -> String {
    let mut hash = InputsHash::new();
    hash.add("profile", bytes);
    hash.finish()
}

/// A command line's targets as the lock maker asks for them (`vari_lockmaker::MakeTargets`):
/// its classes with every Python version and platform, or the targets an existing lock
/// records.
pub(crate) struct ClassTargets<'a> {
    /// The classes of `--target`.
    pub(crate) classes: Vec<MachineClass>,
    /// `--python-version`s.
    pub(crate) versions: &'a [String],
    /// `--python-platform`s.
    pub(crate) platforms: &'a [String],
    /// How a target is made from its profile.
    pub(crate) resolve: ResolveTarget<'a>,
}

impl vari_lockmaker::MakeTargets for ClassTargets<'_> {
    fn given(&self) -> bool {
        !self.classes.is_empty() || !self.versions.is_empty() || !self.platforms.is_empty()
    }

    fn make(&self, lock_dir: &Path) -> Result<Vec<LockingTarget>, TargetsError> {
        targets(
            &self.classes,
            self.versions,
            self.platforms,
            lock_dir,
            self.resolve,
        )
        .map_err(Into::into)
    }

    fn recorded(
        &self,
        recorded: &[LockTarget],
        lock_path: &Path,
    ) -> Result<Vec<LockingTarget>, TargetsError> {
        recorded_targets(recorded, lock_path, self.resolve).map_err(Into::into)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_are_recorded_relative_to_the_lock_or_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        std::fs::create_dir_all(project.join("ci")).unwrap();
        std::fs::write(project.join("ci/gpu.toml"), "").unwrap();
        std::fs::write(dir.path().join("outside.toml"), "").unwrap();
        assert_eq!(
            recorded_profile(&project.join("ci/gpu.toml"), &project).as_deref(),
            Some("ci/gpu.toml")
        );
        // Outside the lock's directory: no path of this machine (the hash stands for it).
        assert_eq!(
            recorded_profile(&dir.path().join("outside.toml"), &project),
            None
        );
    }
}
