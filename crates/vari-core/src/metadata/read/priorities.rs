//! `default-priorities`: `namespace` in every generation, `feature` and `property` in 0.0.x.

use std::collections::BTreeMap;

use super::issues::{
    as_object, get, index_path, key_path, name_list, namespace_entries, reject_unknown_keys,
    unique_entries, Issues,
};
use super::providers::read_feature_lists;
use crate::metadata::model::{DefaultPriorities, SchemaGeneration};
use crate::metadata::tree::Node;
use crate::names::{FeatureName, FeatureValue, Namespace};

/// `default-priorities` as read.
#[derive(Debug, Default)]
pub(super) struct PrioritiesRead {
    /// What could be read.
    pub(super) value: DefaultPriorities,
    /// Whether `namespace` was read without problems, so cross-checks against it are
    /// meaningful (and do not pile up follow-on errors).
    pub(super) namespace_ok: bool,
}

impl PrioritiesRead {
    /// The order `default-priorities.feature` gives the features of `namespace` (empty when it
    /// gives none).
    pub(super) fn feature_order(&self, namespace: &Namespace) -> &[FeatureName] {
        self.value
            .feature
            .get(namespace)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }
}

/// Reads `default-priorities` at `path` (absent: `node` is `None`).
pub(super) fn read_priorities(
    node: Option<&Node>,
    path: &str,
    generation: SchemaGeneration,
    required: bool,
    issues: &mut Issues,
) -> PrioritiesRead {
    let mut out = PrioritiesRead::default();
    let Some(node) = node else {
        if required {
            issues.add(path, "required key is missing");
        } else {
            // pyproject.toml may leave the table out; an empty list is then checked against
            // the providers like any other.
            out.namespace_ok = true;
        }
        return out;
    };
    let Some(entries) = as_object(node, path, issues) else {
        return out;
    };
    let entries = unique_entries(entries, path, issues);
    let allowed: &[&str] = if generation.has_feature_priorities() {
        &["namespace", "feature", "property"]
    } else {
        &["namespace"]
    };
    reject_unknown_keys(&entries, allowed, path, issues);

    let ns_path = key_path(path, "namespace");
    match get(&entries, "namespace") {
        None => issues.add(&ns_path, "required key is missing"),
        Some(list) => {
            let before = issues.count();
            if let Some(namespaces) = name_list::<Namespace>(list, &ns_path, false, issues) {
                out.value.namespace = namespaces;
                out.namespace_ok = issues.count() == before;
            }
        }
    }
    if !generation.has_feature_priorities() {
        return out;
    }
    if let Some(feature) = get(&entries, "feature") {
        out.value.feature = read_feature_priorities(feature, &key_path(path, "feature"), issues);
    }
    if let Some(property) = get(&entries, "property") {
        out.value.property =
            read_property_priorities(property, &key_path(path, "property"), issues);
    }
    out
}

/// `feature`: namespace → features, most preferred first.
fn read_feature_priorities(
    node: &Node,
    path: &str,
    issues: &mut Issues,
) -> BTreeMap<Namespace, Vec<FeatureName>> {
    namespace_entries(node, path, issues, |list, ns_path, issues| {
        name_list::<FeatureName>(list, ns_path, false, issues)
    })
}

/// `property`: namespace → feature → values, most preferred first.
fn read_property_priorities(
    node: &Node,
    path: &str,
    issues: &mut Issues,
) -> BTreeMap<Namespace, BTreeMap<FeatureName, Vec<FeatureValue>>> {
    namespace_entries(node, path, issues, |features, ns_path, issues| {
        let by_feature = read_feature_lists(features, ns_path, false, issues)?;
        Some(by_feature.into_iter().collect())
    })
}

/// Checks the namespace list against the variants: never empty when variants exist.
pub(super) fn check_namespace_not_empty(
    priorities: &PrioritiesRead,
    has_variants: bool,
    path: &str,
    issues: &mut Issues,
) {
    if priorities.namespace_ok && has_variants && priorities.value.namespace.is_empty() {
        issues.add(
            key_path(path, "namespace"),
            "must list at least one namespace when the file lists variants",
        );
    }
}

/// Position of `namespace` in the list, for error paths.
pub(super) fn namespace_path(path: &str, index: usize) -> String {
    index_path(&key_path(path, "namespace"), index)
}
