//! Where and how a sync installs: the environment, its installer, and the installer's
//! command for it (what [`apply`](super::apply) and the early start share).

use std::path::{Path, PathBuf};
use std::process::Command;

use vari_python::TargetPython;

use crate::installer::{Installer, InstallerChoice, InstallerError, Program};

/// Where and how to install.
#[derive(Debug, Clone)]
pub struct SyncRequest {
    /// The installer.
    pub installer: Installer,
    /// The environment's interpreter.
    pub python: PathBuf,
    /// Its site-packages directories (what is installed is read there).
    pub site_packages: Vec<PathBuf>,
    /// The environment's prefix: only distributions under it are ever removed (not those of
    /// a base interpreter a virtual environment sees).
    pub prefix: Option<PathBuf>,
    /// Remove the distributions the lock does not list.
    pub exact: bool,
    /// Tell the installer not to use the network (it needs none for wheels).
    pub offline: bool,
}

/// The file in an environment's prefix that the one run changing it holds (`flock`): two
/// `vari sync` (or `vari install -r`) on one environment take turns instead of both surveying
/// it, then both installing, each leaving the other's packages half removed. Not uv's own
/// `<venv>/.lock`: uv takes that one while it installs, and would wait for vari forever.
pub const ENVIRONMENT_LOCK: &str = ".vari-lock";

/// Why a sync has no environment to install into.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    /// The target is described (a Python version and platform) without an interpreter.
    #[error(
        "no Python environment to install into: the target is described without an interpreter"
    )]
    NoInterpreter,
    /// The installer cannot be found or used.
    #[error(transparent)]
    Installer(#[from] InstallerError),
}

impl SyncRequest {
    /// The request for the target's environment: its interpreter, its site-packages and
    /// prefix, and the installer (`choice`, else uv on `PATH`, else its pip; a dry run does
    /// not ask whether pip is importable there, since nothing runs).
    pub fn for_target(
        python: &TargetPython,
        choice: Option<&InstallerChoice>,
        exact: bool,
        offline: bool,
        dry_run: bool,
    ) -> Result<Self, RequestError> {
        let interpreter = python
            .interpreter
            .as_ref()
            .map(|i| i.executable.clone())
            .ok_or(RequestError::NoInterpreter)?;
        let installer = Installer::find(
            choice,
            std::env::var_os("PATH").as_deref(),
            &interpreter,
            match dry_run {
                true => &[],
                false => &python.site_packages,
            },
        )?;
        Ok(Self {
            installer,
            python: interpreter,
            site_packages: python.site_packages.clone(),
            prefix: python.prefix().map(Path::to_path_buf),
            exact,
            offline,
        })
    }

    /// The environment's lock file ([`lock_path`]).
    pub fn lock_path(&self) -> Option<PathBuf> {
        lock_path(self.prefix.as_deref(), &self.site_packages)
    }

    /// Takes the environment's lock ([`lock_environment`]).
    pub fn lock_environment(
        &self,
        on_wait: impl FnOnce(&Path),
    ) -> Result<Option<vari_fs::lock::DirLock>, super::SyncError> {
        lock_environment(self.prefix.as_deref(), &self.site_packages, on_wait)
    }
}

/// The lock file of the environment with `prefix` and `site_packages`: in its prefix, else
/// (no prefix known) in its first site-packages directory; `None` when neither is known.
pub fn lock_path(prefix: Option<&Path>, site_packages: &[PathBuf]) -> Option<PathBuf> {
    prefix
        .or_else(|| site_packages.first().map(PathBuf::as_path))
        .map(|dir| dir.join(ENVIRONMENT_LOCK))
}

/// Takes the lock of the environment with `prefix` and `site_packages` for the rest of the
/// run (released when the value is dropped, or by the kernel when the process ends, however it
/// ends): every command that changes an environment (`vari sync`, `vari install`, `vari
/// install -r`) takes it. When another run holds it, `on_wait` is told once, with the lock
/// file ([`waiting_note`] says it), and this waits for it. An environment whose directory this
/// user cannot write to (a system interpreter) is not locked: the installer could not change
/// it either, and says so itself.
pub fn lock_environment(
    prefix: Option<&Path>,
    site_packages: &[PathBuf],
    on_wait: impl FnOnce(&Path),
) -> Result<Option<vari_fs::lock::DirLock>, super::SyncError> {
    let Some(path) = lock_path(prefix, site_packages) else {
        return Ok(None);
    };
    match vari_fs::lock::lock_exclusive(&path, || on_wait(&path)) {
        Ok(lock) => Ok(Some(lock)),
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem
            ) =>
        {
            tracing::debug!("{}: not locked: {e}", path.display());
            Ok(None)
        }
        Err(e) => Err(super::SyncError::Store {
            message: format!("cannot lock the environment: {e}"),
            path,
        }),
    }
}

/// The note a run waiting for the environment's lock at `path` prints.
pub fn waiting_note(path: &Path) -> String {
    format!(
        "note: blocking: waiting for the lock {} (another vari run is changing this environment)",
        path.display()
    )
}

/// The installer, started for the environment: `PY -m pip`, `PIP --python PY`, `UV pip`.
pub(super) fn base(request: &SyncRequest, verb: &str) -> Command {
    let mut command = match &request.installer.program {
        Program::PythonModule => {
            let mut c = Command::new(&request.python);
            c.args(["-m", "pip", verb]);
            c
        }
        Program::Pip(pip) => {
            let mut c = Command::new(pip);
            c.arg("--python").arg(&request.python).arg(verb);
            c
        }
        Program::Uv(uv) => {
            let mut c = Command::new(uv);
            c.args(["pip", verb, "--python"]).arg(&request.python);
            c
        }
    };
    // Its messages go with vari's on stderr: stdout is vari's report.
    command.stdout(std::io::stderr());
    command
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::installer::{Installer, InstallerKind};

    fn request(prefix: &Path) -> SyncRequest {
        SyncRequest {
            installer: Installer {
                kind: InstallerKind::Uv,
                program: Program::Uv(PathBuf::from("uv")),
            },
            python: prefix.join("bin/python"),
            site_packages: vec![prefix.join("lib/site-packages")],
            prefix: Some(prefix.to_owned()),
            exact: true,
            offline: false,
        }
    }

    #[test]
    fn a_second_writer_is_told_and_waits_until_the_first_is_done() {
        let dir = tempfile::tempdir().unwrap();
        let request = request(dir.path());
        assert_eq!(request.lock_path(), Some(dir.path().join(ENVIRONMENT_LOCK)));
        let first = request.lock_environment(|_| panic!("free")).unwrap();
        assert!(first.is_some());
        let (told, waiting) = std::sync::mpsc::channel();
        let (done, finished) = std::sync::mpsc::channel();
        let second = request.clone();
        let thread = std::thread::spawn(move || {
            let lock = second
                .lock_environment(|path| told.send(path.to_owned()).unwrap())
                .unwrap();
            done.send(()).unwrap();
            lock
        });
        // Told once, with the lock file, and still waiting (it cannot finish while held).
        assert_eq!(waiting.recv().unwrap(), dir.path().join(ENVIRONMENT_LOCK));
        assert!(finished.try_recv().is_err());
        drop(first);
        finished.recv().unwrap();
        assert!(thread.join().unwrap().is_some());
    }

    #[test]
    fn a_planted_link_at_the_lock_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("elsewhere");
        std::fs::write(&target, "x").unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&target, dir.path().join(ENVIRONMENT_LOCK)).unwrap();
            let err = request(dir.path()).lock_environment(|_| {}).unwrap_err();
            assert!(
                err.to_string().contains("cannot lock the environment"),
                "{err}"
            );
        }
    }
}
