//! The namespace, feature and value orders of `spec/format.md` §6 steps 1–3, turned into index
//! maps so that ranking a variant is a handful of hash look-ups.

use crate::name_hash::{Name, NameMap};

use super::options::SelectionOptions;
use super::pattern::Pattern;
use super::rejection::Rejection;
use super::support::namespace_support;
use crate::markers::TargetEnvironment;
use crate::metadata::VariantMetadata;
use crate::names::{FeatureValue, Namespace};
use crate::profile::Profile;
use crate::supported::SupportList;

/// Index of a name in an order built from several lists: the position of its first occurrence.
fn first_positions<'a>(lists: impl IntoIterator<Item = &'a str>) -> NameMap<'a, u32> {
    let mut positions = NameMap::default();
    for name in lists {
        let next = u32::try_from(positions.len()).unwrap_or(u32::MAX);
        positions.0.entry(Name(name)).or_insert(next);
    }
    positions
}

/// One supported feature of a namespace.
#[derive(Debug)]
pub(crate) struct FeatureTable<'a> {
    /// Position in the namespace's feature order.
    pub(crate) index: u32,
    /// Supported values → position in the feature's value order. Values only listed in
    /// priorities (unsupported) are absent.
    pub(crate) values: NameMap<'a, u32>,
    /// Supported values as the source lists them (for rejection messages).
    pub(crate) supported: &'a [FeatureValue],
}

/// One namespace of `default-priorities.namespace`.
#[derive(Debug)]
pub(crate) struct NamespaceTable<'a> {
    /// Position in the namespace order.
    pub(crate) index: u32,
    /// Supported features, or why the namespace is unusable on the target.
    pub(crate) features: Result<NameMap<'a, FeatureTable<'a>>, Rejection>,
}

/// Index maps for every namespace the metadata prioritises.
#[derive(Debug)]
pub(crate) struct OrderTables<'a> {
    pub(crate) namespaces: NameMap<'a, NamespaceTable<'a>>,
}

impl<'a> OrderTables<'a> {
    /// Builds the orders: user preferences first, then the package's `default-priorities`, then
    /// (for features and values) the provider's supported order.
    pub(crate) fn build(
        meta: &'a VariantMetadata,
        profile: &'a Profile,
        env: &TargetEnvironment,
        options: &'a SelectionOptions,
    ) -> Self {
        let preferred_namespaces = options.prefer.iter().filter_map(|p| match p {
            Pattern::Namespace(ns) => Some(ns.as_str()),
            _ => None,
        });
        let listed = listed_namespaces(meta);
        let namespace_order =
            first_positions(preferred_namespaces.chain(listed.clone().map(|n| n.as_str())));
        let mut namespaces = NameMap::default();
        for namespace in listed {
            let Some(&index) = namespace_order.get(namespace.as_str()) else {
                continue; // unreachable: every prioritised namespace is in the order
            };
            let features = namespace_support(meta, profile, env, options, namespace)
                .map(|support| feature_tables(meta, options, namespace.as_str(), support));
            namespaces.insert(namespace.as_str(), NamespaceTable { index, features });
        }
        Self { namespaces }
    }
}

/// `default-priorities.namespace`, then `abi_dependency` when variants use it without it being
/// listed: PEP 817 gives that namespace no provider and no priority, and it goes last.
fn listed_namespaces(meta: &VariantMetadata) -> impl Iterator<Item = &Namespace> + Clone {
    let listed = &meta.priorities.namespace;
    let implicit_abi = if listed.iter().any(Namespace::is_abi_dependency) {
        None
    } else {
        meta.variants
            .values()
            .flat_map(|v| v.keys())
            .find(|n| n.is_abi_dependency())
    };
    listed.iter().chain(implicit_abi)
}

/// Feature and value index maps of one usable namespace.
fn feature_tables<'a>(
    meta: &'a VariantMetadata,
    options: &'a SelectionOptions,
    namespace: &'a str,
    support: SupportList<'a>,
) -> NameMap<'a, FeatureTable<'a>> {
    let preferred_features = options.prefer.iter().filter_map(|p| match p {
        Pattern::Feature(f) if f.namespace.as_str() == namespace => Some(f.feature.as_str()),
        _ => None,
    });
    let default_features = meta
        .priorities
        .feature
        .get(namespace)
        .into_iter()
        .flatten()
        .map(|f| f.as_str());
    let supported_features = support.features().map(|(f, _)| f.as_str());
    let feature_order = first_positions(
        preferred_features
            .chain(default_features)
            .chain(supported_features),
    );
    let default_values = meta.priorities.property.get(namespace);
    let mut tables = NameMap::default();
    for (feature, supported) in support.features() {
        let feature = feature.as_str();
        let Some(&index) = feature_order.get(feature) else {
            continue; // unreachable: supported features were chained into the order
        };
        let preferred_values = options.prefer.iter().filter_map(|p| match p {
            Pattern::Property(p)
                if p.namespace.as_str() == namespace && p.feature.as_str() == feature =>
            {
                Some(p.value.as_str())
            }
            _ => None,
        });
        let defaults = default_values
            .and_then(|per_feature| per_feature.get(feature))
            .into_iter()
            .flatten()
            .map(|v| v.as_str());
        let mut order = first_positions(
            preferred_values
                .chain(defaults)
                .chain(supported.iter().map(|v| v.as_str())),
        );
        // Only supported values may count: a value the package or the user prefers but the
        // target lacks must never make a wheel compatible.
        order
            .0
            .retain(|value, _| supported.iter().any(|s| s.as_str() == value.0));
        tables.insert(
            feature,
            FeatureTable {
                index,
                values: order,
                supported,
            },
        );
    }
    tables
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_positions_keeps_the_first_occurrence() {
        let p = first_positions(["b", "a", "b", "c", "a"]);
        assert_eq!(
            (p.get("b"), p.get("a"), p.get("c")),
            (Some(&0), Some(&1), Some(&2))
        );
        assert_eq!(p.get("d"), None);
    }
}
