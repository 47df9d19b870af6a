//! `variants`: label → namespace → feature → values.

use std::collections::{BTreeMap, HashSet};

use super::issues::{index_path, key_path, Issues};
use crate::metadata::model::{FeatureProperties, SchemaGeneration, ValueSet, VariantProperties};
use crate::metadata::tree::Node;
use crate::names::{FeatureName, FeatureValue, Namespace, VariantLabel};

/// Reads the entries of `variants` (already known to be an object).
///
/// Every problem is recorded in the scope of its label, so a lenient reader can drop just
/// that entry. A repeated label is an error (and drops the label: which of the two property
/// sets was meant is unknowable). `known_namespaces` is `default-priorities.namespace` when
/// it was read cleanly (otherwise namespaces are not cross-checked).
pub(super) fn read_variants(
    entries: &[(std::borrow::Cow<'_, str>, Node<'_>)],
    path: &str,
    known_namespaces: Option<&HashSet<&Namespace>>,
    generation: SchemaGeneration,
    issues: &mut Issues,
) -> BTreeMap<VariantLabel, VariantProperties> {
    let mut out = BTreeMap::new();
    let mut seen = HashSet::with_capacity(entries.len());
    // Problems are scoped to their label after each entry is read, and paths are only built
    // when there is something to report: this loop runs for every variant of an index file.
    issues.variant = None;
    for (label, node) in entries {
        let first_issue = issues.count();
        let label_path = || key_path(path, label);
        if !seen.insert(label.as_ref()) {
            issues.add(
                label_path(),
                "duplicate variant label (each label must appear once)",
            );
        } else if let Some((label, properties)) = read_entry(
            label,
            node,
            &label_path,
            known_namespaces,
            generation,
            issues,
        ) {
            out.insert(label, properties);
        }
        if issues.count() != first_issue {
            let scope = label.to_string();
            for issue in &mut issues.list[first_issue..] {
                issue.variant = Some(scope.clone());
            }
        }
    }
    out
}

/// One entry of `variants`, when it is valid.
fn read_entry(
    label: &str,
    node: &Node,
    label_path: &dyn Fn() -> String,
    known_namespaces: Option<&HashSet<&Namespace>>,
    generation: SchemaGeneration,
    issues: &mut Issues,
) -> Option<(VariantLabel, VariantProperties)> {
    let before = issues.count();
    let label = VariantLabel::new(label).map_err(|e| issues.add(label_path(), e.to_string()));
    // PEP 817 and the 0.0.x schemas cap labels; later generations lift the cap.
    if let Ok(label) = &label {
        let len = label.as_str().len();
        if generation.caps_label_length() && len > VariantLabel::MAX_LEN_0_0_3 {
            issues.add(
                label_path(),
                format!(
                    "the label is {len} characters long; schema {generation} allows at most {}",
                    VariantLabel::MAX_LEN_0_0_3
                ),
            );
        }
    }
    let properties = read_properties(node, label_path, known_namespaces, issues);
    let (Ok(label), Some(properties)) = (label, properties) else {
        return None;
    };
    if issues.count() != before {
        return None;
    }
    let empty = properties.is_empty();
    if empty && !label.is_null() {
        issues.add(
            label_path(),
            format!(
                "the null variant must use the label \"{}\"",
                VariantLabel::NULL
            ),
        );
        None
    } else if !empty && label.is_null() {
        issues.add(
            label_path(),
            format!(
                "the label \"{}\" is reserved for the variant with no properties",
                VariantLabel::NULL
            ),
        );
        None
    } else {
        Some((label, properties))
    }
}

/// One variant's properties. Values are sets: repeated values are errors, order is lost.
fn read_properties(
    node: &Node,
    path: &dyn Fn() -> String,
    known_namespaces: Option<&HashSet<&Namespace>>,
    issues: &mut Issues,
) -> Option<VariantProperties> {
    let namespaces = object(node, path, issues)?;
    let mut out = VariantProperties::with_capacity(namespaces.len());
    for (ns, features) in namespaces {
        let ns_path = || key_path(&path(), ns);
        let namespace = match Namespace::new(ns.as_ref()) {
            Ok(n) => n,
            Err(e) => {
                issues.add(ns_path(), e.to_string());
                continue;
            }
        };
        if out.contains_key(&namespace) {
            issues.add(ns_path(), "duplicate key");
            continue;
        }
        if let Some(known) = known_namespaces {
            if !known.contains(&namespace) {
                issues.add(
                    ns_path(),
                    format!("namespace \"{ns}\" is not listed in default-priorities.namespace"),
                );
            }
        }
        let Some(features) = object(features, &ns_path, issues) else {
            continue;
        };
        if features.is_empty() {
            issues.add(ns_path(), "must list at least one feature");
        }
        let mut by_feature = FeatureProperties::with_capacity(features.len());
        for (f, values) in features {
            let f_path = || key_path(&ns_path(), f);
            let feature = match FeatureName::new(f.as_ref()) {
                Ok(f) => f,
                Err(e) => {
                    issues.add(f_path(), e.to_string());
                    continue;
                }
            };
            if by_feature.contains_key(&feature) {
                issues.add(f_path(), "duplicate key");
                continue;
            }
            if let Some(values) = read_values(values, &f_path, issues) {
                if namespace.is_abi_dependency() {
                    check_abi_dependency_values(&values, &f_path, issues);
                }
                by_feature.insert(feature, values);
            }
        }
        out.insert(namespace, by_feature);
    }
    Some(out)
}

/// The entries of an object, or a problem at `path`.
fn object<'n, 'd>(
    node: &'n Node<'d>,
    path: &dyn Fn() -> String,
    issues: &mut Issues,
) -> Option<&'n [(std::borrow::Cow<'d, str>, Node<'d>)]> {
    match node {
        Node::Object(entries) => Some(entries),
        other => {
            issues.add(
                path(),
                format!("expected an object, found {}", other.kind()),
            );
            None
        }
    }
}

/// A non-empty list of unique feature values.
fn read_values(node: &Node, path: &dyn Fn() -> String, issues: &mut Issues) -> Option<ValueSet> {
    let Node::Array(items) = node else {
        issues.add(
            path(),
            format!("expected a list of feature values, found {}", node.kind()),
        );
        return None;
    };
    if items.is_empty() {
        issues.add(path(), "must list at least one value");
    }
    let mut out = ValueSet::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let Node::String(s) = item else {
            issues.add(
                index_path(&path(), i),
                format!("expected a string, found {}", item.kind()),
            );
            continue;
        };
        match FeatureValue::new(s.as_ref()) {
            Ok(v) => {
                if !out.insert(v) {
                    issues.add(index_path(&path(), i), format!("duplicate value {s:?}"));
                }
            }
            Err(e) => issues.add(index_path(&path(), i), e.to_string()),
        }
    }
    Some(out)
}

/// PEP 817: an `abi_dependency` value is a release segment of at most three components
/// (`2`, `2.9`, `2.8.0`), matched like `=={value}.*`.
fn check_abi_dependency_values(values: &ValueSet, path: &dyn Fn() -> String, issues: &mut Issues) {
    for value in values {
        let parts: Vec<&str> = value.as_str().split('.').collect();
        let numeric = parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
        if !numeric || parts.len() > 3 {
            issues.add(
                path(),
                format!(
                    "abi_dependency value {:?} must be a release of one to three numbers \
                     (like 2, 2.9 or 2.8.0)",
                    value.as_str()
                ),
            );
        }
    }
}
