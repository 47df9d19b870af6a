//! The built-in providers, in namespace order, and the variables detection reads.
//!
//! This is the one list: detection runs these providers in this order, the cache fingerprint
//! takes their evidence and variables, a snapshot copies their files and records their
//! variables, the override check runs their value checks, a facts profile accepts their
//! sections, and [`env_table_markdown`] renders the README's table of variables from it.
//!
//! Order (`spec/providers.md`): GPUs first (the most specific hardware), then the CPU, the
//! ahead-of-time lists, and `abi_dependency` last.

use std::sync::OnceLock;

use vari_core::{FeatureSupport, FeatureValue};

use crate::cache::CACHE_DIR_ENV;
use crate::child::{self, PROBE_ENV, TIMEOUT_ENV};
use crate::cpu::{aarch64, x86_64};
use crate::gpu::{amd, intel, nvidia};
use crate::provider::{EnvVar, Provider, Scope, VarRole};
use crate::{abi, aot};

static PROVIDERS: [&dyn Provider; 8] = [
    &nvidia::Nvidia,
    &amd::Amd,
    &intel::Intel,
    &x86_64::X86_64,
    &aarch64::Aarch64,
    &aot::BLAS_LAPACK,
    &aot::OPENMP,
    &abi::AbiDependency,
];

/// Variables that belong to detection as a whole rather than to one provider.
const GENERAL: &[EnvVar] = &[
    EnvVar::new(
        TIMEOUT_ENV,
        VarRole::Setting,
        "seconds a driver library may take before it is abandoned (default 10, at most 3600)",
    )
    .checked(|v| child::parse_timeout(v).map(drop)),
    EnvVar::new(
        "LD_LIBRARY_PATH",
        VarRole::Setting,
        "where driver libraries are found; a change invalidates the cached detection",
    ),
    EnvVar::new(
        CACHE_DIR_ENV,
        VarRole::Plumbing,
        "vari's cache directory: detection, interpreter answers, HTTP, the proxy's rewritten wheels, locked files, object-store mirrors' stores (default `$XDG_CACHE_HOME/vari`, else `~/.cache/vari`; see `vari cache`)",
    ),
    EnvVar::new(
        PROBE_ENV,
        VarRole::Plumbing,
        "internal: turns the process into a driver-library probe child",
    ),
];

/// Every built-in provider, in namespace order.
pub fn providers() -> &'static [&'static dyn Provider] {
    &PROVIDERS
}

/// The provider of `namespace`, if one is built in.
pub fn provider(namespace: &str) -> Option<&'static dyn Provider> {
    PROVIDERS
        .iter()
        .copied()
        .find(|p| p.namespace() == namespace)
}

/// What hardware `namespace` stands for, in a user's words (`NVIDIA GPUs`), when a built-in
/// provider answers for it and it stands for hardware ([`Provider::hardware`]).
///
/// ```
/// assert_eq!(vari_detect::registry::hardware_name("nvidia"), Some("NVIDIA GPUs"));
/// assert_eq!(vari_detect::registry::hardware_name("abi_dependency"), None);
/// assert_eq!(vari_detect::registry::hardware_name("custom"), None);
/// ```
pub fn hardware_name(namespace: &str) -> Option<&'static str> {
    provider(namespace).and_then(|p| p.hardware())
}

/// The position of `namespace` in namespace order (unknown namespaces go last).
pub fn position(namespace: &str) -> usize {
    PROVIDERS
        .iter()
        .position(|p| p.namespace() == namespace)
        .unwrap_or(PROVIDERS.len())
}

/// Every variable detection reads: each provider's, in namespace order, then the general ones.
pub fn variables() -> impl Iterator<Item = &'static EnvVar> {
    PROVIDERS
        .iter()
        .flat_map(|p| p.variables().iter())
        .chain(GENERAL.iter())
}

/// The variables whose node values a snapshot records and applies when read: the overrides and
/// locations of the providers that describe the machine.
pub fn snapshot_variables() -> impl Iterator<Item = &'static EnvVar> {
    PROVIDERS
        .iter()
        .filter(|p| p.scope() == Scope::Machine)
        .flat_map(|p| p.variables().iter())
        .filter(|v| v.role.in_snapshot())
}

/// The variables whose values are part of the cache fingerprint: those of every cached provider
/// and of detection as a whole, except vari's plumbing.
pub fn fingerprint_variables() -> impl Iterator<Item = &'static EnvVar> {
    PROVIDERS
        .iter()
        .filter(|p| p.scope() != Scope::PythonEnvironment)
        .flat_map(|p| p.variables().iter())
        .chain(GENERAL.iter())
        .filter(|v| v.role.in_fingerprint())
}

/// The README's table of environment variables, as Markdown (a test keeps the README equal to
/// it).
pub fn env_table_markdown() -> String {
    let mut out = String::from("| Variable | Namespace | Effect |\n|---|---|---|\n");
    let rows = PROVIDERS
        .iter()
        .flat_map(|p| p.variables().iter().map(move |v| (p.namespace(), v)))
        .chain(GENERAL.iter().map(|v| ("(all)", v)));
    for (namespace, var) in rows {
        out.push_str(&format!(
            "| `{}` | {namespace} | {} |\n",
            var.name, var.description
        ));
    }
    out.push_str(
        "\nAn empty value counts as unset, except `CUDA_VISIBLE_DEVICES`: set and empty, it \
         hides every GPU, as in CUDA.\n",
    );
    out
}

/// What a built-in provider says about one of its features.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeatureKind {
    /// Whether a variant may carry several values of the feature (PEP 817 `multi_value`); a
    /// single-value feature with more than one value is invalid metadata.
    pub multi_value: bool,
    /// Every value the provider knows, most preferred first; `None` when the values are open
    /// (`abi_dependency`'s versions).
    pub values: Option<&'static [FeatureValue]>,
}

/// What the built-in provider of `namespace` says about `feature`: `None` when no built-in
/// provider answers for the namespace, or it has no such feature.
///
/// ```
/// let kind = vari_detect::builtin_feature_kind("nvidia", "cuda_version_lower_bound").unwrap();
/// assert!(!kind.multi_value);
/// assert!(kind.values.unwrap().iter().any(|v| v.as_str() == "12.8"));
/// assert!(vari_detect::builtin_feature_kind("nvidia", "sm_arch").unwrap().multi_value);
/// assert!(vari_detect::builtin_feature_kind("abi_dependency", "torch").unwrap().multi_value);
/// assert_eq!(vari_detect::builtin_feature_kind("custom", "x"), None);
/// ```
pub fn builtin_feature_kind(namespace: &str, feature: &str) -> Option<FeatureKind> {
    static ALL: OnceLock<Vec<(&'static str, Vec<FeatureSupport>)>> = OnceLock::new();
    let all = ALL.get_or_init(|| {
        PROVIDERS
            .iter()
            .map(|p| (p.namespace(), p.all_features()))
            .collect()
    });
    let (index, (_, features)) = all
        .iter()
        .enumerate()
        .find(|(_, (ns, _))| *ns == namespace)?;
    match features.iter().find(|f| f.name.as_str() == feature) {
        Some(f) => Some(FeatureKind {
            multi_value: f.multi_value,
            values: Some(&f.values),
        }),
        None => PROVIDERS[index]
            .open_features()
            .filter(|_| vari_core::FeatureName::new(feature).is_ok())
            .map(|multi_value| FeatureKind {
                multi_value,
                values: None,
            }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespaces_are_unique_valid_and_in_order() {
        let names: Vec<&str> = providers().iter().map(|p| p.namespace()).collect();
        assert_eq!(
            names,
            [
                "nvidia",
                "amd",
                "intel",
                "x86_64",
                "aarch64",
                "blas_lapack",
                "openmp",
                "abi_dependency"
            ]
        );
        for name in names {
            assert!(vari_core::Namespace::new(name).is_ok(), "{name}");
            assert_eq!(provider(name).unwrap().namespace(), name);
        }
        assert_eq!(position("abi_dependency"), 7);
        assert_eq!(position("custom"), 8);
    }

    #[test]
    fn every_hardware_provider_names_its_hardware() {
        let named: Vec<(&str, Option<&str>)> = providers()
            .iter()
            .map(|p| (p.namespace(), hardware_name(p.namespace())))
            .collect();
        assert_eq!(
            named,
            [
                ("nvidia", Some("NVIDIA GPUs")),
                ("amd", Some("AMD GPUs")),
                ("intel", Some("Intel GPUs")),
                ("x86_64", Some("x86-64 CPUs")),
                ("aarch64", Some("Arm CPUs")),
                ("blas_lapack", None),
                ("openmp", None),
                ("abi_dependency", None),
            ]
        );
    }

    #[test]
    fn variable_names_are_unique_and_described() {
        let mut names: Vec<&str> = variables().map(|v| v.name).collect();
        let count = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), count, "a variable is listed twice");
        for provider in providers() {
            assert!(
                provider.detection().ends_with('.'),
                "{}: how it is detected, as a sentence",
                provider.namespace()
            );
        }
        for var in variables() {
            assert!(!var.description.is_empty(), "{}", var.name);
            assert!(!var.description.contains('|'), "{}", var.name);
        }
    }

    #[test]
    fn the_table_lists_every_variable_once() {
        let table = env_table_markdown();
        for var in variables() {
            assert_eq!(
                table.matches(&format!("| `{}` |", var.name)).count(),
                1,
                "{}",
                var.name
            );
        }
    }

    #[test]
    fn feature_kinds_follow_the_providers() {
        let single = |ns, f| builtin_feature_kind(ns, f).map(|k| k.multi_value);
        assert_eq!(single("nvidia", "cuda_version_upper_bound"), Some(false));
        assert_eq!(single("amd", "gfx_arch"), Some(true));
        assert_eq!(single("amd", "rocm_version"), Some(false));
        assert_eq!(single("intel", "device_ip"), Some(true));
        assert_eq!(single("x86_64", "level"), Some(false));
        assert_eq!(single("aarch64", "version"), Some(false));
        assert_eq!(single("blas_lapack", "provider"), Some(false));
        assert_eq!(single("nvidia", "no_such_feature"), None);
        assert_eq!(single("abi_dependency", "Not A Name"), None);
        let level = builtin_feature_kind("x86_64", "level").unwrap();
        let values: Vec<&str> = level.values.unwrap().iter().map(|v| v.as_str()).collect();
        assert_eq!(values, ["v4", "v3", "v2", "v1"]);
        assert_eq!(
            builtin_feature_kind("abi_dependency", "torch")
                .unwrap()
                .values,
            None
        );
    }
}
