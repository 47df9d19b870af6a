//! Where an installer's settings are looked up ([`InstallerEnv`]: variables, the home
//! directory, the target environment) and what a setting found there is ([`Sourced`], with its
//! [`Origin`]; [`IndexSourceError`] when it cannot be used): what the readers of pip's and uv's
//! settings (`index_source`, `uv_config`) share.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// Where an installer's settings are looked up: environment variables, the home directory and
/// the target environment.
#[derive(Debug, Clone, Default)]
pub struct InstallerEnv {
    vars: BTreeMap<String, String>,
    pub(crate) home: Option<PathBuf>,
    pub(crate) prefix: Option<PathBuf>,
    /// Unit tests replace the machine-wide files (`/etc/pip.conf`) with their own.
    pub(crate) global_files: Option<Vec<PathBuf>>,
    /// Likewise for uv's (`/etc/uv/uv.toml`).
    uv_system_files: Option<Vec<PathBuf>>,
    /// The working directory, where uv looks for a project's configuration.
    cwd: Option<PathBuf>,
}

impl InstallerEnv {
    /// The given variables (the home directory from `HOME`); `prefix` is the target
    /// environment's `sys.prefix`, whose `pip.conf` pip reads.
    pub fn new<K, V>(vars: impl IntoIterator<Item = (K, V)>, prefix: Option<PathBuf>) -> Self
    where
        K: Into<String>,
        V: Into<String>,
    {
        let vars: BTreeMap<String, String> = vars
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        let home = vars
            .get("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from);
        Self {
            vars,
            home,
            prefix,
            global_files: None,
            uv_system_files: None,
            cwd: None,
        }
    }

    /// This process's variables and working directory.
    pub fn from_process(prefix: Option<PathBuf>) -> Self {
        Self::new(std::env::vars(), prefix).with_cwd_option(std::env::current_dir().ok())
    }

    /// The same, with `dir` as the working directory (uv looks for a project's `uv.toml` or
    /// `pyproject.toml` there and in its parents).
    pub fn with_cwd(self, dir: impl Into<PathBuf>) -> Self {
        self.with_cwd_option(Some(dir.into()))
    }

    fn with_cwd_option(self, cwd: Option<PathBuf>) -> Self {
        Self { cwd, ..self }
    }

    /// The same, reading no machine-wide configuration file (for tests).
    #[cfg(test)]
    pub(crate) fn without_machine_files(self) -> Self {
        Self {
            global_files: Some(Vec::new()),
            uv_system_files: Some(Vec::new()),
            ..self
        }
    }

    /// A variable, `None` when unset or empty (both installers ignore empty values).
    pub(crate) fn var(&self, name: &str) -> Option<&str> {
        self.vars
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.trim().is_empty())
    }

    pub(crate) fn home(&self) -> Option<&Path> {
        self.home.as_deref()
    }

    pub(crate) fn cwd(&self) -> Option<&Path> {
        self.cwd.as_deref()
    }

    pub(crate) fn uv_system_files(&self) -> Option<&[PathBuf]> {
        self.uv_system_files.as_deref()
    }
}

/// Where one setting came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// An environment variable.
    Variable(String),
    /// A key of a configuration file (`section.key`).
    File {
        /// The file.
        path: PathBuf,
        /// `section.key`.
        key: String,
    },
    /// The installer's built-in default.
    Default,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Variable(name) => f.write_str(name),
            Self::File { path, key } => write!(f, "{}: {key}", path.display()),
            Self::Default => f.write_str("the installer's default"),
        }
    }
}

/// A value and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sourced<T> {
    /// The value.
    pub value: T,
    /// Where it came from.
    pub origin: Origin,
}

/// A setting that cannot be used: where it is and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{origin}: {message}")]
pub struct IndexSourceError {
    /// The variable, or the file and key (or line).
    pub origin: Origin,
    /// What is wrong.
    pub message: String,
}

/// Python's `strtobool`, which pip applies to boolean settings (uv accepts the same words).
pub(crate) fn parse_bool(value: &str) -> Option<bool> {
    match value.trim().to_lowercase().as_str() {
        "y" | "yes" | "t" | "true" | "on" | "1" => Some(true),
        "n" | "no" | "f" | "false" | "off" | "0" => Some(false),
        _ => None,
    }
}
