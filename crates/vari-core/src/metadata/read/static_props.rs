//! Static (ahead-of-time) supported properties, however the generation spells them:
//! 0.0.3 top-level `static-properties{ns:{f:[v]}}`, 0.2 per-provider `static-properties`
//! (read with the provider), and 0.0.2, which has no such table.
//!
//! 0.0.2 decision: an ahead-of-time provider (`plugin-use = "none"` or `"build"`) gets its
//! supported values from `default-priorities.property.{ns}` (features ordered by
//! `default-priorities.feature.{ns}`). That is how variantlib of that era computed its
//! "package-defined properties", and it is what the torch 2.9 index relies on
//! (`priority` namespace, `plugin-use = "none"`, `property.priority.order = ["1","2","3"]`).
//! Those property priorities are *moved* into the model's `static_properties`, so a 0.0.2
//! file converts to the 0.0.3 shape of torch 2.10 (and back) without change in selection.

use std::collections::{BTreeMap, HashSet};

use super::issues::{key_path, namespace_entries, Issues};
use super::priorities::PrioritiesRead;
use super::providers::{read_feature_values, ProvidersRead};
use super::source::{Sections, SourceKind};
use crate::metadata::model::{ProviderKind, SchemaGeneration, StaticProperties};
use crate::metadata::tree::Node;
use crate::names::{FeatureName, Namespace};

/// Reads 0.0.3 top-level `static-properties` (features in document order).
pub(super) fn read_static_0_0_3(
    node: &Node,
    path: &str,
    issues: &mut Issues,
) -> BTreeMap<Namespace, StaticProperties> {
    namespace_entries(node, path, issues, |features, ns_path, issues| {
        let features = read_feature_values(features, ns_path, issues)?;
        if features.is_empty() {
            issues.add(ns_path, "must list at least one feature");
        }
        Some(features)
    })
}

/// Everything the static-properties checks need.
pub(super) struct StaticCheck<'a> {
    pub(super) generation: SchemaGeneration,
    pub(super) kind: SourceKind,
    /// Key path prefix of the document (`""` or `"variant"`).
    pub(super) base: &'a str,
    pub(super) sections: &'a Sections,
}

/// Checks 0.0.3 static properties against the providers and orders their features by
/// `default-priorities.feature`.
pub(super) fn check_static_0_0_3(
    check: &StaticCheck<'_>,
    statics: &mut BTreeMap<Namespace, StaticProperties>,
    providers: &ProvidersRead,
    priorities: &PrioritiesRead,
    issues: &mut Issues,
) {
    let static_path = key_path(check.base, "static-properties");
    issues.order = check.sections.static_properties;
    for (ns, features) in statics.iter_mut() {
        let ns_path = key_path(&static_path, ns.as_str());
        match providers.value.get(ns) {
            None if providers.keys_ok && !providers.declared.contains(ns) => issues.add(
                &ns_path,
                format!("namespace \"{ns}\" has no entry in providers"),
            ),
            Some(p) if p.kind != ProviderKind::AheadOfTime => issues.add(
                &ns_path,
                format!(
                    "namespace \"{ns}\" is not an ahead-of-time provider \
                     (providers.{ns}.install-time is not false)"
                ),
            ),
            _ => {}
        }
        if let Err(missing) = order_features(features, priorities.feature_order(ns)) {
            issues.add(
                &ns_path,
                format!(
                    "lists several features, so default-priorities.feature.{ns} must give \
                     their order (missing: {missing})"
                ),
            );
        }
    }
    issues.order = check.sections.providers;
    let providers_path = key_path(check.base, "providers");
    for (ns, provider) in &providers.value {
        if provider.kind != ProviderKind::AheadOfTime || statics.contains_key(ns) {
            continue;
        }
        let path = key_path(&providers_path, ns.as_str());
        if check.kind != SourceKind::Pyproject {
            issues.add(
                path,
                format!(
                    "an ahead-of-time provider (install-time = false) needs its supported \
                     values in static-properties.{ns}"
                ),
            );
        } else if provider.build_requires.is_empty() {
            issues.add(
                path,
                format!(
                    "an ahead-of-time provider (install-time = false) needs \
                     static-properties.{ns} or a build-time plugin in requires"
                ),
            );
        }
    }
}

/// Derives 0.0.2 static properties from `default-priorities.property` of ahead-of-time
/// providers (see the module documentation), removing them from the priorities.
pub(super) fn derive_static_0_0_2(
    check: &StaticCheck<'_>,
    providers: &ProvidersRead,
    priorities: &mut PrioritiesRead,
    issues: &mut Issues,
) -> BTreeMap<Namespace, StaticProperties> {
    let mut out = BTreeMap::new();
    let property_path = key_path(&key_path(check.base, "default-priorities"), "property");
    for (ns, provider) in &providers.value {
        if provider.kind != ProviderKind::AheadOfTime {
            continue;
        }
        let values = priorities.value.property.remove(ns).unwrap_or_default();
        let mut features: StaticProperties =
            values.into_iter().filter(|(_, v)| !v.is_empty()).collect();
        if features.is_empty() {
            let needs_values =
                check.kind != SourceKind::Pyproject || provider.build_requires.is_empty();
            if needs_values {
                issues.order = check.sections.providers;
                issues.add(
                    key_path(&key_path(check.base, "providers"), ns.as_str()),
                    format!(
                        "an ahead-of-time provider (plugin-use = \"none\" or \"build\") needs \
                         its supported values in default-priorities.property.{ns}"
                    ),
                );
            }
            continue;
        }
        if let Err(missing) = order_features(&mut features, priorities.feature_order(ns)) {
            issues.order = check.sections.default_priorities;
            issues.add(
                key_path(&property_path, ns.as_str()),
                format!(
                    "an ahead-of-time namespace with several features needs their order in \
                     default-priorities.feature.{ns} (missing: {missing})"
                ),
            );
        }
        out.insert(ns.clone(), features);
    }
    out
}

/// Sorts `features` by `order` (features listed there first, in that order). With more than
/// one feature, every feature must be listed; the missing ones are returned.
fn order_features(features: &mut StaticProperties, order: &[FeatureName]) -> Result<(), String> {
    let position: BTreeMap<&FeatureName, usize> =
        order.iter().enumerate().map(|(i, f)| (f, i)).collect();
    if features.len() > 1 {
        let listed: HashSet<&FeatureName> = position.keys().copied().collect();
        let missing: Vec<&str> = features
            .iter()
            .filter(|(f, _)| !listed.contains(f))
            .map(|(f, _)| f.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(missing.join(", "));
        }
    }
    features.sort_by_key(|(f, _)| position.get(f).copied().unwrap_or(usize::MAX));
    Ok(())
}
