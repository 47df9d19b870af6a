//! [`NamespaceNeed`] in words, for front-ends that report without command-line flags (the
//! proxy's log): which hardware the variants are built for and why the target lacks it —
//! "builds for NVIDIA GPUs (cu126, cu128), and this machine has no NVIDIA driver (…)".
//!
//! The facts are the ones `vari select` prints; the wording names no flag (a front-end adds
//! its own hints).

use std::fmt;

use vari_core::ordering::Rejection;
use vari_detect::registry::hardware_name;

use super::report::NamespaceNeed;
use crate::target::{HardwareSource, Target};

impl NamespaceNeed {
    /// What this namespace's variants need and why `target` lacks it, as one clause.
    ///
    /// ```
    /// # fn show(need: &vari_select::NamespaceNeed, target: &vari_select::Target) {
    /// // "builds for NVIDIA GPUs (cu128), and this machine has no NVIDIA driver (…)"
    /// println!("{}", need.describe(target));
    /// # }
    /// ```
    pub fn describe<'a>(&'a self, target: &'a Target) -> NeedText<'a> {
        NeedText { need: self, target }
    }
}

/// [`NamespaceNeed::describe`]'s clause.
#[derive(Debug, Clone, Copy)]
pub struct NeedText<'a> {
    need: &'a NamespaceNeed,
    target: &'a Target,
}

/// Where detection looked: `this machine`, or `the snapshot DIR`.
fn where_detected(source: &HardwareSource) -> String {
    match source {
        HardwareSource::Sysroot(dir) => format!("the snapshot {}", dir.display()),
        _ => "this machine".to_owned(),
    }
}

impl fmt::Display for NeedText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let need = self.need;
        let labels: Vec<&str> = need.labels.iter().map(|l| l.as_str()).collect();
        let labels = labels.join(", ");
        let namespace = need.namespace.as_str();
        // The provider names its hardware (`NVIDIA GPUs`); a namespace no built-in provider
        // answers for is named as it is.
        match hardware_name(namespace) {
            Some(hardware) => write!(f, "builds for {hardware} ({labels})")?,
            None => write!(f, "builds {labels} need namespace `{namespace}`")?,
        }
        let source = &self.target.hardware.source;
        match (&need.rejection, &need.absent_reason) {
            // Detection's notes read "no NVIDIA driver (…)".
            (Rejection::UnsupportedNamespace { .. }, Some(why)) if why.starts_with("no ") => {
                write!(f, ", and {} has {why}", where_detected(source))
            }
            (Rejection::UnsupportedNamespace { .. }, Some(why)) => {
                write!(f, ", and on {}: {why}", where_detected(source))
            }
            (Rejection::UnsupportedNamespace { .. }, None) if !need.builtin_provider => write!(
                f,
                ", which no built-in provider detects: only a profile that lists it can select them"
            ),
            (Rejection::UnsupportedNamespace { .. }, None) => match source {
                HardwareSource::Host { .. } | HardwareSource::Sysroot(_) => {
                    write!(f, ", not detected on {}", where_detected(source))
                }
                source => write!(f, ", which {source} does not list"),
            },
            (other, _) => write!(f, ": {other}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use vari_core::{Namespace, VariantLabel};

    use super::*;
    use crate::target::TargetSettings;

    /// Python 3.12 on Linux x86_64, an empty profile, its source as given.
    fn target(source: HardwareSource) -> Target {
        let dir = tempfile::tempdir().unwrap();
        let profile = dir.path().join("empty.json");
        std::fs::write(
            &profile,
            r#"{"schema": "vari-profile/1", "namespaces": []}"#,
        )
        .unwrap();
        let mut settings = TargetSettings {
            profile: Some(profile),
            ..TargetSettings::default()
        };
        settings.python.version = Some("3.12".parse().unwrap());
        settings.python.platform = Some("x86_64-manylinux_2_28".parse().unwrap());
        let mut target = Target::resolve(&settings).unwrap();
        target.hardware.source = source;
        target
    }

    fn need(namespace: &str, absent: Option<&str>, builtin: bool) -> NamespaceNeed {
        let namespace: Namespace = namespace.parse().unwrap();
        NamespaceNeed {
            labels: vec![
                "cu126".parse::<VariantLabel>().unwrap(),
                "cu128".parse().unwrap(),
            ],
            rejection: Rejection::UnsupportedNamespace {
                namespace: namespace.clone(),
                provider: None,
            },
            namespace,
            builtin_provider: builtin,
            absent_reason: absent.map(str::to_owned),
        }
    }

    #[test]
    fn the_hardware_and_why_the_target_lacks_it() {
        let host = target(HardwareSource::Host {
            overrides: Vec::new(),
        });
        assert_eq!(
            need(
                "nvidia",
                Some("no NVIDIA driver (libcuda.so.1 not found)"),
                true
            )
            .describe(&host)
            .to_string(),
            "builds for NVIDIA GPUs (cu126, cu128), and this machine has no NVIDIA driver \
             (libcuda.so.1 not found)"
        );
        assert_eq!(
            need("nvidia", None, true).describe(&host).to_string(),
            "builds for NVIDIA GPUs (cu126, cu128), not detected on this machine"
        );
        assert_eq!(
            need("ascend", None, false).describe(&host).to_string(),
            "builds cu126, cu128 need namespace `ascend`, which no built-in provider detects: \
             only a profile that lists it can select them"
        );
        let facts = target(HardwareSource::Facts(PathBuf::from("gpu.toml")));
        assert_eq!(
            need("amd", None, true).describe(&facts).to_string(),
            "builds for AMD GPUs (cu126, cu128), which facts gpu.toml does not list"
        );
    }
}
