//! Describing the variant a wheel becomes: its label, its properties (checked), and the text
//! of its `variant.json` in the chosen schema generation.

use std::collections::BTreeMap;

use vari_core::label::default_label;
use vari_core::metadata::{
    read_json, write_json, DefaultPriorities, MetadataError, SchemaGeneration, SourceKind,
    VariantMetadata, VariantProperties,
};
use vari_core::{Namespace, Property, VariantLabel};

use crate::error::WheelErrorKind;
use crate::valid_values::ValidValues;

/// Which label the variant gets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum LabelChoice {
    /// The default label of the properties (8 hex digits, `vari_core::label`).
    #[default]
    Default,
    /// This label.
    Given(VariantLabel),
    /// The null variant: no properties, label `null`.
    Null,
}

/// The variant a plain wheel becomes.
#[derive(Debug, Clone, Default)]
pub struct VariantSpec {
    /// Its properties. May be empty with [`LabelChoice::Given`] when `metadata` describes that
    /// label: its properties are then taken from there.
    pub properties: Vec<Property>,
    /// Its label.
    pub label: LabelChoice,
    /// Priorities, providers and static properties: a pyproject `[variant]` table or a
    /// `*-variants.json`, read by the caller. Without it, the namespaces are ranked in the
    /// order the properties name them and the file is written as PEP 825 (0.1).
    pub metadata: Option<VariantMetadata>,
    /// The schema generation to write; by default the metadata's, else 0.1 (PEP 825).
    pub schema: Option<SchemaGeneration>,
    /// Accept properties whose values cannot be checked (unknown namespaces, values newer than
    /// the known lists).
    pub skip_validation: bool,
}

impl VariantSpec {
    /// This spec with its metadata rewritten so that uv 0.13 installs the wheel as intended
    /// (`make-variant --for uv`, as `repack` and `metadata convert` have it): schema 0.2.x
    /// under PEP 850's URL, each namespace declared with the provider uv vendors
    /// ([`vari_core::uv::for_uv`]); with the warnings for what uv cannot express. A null
    /// variant without metadata is left as it is (describing it fails, naming what is missing).
    pub fn for_uv(&self) -> (VariantSpec, Vec<String>) {
        let properties = properties_of_spec(self);
        let metadata = match &self.metadata {
            Some(given) => given.clone(),
            None if properties.is_empty() => return (self.clone(), Vec::new()),
            None => fresh_metadata(&properties),
        };
        let (converted, warnings) = vari_core::uv::for_uv(&metadata);
        let spec = VariantSpec {
            metadata: Some(converted),
            schema: Some(SchemaGeneration::V0_2),
            ..self.clone()
        };
        (spec, warnings)
    }
}

/// A described variant, ready to write.
#[derive(Debug, Clone)]
pub(crate) struct Described {
    pub(crate) label: VariantLabel,
    pub(crate) metadata: VariantMetadata,
    pub(crate) text: String,
    pub(crate) warnings: Vec<String>,
}

/// Resolves the label and properties, checks them, and writes `variant.json`'s text.
pub(crate) fn describe(
    spec: &VariantSpec,
    valid: &ValidValues,
) -> Result<Described, WheelErrorKind> {
    let properties = properties_of_spec(spec);
    let label = resolve_label(spec, &properties)?;
    let mut variant = VariantProperties::new();
    for p in &properties {
        variant
            .get_or_insert_with(p.namespace.clone(), Default::default)
            .get_or_insert_with(p.feature.clone(), Default::default)
            .insert(p.value.clone());
    }

    let mut warnings = Vec::new();
    let mut metadata = match &spec.metadata {
        Some(given) => {
            check_namespaces_listed(given, &variant)?;
            given.clone()
        }
        None if properties.is_empty() => {
            return Err(WheelErrorKind::VariantMetadata {
                errors: vec![MetadataError::new(
                    "default-priorities.namespace",
                    "the null variant names no namespace, so its metadata must come from the \
                     release (a pyproject.toml [variant] table or a *-variants.json)",
                )],
            })
        }
        None => fresh_metadata(&properties),
    };
    let problems = valid.problems(&variant, &metadata.static_properties, spec.skip_validation);
    if !problems.is_empty() {
        return Err(WheelErrorKind::InvalidProperties { problems });
    }

    let generation = spec
        .schema
        .or(spec.metadata.as_ref().map(|m| m.generation))
        .unwrap_or(SchemaGeneration::V0_1);
    // Built-in namespaces get their reference providers from the writer
    // (`vari_core::metadata::known_provider`); any other needs the release's metadata.
    let unknown = metadata
        .priorities
        .namespace
        .iter()
        .any(|ns| vari_core::metadata::known_provider(ns).is_none());
    if spec.metadata.is_none() && generation.has_providers() && unknown {
        return Err(WheelErrorKind::VariantMetadata {
            errors: vec![MetadataError::new(
                "providers",
                format!(
                    "schema {generation} needs a provider for every namespace; give variant \
                     metadata (a pyproject.toml [variant] table or a *-variants.json) that \
                     lists them"
                ),
            )],
        });
    }
    if generation == SchemaGeneration::V0_1 {
        warn_unknown_providers(&metadata, &variant, valid, &mut warnings);
    }
    if generation == SchemaGeneration::V0_2 {
        drop_enable_if(&mut metadata, &mut warnings);
    }
    metadata.generation = generation;
    metadata.variants = BTreeMap::from([(label.clone(), variant)]);

    let written = write_json(&metadata, generation)
        .map_err(|e| WheelErrorKind::VariantMetadata { errors: vec![e] })?;
    warnings.extend(written.warnings);
    // The writer checks the document as an index file; a wheel's file has one more rule
    // (exactly one variant), which holds by construction, and this keeps it that way.
    let metadata = read_json(&written.text, SourceKind::WheelFile)
        .map_err(|errors| WheelErrorKind::VariantMetadata { errors })?;
    Ok(Described {
        label,
        metadata,
        text: written.text,
        warnings,
    })
}

/// The spec's properties, or the metadata's for a given label when none are listed.
fn properties_of_spec(spec: &VariantSpec) -> Vec<Property> {
    if let (true, LabelChoice::Given(label), Some(meta)) =
        (spec.properties.is_empty(), &spec.label, &spec.metadata)
    {
        if let Some(variant) = meta.variants.get(label) {
            return vari_core::metadata::properties_of(variant).collect();
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    spec.properties
        .iter()
        .filter(|p| seen.insert((*p).clone()))
        .cloned()
        .collect()
}

fn resolve_label(
    spec: &VariantSpec,
    properties: &[Property],
) -> Result<VariantLabel, WheelErrorKind> {
    let invalid = |message: String| WheelErrorKind::InvalidLabel { message };
    match &spec.label {
        LabelChoice::Null if !properties.is_empty() => Err(invalid(format!(
            "the null variant has no properties, but {} were given",
            properties.len()
        ))),
        LabelChoice::Null => Ok(VariantLabel::null()),
        LabelChoice::Default if properties.is_empty() => Err(invalid(
            "no properties given: a variant needs properties, or must be the null variant"
                .to_owned(),
        )),
        LabelChoice::Default => Ok(default_label(properties)),
        LabelChoice::Given(label) => {
            if label.is_null() && !properties.is_empty() {
                return Err(invalid(format!(
                    "the label `null` is reserved for the variant without properties, but {} \
                     were given",
                    properties.len()
                )));
            }
            if !label.is_null() && properties.is_empty() {
                return Err(invalid(format!(
                    "variant `{label}` has no properties (and the metadata does not describe \
                     it); a variant without properties is the null variant"
                )));
            }
            if let Some(meta) = &spec.metadata {
                if let Some(described) = meta.variants.get(label) {
                    let theirs: Vec<Property> =
                        vari_core::metadata::properties_of(described).collect();
                    let mut ours = properties.to_vec();
                    ours.sort();
                    if theirs != ours {
                        return Err(invalid(format!(
                            "the metadata describes `{label}` with other properties ({})",
                            join(&theirs)
                        )));
                    }
                }
            }
            Ok(label.clone())
        }
    }
}

fn join(properties: &[Property]) -> String {
    properties
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Every namespace the variant uses must be ranked by the given metadata.
fn check_namespaces_listed(
    meta: &VariantMetadata,
    variant: &VariantProperties,
) -> Result<(), WheelErrorKind> {
    let errors: Vec<MetadataError> = variant
        .keys()
        .filter(|ns| !ns.is_abi_dependency() && !meta.priorities.namespace.contains(ns))
        .map(|ns| {
            MetadataError::new(
                "default-priorities.namespace",
                format!(
                    "the metadata does not list namespace `{ns}`, which the variant uses \
                     (listed: {})",
                    meta.priorities
                        .namespace
                        .iter()
                        .map(Namespace::as_str)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
        })
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(WheelErrorKind::VariantMetadata { errors })
    }
}

/// PEP 825 metadata for a variant given only its properties: namespaces ranked in the order
/// the properties name them.
fn fresh_metadata(properties: &[Property]) -> VariantMetadata {
    let mut namespace: Vec<Namespace> = Vec::new();
    for p in properties {
        if !namespace.contains(&p.namespace) {
            namespace.push(p.namespace.clone());
        }
    }
    VariantMetadata {
        generation: SchemaGeneration::V0_1,
        schema_url: None,
        priorities: DefaultPriorities {
            namespace,
            ..DefaultPriorities::default()
        },
        providers: BTreeMap::new(),
        static_properties: BTreeMap::new(),
        variants: BTreeMap::new(),
    }
}

/// PEP 825 files name no provider: an installer must know each namespace itself. Say so for
/// the namespaces no built-in provider knows.
fn warn_unknown_providers(
    meta: &VariantMetadata,
    variant: &VariantProperties,
    valid: &ValidValues,
    warnings: &mut Vec<String>,
) {
    let unknown: Vec<&str> = variant
        .keys()
        .filter(|ns| {
            !ns.is_abi_dependency()
                && valid.features(ns).is_none()
                && !meta.providers.contains_key(*ns)
        })
        .map(Namespace::as_str)
        .collect();
    if !unknown.is_empty() {
        warnings.push(format!(
            "schema 0.1 (PEP 825) cannot say how to obtain the supported values of {}: an \
             installer must know the namespace itself",
            unknown.join(", ")
        ));
    }
}

/// variantlib 0.2.2 refuses `enable-if` in a 0.2 file; drop it, and say what that changes.
fn drop_enable_if(meta: &mut VariantMetadata, warnings: &mut Vec<String>) {
    for (ns, provider) in &mut meta.providers {
        if let Some(marker) = provider.enable_if.take() {
            warnings.push(format!(
                "dropped providers.{ns}.enable-if ({marker}): variantlib 0.2.2 rejects it in \
                 schema 0.2, so the namespace is no longer turned off where the marker is false"
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use vari_core::metadata::read_pyproject;

    use super::*;

    fn spec(properties: &[&str], label: LabelChoice) -> VariantSpec {
        VariantSpec {
            properties: properties.iter().map(|p| p.parse().unwrap()).collect(),
            label,
            skip_validation: true,
            ..VariantSpec::default()
        }
    }

    #[test]
    fn default_label_and_fresh_pep_825_metadata() {
        let d = describe(
            &spec(&["b :: f :: 1", "a :: g :: 2"], LabelChoice::Default),
            &ValidValues::default(),
        )
        .unwrap();
        let props: Vec<Property> = ["b :: f :: 1", "a :: g :: 2"]
            .iter()
            .map(|p| p.parse().unwrap())
            .collect();
        assert_eq!(d.label, default_label(&props));
        assert!(d.text.contains("peps/825/v0.1.1.json"), "{}", d.text);
        assert_eq!(d.metadata.priorities.namespace[0].as_str(), "b");
        assert!(d.warnings[0].contains("a, b") || d.warnings[0].contains("b, a"));
    }

    #[test]
    fn labels_and_properties_must_fit() {
        let v = ValidValues::default();
        let e = describe(&spec(&["a :: b :: c"], LabelChoice::Null), &v).unwrap_err();
        assert!(
            e.to_string().contains("null variant has no properties"),
            "{e}"
        );
        let e = describe(&spec(&[], LabelChoice::Default), &v).unwrap_err();
        assert!(e.to_string().contains("no properties given"), "{e}");
        let e = describe(
            &spec(&[], LabelChoice::Given(VariantLabel::new("cu12").unwrap())),
            &v,
        )
        .unwrap_err();
        assert!(e.to_string().contains("`cu12` has no properties"), "{e}");
        let e = describe(&spec(&[], LabelChoice::Null), &v).unwrap_err();
        assert!(e.to_string().contains("must come from the release"), "{e}");
        let mut null = spec(&[], LabelChoice::Null);
        null.metadata = Some(
            vari_core::metadata::read_json(
                r#"{"default-priorities": {"namespace": ["x86_64"]}, "variants": {}}"#,
                vari_core::metadata::SourceKind::IndexFile,
            )
            .unwrap(),
        );
        let null = describe(&null, &v).unwrap();
        assert!(null.label.is_null());
        assert!(null.text.contains("\"null\": {}"), "{}", null.text);
    }

    #[test]
    fn schema_0_2_drops_enable_if_with_a_warning() {
        let meta = read_pyproject(
            "[variant.default-priorities]\nnamespace = [\"x86_64\"]\n\
             [variant.providers.x86_64]\nrequires = [\"provider-variant-x86-64\"]\n\
             enable-if = \"platform_machine == 'x86_64'\"\n",
        )
        .unwrap();
        let mut s = spec(&["x86_64 :: level :: v3"], LabelChoice::Default);
        s.metadata = Some(meta);
        s.schema = Some(SchemaGeneration::V0_2);
        let d = describe(&s, &ValidValues::default()).unwrap();
        assert!(!d.text.contains("enable-if"), "{}", d.text);
        assert!(d.warnings.iter().any(|w| w.contains("enable-if")));
        assert!(d.text.contains("v0.2.0.json"));
    }

    #[test]
    fn namespaces_must_be_listed_by_the_given_metadata() {
        let meta = read_pyproject(
            "[variant.default-priorities]\nnamespace = [\"x86_64\"]\n\
             [variant.providers.x86_64]\nrequires = [\"p\"]\n",
        )
        .unwrap();
        let mut s = spec(&["nvidia :: sm_arch :: 90_real"], LabelChoice::Default);
        s.metadata = Some(meta);
        let e = describe(&s, &ValidValues::default()).unwrap_err();
        assert!(
            e.to_string().contains("does not list namespace `nvidia`"),
            "{e}"
        );
    }
}
