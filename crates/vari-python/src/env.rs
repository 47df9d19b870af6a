//! What discovery reads from the process: the environment variables and working directory
//! ([`DiscoveryEnv`]), which of them named an interpreter ([`Source`]), and the `PATH` search.
//! Discovery, shim resolution and error messages all build on these, so they sit below them.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::path::{Path, PathBuf};

/// The process environment discovery reads: variables and the working directory.
///
/// An empty variable counts as unset.
///
/// ```
/// use vari_python::DiscoveryEnv;
/// let env = DiscoveryEnv::new([("VIRTUAL_ENV", "/work/.venv"), ("CONDA_PREFIX", "")]);
/// assert_eq!(env.var("VIRTUAL_ENV").unwrap(), "/work/.venv");
/// assert_eq!(env.var("CONDA_PREFIX"), None);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiscoveryEnv {
    vars: BTreeMap<String, OsString>,
    current_dir: Option<PathBuf>,
}

impl DiscoveryEnv {
    /// Variables from pairs; no working directory.
    pub fn new<K, V>(vars: impl IntoIterator<Item = (K, V)>) -> Self
    where
        K: Into<String>,
        V: Into<OsString>,
    {
        Self {
            vars: vars
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
            current_dir: None,
        }
    }

    /// This process's variables and working directory.
    pub fn from_process() -> Self {
        Self {
            vars: std::env::vars_os()
                .filter_map(|(k, v)| Some((k.into_string().ok()?, v)))
                .collect(),
            current_dir: std::env::current_dir().ok(),
        }
    }

    /// Sets the working directory (where version files such as `.python-version` are looked
    /// for).
    pub fn with_current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.current_dir = Some(dir.into());
        self
    }

    /// A variable's value, `None` when unset or empty.
    pub fn var(&self, name: &str) -> Option<&OsStr> {
        self.vars
            .get(name)
            .map(OsString::as_os_str)
            .filter(|v| !v.is_empty())
    }

    /// A variable's value as UTF-8 text.
    pub(crate) fn var_str(&self, name: &str) -> Option<&str> {
        self.var(name)?.to_str()
    }

    /// The working directory, when known.
    pub fn current_dir(&self) -> Option<&Path> {
        self.current_dir.as_deref()
    }
}

/// Where the interpreter came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A path the caller gave explicitly.
    Given,
    /// The active virtual environment, `VIRTUAL_ENV`.
    VirtualEnv,
    /// The active conda environment, `CONDA_PREFIX`.
    CondaPrefix,
    /// A program found on `PATH` by this name.
    Path(String),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Given => f.write_str("the requested Python"),
            Self::VirtualEnv => f.write_str("VIRTUAL_ENV"),
            Self::CondaPrefix => f.write_str("CONDA_PREFIX"),
            Self::Path(name) => write!(f, "{name} on PATH"),
        }
    }
}

/// The first `name` on `PATH` that is a file, skipping the directory `skip` (a shim
/// directory looking for the program it stands for).
pub(crate) fn search_path(name: &str, env: &DiscoveryEnv, skip: Option<&Path>) -> Option<PathBuf> {
    let paths = env.var("PATH")?;
    std::env::split_paths(paths)
        .filter(|dir| !dir.as_os_str().is_empty())
        .filter(|dir| skip.is_none_or(|skip| !same_dir(dir, skip)))
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

fn same_dir(a: &Path, b: &Path) -> bool {
    a == b
        || match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        }
}
