//! Variant metadata: reading every schema generation, validating, writing and combining
//! (`spec/format.md` §3–5).

mod model;

pub use model::{
    properties_of, DefaultPriorities, ProviderInfo, ProviderKind, SchemaGeneration,
    StaticProperties, VariantMetadata, VariantProperties,
};
