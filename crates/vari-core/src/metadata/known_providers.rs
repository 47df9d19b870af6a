//! The providers the built-in namespaces are known by: the reference plugin packages and
//! their plugin entry points, as a maintainer writes them in `providers`.
//!
//! Sources: the reference providers' packages (`nvidia-variant-provider`,
//! `x86-64-variant-provider`, `aarch64-variant-provider`, `tpu-variant-provider`,
//! `amd-variant-provider`, `intel-variant-provider`), the plugin APIs PyTorch's variant
//! releases declare, and the providers uv 0.13 vendors (checked against uv 0.13.8/0.13.9 by
//! `bench/uv_parity.sh`; `docs/reference/providers-schema.md`). uv uses a declared provider only when
//! its one requirement admits the vendored version and its `plugin-api` is the vendored one,
//! so the requirement written here (`>=version,<1.0.0`) admits exactly that version.

use super::model::{ProviderInfo, ProviderKind};
use crate::names::Namespace;

/// One namespace's reference provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnownProvider {
    /// The namespace it reports.
    pub namespace: &'static str,
    /// The plugin's distribution name.
    pub package: &'static str,
    /// The lowest version a requirement admits: for the providers uv vendors, the vendored
    /// version.
    pub version: &'static str,
    /// The plugin entry point, when it is not the one derived from the package name
    /// (`x86_64_variant_provider` from `x86-64-variant-provider`).
    pub plugin_api: Option<&'static str>,
    /// Whether uv 0.13 vendors this provider (and so can select variants of its namespace).
    pub vendored_by_uv: bool,
}

/// Every namespace vari knows a reference provider for.
pub const KNOWN_PROVIDERS: &[KnownProvider] = &[
    KnownProvider {
        namespace: "nvidia",
        package: "nvidia-variant-provider",
        version: "0.0.1",
        plugin_api: Some("nvidia_variant_provider.plugin:NvidiaVariantPlugin"),
        vendored_by_uv: true,
    },
    KnownProvider {
        namespace: "x86_64",
        package: "x86-64-variant-provider",
        version: "0.2.1",
        plugin_api: None,
        vendored_by_uv: true,
    },
    KnownProvider {
        namespace: "aarch64",
        package: "aarch64-variant-provider",
        version: "0.2.0",
        plugin_api: None,
        vendored_by_uv: true,
    },
    KnownProvider {
        namespace: "tpu",
        package: "tpu-variant-provider",
        version: "0.1.0",
        plugin_api: Some("tpu_variant_provider.plugin:TpuVariantPlugin"),
        vendored_by_uv: true,
    },
    KnownProvider {
        namespace: "amd",
        package: "amd-variant-provider",
        version: "0.0.2",
        plugin_api: Some("amd_variant_provider.plugin:AMDVariantPlugin"),
        vendored_by_uv: false,
    },
    KnownProvider {
        namespace: "intel",
        package: "intel-variant-provider",
        version: "0.0.3",
        plugin_api: Some("intel_variant_provider.plugin:IntelVariantPlugin"),
        vendored_by_uv: false,
    },
];

/// The reference provider of `namespace`, if vari knows one.
///
/// ```
/// use vari_core::metadata::known_provider;
/// let nvidia = known_provider(&"nvidia".parse().unwrap()).unwrap();
/// assert_eq!(nvidia.requirement(), "nvidia-variant-provider>=0.0.1,<1.0.0");
/// assert!(known_provider(&"blas".parse().unwrap()).is_none());
/// ```
pub fn known_provider(namespace: &Namespace) -> Option<&'static KnownProvider> {
    KNOWN_PROVIDERS
        .iter()
        .find(|p| p.namespace == namespace.as_str())
}

impl KnownProvider {
    /// The requirement a maintainer writes: this version up to (not including) 1.0.0.
    pub fn requirement(&self) -> String {
        format!("{}>={},<1.0.0", self.package, self.version)
    }

    /// The entry point uv compares with: `plugin_api`, else derived from the package name
    /// (PEP 817: the normalised name with `-` replaced by `_`).
    pub fn effective_plugin_api(&self) -> String {
        match self.plugin_api {
            Some(api) => api.to_owned(),
            None => self.package.replace('-', "_"),
        }
    }

    /// The `providers` entry: an install-time plugin with [`Self::requirement`] and the
    /// plugin API when it is not the derived one.
    pub fn provider_info(&self) -> ProviderInfo {
        ProviderInfo {
            kind: ProviderKind::InstallTime,
            requires: vec![self.requirement()],
            build_requires: Vec::new(),
            enable_if: None,
            optional: false,
            plugin_api: self.plugin_api.map(str::to_owned),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::parse_requirement;

    #[test]
    fn every_requirement_parses_and_names_its_package() {
        for p in KNOWN_PROVIDERS {
            let r = parse_requirement(&p.requirement()).unwrap();
            assert_eq!(r.name.as_ref(), p.package);
            assert!(Namespace::new(p.namespace).is_ok());
            assert_eq!(
                p.provider_info().effective_plugin_api().unwrap(),
                p.effective_plugin_api()
            );
        }
    }
}
