//! Ranking the variants of one package version (`spec/format.md` §6 steps 4–7).

use std::cmp::Ordering;
use std::ops::Range;

use super::options::SelectionOptions;
use super::pattern::Pattern;
use super::priorities::OrderTables;
use super::rejection::Rejection;
use crate::markers::TargetEnvironment;
use crate::metadata::{property_refs, VariantMetadata, VariantProperties};
use crate::names::{FeatureName, FeatureRef, FeatureValue, Namespace, VariantLabel};
use crate::profile::Profile;

/// One variant as ranked: whether it can be selected, and if not, why. It borrows the label
/// and properties from the ranked metadata, so a large release is ranked without copying them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankedVariant<'a> {
    /// The label.
    pub label: &'a VariantLabel,
    /// Whether the variant can be selected (compatible with the target and allowed by the
    /// user's options); equivalent to `rejection.is_none()`.
    pub compatible: bool,
    /// The properties the variant declares (iterate them with [`RankedVariant::properties`]).
    pub declared: &'a VariantProperties,
    /// Why it cannot be selected.
    pub rejection: Option<Rejection>,
}

impl<'a> RankedVariant<'a> {
    /// Every property the variant declares, in (namespace, feature, value) order, borrowed.
    pub fn properties(
        &self,
    ) -> impl Iterator<Item = (&'a Namespace, &'a FeatureName, &'a FeatureValue)> + 'a {
        property_refs(self.declared)
    }
}

/// The result of [`rank`], borrowing from the ranked metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ranking<'a> {
    /// Selectable labels, best first; the null variant (when selectable) last.
    pub order: Vec<VariantLabel>,
    /// Every variant of the metadata: the selectable ones in `order`, then the rejected ones
    /// sorted by label.
    pub variants: Vec<RankedVariant<'a>>,
    /// The `--variant` label when the metadata has no variant with it (nothing is selectable
    /// then, and no variant carries the reason).
    pub unmatched_variant: Option<VariantLabel>,
}

impl<'a> Ranking<'a> {
    /// The best selectable label, if any.
    pub fn best(&self) -> Option<&VariantLabel> {
        self.order.first()
    }

    /// The entry of `label`, if the metadata has it.
    pub fn get(&self, label: &str) -> Option<&RankedVariant<'a>> {
        self.variants.iter().find(|v| v.label.as_str() == label)
    }
}

/// The sort key of one (feature, best supported value) of a variant: indices of its namespace,
/// feature and value in their orders, packed into one integer (namespace in the high bits,
/// value in the low ones) that orders exactly as the triple does. Lower is better. One integer
/// compares in two instructions where a tuple compares field by field with branches, and the
/// keys are sorted and compared tens of thousands of times for a large release.
type PropertyKey = u128;

/// [`PropertyKey`] of a (namespace, feature, value) index triple.
fn property_key(namespace: u32, feature: u32, value: u32) -> PropertyKey {
    (u128::from(namespace) << 64) | (u128::from(feature) << 32) | u128::from(value)
}

/// A variant during ranking: its keys live in one shared vector to avoid an allocation each.
struct Entry<'a> {
    label: &'a VariantLabel,
    properties: &'a VariantProperties,
    keys: Range<usize>,
    rejection: Option<Rejection>,
}

/// Orders the variants of `meta` for the target described by `profile` and `env`, applying the
/// user's `options`.
///
/// A variant is compatible when every namespace it uses is enabled on the target and, for every
/// feature it declares, at least one of its values is supported. Compatible variants are compared
/// by their per-feature best values' (namespace, feature, value) indices, sorted; a variant whose
/// key list extends another's wins; ties break by label; the null variant comes last.
///
/// ```
/// use vari_core::markers::TargetEnvironment;
/// use vari_core::metadata::{DefaultPriorities, SchemaGeneration, VariantMetadata};
/// use vari_core::ordering::{rank, SelectionOptions};
/// use vari_core::{Profile, VariantLabel};
///
/// let mut meta = VariantMetadata {
///     generation: SchemaGeneration::V0_1, schema_url: None,
///     priorities: DefaultPriorities { namespace: vec!["x86_64".parse().unwrap()], ..Default::default() },
///     providers: Default::default(), static_properties: Default::default(), variants: Default::default(),
/// };
/// for (label, level) in [("v2", "v2"), ("v3", "v3"), ("v4", "v4")] {
///     let mut features = vari_core::metadata::FeatureProperties::new();
///     features.insert("level".parse().unwrap(), [level.parse().unwrap()].into());
///     meta.variants.insert(label.parse().unwrap(), [("x86_64".parse().unwrap(), features)].into());
/// }
/// meta.variants.insert(VariantLabel::null(), Default::default());
/// let profile = Profile::from_json(r#"{"schema": "vari-profile/1", "namespaces": [{"namespace": "x86_64",
///     "features": [{"name": "level", "values": ["v3", "v2", "v1"]}]}]}"#).unwrap();
/// let env = TargetEnvironment::from_platform(None, "3.12").unwrap();
/// let ranking = rank(&meta, &profile, &env, &SelectionOptions::default());
/// let order: Vec<&str> = ranking.order.iter().map(|l| l.as_str()).collect();
/// assert_eq!(order, ["v3", "v2", "null"]);
/// assert!(ranking.get("v4").unwrap().rejection.as_ref().unwrap().to_string().contains("v4"));
/// ```
pub fn rank<'a>(
    meta: &'a VariantMetadata,
    profile: &Profile,
    env: &TargetEnvironment,
    options: &SelectionOptions,
) -> Ranking<'a> {
    let Sorted { mut entries, order } = sort(meta, profile, env, options);
    let labels = order.iter().map(|&i| entries[i].label.clone()).collect();
    // Entries follow `meta.variants`, a BTreeMap, so the rejected ones come out sorted by label.
    let rejected = (0..entries.len()).filter(|&i| entries[i].rejection.is_some());
    let sequence: Vec<usize> = order.iter().copied().chain(rejected).collect();
    let variants = sequence
        .into_iter()
        .map(|i| {
            let entry = &mut entries[i];
            let rejection = entry.rejection.take();
            RankedVariant {
                label: entry.label,
                compatible: rejection.is_none(),
                declared: entry.properties,
                rejection,
            }
        })
        .collect();
    let unmatched_variant = options
        .variant
        .as_ref()
        .filter(|label| !meta.variants.contains_key(*label))
        .cloned();
    Ranking {
        order: labels,
        variants,
        unmatched_variant,
    }
}

/// The `order` of [`rank`] alone, borrowed from `meta`: the selectable labels, best first.
///
/// This is the fast path for choosing a wheel (it builds no per-variant report, so it allocates
/// next to nothing); use [`rank`] to explain the choice.
pub fn rank_labels<'a>(
    meta: &'a VariantMetadata,
    profile: &Profile,
    env: &TargetEnvironment,
    options: &SelectionOptions,
) -> Vec<&'a VariantLabel> {
    let Sorted { entries, order } = sort(meta, profile, env, options);
    order.into_iter().map(|i| entries[i].label).collect()
}

/// Every variant with its verdict, in label order, and the selectable ones' indices best first.
/// Sorting indices rather than entries keeps the (large) rejections from being moved around.
struct Sorted<'a> {
    entries: Vec<Entry<'a>>,
    order: Vec<usize>,
}

fn sort<'a>(
    meta: &'a VariantMetadata,
    profile: &Profile,
    env: &TargetEnvironment,
    options: &SelectionOptions,
) -> Sorted<'a> {
    let tables = OrderTables::build(meta, profile, env, options);
    // One key per feature of every compatible variant: sized from the first variants' counts
    // rather than grown by doubling, whose copies of a large vector touch fresh pages each time
    // (capped, so that a few large variants first cannot ask for an absurd allocation).
    const MAX_RESERVED_KEYS: usize = 1 << 20;
    let features = |p: &VariantProperties| p.values().map(|f| f.len()).sum::<usize>();
    let sample = meta.variants.values().take(16);
    let per_variant = sample.map(features).max().unwrap_or(0);
    let reserved = per_variant
        .saturating_mul(meta.variants.len())
        .min(MAX_RESERVED_KEYS);
    let mut keys: Vec<PropertyKey> = Vec::with_capacity(reserved);
    let mut entries: Vec<Entry<'a>> = Vec::with_capacity(meta.variants.len());
    for (label, properties) in &meta.variants {
        let start = keys.len();
        let rejection = match variant_keys(&tables, properties, &mut keys) {
            Ok(()) => user_rejection(label, properties, options),
            Err(rejection) => Some(rejection),
        };
        if rejection.is_some() {
            keys.truncate(start);
        } else {
            keys[start..].sort_unstable();
        }
        entries.push(Entry {
            label,
            properties,
            keys: start..keys.len(),
            rejection,
        });
    }
    let mut order: Vec<usize> = (0..entries.len())
        .filter(|&i| entries[i].rejection.is_none())
        .collect();
    order.sort_unstable_by(|&a, &b| compare(&entries[a], &entries[b], &keys));
    Sorted { entries, order }
}

/// Appends the sort key of every feature of a variant (with its best supported value) to `keys`,
/// or explains why the variant is incompatible.
fn variant_keys(
    tables: &OrderTables<'_>,
    properties: &VariantProperties,
    keys: &mut Vec<PropertyKey>,
) -> Result<(), Rejection> {
    for (namespace, features) in properties {
        let table = tables.namespaces.get(namespace.as_str()).ok_or_else(|| {
            Rejection::NamespaceNotPrioritized {
                namespace: namespace.clone(),
            }
        })?;
        let supported = table.features.as_ref().map_err(Clone::clone)?;
        for (feature, values) in features {
            let feature_table = supported.get(feature.as_str());
            let best = feature_table.and_then(|t| {
                values
                    .iter()
                    .filter_map(|v| t.values.get(v.as_str()).copied())
                    .min()
                    .map(|value_index| property_key(table.index, t.index, value_index))
            });
            match best {
                Some(key) => keys.push(key),
                None => {
                    return Err(Rejection::UnsupportedValue {
                        feature: FeatureRef {
                            namespace: namespace.clone(),
                            feature: feature.clone(),
                        },
                        declared: values.iter().cloned().collect(),
                        supported: feature_table
                            .map(|t| t.supported.to_vec())
                            .unwrap_or_default(),
                    })
                }
            }
        }
    }
    Ok(())
}

/// Whether `pattern` matches any property of the variant.
fn forbids(pattern: &Pattern, properties: &VariantProperties) -> bool {
    match pattern {
        Pattern::Namespace(ns) => properties.contains_key(ns),
        Pattern::Feature(f) => properties
            .get(&f.namespace)
            .is_some_and(|features| features.contains_key(&f.feature)),
        Pattern::Property(p) => properties
            .get(&p.namespace)
            .and_then(|features| features.get(&p.feature))
            .is_some_and(|values| values.contains(&p.value)),
    }
}

/// The user's reason to reject a compatible variant, if any.
fn user_rejection(
    label: &VariantLabel,
    properties: &VariantProperties,
    options: &SelectionOptions,
) -> Option<Rejection> {
    if options.no_variants {
        return Some(Rejection::VariantsDisabled);
    }
    if let Some(pattern) = options.forbid.iter().find(|p| forbids(p, properties)) {
        return Some(Rejection::Forbidden {
            pattern: pattern.clone(),
        });
    }
    match &options.variant {
        Some(requested) if requested != label => Some(Rejection::NotRequested {
            requested: requested.clone(),
        }),
        _ => None,
    }
}

/// Whether a variant is the null variant: the one without properties, whatever its label (a
/// tolerated 0.0.x file may call it `00000000`). The one answer: the ranking puts it last, and
/// the selector reports a choice of it as the null variant (`vari_select::ChosenBecause`).
pub fn is_null_variant(properties: &VariantProperties) -> bool {
    properties.is_empty()
}

/// Best first: the null variant last, then the lexicographic key comparison in which a key list
/// beats its own prefix, then the label.
fn compare(a: &Entry<'_>, b: &Entry<'_>, keys: &[PropertyKey]) -> Ordering {
    // The null variant is the one without properties, whatever its label (a tolerated 0.0.x
    // file may call it `00000000`).
    (is_null_variant(a.properties), a.label.is_null())
        .cmp(&(is_null_variant(b.properties), b.label.is_null()))
        .then_with(|| compare_keys(&keys[a.keys.clone()], &keys[b.keys.clone()]))
        .then_with(|| a.label.cmp(b.label))
}

/// Lexicographic on sorted keys; when one list is a prefix of the other, the longer (more
/// properties) sorts first.
fn compare_keys(a: &[PropertyKey], b: &[PropertyKey]) -> Ordering {
    for (x, y) in a.iter().zip(b) {
        if x != y {
            return x.cmp(y);
        }
    }
    b.len().cmp(&a.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longer_key_list_beats_its_prefix() {
        let a = [property_key(0, 0, 0), property_key(1, 0, 0)];
        let b = [property_key(0, 0, 0)];
        assert_eq!(compare_keys(&a, &b), Ordering::Less);
        assert_eq!(compare_keys(&b, &a), Ordering::Greater);
        assert_eq!(compare_keys(&a, &a), Ordering::Equal);
        assert_eq!(
            compare_keys(
                &[property_key(0, 1, 0)],
                &[property_key(0, 0, 5), property_key(0, 2, 0)]
            ),
            Ordering::Greater
        );
        assert_eq!(compare_keys(&[], &b), Ordering::Greater);
    }

    #[test]
    fn packed_keys_order_as_their_triples() {
        let triples = [
            (0, 0, 0),
            (0, 0, u32::MAX),
            (0, 1, 0),
            (0, u32::MAX, 7),
            (1, 0, 0),
            (u32::MAX, 0, 0),
            (u32::MAX, u32::MAX, u32::MAX),
        ];
        for a in triples {
            for b in triples {
                let packed = property_key(a.0, a.1, a.2).cmp(&property_key(b.0, b.1, b.2));
                assert_eq!(packed, a.cmp(&b), "{a:?} vs {b:?}");
            }
        }
    }
}
