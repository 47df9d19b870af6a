//! The one in-memory model that every schema generation is read into and written from.
//!
//! Fields follow the richest generation (0.0.3 plus 0.2.0's provider kinds); readers normalise
//! older or narrower generations into it, writers drop what a target generation cannot express.

use std::collections::BTreeMap;

use super::sorted::{SortedMap, SortedSet};

use crate::markers::Marker;
use crate::names::{FeatureName, FeatureValue, Namespace, Property, VariantLabel};

/// The schema generations found in the wild (`spec/format.md` §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SchemaGeneration {
    /// 0.0.2: providers use `plugin-use: none|build|all` (torch 2.9 test index).
    V0_0_2,
    /// 0.0.3: PEP 817 text, torch 2.10, variantlib ≤ 0.1.
    V0_0_3,
    /// 0.1.x: PEP 825, only `default-priorities.namespace` and `variants`.
    V0_1,
    /// 0.2.0: variantlib 0.2 provider kinds (`requires`/`build-requires`/`static-properties`/`builtin`).
    V0_2,
}

/// How a namespace's supported properties are obtained.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ProviderKind {
    /// Queried at install time through a plugin (`install-time = true`, 0.2.0 `requires`).
    InstallTime,
    /// Ahead-of-time: supported values come from `static-properties`
    /// (`install-time = false`, 0.0.2 `plugin-use` other than `all`, 0.2.0 `build-requires` or
    /// `static-properties`).
    AheadOfTime,
    /// Provided by the installer itself (0.2.0 `builtin = "name"`).
    Builtin(String),
}

/// One entry of `providers`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ProviderInfo {
    /// How supported properties are obtained.
    pub kind: ProviderKind,
    /// Requirements that install the plugin (install-time plugins).
    pub requires: Vec<String>,
    /// Requirements of a build-time (AoT) plugin (0.2.0 `build-requires`, pyproject only).
    pub build_requires: Vec<String>,
    /// `enable-if`: a PEP 508 marker, parsed when read; when false on the target, the
    /// namespace is unsupported.
    pub enable_if: Option<Marker>,
    /// Off unless the user enables it.
    pub optional: bool,
    /// Explicit plugin entry point (`module:Object`).
    pub plugin_api: Option<String>,
}

/// The properties of one variant: namespace → feature → set of values, each level in sorted
/// order.
///
/// Sorted vectors rather than `BTreeMap`/`BTreeSet`: a variant has a few namespaces of a few
/// features of (usually) one value, and a B-tree allocates a whole node (~300–600 bytes) even
/// for one element. On a 1,000-variant index file that was ~25 allocations and ~9 KB per
/// variant, and zeroing that memory dominated reading it; see [`SortedMap`].
pub type VariantProperties = SortedMap<Namespace, FeatureProperties>;

/// The features of one namespace of a variant, with their values.
pub type FeatureProperties = SortedMap<FeatureName, ValueSet>;

/// The values of one feature of a variant (a set: unique, sorted).
pub type ValueSet = SortedSet<FeatureValue>;

/// Static (ahead-of-time) supported values of one namespace: features in priority order, each
/// with its values most preferred first.
pub type StaticProperties = Vec<(FeatureName, Vec<FeatureValue>)>;

/// `default-priorities`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DefaultPriorities {
    /// Namespaces, most preferred first.
    pub namespace: Vec<Namespace>,
    /// Per namespace, features put first (0.0.x).
    pub feature: BTreeMap<Namespace, Vec<FeatureName>>,
    /// Per namespace and feature, values put first (0.0.x).
    pub property: BTreeMap<Namespace, BTreeMap<FeatureName, Vec<FeatureValue>>>,
}

/// Variant metadata of one file (pyproject `[variant]`, `variant.json` or `*-variants.json`),
/// or the combination of several.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VariantMetadata {
    /// The generation it was read from (and, by default, is written back in).
    pub generation: SchemaGeneration,
    /// The `$schema` URL as read, if any.
    pub schema_url: Option<String>,
    /// `default-priorities`.
    pub priorities: DefaultPriorities,
    /// `providers`, by namespace.
    pub providers: BTreeMap<Namespace, ProviderInfo>,
    /// Static supported properties of ahead-of-time namespaces, by namespace.
    pub static_properties: BTreeMap<Namespace, StaticProperties>,
    /// `variants`, by label (empty for pyproject).
    pub variants: BTreeMap<VariantLabel, VariantProperties>,
}

impl VariantMetadata {
    /// The label of the null variant (the one without properties), if the metadata has one.
    ///
    /// Usually `null`; a 0.0.x file read tolerantly may use another label (PyTorch 2.8's
    /// `00000000`), which wheels of that release carry in their filenames.
    pub fn null_variant(&self) -> Option<&VariantLabel> {
        self.variants
            .iter()
            .find(|(_, properties)| properties.is_empty())
            .map(|(label, _)| label)
    }
}

/// Iterates the properties of a variant in (namespace, feature, value) order, borrowed: the
/// allocation-free form of [`properties_of`].
pub fn property_refs(
    variant: &VariantProperties,
) -> impl Iterator<Item = (&Namespace, &FeatureName, &FeatureValue)> + '_ {
    variant.iter().flat_map(|(ns, features)| {
        features
            .iter()
            .flat_map(move |(f, values)| values.iter().map(move |v| (ns, f, v)))
    })
}

/// Iterates the properties of a variant in (namespace, feature, value) order.
pub fn properties_of(variant: &VariantProperties) -> impl Iterator<Item = Property> + '_ {
    variant.iter().flat_map(|(ns, features)| {
        features.iter().flat_map(move |(f, values)| {
            values
                .iter()
                .map(move |v| Property::new(ns.clone(), f.clone(), v.clone()))
        })
    })
}
