//! What a target's hardware supports, and where that answer comes from (this machine's
//! detection, a profile, a facts file or a snapshot). `target` builds it; `cross_cpu` adjusts
//! it for a target of another architecture.

use std::collections::BTreeMap;
use std::path::PathBuf;

use vari_core::{Namespace, Profile};
use vari_detect::{Detection, Sysroot};

use crate::error::InputError;

/// Where the target's hardware lists come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HardwareSource {
    /// This machine, detected (possibly from the cache).
    Host {
        /// The override variables that were set (`NAME=value`, control characters escaped):
        /// they, not the machine, decide their namespaces, so the source names them.
        overrides: Vec<String>,
    },
    /// A `vari-profile/1` JSON file.
    Profile(PathBuf),
    /// A TOML file of hardware facts.
    Facts(PathBuf),
    /// A snapshot (or any file tree) read as another machine's root.
    Sysroot(PathBuf),
}

impl std::fmt::Display for HardwareSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Host { overrides } if overrides.is_empty() => f.write_str("this machine"),
            Self::Host { overrides } => {
                write!(f, "this machine with overrides {}", overrides.join(", "))
            }
            Self::Profile(p) => write!(f, "profile {}", p.display()),
            Self::Facts(p) => write!(f, "facts {}", p.display()),
            Self::Sysroot(p) => write!(f, "snapshot {}", p.display()),
        }
    }
}

/// What the target's hardware supports.
#[derive(Debug, Clone)]
pub struct Hardware {
    /// The supported properties, per namespace, most preferred first.
    pub profile: Profile,
    /// Where they come from.
    pub source: HardwareSource,
    /// For detected hardware: why each absent namespace is absent ("no NVIDIA driver"), so a
    /// rejected variant can say so rather than "not in the profile".
    pub absent: BTreeMap<Namespace, String>,
    /// The whole detection, when the hardware was detected (a host or a sysroot).
    pub detection: Option<Detection>,
    /// The file tree detection read (this machine's `/`, or a snapshot), when detected.
    pub sysroot: Option<Sysroot>,
    /// Problems in the profile that did not stop it from being used.
    pub warnings: Vec<InputError>,
}

impl Hardware {
    /// Why `namespace` is unsupported, when detection said.
    pub fn absent_reason(&self, namespace: &Namespace) -> Option<&str> {
        self.absent.get(namespace).map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_source_names_the_override_variables_that_decide() {
        let host = |overrides: &[&str]| HardwareSource::Host {
            overrides: overrides.iter().map(|o| o.to_string()).collect(),
        };
        assert_eq!(host(&[]).to_string(), "this machine");
        assert_eq!(
            host(&["NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION=12.8", "A=b"]).to_string(),
            "this machine with overrides NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION=12.8, A=b"
        );
    }
}
