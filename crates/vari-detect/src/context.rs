//! Everything a provider may look at: the file tree, the environment variables, time limits and the
//! target Python environment. Passing it explicitly keeps providers testable and lets a profile or a
//! snapshot stand in for this machine.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use crate::sysroot::Sysroot;

/// Inputs shared by all providers.
#[derive(Debug, Clone)]
pub struct DetectContext {
    /// Where `/proc`, `/sys`, `/dev` and `/opt/rocm` are read from.
    pub sysroot: Sysroot,
    /// Environment variables (overrides such as `NV_VARIANT_PROVIDER_FORCE_SM_ARCH`).
    pub env: BTreeMap<String, String>,
    /// How long a driver library may take in its child process before it is abandoned.
    pub timeout: Duration,
    /// The target Python interpreter or environment for `abi_dependency` (`None`: none).
    pub python: Option<PathBuf>,
    /// The root under which GPU driver libraries are looked for after the loader's own search
    /// (`/`; tests point it at a fixture tree): see `gpu::search`.
    pub driver_root: PathBuf,
}

impl DetectContext {
    /// The default time a driver library gets before it is abandoned.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

    /// A context reading this process's environment variables under `sysroot`.
    pub fn from_process_env(sysroot: Sysroot) -> Self {
        Self {
            sysroot,
            env: std::env::vars().collect(),
            timeout: Self::DEFAULT_TIMEOUT,
            python: None,
            driver_root: PathBuf::from("/"),
        }
    }

    /// An environment variable, treating an empty value as unset (reference behaviour).
    pub fn var(&self, name: &str) -> Option<&str> {
        self.env
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.trim().is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_variables_count_as_unset() {
        let mut ctx = DetectContext::from_process_env(Sysroot::host());
        ctx.env.insert("A".into(), "".into());
        ctx.env.insert("B".into(), "x".into());
        assert_eq!(ctx.var("A"), None);
        assert_eq!(ctx.var("B"), Some("x"));
        assert_eq!(ctx.var("C_NOT_SET_ANYWHERE"), None);
    }
}
