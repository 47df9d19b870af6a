//! Derived facts about a provider.

use super::model::ProviderInfo;
use super::requirement::parse_requirement;

impl ProviderInfo {
    /// The plugin entry point: `plugin-api` when given, otherwise (PEP 817) the first
    /// requirement's normalised package name with `-` replaced by `_`. Install-time plugins
    /// use `requires`, ahead-of-time plugins `build_requires`. `None` for providers without a
    /// plugin (static properties, built-in).
    ///
    /// ```
    /// use vari_core::metadata::{ProviderInfo, ProviderKind};
    /// let p = ProviderInfo {
    ///     kind: ProviderKind::InstallTime,
    ///     requires: vec!["My.Provider-Plugin >=1.0; python_version >= '3.10'".into()],
    ///     build_requires: vec![],
    ///     enable_if: None,
    ///     optional: false,
    ///     plugin_api: None,
    /// };
    /// assert_eq!(p.effective_plugin_api().as_deref(), Some("my_provider_plugin"));
    /// ```
    pub fn effective_plugin_api(&self) -> Option<String> {
        if let Some(api) = &self.plugin_api {
            return Some(api.clone());
        }
        let first = self.requires.first().or(self.build_requires.first())?;
        // Requirements were validated when read; one that does not parse (a hand-built
        // model) has no derivable entry point.
        let requirement = parse_requirement(first).ok()?;
        Some(requirement.name.as_ref().replace('-', "_"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::model::ProviderKind;

    fn provider(
        kind: ProviderKind,
        requires: &[&str],
        build: &[&str],
        api: Option<&str>,
    ) -> ProviderInfo {
        ProviderInfo {
            kind,
            requires: requires.iter().map(|s| s.to_string()).collect(),
            build_requires: build.iter().map(|s| s.to_string()).collect(),
            enable_if: None,
            optional: false,
            plugin_api: api.map(str::to_owned),
        }
    }

    #[test]
    fn explicit_plugin_api_wins() {
        let p = provider(ProviderKind::InstallTime, &["a-b"], &[], Some("x.y:Z"));
        assert_eq!(p.effective_plugin_api().as_deref(), Some("x.y:Z"));
    }

    #[test]
    fn derived_from_the_first_requirement_normalised() {
        let p = provider(
            ProviderKind::InstallTime,
            &["Provider_Variant.x86-64 >=0.0.1", "other"],
            &[],
            None,
        );
        assert_eq!(
            p.effective_plugin_api().as_deref(),
            Some("provider_variant_x86_64")
        );
        let aot = provider(
            ProviderKind::AheadOfTime,
            &[],
            &["blas-lapack-variant-provider"],
            None,
        );
        assert_eq!(
            aot.effective_plugin_api().as_deref(),
            Some("blas_lapack_variant_provider")
        );
    }

    #[test]
    fn none_without_a_plugin() {
        assert_eq!(
            provider(ProviderKind::AheadOfTime, &[], &[], None).effective_plugin_api(),
            None
        );
        let builtin = provider(ProviderKind::Builtin("x86_64".into()), &[], &[], None);
        assert_eq!(builtin.effective_plugin_api(), None);
    }
}
