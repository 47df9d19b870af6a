//! PEP 817: "If a feature is marked as multi-value by the provider plugin, a single variant
//! wheel can define multiple properties sharing the same namespace and feature name.
//! Otherwise, there MUST NOT be more than a single value."
//!
//! Whether a feature is multi-value is the provider's knowledge, which this crate does not
//! have (no metadata generation records it: `static-properties` lists values only). Callers
//! that know (the built-in providers' registry, a plugin's answer) pass it in as a
//! [`FeatureKinds`]; features it does not know are left alone.

use super::error::MetadataError;
use super::model::VariantMetadata;
use crate::names::{FeatureName, Namespace, VariantLabel};

/// What providers say about their features: may a variant list several values of one?
///
/// Any `Fn(&Namespace, &FeatureName) -> Option<bool>` is one.
///
/// ```
/// use vari_core::metadata::FeatureKinds;
/// use vari_core::{FeatureName, Namespace};
/// let kinds = |ns: &Namespace, f: &FeatureName| {
///     (ns.as_str() == "nvidia").then(|| f.as_str() == "sm_arch")
/// };
/// let ns: Namespace = "nvidia".parse().unwrap();
/// assert_eq!(kinds.multi_value(&ns, &"sm_arch".parse().unwrap()), Some(true));
/// assert_eq!(kinds.multi_value(&ns, &"cuda_version_lower_bound".parse().unwrap()), Some(false));
/// ```
pub trait FeatureKinds {
    /// `Some(true)` when the feature may carry several values in one variant, `Some(false)`
    /// when it may carry only one, `None` when the provider of `namespace` is unknown here.
    fn multi_value(&self, namespace: &Namespace, feature: &FeatureName) -> Option<bool>;
}

impl<F> FeatureKinds for F
where
    F: Fn(&Namespace, &FeatureName) -> Option<bool>,
{
    fn multi_value(&self, namespace: &Namespace, feature: &FeatureName) -> Option<bool> {
        self(namespace, feature)
    }
}

/// Every variant that lists more than one value for a feature its provider says is
/// single-value, one problem per such feature, in label order. Key paths name the feature
/// (`variants.cu128.nvidia.cuda_version_lower_bound`).
///
/// ```
/// use vari_core::metadata::{check_single_values, read_json, SourceKind};
/// use vari_core::{FeatureName, Namespace};
/// let meta = read_json(r#"{"$schema": "https://variants-schema.wheelnext.dev/v0.0.3.json",
///     "default-priorities": {"namespace": ["nvidia"]},
///     "providers": {"nvidia": {"requires": ["nvidia-variant-provider"]}},
///     "variants": {"cu": {"nvidia": {"cuda_version_lower_bound": ["12.0", "11.8"]}}}}"#,
///     SourceKind::IndexFile).unwrap();
/// let single = |_: &Namespace, _: &FeatureName| Some(false);
/// let problems = check_single_values(&meta, &single);
/// assert_eq!(problems[0].path, "variants.cu.nvidia.cuda_version_lower_bound");
/// ```
pub fn check_single_values(meta: &VariantMetadata, kinds: &dyn FeatureKinds) -> Vec<MetadataError> {
    let mut problems = Vec::new();
    for (label, namespaces) in &meta.variants {
        for (namespace, features) in namespaces {
            for (feature, values) in features {
                if values.len() > 1 && kinds.multi_value(namespace, feature) == Some(false) {
                    let listed: Vec<&str> = values.iter().map(|v| v.as_str()).collect();
                    problems.push(MetadataError::new(
                        format!("variants.{label}.{namespace}.{feature}"),
                        format!(
                            "`{namespace} :: {feature}` is a single-value feature (its provider \
                             says so), but the variant lists {} values: {} (PEP 817 allows one)",
                            values.len(),
                            listed.join(", ")
                        ),
                    ));
                }
            }
        }
    }
    problems
}

/// Removes every variant [`check_single_values`] finds at fault and returns the problems, to
/// be shown as warnings: an installer skips such a variant (it must not exist) and ranks the
/// rest.
pub fn remove_multi_valued_single_features(
    meta: &mut VariantMetadata,
    kinds: &dyn FeatureKinds,
) -> Vec<MetadataError> {
    let problems = check_single_values(meta, kinds);
    if !problems.is_empty() {
        let at_fault: Vec<VariantLabel> = meta
            .variants
            .iter()
            .filter(|(_, namespaces)| {
                namespaces.iter().any(|(ns, features)| {
                    features.iter().any(|(f, values)| {
                        values.len() > 1 && kinds.multi_value(ns, f) == Some(false)
                    })
                })
            })
            .map(|(label, _)| label.clone())
            .collect();
        for label in at_fault {
            meta.variants.remove(&label);
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::{read_json, SourceKind};

    fn meta() -> VariantMetadata {
        read_json(
            r#"{"$schema": "https://variants-schema.wheelnext.dev/v0.0.3.json",
            "default-priorities": {"namespace": ["nvidia", "x"]},
            "providers": {"nvidia": {"requires": ["nvidia-variant-provider"]},
                          "x": {"requires": ["x-provider"]}},
            "variants": {
                "null": {},
                "bad": {"nvidia": {"cuda_version_lower_bound": ["12.0", "11.8"], "sm_arch": ["80_real", "90_real"]}},
                "fat": {"nvidia": {"cuda_version_lower_bound": ["12.8"], "sm_arch": ["80_real", "90_real"]}},
                "other": {"x": {"f": ["1", "2"]}}
            }}"#,
            SourceKind::IndexFile,
        )
        .unwrap()
    }

    /// nvidia's features as the built-in provider describes them; `x` is unknown.
    fn nvidia(ns: &Namespace, f: &FeatureName) -> Option<bool> {
        (ns.as_str() == "nvidia").then(|| f.as_str() == "sm_arch")
    }

    #[test]
    fn several_values_of_a_single_value_feature_are_an_error() {
        let problems = check_single_values(&meta(), &nvidia);
        let shown: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            ["variants.bad.nvidia.cuda_version_lower_bound: `nvidia :: cuda_version_lower_bound` \
              is a single-value feature (its provider says so), but the variant lists 2 values: \
              11.8, 12.0 (PEP 817 allows one)"]
        );
    }

    #[test]
    fn unknown_providers_and_multi_value_features_are_left_alone() {
        let knows_nothing = |_: &Namespace, _: &FeatureName| None;
        assert!(check_single_values(&meta(), &knows_nothing).is_empty());
    }

    #[test]
    fn an_installer_skips_the_variant_and_keeps_the_rest() {
        let mut m = meta();
        let warnings = remove_multi_valued_single_features(&mut m, &nvidia);
        assert_eq!(warnings.len(), 1);
        let labels: Vec<&str> = m.variants.keys().map(|l| l.as_str()).collect();
        assert_eq!(labels, ["fat", "null", "other"]);
    }
}
