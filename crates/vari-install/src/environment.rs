//! Which environment a command may change, and how it is named: the rule every command that
//! installs or removes packages (`vari sync`, `vari install`, `vari install -r`) follows, as
//! uv's does.
//!
//! A virtual environment may be changed. So may an interpreter the user named (`--python`,
//! `VARI_PYTHON`) or the active conda environment (`CONDA_PREFIX`): naming it is the request.
//! An interpreter that is not a virtual environment and was only found (the `python3` on
//! `PATH`, typically the system's or a base interpreter other tools rely on) is refused
//! unless `--system` is given: a sync removes what its lock does not list, and must never do
//! that to an interpreter nobody chose.

use std::fmt;
use std::path::PathBuf;

use vari_python::{Source, TargetPython};

/// The environment a command is about to change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedEnvironment {
    /// Its prefix (`sys.prefix`).
    pub prefix: PathBuf,
    /// The interpreter's version.
    pub version: String,
    /// Whether it is a virtual environment (`sys.prefix` differs from `sys.base_prefix`).
    pub virtual_env: bool,
}

impl fmt::Display for ChangedEnvironment {
    /// `Python 3.12.3 environment at /work/.venv` (`system Python …` when it is not a virtual
    /// environment), the first line of every command that changes one.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.virtual_env {
            true => "Python",
            false => "system Python",
        };
        write!(
            f,
            "Using {kind} {} environment at {}",
            self.version,
            self.prefix.display()
        )
    }
}

/// Why an environment may not be changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvironmentRuleError {
    /// The interpreter was only found (not named) and is not a virtual environment.
    #[error(
        "no virtual environment found: {interpreter} ({found}, prefix {prefix}) is not a virtual \
         environment, and vari changes such an interpreter's packages only when asked; \
         activate or create one (python3 -m venv .venv), name the interpreter with --python \
         PATH, or pass --system"
    )]
    NotVirtual {
        /// The interpreter found.
        interpreter: PathBuf,
        /// Where it was found (`python3 on PATH`).
        found: String,
        /// Its prefix.
        prefix: PathBuf,
    },
}

/// The environment `python` stands for, when the rule allows changing it: a virtual
/// environment, an interpreter the user named or the active conda environment, or any
/// interpreter with `system` (`--system`). `None` when the target has no interpreter (the
/// callers' own error says so).
pub fn environment_to_change(
    python: &TargetPython,
    system: bool,
) -> Result<Option<ChangedEnvironment>, EnvironmentRuleError> {
    let Some(interpreter) = &python.interpreter else {
        return Ok(None);
    };
    let virtual_env = interpreter.prefix != interpreter.base_prefix;
    let source = python.origin.found.as_ref().map(|f| &f.source);
    if !may_change(virtual_env, source, system) {
        return Err(EnvironmentRuleError::NotVirtual {
            interpreter: interpreter.path.clone(),
            found: source
                .map(ToString::to_string)
                .unwrap_or_else(|| "found".to_owned()),
            prefix: interpreter.prefix.clone(),
        });
    }
    Ok(Some(ChangedEnvironment {
        prefix: interpreter.prefix.clone(),
        version: interpreter.version.to_string(),
        virtual_env,
    }))
}

/// The rule itself: a virtual environment, a named interpreter or conda environment, or
/// anything with `--system`.
fn may_change(virtual_env: bool, source: Option<&Source>, system: bool) -> bool {
    let chosen = matches!(source, Some(Source::Given | Source::CondaPrefix));
    virtual_env || chosen || system
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interpreter_only_found_on_path_needs_system_unless_it_is_a_venv() {
        let on_path = Source::Path("python3".to_owned());
        assert!(!may_change(false, Some(&on_path), false));
        assert!(may_change(false, Some(&on_path), true));
        assert!(may_change(true, Some(&on_path), false));
        assert!(may_change(true, Some(&Source::VirtualEnv), false));
        // Naming the interpreter is the request.
        assert!(may_change(false, Some(&Source::Given), false));
        assert!(may_change(false, Some(&Source::CondaPrefix), false));
        // VIRTUAL_ENV pointing at something that is not one is still refused.
        assert!(!may_change(false, Some(&Source::VirtualEnv), false));
    }

    #[test]
    fn the_environment_is_named_with_its_kind() {
        let named = ChangedEnvironment {
            prefix: PathBuf::from("/work/.venv"),
            version: "3.12.3".to_owned(),
            virtual_env: true,
        };
        assert_eq!(
            named.to_string(),
            "Using Python 3.12.3 environment at /work/.venv"
        );
        let system = ChangedEnvironment {
            virtual_env: false,
            ..named
        };
        assert!(system.to_string().starts_with("Using system Python 3.12.3"));
    }
}
