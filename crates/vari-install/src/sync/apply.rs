//! Bringing the environment to the lock's files: what already matches stays, the rest is
//! installed without dependency resolution, and (exact) the rest of the environment goes.

use std::ffi::OsString;
use std::path::Path;
use std::process::Command;

use super::request::base;
use super::{EarlyInstall, LockedFile, Staged, SyncError, SyncRequest};
use crate::installer::InstallerKind;
use crate::list::list_installed;

/// Distributions an exact sync never removes: pip, setuptools and wheel, which `uv pip sync`
/// keeps too, and uv, which may be the installer running.
pub const PROTECTED: [&str; 4] = ["pip", "setuptools", "wheel", "uv"];

/// What a sync changes: decided from what is installed before anything runs, so that a dry
/// run says what a real one does.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SyncOutcome {
    /// The files to install (indexes into the files given).
    pub installed: Vec<usize>,
    /// The files whose distribution is installed as the lock wants already.
    pub unchanged: Vec<usize>,
    /// The projects (normalised names) among `installed` that are installed in another
    /// version or build now: only those are reinstalled on purpose (the installer's
    /// reinstall flags would also bypass its cache for every other file).
    pub replaced: Vec<String>,
    /// The distributions to remove: (name, version).
    pub removed: Vec<(String, String)>,
}

/// What installing `files` into the environment would change: a distribution installed with
/// the same name, version and variant label stays; with `exact`, every other distribution
/// under the environment's prefix goes, except [`PROTECTED`].
pub fn survey(request: &SyncRequest, files: &[LockedFile]) -> SyncOutcome {
    let before = list_installed(&request.site_packages);
    let mut outcome = SyncOutcome::default();
    for (index, file) in files.iter().enumerate() {
        let present = before.distributions.iter().any(|d| {
            d.normalized_name() == file.project
                && Some(&d.version) == file.version.as_ref()
                && d.variant.as_ref().map(|v| v.label.to_string()) == file.label
        });
        let other_build = before
            .distributions
            .iter()
            .any(|d| d.normalized_name() == file.project);
        match (present, other_build) {
            (true, _) => outcome.unchanged.push(index),
            (false, replaced) => {
                outcome.installed.push(index);
                if replaced {
                    outcome.replaced.push(file.project.clone());
                }
            }
        }
    }
    if request.exact {
        let wanted: Vec<&str> = files.iter().map(|f| f.project.as_str()).collect();
        outcome.removed = before
            .distributions
            .iter()
            .filter(|d| {
                let name = d.normalized_name();
                !wanted.contains(&name.as_str())
                    && !PROTECTED.contains(&name.as_str())
                    && request
                        .prefix
                        .as_ref()
                        .is_some_and(|p| d.metadata_dir.starts_with(p))
            })
            .map(|d| (d.name.clone(), d.version.clone()))
            .collect();
    }
    outcome
}

/// Carries out `outcome` ([`survey`]'s): installs its files from their checked copies in
/// `staged` (one per item of `outcome.installed`, in its order), then removes what it lists.
/// `early`: uv started for the request before the files were known ([`EarlyInstall`]), given
/// them when its flags are the ones needed (wheels only, no other build of a project to
/// replace) and their paths can be (see [`EarlyInstall`]), else stopped and the installer run
/// as usual.
pub fn apply(
    request: &SyncRequest,
    files: &[LockedFile],
    staged: &[Staged],
    outcome: &SyncOutcome,
    early: Option<EarlyInstall>,
) -> Result<(), SyncError> {
    // The early installer is finished or stopped before anything else runs: the removal below
    // starts the installer again, which must not wait for a uv holding the environment.
    let early = early.filter(|_| !staged.is_empty());
    if !staged.is_empty() {
        let paths: Vec<&Path> = staged.iter().map(|s| s.path.as_path()).collect();
        let builds = outcome
            .installed
            .iter()
            .any(|&i| files.get(i).is_some_and(|f| !f.filename.ends_with(".whl")));
        let handed = !builds && outcome.replaced.is_empty() && EarlyInstall::accepts(&paths);
        match early.filter(|_| handed) {
            Some(early) => early.finish(&paths)?,
            None => run(install_command(request, &paths, builds, &outcome.replaced))?,
        }
    }
    if !outcome.removed.is_empty() {
        let names: Vec<&str> = outcome.removed.iter().map(|(n, _)| n.as_str()).collect();
        run(uninstall_command(request, &names))?;
    }
    Ok(())
}

/// Installs exactly these files: no dependency resolution, replacing the `replaced`
/// projects' other builds (another variant of the same version too); no index unless an
/// sdist must be built (its build dependencies come from the installer's own index).
fn install_command(
    request: &SyncRequest,
    paths: &[&Path],
    builds: bool,
    replaced: &[String],
) -> Command {
    let mut command = base(request, "install");
    command.arg("--no-deps");
    match request.installer.kind {
        InstallerKind::Pip => {
            command.arg("--disable-pip-version-check");
            if !replaced.is_empty() {
                command.arg("--force-reinstall");
            }
        }
        InstallerKind::Uv => {
            for project in replaced {
                command.arg("--reinstall-package").arg(project);
            }
            if request.offline {
                command.arg("--offline");
            }
        }
    }
    if !builds {
        command.arg("--no-index");
    }
    command.args(paths.iter().map(|p| OsString::from(p.as_os_str())));
    command
}

fn uninstall_command(request: &SyncRequest, names: &[&str]) -> Command {
    let mut command = base(request, "uninstall");
    if request.installer.kind == InstallerKind::Pip {
        command.args(["-y", "--disable-pip-version-check"]);
    }
    command.args(names);
    command
}

fn run(mut command: Command) -> Result<(), SyncError> {
    let program = format!(
        "{} {}",
        Path::new(command.get_program())
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        command
            .get_args()
            .take(3)
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    );
    tracing::debug!("running {command:?}");
    // Supervised: a Ctrl-C or SIGTERM reaches the installer, and vari exits after it.
    let status = vari_fs::interrupt::spawn_supervised(&mut command)
        .and_then(vari_fs::interrupt::Supervised::wait)
        .map_err(|e| SyncError::Installer {
            program: program.clone(),
            message: e.to_string(),
        })?;
    match status.success() {
        true => Ok(()),
        false => Err(SyncError::Installer {
            program,
            message: format!("it failed ({status})"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::installer::{Installer, Program};

    fn request(kind: InstallerKind, program: Program) -> SyncRequest {
        SyncRequest {
            installer: Installer { kind, program },
            python: PathBuf::from("/env/bin/python"),
            site_packages: Vec::new(),
            prefix: None,
            exact: true,
            offline: true,
        }
    }

    fn args(command: &Command) -> Vec<String> {
        std::iter::once(command.get_program())
            .chain(command.get_args())
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn exact_files_without_dependencies_or_an_index() {
        let files = [Path::new("/store/a/x-1-py3-none-any.whl")];
        let uv = request(InstallerKind::Uv, Program::Uv(PathBuf::from("/bin/uv")));
        assert_eq!(
            args(&install_command(&uv, &files, false, &["x".to_owned()])),
            [
                "/bin/uv",
                "pip",
                "install",
                "--python",
                "/env/bin/python",
                "--no-deps",
                "--reinstall-package",
                "x",
                "--offline",
                "--no-index",
                "/store/a/x-1-py3-none-any.whl"
            ]
        );
        let pip = request(InstallerKind::Pip, Program::PythonModule);
        assert_eq!(
            args(&install_command(&pip, &files, true, &["x".to_owned()])),
            [
                "/env/bin/python",
                "-m",
                "pip",
                "install",
                "--no-deps",
                "--disable-pip-version-check",
                "--force-reinstall",
                "/store/a/x-1-py3-none-any.whl"
            ]
        );
        assert_eq!(
            args(&uninstall_command(&pip, &["a", "b"])),
            [
                "/env/bin/python",
                "-m",
                "pip",
                "uninstall",
                "-y",
                "--disable-pip-version-check",
                "a",
                "b"
            ]
        );
    }
}
