//! The values of the four variant markers for one selected wheel.

use std::collections::BTreeSet;

use crate::metadata::{properties_of, VariantMetadata};
use crate::names::{Property, VariantLabel};
use crate::profile::Profile;
use crate::supported::SupportList;

/// What the variant markers of a selected wheel's dependencies see (PEP 825 "Evaluating variant
/// markers").
///
/// `variant_label` is `label` (`""` when `None`, i.e. a non-variant wheel); `variant_properties`
/// is `properties`, and `variant_features`/`variant_namespaces` are derived from it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VariantMarkerContext {
    /// The selected wheel's label; `None` for a non-variant wheel.
    pub label: Option<VariantLabel>,
    /// The selected label's properties that the target supports.
    pub properties: BTreeSet<Property>,
}

impl VariantMarkerContext {
    /// The context of a non-variant wheel: empty label, empty sets.
    pub fn non_variant() -> Self {
        Self::default()
    }

    /// The context of the wheel labelled `label`: its properties from `meta`, kept only where the
    /// target supports the value (so a multi-value feature exposes only the values this machine
    /// can use). Returns `None` when `meta` has no variant with that label.
    ///
    /// Supported values come from the same place ordering takes them: `static-properties` for
    /// ahead-of-time namespaces, the profile otherwise.
    ///
    /// ```
    /// use vari_core::markers::VariantMarkerContext;
    /// use vari_core::metadata::{DefaultPriorities, SchemaGeneration, VariantMetadata};
    /// use vari_core::{Profile, VariantLabel};
    /// let mut meta = VariantMetadata {
    ///     generation: SchemaGeneration::V0_1, schema_url: None,
    ///     priorities: DefaultPriorities::default(), providers: Default::default(),
    ///     static_properties: Default::default(), variants: Default::default(),
    /// };
    /// meta.variants.insert(VariantLabel::null(), Default::default());
    /// let ctx = VariantMarkerContext::for_selection(&meta, &VariantLabel::null(), &Profile::empty()).unwrap();
    /// assert!(ctx.properties.is_empty());
    /// assert_eq!(ctx.label.unwrap().as_str(), "null");
    /// ```
    pub fn for_selection(
        meta: &VariantMetadata,
        label: &VariantLabel,
        profile: &Profile,
    ) -> Option<Self> {
        let variant = meta.variants.get(label)?;
        let properties = properties_of(variant)
            .filter(|p| {
                SupportList::of(meta, profile, p.namespace.as_str())
                    .and_then(|s| s.values(p.feature.as_str()))
                    .is_some_and(|values| values.contains(&p.value))
            })
            .collect();
        Some(Self {
            label: Some(label.clone()),
            properties,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::{DefaultPriorities, ProviderInfo, ProviderKind, SchemaGeneration};

    #[test]
    fn keeps_only_supported_values() {
        let mut meta = VariantMetadata {
            generation: SchemaGeneration::V0_0_3,
            schema_url: None,
            priorities: DefaultPriorities::default(),
            providers: Default::default(),
            static_properties: Default::default(),
            variants: Default::default(),
        };
        let props = [
            "nvidia :: sm_arch :: 120_real",
            "nvidia :: sm_arch :: 110_real",
            "blas :: provider :: mkl",
            "amd :: gfx :: gfx90a",
        ];
        let mut variant = crate::metadata::VariantProperties::new();
        for p in props {
            let p: Property = p.parse().unwrap();
            variant
                .get_or_insert_with(p.namespace, Default::default)
                .get_or_insert_with(p.feature, Default::default)
                .insert(p.value);
        }
        let label: VariantLabel = "fat".parse().unwrap();
        meta.variants.insert(label.clone(), variant);
        meta.providers.insert(
            "blas".parse().unwrap(),
            ProviderInfo {
                kind: ProviderKind::AheadOfTime,
                requires: vec![],
                build_requires: vec![],
                enable_if: None,
                optional: false,
                plugin_api: None,
            },
        );
        meta.static_properties.insert(
            "blas".parse().unwrap(),
            vec![("provider".parse().unwrap(), vec!["mkl".parse().unwrap()])],
        );
        let profile = Profile::from_json(
            r#"{"schema": "vari-profile/1", "namespaces": [{"namespace": "nvidia",
               "features": [{"name": "sm_arch", "values": ["120_real", "90_real"]}]}]}"#,
        )
        .unwrap();
        let ctx = VariantMarkerContext::for_selection(&meta, &label, &profile).unwrap();
        let kept: Vec<String> = ctx.properties.iter().map(ToString::to_string).collect();
        assert_eq!(
            kept,
            ["blas :: provider :: mkl", "nvidia :: sm_arch :: 120_real"]
        );
        assert_eq!(ctx.label, Some(label));
        assert!(
            VariantMarkerContext::for_selection(&meta, &"other".parse().unwrap(), &profile)
                .is_none()
        );
        assert_eq!(VariantMarkerContext::non_variant().label, None);
    }
}
