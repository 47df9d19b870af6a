//! Where and how a sync installs: the environment, its installer, and the installer's
//! command for it (what [`apply`](super::apply) and the early start share).

use std::path::PathBuf;
use std::process::Command;

use crate::installer::{Installer, Program};

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
