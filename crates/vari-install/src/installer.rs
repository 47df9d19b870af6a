//! Which installer runs (pip or uv, and which executable), and the command line that makes it
//! install from the proxy and from nothing else.
//!
//! pip: `PY -m pip install --index-url PROXY REQ… ARGS…` with the target Python's own pip, or
//! `PIP --python PY install …` with the pip of another environment (pip ≥ 22.3). Its own index
//! settings are overridden through the variables it reads last ([`HideOwn`]): `PIP_INDEX_URL`
//! names the proxy, and when its settings name them, `PIP_EXTRA_INDEX_URL` names the proxy too
//! (pip drops a repeated index URL), `PIP_NO_INDEX` is off, `PIP_FIND_LINKS` names an empty
//! directory; the proxy reads those sources in its place. pip checks every download against the
//! hash the proxy lists, so its HTTP cache cannot hand it another variant's bytes.
//!
//! uv: `UV pip install --python PY --index-url PROXY REQ… ARGS…`, with the index variables it
//! would read removed from its environment (the proxy reads them in its place), and when its
//! configuration files name sources, `--config-file` with a copy of its settings without them. uv keeps
//! downloaded wheels under the index URL and the file name and reuses them without comparing
//! hashes; its cache is safe to use because the proxy's index URL names the target and the
//! upstream sources (`/t/{fingerprint}/simple/`, see `vari_proxy::RunningProxy::index_url`):
//! another target or another index, even on a port used before, is another URL, so uv never
//! reuses another variant's wheel. And it is reused: the port is derived from the same
//! fingerprint ([`crate::stable_port`]), so the same configuration is the same URL run after
//! run.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;

use url::Url;

/// The two installers vari drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InstallerKind {
    /// pip.
    Pip,
    /// uv (`uv pip install`).
    Uv,
}

impl std::fmt::Display for InstallerKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Pip => "pip",
            Self::Uv => "uv",
        })
    }
}

/// What the user asked for with `--installer`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InstallerChoice {
    /// pip of the target Python.
    Pip,
    /// `uv` on `PATH`.
    Uv,
    /// A `pip…` or `uv…` executable.
    Path(PathBuf),
}

impl std::str::FromStr for InstallerChoice {
    type Err = InstallerError;

    /// `pip`, `uv`, or a path to a `pip` or `uv` executable.
    fn from_str(given: &str) -> Result<Self, Self::Err> {
        match given {
            "pip" => Ok(Self::Pip),
            "uv" => Ok(Self::Uv),
            path if path.contains(std::path::MAIN_SEPARATOR) || path.contains('/') => {
                let path = PathBuf::from(path);
                kind_of(&path)?;
                Ok(Self::Path(path))
            }
            other => Err(InstallerError::Unknown(other.to_owned())),
        }
    }
}

/// Why no installer can run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InstallerError {
    /// `--installer` is neither pip, uv nor a path.
    #[error("`{0}`: expected pip, uv, or the path of a pip or uv executable")]
    Unknown(String),
    /// A path whose file name says neither pip nor uv.
    #[error("{}: not a pip or uv executable (its name must start with `pip` or `uv`)", .0.display())]
    NotAnInstaller(PathBuf),
    /// A path that does not exist.
    #[error("{}: no such installer", .0.display())]
    Missing(PathBuf),
    /// `uv` asked for and not on PATH.
    #[error("uv is not on PATH (install it, or use --installer pip)")]
    UvNotFound,
    /// pip asked for (or the default) and the target Python has none.
    #[error("{} has no pip (run `{} -m ensurepip`, or install uv and use --installer uv)", .0.display(), .0.display())]
    NoPip(PathBuf),
}

/// How the installer is started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Program {
    /// `PY -m pip`: the target Python's own pip.
    PythonModule,
    /// A `pip` executable, given the target with `--python`.
    Pip(PathBuf),
    /// A `uv` executable.
    Uv(PathBuf),
}

/// The installer that runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installer {
    /// pip or uv.
    pub kind: InstallerKind,
    /// How it is started.
    pub program: Program,
}

impl Installer {
    /// The installer for `choice`; without one, uv when it is on `path` (the `PATH` variable),
    /// else the pip of the target Python (whose site-packages directories are `site_packages`).
    pub fn find(
        choice: Option<&InstallerChoice>,
        path: Option<&OsStr>,
        python: &Path,
        site_packages: &[PathBuf],
    ) -> Result<Self, InstallerError> {
        let pip = || {
            // `python -m pip` needs pip importable from the target; say so before it fails.
            // The site-packages directories answer at once; the interpreter decides when pip is
            // elsewhere (a user site, a distribution's own directory).
            if !site_packages.is_empty()
                && !site_packages.iter().any(|d| d.join("pip").is_dir())
                && !imports_pip(python)
            {
                return Err(InstallerError::NoPip(python.to_path_buf()));
            }
            Ok(Self {
                kind: InstallerKind::Pip,
                program: Program::PythonModule,
            })
        };
        match choice {
            Some(InstallerChoice::Pip) => pip(),
            Some(InstallerChoice::Uv) => {
                let uv = find_on_path("uv", path).ok_or(InstallerError::UvNotFound)?;
                Ok(Self {
                    kind: InstallerKind::Uv,
                    program: Program::Uv(uv),
                })
            }
            Some(InstallerChoice::Path(given)) => {
                if !given.is_file() {
                    return Err(InstallerError::Missing(given.clone()));
                }
                let kind = kind_of(given)?;
                Ok(Self {
                    kind,
                    program: match kind {
                        InstallerKind::Pip => Program::Pip(given.clone()),
                        InstallerKind::Uv => Program::Uv(given.clone()),
                    },
                })
            }
            None => match find_on_path("uv", path) {
                Some(uv) => Ok(Self {
                    kind: InstallerKind::Uv,
                    program: Program::Uv(uv),
                }),
                None => pip(),
            },
        }
    }
}

/// Whether `python` can import pip.
fn imports_pip(python: &Path) -> bool {
    let mut command = Command::new(python);
    command
        .args(["-c", "import pip"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // Supervised, as every program vari waits for: an interruption reaches it too.
    vari_fs::interrupt::spawn_supervised(&mut command)
        .and_then(vari_fs::interrupt::Supervised::wait)
        .is_ok_and(|s| s.success())
}

fn kind_of(path: &Path) -> Result<InstallerKind, InstallerError> {
    let name = path
        .file_name()
        .and_then(OsStr::to_str)
        .unwrap_or_default()
        .to_lowercase();
    if name.starts_with("pip") {
        Ok(InstallerKind::Pip)
    } else if name.starts_with("uv") {
        Ok(InstallerKind::Uv)
    } else {
        Err(InstallerError::NotAnInstaller(path.to_path_buf()))
    }
}

/// The first executable `name` in the directories of `path`.
fn find_on_path(name: &str, path: Option<&OsStr>) -> Option<PathBuf> {
    let file = format!("{name}{}", std::env::consts::EXE_SUFFIX);
    std::env::split_paths(path?)
        .map(|dir| dir.join(&file))
        .find(|candidate| is_executable(candidate))
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    path.is_file()
}

/// One installation: what to install, where, and what else to tell the installer.
#[derive(Debug, Clone)]
pub struct InstallRequest {
    /// The installer.
    pub installer: Installer,
    /// The target environment's interpreter.
    pub python: PathBuf,
    /// The requirements, as given.
    pub requirements: Vec<String>,
    /// Anything else for the installer (after `--`), passed as it is, last.
    pub args: Vec<OsString>,
    /// Let the installer take pre-releases (pip `--pre`, uv `--prerelease allow`).
    pub pre: bool,
    /// uv only: `--python-version` and `--python-platform` of a described target.
    pub uv_target: Vec<OsString>,
    /// pip's own settings to override so that it reads the proxy alone (the proxy reads what
    /// they name instead).
    pub hide: HideOwn,
}

/// The index settings an installer would read on its own and must not (uv's variables are
/// always removed from its environment). Each is overridden only when set, so that the
/// installer's output stays as usual.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HideOwn {
    /// pip's settings name extra indexes: `PIP_EXTRA_INDEX_URL` names the proxy (pip drops a
    /// repeated index URL).
    pub extra_indexes: bool,
    /// pip's settings say `no-index`: `PIP_NO_INDEX` is turned off.
    pub no_index: bool,
    /// pip's settings name find-links sources: `PIP_FIND_LINKS` names this empty directory.
    pub find_links: Option<PathBuf>,
    /// uv's configuration files name sources: uv reads this file in their place
    /// (`--config-file`), their other settings without the sources
    /// ([`crate::InstallerIndexes::uv_config`]).
    pub uv_config: Option<PathBuf>,
}

/// Variables of uv's that name indexes: the proxy reads them, uv must not.
pub const UV_INDEX_VARIABLES: [&str; 6] = [
    "UV_INDEX",
    "UV_EXTRA_INDEX_URL",
    "UV_DEFAULT_INDEX",
    "UV_INDEX_URL",
    "UV_FIND_LINKS",
    "UV_NO_INDEX",
];

impl InstallRequest {
    /// The installer's command line and environment, installing from `index` only.
    pub fn command(&self, index: &Url) -> Command {
        let index = index.as_str();
        let mut command = match &self.installer.program {
            Program::PythonModule => {
                let mut c = Command::new(&self.python);
                c.args(["-m", "pip", "install"]);
                c
            }
            Program::Pip(pip) => {
                let mut c = Command::new(pip);
                c.arg("--python").arg(&self.python).arg("install");
                c
            }
            Program::Uv(uv) => {
                let mut c = Command::new(uv);
                c.args(["pip", "install", "--python"]).arg(&self.python);
                c
            }
        };
        command.args(["--index-url", index]);
        match self.installer.kind {
            InstallerKind::Pip => {
                // The variables come last in pip's configuration: they override the files.
                command.env("PIP_INDEX_URL", index);
                if self.hide.extra_indexes {
                    command.env("PIP_EXTRA_INDEX_URL", index);
                }
                if self.hide.no_index {
                    command.env("PIP_NO_INDEX", "0");
                }
                if let Some(empty) = &self.hide.find_links {
                    command.env("PIP_FIND_LINKS", empty);
                }
                if self.pre {
                    command.arg("--pre");
                }
            }
            InstallerKind::Uv => {
                for variable in UV_INDEX_VARIABLES {
                    command.env_remove(variable);
                }
                if let Some(config) = &self.hide.uv_config {
                    command.arg("--config-file").arg(config);
                }
                if self.pre {
                    command.args(["--prerelease", "allow"]);
                }
                command.args(&self.uv_target);
            }
        }
        command.args(&self.requirements);
        command.args(&self.args);
        command
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(command: &Command) -> Vec<String> {
        std::iter::once(command.get_program())
            .chain(command.get_args())
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    fn request(installer: Installer) -> InstallRequest {
        InstallRequest {
            installer,
            python: PathBuf::from("/env/bin/python"),
            requirements: vec!["torch>=2.9".into()],
            args: vec!["--no-deps".into()],
            pre: true,
            uv_target: Vec::new(),
            hide: HideOwn {
                extra_indexes: true,
                ..HideOwn::default()
            },
        }
    }

    #[test]
    fn pip_and_uv_command_lines() {
        let index = Url::parse("http://127.0.0.1:4000/simple/").unwrap();
        let pip = request(Installer {
            kind: InstallerKind::Pip,
            program: Program::PythonModule,
        })
        .command(&index);
        assert_eq!(
            args(&pip),
            [
                "/env/bin/python",
                "-m",
                "pip",
                "install",
                "--index-url",
                "http://127.0.0.1:4000/simple/",
                "--pre",
                "torch>=2.9",
                "--no-deps"
            ]
        );
        assert!(pip
            .get_envs()
            .any(|(k, v)| k == "PIP_EXTRA_INDEX_URL" && v == Some(OsStr::new(index.as_str()))));
        let uv = request(Installer {
            kind: InstallerKind::Uv,
            program: Program::Uv("/bin/uv".into()),
        })
        .command(&index);
        assert_eq!(
            args(&uv),
            [
                "/bin/uv",
                "pip",
                "install",
                "--python",
                "/env/bin/python",
                "--index-url",
                "http://127.0.0.1:4000/simple/",
                "--prerelease",
                "allow",
                "torch>=2.9",
                "--no-deps"
            ]
        );
        assert!(uv.get_envs().any(|(k, v)| k == "UV_INDEX" && v.is_none()));
    }

    #[test]
    fn choices_parse_and_uv_is_found_on_path() {
        assert_eq!("pip".parse(), Ok(InstallerChoice::Pip));
        assert!(matches!(
            "pipx".parse::<InstallerChoice>(),
            Err(InstallerError::Unknown(_))
        ));
        assert!(matches!(
            "/usr/bin/python3".parse::<InstallerChoice>(),
            Err(InstallerError::NotAnInstaller(_))
        ));
        let dir = tempfile::tempdir().unwrap();
        let python = dir.path().join("python");
        let none = Installer::find(None, Some(dir.path().as_os_str()), &python, &[]).unwrap();
        assert_eq!(none.kind, InstallerKind::Pip);
        let uv = dir.path().join("uv");
        std::fs::write(&uv, "").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&uv, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let found = Installer::find(None, Some(dir.path().as_os_str()), &python, &[]).unwrap();
        assert_eq!(found.program, Program::Uv(uv));
        // A target without pip is refused before anything runs.
        let site = dir.path().join("site-packages");
        std::fs::create_dir(&site).unwrap();
        assert_eq!(
            Installer::find(Some(&InstallerChoice::Pip), None, &python, &[site]),
            Err(InstallerError::NoPip(python))
        );
    }
}
