//! Which interpreter is the target: a path given by the user, else `VIRTUAL_ENV`, else
//! `CONDA_PREFIX`, else `python3` on `PATH`. The environment is an explicit input so the
//! answer depends on nothing hidden.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use crate::env::{search_path, DiscoveryEnv, Source};
use crate::error::PythonError;
use crate::shim::{self, Shim};

/// An interpreter to ask, and how it was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Where it came from.
    pub source: Source,
    /// The path as the source gave it (an environment directory, a shim, an interpreter).
    pub given: PathBuf,
    /// The program to run.
    pub interpreter: PathBuf,
    /// The shim `interpreter` turned out to be, with the interpreter it stands for when that
    /// could be worked out without running it.
    pub shim: Option<Shim>,
}

impl Found {
    /// The program to ask: the real interpreter behind a shim when known, else the program
    /// itself.
    pub fn program(&self) -> &Path {
        match &self.shim {
            Some(Shim {
                target: Some(real), ..
            }) => real,
            _ => &self.interpreter,
        }
    }
}

/// The interpreter of an environment directory, in the order they are looked for.
const ENVIRONMENT_INTERPRETERS: [&str; 4] = [
    "bin/python3",
    "bin/python",
    "Scripts/python.exe",
    "python.exe",
];

/// Finds the interpreter: `given` (an interpreter or an environment directory), else the
/// active virtual environment, else the active conda environment, else `python3` on `PATH`.
/// `Ok(None)` when nothing was given and nothing is active or on `PATH`.
pub fn find_interpreter(
    given: Option<&Path>,
    env: &DiscoveryEnv,
) -> Result<Option<Found>, PythonError> {
    if let Some(path) = given {
        return interpreter_at(path, Source::Given, env).map(Some);
    }
    if let Some(dir) = env.var("VIRTUAL_ENV") {
        return interpreter_at(Path::new(dir), Source::VirtualEnv, env).map(Some);
    }
    if let Some(dir) = env.var("CONDA_PREFIX") {
        return interpreter_at(Path::new(dir), Source::CondaPrefix, env).map(Some);
    }
    let name = if cfg!(windows) {
        "python.exe"
    } else {
        "python3"
    };
    Ok(search_path(name, env, None).map(|program| {
        let shim = shim::detect(&program, env);
        Found {
            source: Source::Path(name.to_owned()),
            given: program.clone(),
            interpreter: program,
            shim,
        }
    }))
}

/// The interpreter at `path`: the file itself, or the interpreter of an environment directory.
fn interpreter_at(path: &Path, from: Source, env: &DiscoveryEnv) -> Result<Found, PythonError> {
    let Ok(meta) = std::fs::metadata(path) else {
        return Err(PythonError::NotFound {
            from,
            path: path.to_owned(),
        });
    };
    let interpreter = if meta.is_dir() {
        ENVIRONMENT_INTERPRETERS
            .iter()
            .map(|relative| path.join(relative))
            .find(|candidate| candidate.is_file())
            .ok_or_else(|| PythonError::NoInterpreterInDirectory {
                from: from.clone(),
                path: path.to_owned(),
                looked: ENVIRONMENT_INTERPRETERS.to_vec(),
            })?
    } else {
        if !looks_like_python(path) {
            return Err(PythonError::NotPython {
                from,
                path: path.to_owned(),
                reason: "its name (and the name of the file it links to) does not start with \
                         python, pypy or graalpy"
                    .to_owned(),
            });
        }
        path.to_owned()
    };
    let shim = shim::detect(&interpreter, env);
    Ok(Found {
        source: from,
        given: path.to_owned(),
        interpreter,
        shim,
    })
}

/// Whether a file's name, or the name of the file its links end at, is an interpreter's
/// (`python3.12`, `python.exe`, `pypy3`, `graalpy`): a guard against running an arbitrary
/// program named by mistake.
fn looks_like_python(path: &Path) -> bool {
    let named = |p: &Path| {
        p.file_name().and_then(OsStr::to_str).is_some_and(|name| {
            let name = name.to_ascii_lowercase();
            ["python", "pypy", "graalpy"]
                .iter()
                .any(|prefix| name.starts_with(prefix))
        })
    };
    named(path) || std::fs::canonicalize(path).is_ok_and(|real| named(&real))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_display_where_they_looked() {
        assert_eq!(Source::VirtualEnv.to_string(), "VIRTUAL_ENV");
        assert_eq!(
            Source::Path("python3".into()).to_string(),
            "python3 on PATH"
        );
    }

    #[test]
    fn names_that_look_like_python() {
        for name in [
            "python",
            "python3.12",
            "python.exe",
            "pypy3",
            "graalpy",
            "Python3",
        ] {
            assert!(looks_like_python(Path::new(name)), "{name}");
        }
        assert!(!looks_like_python(Path::new("/nonexistent/ls")));
    }
}
