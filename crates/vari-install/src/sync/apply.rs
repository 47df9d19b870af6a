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

/// What a sync does with one planned file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Its distribution is installed as the lock wants already: it stays.
    Keep,
    /// Installed; nothing of its project is installed now.
    Install,
    /// Installed over another version or build of its project installed now: only those
    /// are reinstalled on purpose (the installer's reinstall flags would also bypass its
    /// cache for every other file).
    Replace,
}

impl Action {
    /// Whether the file is installed (and so fetched first).
    #[must_use]
    pub fn installs(self) -> bool {
        self != Self::Keep
    }
}

/// One planned item (anything that holds its [`LockedFile`]) with what the sync does with
/// it and, once fetched, its checked copy: each item carries its own result.
#[derive(Debug, Clone)]
pub struct Step<T> {
    /// The planned item.
    pub item: T,
    /// What the sync does with it.
    pub action: Action,
    /// Its checked copy in the store, once fetched ([`SyncOutcome::stage`]); only for an
    /// item that [`Action::installs`].
    pub staged: Option<Staged>,
}

/// What a sync changes: decided from what is installed before anything runs, so that a dry
/// run says what a real one does.
#[derive(Debug, Clone)]
pub struct SyncOutcome<T> {
    /// Every planned item, in the plan's order, with its action.
    pub steps: Vec<Step<T>>,
    /// The distributions to remove: (name, version).
    pub removed: Vec<(String, String)>,
}

impl<T: AsRef<LockedFile>> SyncOutcome<T> {
    /// The files to install, in the plan's order.
    pub fn to_install(&self) -> impl Iterator<Item = &LockedFile> {
        self.steps
            .iter()
            .filter(|s| s.action.installs())
            .map(|s| s.item.as_ref())
    }

    /// Fetches the files to install with `fetch` (given them in the plan's order, it gives
    /// one checked copy per file, in the same order) and keeps each copy in its step.
    pub fn stage<E>(
        &mut self,
        fetch: impl FnOnce(&[&LockedFile]) -> Result<Vec<Staged>, E>,
    ) -> Result<(), E> {
        let staged = fetch(&self.to_install().collect::<Vec<_>>())?;
        let steps = self.steps.iter_mut().filter(|s| s.action.installs());
        for (step, copy) in steps.zip(staged) {
            step.staged = Some(copy);
        }
        Ok(())
    }
}

/// What installing the planned `items` into the environment would change: a distribution
/// installed with the same name, version and variant label stays; with `exact`, every other
/// distribution under the environment's prefix goes, except [`PROTECTED`].
pub fn survey<T: AsRef<LockedFile>>(request: &SyncRequest, items: Vec<T>) -> SyncOutcome<T> {
    let before = list_installed(&request.site_packages);
    let mut removed = Vec::new();
    if request.exact {
        let wanted: Vec<&str> = items.iter().map(|i| i.as_ref().project.as_str()).collect();
        removed = before
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
    let steps = items
        .into_iter()
        .map(|item| {
            let file = item.as_ref();
            let present = before.distributions.iter().any(|d| {
                d.normalized_name() == file.project
                    && Some(&d.version) == file.version.as_ref()
                    && d.variant.as_ref().map(|v| v.label.to_string()) == file.label
            });
            let other_build = before
                .distributions
                .iter()
                .any(|d| d.normalized_name() == file.project);
            let action = match (present, other_build) {
                (true, _) => Action::Keep,
                (false, false) => Action::Install,
                (false, true) => Action::Replace,
            };
            Step {
                item,
                action,
                staged: None,
            }
        })
        .collect();
    SyncOutcome { steps, removed }
}

/// Carries out `outcome` ([`survey`]'s): installs the files of its steps that install, each
/// from its checked copy ([`SyncOutcome::stage`]), then removes what it lists.
/// `early`: uv started for the request before the files were known ([`EarlyInstall`]), given
/// them when its flags are the ones needed (wheels only, no other build of a project to
/// replace) and their paths can be (see [`EarlyInstall`]), else stopped and the installer run
/// as usual.
pub fn apply<T: AsRef<LockedFile>>(
    request: &SyncRequest,
    outcome: &SyncOutcome<T>,
    early: Option<EarlyInstall>,
) -> Result<(), SyncError> {
    let mut paths: Vec<&Path> = Vec::new();
    let mut builds = false;
    let mut replaced: Vec<String> = Vec::new();
    for step in outcome.steps.iter().filter(|s| s.action.installs()) {
        let file = step.item.as_ref();
        // Nothing is installed that was not fetched and checked.
        let Some(staged) = &step.staged else {
            return Err(SyncError::Unavailable {
                filename: file.filename.clone(),
                message: "it was not fetched and checked before installing".to_owned(),
            });
        };
        paths.push(&staged.path);
        builds |= !file.filename.ends_with(".whl");
        if step.action == Action::Replace {
            replaced.push(file.project.clone());
        }
    }
    // The early installer is finished or stopped before anything else runs: the removal below
    // starts the installer again, which must not wait for a uv holding the environment.
    let early = early.filter(|_| !paths.is_empty());
    if !paths.is_empty() {
        let handed = !builds && replaced.is_empty() && EarlyInstall::accepts(&paths);
        match early.filter(|_| handed) {
            Some(early) => early.finish(&paths)?,
            None => run(install_command(request, &paths, builds, &replaced))?,
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

    /// A planned item, as the sync operation's entries are.
    struct Item(LockedFile);

    impl AsRef<LockedFile> for Item {
        fn as_ref(&self) -> &LockedFile {
            &self.0
        }
    }

    fn item(project: &str, version: &str) -> Item {
        Item(LockedFile {
            project: project.to_owned(),
            version: Some(version.to_owned()),
            label: None,
            filename: format!("{project}-{version}-py3-none-any.whl"),
            url: None,
            path: None,
            sha256: "1".repeat(64),
            size: None,
            markers: None,
            locked_variant: None,
        })
    }

    #[test]
    fn each_planned_file_carries_its_action_and_its_own_checked_copy() {
        let dir = tempfile::tempdir().unwrap();
        let site = dir.path().join("site-packages");
        for (name, version) in [("kept", "1.0"), ("older", "1.0"), ("stray", "3.0")] {
            let info = site.join(format!("{name}-{version}.dist-info"));
            std::fs::create_dir_all(&info).unwrap();
            std::fs::write(
                info.join("METADATA"),
                format!("Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"),
            )
            .unwrap();
        }
        let mut request = request(InstallerKind::Uv, Program::Uv(PathBuf::from("/bin/uv")));
        request.site_packages = vec![site];
        request.prefix = Some(dir.path().to_owned());
        let items = vec![
            item("new", "1.0"),
            item("kept", "1.0"),
            item("older", "2.0"),
        ];
        let mut outcome = survey(&request, items);
        let actions: Vec<(&str, Action)> = outcome
            .steps
            .iter()
            .map(|s| (s.item.0.project.as_str(), s.action))
            .collect();
        assert_eq!(
            actions,
            [
                ("new", Action::Install),
                ("kept", Action::Keep),
                ("older", Action::Replace)
            ]
        );
        assert_eq!(outcome.removed, [("stray".to_owned(), "3.0".to_owned())]);

        // Nothing fetched yet: nothing may be installed (the installer is never started).
        let error = apply(&request, &outcome, None).unwrap_err();
        assert_eq!(
            error.to_string(),
            "new-1.0-py3-none-any.whl: it was not fetched and checked before installing"
        );

        // The fetcher is given the files to install only, and each copy lands in its step.
        outcome
            .stage(|wanted| {
                let names: Vec<&str> = wanted.iter().map(|f| f.filename.as_str()).collect();
                assert_eq!(
                    names,
                    ["new-1.0-py3-none-any.whl", "older-2.0-py3-none-any.whl"]
                );
                Ok::<_, SyncError>(
                    wanted
                        .iter()
                        .map(|f| Staged {
                            path: Path::new("/store").join(&f.filename),
                            from: "store".to_owned(),
                        })
                        .collect(),
                )
            })
            .unwrap();
        let staged: Vec<Option<&Path>> = outcome
            .steps
            .iter()
            .map(|s| s.staged.as_ref().map(|c| c.path.as_path()))
            .collect();
        assert_eq!(
            staged,
            [
                Some(Path::new("/store/new-1.0-py3-none-any.whl")),
                None,
                Some(Path::new("/store/older-2.0-py3-none-any.whl"))
            ]
        );
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
