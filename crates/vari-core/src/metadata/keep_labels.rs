//! Narrowing a release's combined metadata to the labels a lock or a mirror keeps (PEP 825,
//! "Integration with pylock.toml": tools may drop the `variants` entries whose labels are not
//! listed, with the namespaces thereby left unused; every kept label stays in full, because
//! evaluating variant markers needs all of its properties).

use std::collections::BTreeSet;

use super::model::VariantMetadata;
use crate::names::{Namespace, VariantLabel};

impl VariantMetadata {
    /// A copy holding only the `variants` entries whose labels are in `labels`, and only the
    /// namespaces those entries still use: in `default-priorities` (namespace, feature and
    /// property priorities), `providers` and `static-properties`. Labels in `labels` that the
    /// metadata does not have are ignored.
    ///
    /// ```
    /// use vari_core::metadata::{read_json, SourceKind};
    /// let meta = read_json(
    ///     r#"{"default-priorities": {"namespace": ["nvidia", "x86_64"]},
    ///         "variants": {"null": {}, "cu128": {"nvidia": {"cuda_version_lower_bound": ["12.8"]}},
    ///                      "v3": {"x86_64": {"level": ["v3"]}}}}"#,
    ///     SourceKind::IndexFile,
    /// )
    /// .unwrap();
    /// let kept = meta.keep_labels(&["null".parse().unwrap(), "v3".parse().unwrap()]);
    /// assert_eq!(kept.variants.len(), 2);
    /// assert_eq!(kept.priorities.namespace.len(), 1);
    /// assert_eq!(kept.priorities.namespace[0].as_str(), "x86_64");
    /// // The null variant alone keeps the first namespace: the result can still be written.
    /// let null_only = meta.keep_labels(&["null".parse().unwrap()]);
    /// assert_eq!(null_only.priorities.namespace[0].as_str(), "nvidia");
    /// assert!(vari_core::metadata::write_json(&null_only, null_only.generation).is_ok());
    /// ```
    ///
    /// When only labels without properties (the null variant) are kept, the first namespace of
    /// `default-priorities` stays, so that the result is still valid metadata to write.
    pub fn keep_labels(&self, labels: &[VariantLabel]) -> VariantMetadata {
        let variants: std::collections::BTreeMap<_, _> = self
            .variants
            .iter()
            .filter(|(label, _)| labels.contains(label))
            .map(|(label, properties)| (label.clone(), properties.clone()))
            .collect();
        let mut used: BTreeSet<Namespace> = variants
            .values()
            .flat_map(|properties| properties.iter().map(|(namespace, _)| namespace.clone()))
            .collect();
        // Only the null variant kept: the schema still wants one namespace in
        // `default-priorities` when variants are listed, so the first one stays (with its
        // provider), and the narrowed metadata can be written.
        if used.is_empty() && !variants.is_empty() {
            used.extend(self.priorities.namespace.first().cloned());
        }
        let mut kept = self.clone();
        kept.variants = variants;
        kept.priorities
            .namespace
            .retain(|namespace| used.contains(namespace));
        kept.priorities
            .feature
            .retain(|namespace, _| used.contains(namespace));
        kept.priorities
            .property
            .retain(|namespace, _| used.contains(namespace));
        kept.providers
            .retain(|namespace, _| used.contains(namespace));
        kept.static_properties
            .retain(|namespace, _| used.contains(namespace));
        kept
    }
}
