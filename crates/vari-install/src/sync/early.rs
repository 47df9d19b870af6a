//! uv started before the files to install are known. uv spends its first ten milliseconds or
//! more on itself (its settings, the interpreter's facts, the environment, its TLS roots)
//! before it reads what to install; vari spends about as long reading the lock, planning,
//! listing the environment and checking the store. So uv is started as soon as the
//! environment is known, reading its requirements from standard input, and the files are
//! written there once they are checked: the two overlap instead of adding up.
//!
//! Nothing is installed before the files are handed over: if vari stops first (an error, a
//! sync with nothing to install, one that needs the installer's other flags, a file whose path
//! a requirements file cannot name plainly), the early uv is killed and waited for while it
//! still waits for its input (and should vari die, uv reads the end of its input: no
//! requirement, nothing installed), and the installer runs as usual with the paths as
//! arguments. A requirements file reads more than paths (options, comments, markers, `${VAR}`,
//! and uv decodes a `file:` URL and parses it again, so `%23` becomes a fragment): a path is
//! handed over only when it is absolute and made of letters, digits and `/._+~-`, which none
//! of those read as anything but a path (the store's paths are: a digest, a wheel's name).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use vari_fs::interrupt::Supervised;

use super::request::{base, SyncRequest};
use super::SyncError;
use crate::installer::InstallerKind;

/// A `uv pip install` started early, waiting for its files on standard input.
#[derive(Debug)]
pub struct EarlyInstall {
    child: Option<Supervised>,
}

impl EarlyInstall {
    /// Starts `uv pip install --no-deps --no-index -r -` for `request`'s environment (with
    /// `--offline` when the request is offline); `None` for pip, or when it cannot start (the
    /// installer then runs as usual, and says why if it fails again).
    pub fn start(request: &SyncRequest) -> Option<Self> {
        if request.installer.kind != InstallerKind::Uv {
            return None;
        }
        let mut command = early_command(request);
        command.stdin(Stdio::piped());
        tracing::debug!("starting early {command:?}");
        // Supervised: an interruption reaches it too, and vari exits as soon as it has exited
        // (it is waited for only once the files are known).
        match vari_fs::interrupt::spawn_supervised_in_background(&mut command) {
            Ok(child) => Some(Self { child: Some(child) }),
            Err(e) => {
                tracing::debug!("cannot start the installer early: {e}");
                None
            }
        }
    }

    /// Whether every path can be handed over ([`plain_line`]).
    pub(crate) fn accepts(paths: &[&Path]) -> bool {
        paths.iter().all(|p| plain_line(p).is_some())
    }

    /// Hands `paths` over (each one [`Self::accepts`]) and waits for the installer.
    pub(crate) fn finish(mut self, paths: &[&Path]) -> Result<(), SyncError> {
        let failed = |message: String| SyncError::Installer {
            program: "uv pip install".to_owned(),
            message,
        };
        let mut child = self
            .child
            .take()
            .ok_or_else(|| failed("it is gone".to_owned()))?;
        let mut input = String::new();
        for path in paths {
            let line = plain_line(path)
                .ok_or_else(|| failed(format!("{}: not a plain path", path.display())))?;
            input.push_str(line);
            input.push('\n');
        }
        let written = match child.child_mut().stdin.take() {
            Some(mut stdin) => stdin.write_all(input.as_bytes()),
            None => Err(std::io::Error::other("no standard input")),
        };
        // Written or not, the input is closed (dropped) before waiting.
        if let Err(e) = written {
            child.kill();
            return Err(failed(format!("cannot give it the files: {e}")));
        }
        let status = child.wait().map_err(|e| failed(e.to_string()))?;
        match status.success() {
            true => Ok(()),
            false => Err(failed(format!("it failed ({status})"))),
        }
    }
}

impl Drop for EarlyInstall {
    /// Not handed any file: stopped before it could install anything.
    fn drop(&mut self) {
        if let Some(child) = self.child.take() {
            child.kill();
        }
    }
}

/// The line naming `path` in a requirements file: the path itself, when it is absolute and
/// every character is a letter, a digit or one of `/._+~-`; else `None`.
fn plain_line(path: &Path) -> Option<&str> {
    let text = path.to_str()?;
    let plain = text.starts_with('/')
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._+~-".contains(c));
    plain.then_some(text)
}

/// `uv pip install --python PY --no-deps [--offline] --no-index -r -`.
fn early_command(request: &SyncRequest) -> Command {
    let mut command = base(request, "install");
    command.arg("--no-deps");
    if request.offline {
        command.arg("--offline");
    }
    command.args(["--no-index", "-r", "-"]);
    command
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_paths_nothing_in_a_requirements_file_reads_otherwise_are_handed_over() {
        let store = "/home/u/.cache/vari/locked/0a1b/m-2c3d/torch-2.10.0+cu128-py3-none-any.whl";
        assert_eq!(plain_line(Path::new(store)), Some(store));
        for odd in [
            "relative/a-1-py3-none-any.whl",
            "/c a/a-1-py3-none-any.whl",
            "/$HOME/a-1-py3-none-any.whl",
            "/x#y/a-1-py3-none-any.whl",
            "/x;y/a-1-py3-none-any.whl",
            "/x@y/a-1-py3-none-any.whl",
            "/x\ny/a-1-py3-none-any.whl",
            "/caf\u{e9}/a-1-py3-none-any.whl",
        ] {
            assert_eq!(plain_line(Path::new(odd)), None, "{odd}");
        }
        let paths = [Path::new(store), Path::new("/c a/b.whl")];
        assert!(!EarlyInstall::accepts(&paths));
        assert!(EarlyInstall::accepts(&paths[..1]));
    }

    #[test]
    fn the_early_installer_reads_its_files_and_nothing_else_from_its_input() {
        use crate::installer::{Installer, Program};
        let request = SyncRequest {
            installer: Installer {
                kind: InstallerKind::Uv,
                program: Program::Uv("/bin/uv".into()),
            },
            python: "/env/bin/python".into(),
            site_packages: Vec::new(),
            prefix: None,
            exact: true,
            offline: true,
        };
        let command = early_command(&request);
        let args: Vec<String> = std::iter::once(command.get_program())
            .chain(command.get_args())
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            args,
            [
                "/bin/uv",
                "pip",
                "install",
                "--python",
                "/env/bin/python",
                "--no-deps",
                "--offline",
                "--no-index",
                "-r",
                "-"
            ]
        );
        let pip = SyncRequest {
            installer: Installer {
                kind: InstallerKind::Pip,
                program: Program::PythonModule,
            },
            ..request
        };
        assert!(EarlyInstall::start(&pip).is_none());
    }
}
