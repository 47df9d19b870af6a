//! The target a selecting command works for: a profile file, or this machine as detected.

use std::collections::BTreeMap;
use std::path::Path;

use vari_core::{Namespace, Profile};

use crate::cli::ProfileArg;
use crate::error::CliError;
use crate::load;

/// The Python version assumed for `enable-if` markers when neither `--python-version` nor a
/// `python3` on `PATH` tells one.
pub const FALLBACK_PYTHON_VERSION: &str = "3.12";

/// A target's supported properties and a short description for human output.
pub struct Target {
    /// What the target supports.
    pub profile: Profile,
    /// `profile FILE` or `this machine`.
    pub description: String,
    /// For this machine: why detection found each absent namespace absent, so that a rejected
    /// variant can say "no NVIDIA driver" rather than "not in the profile".
    pub absent: BTreeMap<Namespace, String>,
}

impl Target {
    /// Why `namespace` is unsupported on this machine, when detection said.
    pub fn absent_reason(&self, namespace: &Namespace) -> Option<&str> {
        self.absent.get(namespace).map(String::as_str)
    }
}

/// The target named by `--profile` (or `VARI_PROFILE`), else this machine (cached detection).
pub fn resolve(arg: &ProfileArg) -> Result<Target, CliError> {
    let python = arg.target_python();
    match &arg.profile {
        Some(path) => Ok(Target {
            profile: load::read_profile(path, python.as_deref())?,
            description: format!("profile {}", path.display()),
            absent: BTreeMap::new(),
        }),
        None => {
            let detection = load::detect_host_reports(python.as_deref())?;
            let absent = detection
                .reports
                .iter()
                .filter(|r| r.features.is_none())
                .filter_map(|r| Some((r.namespace.clone(), r.note.clone()?)))
                .collect();
            Ok(Target {
                profile: detection.profile(),
                description: "this machine".to_owned(),
                absent,
            })
        }
    }
}

/// The `X.Y` of the `python3` on `PATH`, read from where its symlink chain ends
/// (`/usr/bin/python3 -> python3.11`) so that no interpreter is started; else
/// [`FALLBACK_PYTHON_VERSION`].
pub fn default_python_version() -> String {
    std::env::var_os("PATH")
        .and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|dir| dir.join("python3"))
                .find(|candidate| candidate.is_file())
        })
        .and_then(|python| std::fs::canonicalize(python).ok())
        .and_then(|real| version_from_interpreter_name(&real))
        .unwrap_or_else(|| FALLBACK_PYTHON_VERSION.to_owned())
}

/// `python3.11` → `3.11`.
fn version_from_interpreter_name(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let version = name.strip_prefix("python")?;
    let (major, minor) = version.split_once('.')?;
    let numeric = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (numeric(major) && numeric(minor)).then(|| format!("{major}.{minor}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpreter_names_give_versions() {
        assert_eq!(
            version_from_interpreter_name(Path::new("/usr/bin/python3.11")).as_deref(),
            Some("3.11")
        );
        assert_eq!(
            version_from_interpreter_name(Path::new("/usr/bin/python3")),
            None
        );
        assert_eq!(
            version_from_interpreter_name(Path::new("/x/pyenv-shim")),
            None
        );
        assert_eq!(
            version_from_interpreter_name(Path::new("/x/python3.1x")),
            None
        );
    }
}
