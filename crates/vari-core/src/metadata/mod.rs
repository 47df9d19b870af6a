//! Variant metadata: reading every schema generation, validating, writing and combining
//! (`spec/format.md` §3–5).
//!
//! - [`read_json`], [`read_json_lenient`], [`read_pyproject`]: documents → [`VariantMetadata`]
//!   with every problem reported as a [`MetadataError`] (key path + message).
//! - [`write_json`]: [`VariantMetadata`] → deterministic JSON of a chosen generation.
//! - [`combine`]: several documents (wheels, index files) → one.
//! - [`metadata_differences`], [`missing_fallback_warning`]: checks on one release's combined
//!   metadata.
//! - [`check_single_values`]: the single-value rule, with the providers' knowledge passed in
//!   as a [`FeatureKinds`].
//! - [`resolve_variant_markers`]: a wheel's core metadata with its variant markers decided for
//!   the selected wheel, for installers that cannot parse them; [`require_extra`]: one with an
//!   extra's requirements made plain ones (a build family chosen by extra).

mod combine;
mod error;
mod extra_required;
mod feature_kinds;
mod generation;
mod keep_labels;
mod known_providers;
mod model;
mod provider;
mod read;
mod release;
pub(crate) mod requirement;
pub use requirement::parse_requirement;

pub(crate) use requirement::{check_marker_text, requirement_name};
mod sorted;
mod tree;
mod variant_markers;
mod write;

pub use combine::{combine, CombineError};
pub use error::MetadataError;
pub use extra_required::require_extra;
pub use feature_kinds::{check_single_values, remove_multi_valued_single_features, FeatureKinds};
pub use generation::{SchemaUrl, UnknownGeneration, PEP_850_URL, VARIANTLIB_0_2_URL};
pub use known_providers::{known_provider, KnownProvider, KNOWN_PROVIDERS};
pub use model::{
    properties_of, property_refs, DefaultPriorities, FeatureProperties, ProviderInfo, ProviderKind,
    SchemaGeneration, StaticProperties, ValueSet, VariantMetadata, VariantProperties,
};
pub use read::{
    read_compact_json_lenient, read_json, read_json_lenient, read_json_with_warnings,
    read_pyproject, CompactJson, CompactReadError, SourceKind,
};
pub use release::{metadata_differences, missing_fallback_warning};
pub use sorted::{SortedMap, SortedMapIter, SortedSet};
pub use variant_markers::{resolve_variant_markers, variant_marker_requirements};
pub use write::{write_json, write_json_as, Written};
