//! Writing [`VariantMetadata`] as deterministic JSON of a chosen schema generation.
//!
//! Output: keys sorted, 4-space indent, trailing newline, only non-default provider keys,
//! variant values as lexically sorted lists, and the `$schema` URL of the target generation.
//!
//! What a target cannot express:
//! - **Dropped with a warning** (the caller shows it; nothing changes silently):
//!   0.1 drops providers, static properties and feature/property priorities (PEP 825 leaves
//!   how supported properties are obtained to a later PEP); 0.2 drops feature/property
//!   priorities of namespaces that are not ahead-of-time (0.2 has no such keys — selection
//!   may then differ), an ahead-of-time plugin's requirements (0.2 allows `build-requires`
//!   only in pyproject.toml; selection uses the static properties, so it does not change)
//!   and a `plugin-api` without a plugin.
//! - **Folded without loss**: priorities of ahead-of-time namespaces become the order of
//!   their static properties (0.2 `static-properties` + `feature-order`; 0.0.2
//!   `default-priorities.property`), which yields the same selection.
//! - **Errors** (the file would be invalid or select differently): labels over 16
//!   characters in 0.0.x, built-in providers in 0.0.x, namespaces without a provider in
//!   0.0.x/0.2 (e.g. converting from 0.1), ahead-of-time providers without static
//!   properties. As a last safety net the written text is read back, and any problem the
//!   reader finds is an error: vari never writes a file it would reject.
//! - **Filled in with a note**: a namespace without a provider whose reference provider vari
//!   knows ([`known_provider`]) gets that provider when the target has providers (0.0.x,
//!   0.2), as a maintainer would write it.
//! - 0.2 under PEP 850's URL (the default, [`SchemaUrl::Standard`]) drops `enable-if` with a
//!   warning; variantlib's URL ([`SchemaUrl::Variantlib`]) keeps it.

use std::collections::BTreeMap;

use serde::Serialize;

use super::error::MetadataError;
use super::generation::SchemaUrl;
use super::known_providers::known_provider;
use super::model::{
    DefaultPriorities, ProviderInfo, ProviderKind, SchemaGeneration, StaticProperties,
    VariantMetadata,
};
use super::read::{read_json, SourceKind};
use crate::names::{FeatureName, Namespace, VariantLabel};

/// A written document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// The JSON text, ending with a newline.
    pub text: String,
    /// What the target generation could not express and was dropped, one sentence each.
    pub warnings: Vec<String>,
}

/// Writes `meta` as JSON of `generation`.
///
/// ```
/// use vari_core::metadata::{read_json, write_json, SchemaGeneration, SourceKind};
/// let meta = read_json(
///     r#"{"default-priorities": {"namespace": ["x86_64"]},
///         "variants": {"null": {}, "v3": {"x86_64": {"level": ["v3"]}}}}"#,
///     SourceKind::IndexFile,
/// ).unwrap();
/// let written = write_json(&meta, SchemaGeneration::V0_1).unwrap();
/// assert!(written.text.starts_with("{\n    \"$schema\": \"https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json\",\n"));
/// assert!(written.text.ends_with("}\n"));
/// assert!(written.warnings.is_empty());
/// ```
pub fn write_json(
    meta: &VariantMetadata,
    generation: SchemaGeneration,
) -> Result<Written, MetadataError> {
    write_json_as(meta, generation, SchemaUrl::Standard)
}

/// Writes `meta` as JSON of `generation`, with the `$schema` URL spelt as `url` asks (only
/// 0.2.x has two spellings: PEP 850's, the default, and variantlib's).
///
/// ```
/// use vari_core::metadata::{read_json, write_json_as, SchemaGeneration, SchemaUrl, SourceKind};
/// let meta = read_json(
///     r#"{"default-priorities": {"namespace": ["x86_64"]},
///         "variants": {"null": {}, "v3": {"x86_64": {"level": ["v3"]}}}}"#,
///     SourceKind::IndexFile,
/// ).unwrap();
/// let written = write_json_as(&meta, SchemaGeneration::V0_2, SchemaUrl::Variantlib).unwrap();
/// assert!(written.text.contains("\"https://variants-schema.wheelnext.dev/v0.2.0.json\""));
/// // The built-in namespace got its reference provider.
/// assert!(written.text.contains("x86-64-variant-provider>=0.2.1,<1.0.0"));
/// ```
pub fn write_json_as(
    meta: &VariantMetadata,
    generation: SchemaGeneration,
    url: SchemaUrl,
) -> Result<Written, MetadataError> {
    let mut warnings = Vec::new();
    let filled;
    let meta = if generation.has_providers() {
        match with_known_providers(meta) {
            Some((completed, notes)) => {
                filled = completed;
                warnings.extend(notes);
                &filled
            }
            None => meta,
        }
    } else {
        meta
    };
    let mut writer = Writer {
        meta,
        generation,
        url,
        warnings,
    };
    writer.check()?;
    let root = writer.root();
    let text = render(&root);
    if let Err(errors) = read_json(&text, SourceKind::IndexFile) {
        // Every known inexpressible case is reported above; this guards the rest.
        let first = errors
            .into_iter()
            .next()
            .unwrap_or_else(|| MetadataError::new("", "invalid"));
        return Err(MetadataError::new(
            first.path,
            format!(
                "cannot be written as schema {generation}: {}",
                first.message
            ),
        ));
    }
    Ok(Written {
        text,
        warnings: writer.warnings,
    })
}

/// A JSON value whose objects serialise with sorted keys whatever serde_json's features.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum Json {
    Str(String),
    Bool(bool),
    List(Vec<String>),
    Obj(BTreeMap<String, Json>),
}

type Obj = BTreeMap<String, Json>;

fn strings<T: AsRef<str>>(items: impl IntoIterator<Item = T>) -> Json {
    Json::List(items.into_iter().map(|s| s.as_ref().to_owned()).collect())
}

fn render(root: &Obj) -> String {
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
    // Infallible: serialising strings, booleans and maps into a Vec cannot fail.
    let _ = root.serialize(&mut serializer);
    let mut text = String::from_utf8(out).unwrap_or_default();
    text.push('\n');
    text
}

/// `meta` with the reference provider of every namespace that has none (see
/// [`known_provider`]), and one note per provider added; `None` when nothing was missing.
fn with_known_providers(meta: &VariantMetadata) -> Option<(VariantMetadata, Vec<String>)> {
    let missing: Vec<_> = meta
        .priorities
        .namespace
        .iter()
        .filter(|ns| !meta.providers.contains_key(*ns))
        .filter_map(|ns| known_provider(ns).map(|known| (ns.clone(), known)))
        .collect();
    if missing.is_empty() {
        return None;
    }
    let mut completed = meta.clone();
    let mut notes = Vec::with_capacity(missing.len());
    for (ns, known) in missing {
        notes.push(format!(
            "added providers.{ns}: the reference provider {} (the input names none)",
            known.requirement()
        ));
        completed.providers.insert(ns, known.provider_info());
    }
    Some((completed, notes))
}

struct Writer<'a> {
    meta: &'a VariantMetadata,
    generation: SchemaGeneration,
    url: SchemaUrl,
    warnings: Vec<String>,
}

impl Writer<'_> {
    /// Errors for what the target generation cannot express without changing selection.
    fn check(&self) -> Result<(), MetadataError> {
        let g = self.generation;
        if g.caps_label_length() {
            if let Some(label) = self
                .meta
                .variants
                .keys()
                .find(|l| l.as_str().len() > VariantLabel::MAX_LEN_0_0_3)
            {
                return Err(MetadataError::new(
                    format!("variants.{label}"),
                    format!(
                        "the label is {} characters long; schema {g} allows at most {}",
                        label.as_str().len(),
                        VariantLabel::MAX_LEN_0_0_3
                    ),
                ));
            }
        }
        if !g.has_providers() {
            return Ok(());
        }
        for (i, ns) in self.meta.priorities.namespace.iter().enumerate() {
            if !self.meta.providers.contains_key(ns) && !ns.is_abi_dependency() {
                return Err(MetadataError::new(
                    format!("default-priorities.namespace[{i}]"),
                    format!(
                        "namespace \"{ns}\" has no provider, and schema {g} needs one for \
                         every namespace (was the input schema 0.1.x?)"
                    ),
                ));
            }
        }
        for (ns, provider) in &self.meta.providers {
            match &provider.kind {
                ProviderKind::Builtin(name) if g != SchemaGeneration::V0_2 => {
                    return Err(MetadataError::new(
                        format!("providers.{ns}"),
                        format!(
                            "schema {g} cannot express a built-in provider (builtin = \
                             \"{name}\"); write schema 0.2.x"
                        ),
                    ));
                }
                ProviderKind::AheadOfTime if !self.meta.static_properties.contains_key(ns) => {
                    return Err(MetadataError::new(
                        format!("providers.{ns}"),
                        "an ahead-of-time provider without static properties cannot be \
                         written to a JSON file (its plugin must fill them at build time)",
                    ));
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn root(&mut self) -> Obj {
        let mut root = Obj::new();
        root.insert(
            "$schema".to_owned(),
            Json::Str(self.generation.url_as(self.url).to_owned()),
        );
        let priorities = self.priorities();
        root.insert("default-priorities".to_owned(), Json::Obj(priorities));
        match self.generation {
            SchemaGeneration::V0_1 => self.warn_dropped_for_0_1(),
            g => {
                let providers = self
                    .meta
                    .providers
                    .iter()
                    .map(|(ns, p)| (ns.to_string(), Json::Obj(self.provider(ns, p))))
                    .collect();
                root.insert("providers".to_owned(), Json::Obj(providers));
                if g == SchemaGeneration::V0_0_3 && !self.meta.static_properties.is_empty() {
                    let statics = self
                        .meta
                        .static_properties
                        .iter()
                        .map(|(ns, features)| {
                            (
                                ns.to_string(),
                                feature_values(features.iter().map(|(f, v)| (f, v))),
                            )
                        })
                        .collect();
                    root.insert("static-properties".to_owned(), Json::Obj(statics));
                }
            }
        }
        root.insert("variants".to_owned(), self.variants());
        root
    }

    fn is_aot(&self, ns: &Namespace) -> bool {
        self.meta
            .providers
            .get(ns)
            .is_some_and(|p| p.kind == ProviderKind::AheadOfTime)
            && self.meta.static_properties.contains_key(ns)
    }

    /// `default-priorities.namespace` as the target generation wants it: the drafts with
    /// providers leave the provider-less `abi_dependency` implicit (PEP 817), PEP 825 lists
    /// every namespace a variant uses (it then goes last, where the drafts put it).
    fn namespace_order(&self) -> Vec<Namespace> {
        let mut order = self.meta.priorities.namespace.clone();
        if self.generation.has_providers() {
            order.retain(|ns| !ns.is_abi_dependency());
        } else if !order.iter().any(Namespace::is_abi_dependency) {
            let used = self.meta.variants.values().flat_map(|v| v.keys());
            if let Some(abi) = used.into_iter().find(|ns| ns.is_abi_dependency()) {
                order.push(abi.clone());
            }
        }
        order
    }

    fn priorities(&mut self) -> Obj {
        let p = &self.meta.priorities;
        let mut out = Obj::new();
        out.insert("namespace".to_owned(), strings(self.namespace_order()));
        match self.generation {
            SchemaGeneration::V0_0_3 | SchemaGeneration::V0_0_2 => {
                let mut feature: Obj = p
                    .feature
                    .iter()
                    .map(|(ns, fs)| (ns.to_string(), strings(fs)))
                    .collect();
                let mut property: Obj = p
                    .property
                    .iter()
                    .map(|(ns, by_f)| (ns.to_string(), feature_values(by_f)))
                    .collect();
                for (ns, statics) in &self.meta.static_properties {
                    if let Some(order) = completed_feature_order(ns, statics, p) {
                        feature.insert(ns.to_string(), strings(order));
                    }
                    if self.generation == SchemaGeneration::V0_0_2 {
                        // 0.0.2 keeps static values in the property priorities.
                        let effective = effective_static(ns, statics, p);
                        property.insert(
                            ns.to_string(),
                            feature_values(effective.iter().map(|(f, v)| (f, v))),
                        );
                    }
                }
                if !feature.is_empty() {
                    out.insert("feature".to_owned(), Json::Obj(feature));
                }
                if !property.is_empty() {
                    out.insert("property".to_owned(), Json::Obj(property));
                }
            }
            SchemaGeneration::V0_2 => {
                let feature: Vec<&str> = p
                    .feature
                    .keys()
                    .filter(|ns| !self.is_aot(ns))
                    .map(Namespace::as_str)
                    .collect();
                let property: Vec<&str> = p
                    .property
                    .keys()
                    .filter(|ns| !self.is_aot(ns))
                    .map(Namespace::as_str)
                    .collect();
                for (key, list) in [("feature", feature), ("property", property)] {
                    if !list.is_empty() {
                        self.warnings.push(format!(
                            "dropped default-priorities.{key} for {}: schema 0.2.x has no {key} \
                             priorities for providers without static properties, so \
                             selection may differ",
                            list.join(", ")
                        ));
                    }
                }
            }
            SchemaGeneration::V0_1 => {}
        }
        out
    }

    fn warn_dropped_for_0_1(&mut self) {
        let m = self.meta;
        let names = |keys: Vec<&Namespace>| {
            keys.iter()
                .map(|n| n.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let groups = [
            ("providers", names(m.providers.keys().collect())),
            (
                "static-properties",
                names(m.static_properties.keys().collect()),
            ),
            (
                "default-priorities.feature",
                names(m.priorities.feature.keys().collect()),
            ),
            (
                "default-priorities.property",
                names(m.priorities.property.keys().collect()),
            ),
        ];
        for (key, list) in groups {
            if !list.is_empty() {
                self.warnings.push(format!(
                    "dropped {key} for {list}: schema 0.1.x cannot express them"
                ));
            }
        }
    }

    fn provider(&mut self, ns: &Namespace, p: &ProviderInfo) -> Obj {
        let mut out = Obj::new();
        if let Some(marker) = &p.enable_if {
            if self.generation == SchemaGeneration::V0_2 && self.url == SchemaUrl::Standard {
                self.warnings.push(format!(
                    "dropped providers.{ns}.enable-if ({}): PEP 850's providers schema has no \
                     enable-if, so the provider is asked on every platform (write variantlib's \
                     URL to keep it)",
                    marker.as_str()
                ));
            } else {
                out.insert(
                    "enable-if".to_owned(),
                    Json::Str(marker.as_str().to_owned()),
                );
            }
        }
        if p.optional {
            out.insert("optional".to_owned(), Json::Bool(true));
        }
        let mut plugin_api = p.plugin_api.clone();
        match (self.generation, &p.kind) {
            (SchemaGeneration::V0_0_3, ProviderKind::InstallTime) => {
                out.insert("requires".to_owned(), strings(&p.requires));
            }
            (SchemaGeneration::V0_0_3, _) => {
                out.insert("install-time".to_owned(), Json::Bool(false));
                if !p.build_requires.is_empty() {
                    out.insert("requires".to_owned(), strings(&p.build_requires));
                }
            }
            (SchemaGeneration::V0_0_2, ProviderKind::InstallTime) => {
                out.insert("requires".to_owned(), strings(&p.requires));
            }
            (SchemaGeneration::V0_0_2, _) => {
                let plugin_use = if p.build_requires.is_empty() {
                    "none"
                } else {
                    "build"
                };
                out.insert("plugin-use".to_owned(), Json::Str(plugin_use.to_owned()));
                // The 0.0.2 schema requires `requires`, even when empty.
                out.insert("requires".to_owned(), strings(&p.build_requires));
            }
            (_, ProviderKind::InstallTime) => {
                out.insert("requires".to_owned(), strings(&p.requires));
            }
            (_, ProviderKind::Builtin(name)) => {
                out.insert("builtin".to_owned(), Json::Str(name.clone()));
                self.drop_plugin_api(ns, &mut plugin_api);
            }
            (_, ProviderKind::AheadOfTime) => {
                if !p.build_requires.is_empty() {
                    self.warnings.push(format!(
                        "dropped providers.{ns}.build-requires: schema 0.2.x allows build-time \
                         plugins only in pyproject.toml (selection uses its static properties)"
                    ));
                }
                self.drop_plugin_api(ns, &mut plugin_api);
                let statics = self
                    .meta
                    .static_properties
                    .get(ns)
                    .map(|s| effective_static(ns, s, &self.meta.priorities))
                    .unwrap_or_default();
                if statics.len() > 1 {
                    out.insert(
                        "feature-order".to_owned(),
                        strings(statics.iter().map(|(f, _)| f)),
                    );
                }
                out.insert(
                    "static-properties".to_owned(),
                    feature_values(statics.iter().map(|(f, v)| (f, v))),
                );
            }
        }
        if let Some(api) = plugin_api {
            out.insert("plugin-api".to_owned(), Json::Str(api));
        }
        out
    }

    /// 0.2 allows `plugin-api` only with a plugin.
    fn drop_plugin_api(&mut self, ns: &Namespace, plugin_api: &mut Option<String>) {
        if plugin_api.take().is_some() {
            self.warnings.push(format!(
                "dropped providers.{ns}.plugin-api: schema 0.2.x allows it only with requires \
                 or build-requires"
            ));
        }
    }

    fn variants(&self) -> Json {
        Json::Obj(
            self.meta
                .variants
                .iter()
                .map(|(label, namespaces)| {
                    let null = namespaces.is_empty();
                    let namespaces = namespaces
                        .iter()
                        .map(|(ns, features)| {
                            let features = features
                                .iter()
                                .map(|(f, values)| (f.to_string(), strings(values)))
                                .collect();
                            (ns.to_string(), Json::Obj(features))
                        })
                        .collect();
                    // The null variant is always written `null`, whatever label a tolerated
                    // 0.0.x file gave it.
                    let label = if null {
                        VariantLabel::NULL.to_owned()
                    } else {
                        label.to_string()
                    };
                    (label, Json::Obj(namespaces))
                })
                .collect(),
        )
    }
}

/// feature → values, values kept in their (preference) order.
fn feature_values<'a, I, V>(features: I) -> Json
where
    I: IntoIterator<Item = (&'a FeatureName, V)>,
    V: IntoIterator,
    V::Item: AsRef<str>,
{
    Json::Obj(
        features
            .into_iter()
            .map(|(f, values)| (f.to_string(), strings(values)))
            .collect(),
    )
}

/// The 0.0.x feature priorities of an ahead-of-time namespace with several static features:
/// the given list, completed with the static features it misses (in static order), which
/// is the order 0.0.x selection uses anyway. `None` when nothing needs adding.
fn completed_feature_order(
    ns: &Namespace,
    statics: &StaticProperties,
    priorities: &DefaultPriorities,
) -> Option<Vec<FeatureName>> {
    if statics.len() < 2 {
        return None;
    }
    let mut order = priorities.feature.get(ns).cloned().unwrap_or_default();
    let missing: Vec<FeatureName> = statics
        .iter()
        .map(|(f, _)| f)
        .filter(|f| !order.contains(f))
        .cloned()
        .collect();
    if missing.is_empty() {
        return None;
    }
    order.extend(missing);
    Some(order)
}

/// Static properties in the order 0.0.3 selection would use them: features and values put
/// first by the priorities (only those that are supported), then the rest in static order.
fn effective_static(
    ns: &Namespace,
    statics: &StaticProperties,
    priorities: &DefaultPriorities,
) -> StaticProperties {
    let feature_first = priorities.feature.get(ns).map(Vec::as_slice).unwrap_or(&[]);
    let mut features: Vec<&(FeatureName, Vec<_>)> = Vec::with_capacity(statics.len());
    for f in feature_first {
        if let Some(entry) = statics.iter().find(|(g, _)| g == f) {
            if !features.iter().any(|(g, _)| g == f) {
                features.push(entry);
            }
        }
    }
    for entry in statics {
        if !features.iter().any(|(g, _)| *g == entry.0) {
            features.push(entry);
        }
    }
    let property = priorities.property.get(ns);
    features
        .into_iter()
        .map(|(f, values)| {
            let first = property
                .and_then(|p| p.get(f))
                .map(Vec::as_slice)
                .unwrap_or(&[]);
            let mut ordered: Vec<_> = first
                .iter()
                .filter(|v| values.contains(v))
                .cloned()
                .collect();
            ordered.dedup();
            for v in values {
                if !ordered.contains(v) {
                    ordered.push(v.clone());
                }
            }
            (f.clone(), ordered)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(value: serde_json::Value) -> VariantMetadata {
        read_json(&value.to_string(), SourceKind::IndexFile).unwrap()
    }

    fn doc_0_0_3() -> VariantMetadata {
        read(json!({
            "$schema": SchemaGeneration::V0_0_3.url(),
            "default-priorities": {
                "namespace": ["nvidia", "prio"],
                "feature": {"nvidia": ["sm_arch"], "prio": ["b", "a"]},
                "property": {"nvidia": {"sm_arch": ["90_real"]}, "prio": {"a": ["z", "nope"]}}
            },
            "providers": {
                "nvidia": {"requires": ["nv-plugin"], "optional": false, "install-time": true},
                "prio": {"install-time": false, "requires": ["prio-plugin"], "plugin-api": "p:P"}
            },
            "static-properties": {"prio": {"a": ["x", "y", "z"], "b": ["1"]}},
            "variants": {"null": {}, "gpu": {"nvidia": {"sm_arch": ["90_real", "100_real"]}}}
        }))
    }

    #[test]
    fn output_is_sorted_indented_by_four_and_ends_with_a_newline() {
        let meta = read(json!({
            "variants": {"v3": {"x86_64": {"level": ["v3"], "avx": ["on"]}}, "null": {}},
            "default-priorities": {"namespace": ["x86_64"]}
        }));
        let written = write_json(&meta, SchemaGeneration::V0_1).unwrap();
        let expected = r#"{
    "$schema": "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json",
    "default-priorities": {
        "namespace": [
            "x86_64"
        ]
    },
    "variants": {
        "null": {},
        "v3": {
            "x86_64": {
                "avx": [
                    "on"
                ],
                "level": [
                    "v3"
                ]
            }
        }
    }
}
"#;
        assert_eq!(written.text, expected);
    }

    #[test]
    fn variant_values_are_sorted_lexically() {
        let written = write_json(&doc_0_0_3(), SchemaGeneration::V0_0_3).unwrap();
        let value: serde_json::Value = serde_json::from_str(&written.text).unwrap();
        assert_eq!(
            value["variants"]["gpu"]["nvidia"]["sm_arch"],
            json!(["100_real", "90_real"])
        );
    }

    #[test]
    fn only_non_default_provider_keys_are_written() {
        let written = write_json(&doc_0_0_3(), SchemaGeneration::V0_0_3).unwrap();
        let value: serde_json::Value = serde_json::from_str(&written.text).unwrap();
        assert_eq!(
            value["providers"]["nvidia"],
            json!({"requires": ["nv-plugin"]})
        );
        assert_eq!(
            value["providers"]["prio"],
            json!({"install-time": false, "requires": ["prio-plugin"], "plugin-api": "p:P"})
        );
        assert_eq!(
            value["$schema"],
            json!("https://variants-schema.wheelnext.dev/v0.0.3.json")
        );
    }

    #[test]
    fn writing_0_2_folds_ahead_of_time_priorities_and_warns_about_the_rest() {
        let written = write_json(&doc_0_0_3(), SchemaGeneration::V0_2).unwrap();
        let value: serde_json::Value = serde_json::from_str(&written.text).unwrap();
        assert_eq!(
            value["$schema"],
            json!("https://variants-schema.wheelnext.dev/peps/850/v0.2.0.json")
        );
        assert_eq!(
            value["providers"]["prio"],
            json!({"feature-order": ["b", "a"], "static-properties": {"a": ["z", "x", "y"], "b": ["1"]}})
        );
        assert_eq!(
            value["default-priorities"],
            json!({"namespace": ["nvidia", "prio"]})
        );
        assert_eq!(
            written.warnings,
            [
                "dropped default-priorities.feature for nvidia: schema 0.2.x has no feature priorities for providers without static properties, so selection may differ",
                "dropped default-priorities.property for nvidia: schema 0.2.x has no property priorities for providers without static properties, so selection may differ",
                "dropped providers.prio.build-requires: schema 0.2.x allows build-time plugins only in pyproject.toml (selection uses its static properties)",
                "dropped providers.prio.plugin-api: schema 0.2.x allows it only with requires or build-requires",
            ]
        );
    }

    #[test]
    fn writing_0_0_2_spells_ahead_of_time_with_plugin_use_and_property_priorities() {
        let written = write_json(&doc_0_0_3(), SchemaGeneration::V0_0_2).unwrap();
        assert!(written.warnings.is_empty());
        let value: serde_json::Value = serde_json::from_str(&written.text).unwrap();
        assert_eq!(
            value["providers"]["prio"],
            json!({"plugin-use": "build", "requires": ["prio-plugin"], "plugin-api": "p:P"})
        );
        assert_eq!(
            value["providers"]["nvidia"],
            json!({"requires": ["nv-plugin"]})
        );
        assert_eq!(
            value["default-priorities"]["property"]["prio"],
            json!({"a": ["z", "x", "y"], "b": ["1"]})
        );
        assert!(value.get("static-properties").is_none());
        let back = read_json(&written.text, SourceKind::IndexFile).unwrap();
        assert_eq!(back.static_properties["prio"][0].0.as_str(), "b");
    }

    #[test]
    fn writing_0_0_x_completes_the_feature_order_of_static_properties() {
        let meta = read(json!({
            "$schema": SchemaGeneration::V0_2.url(),
            "default-priorities": {"namespace": ["p"]},
            "providers": {"p": {"static-properties": {"a": ["1"], "b": ["2"]}, "feature-order": ["b", "a"]}},
            "variants": {}
        }));
        for g in [SchemaGeneration::V0_0_3, SchemaGeneration::V0_0_2] {
            let written = write_json(&meta, g).unwrap();
            let value: serde_json::Value = serde_json::from_str(&written.text).unwrap();
            assert_eq!(
                value["default-priorities"]["feature"]["p"],
                json!(["b", "a"]),
                "{g}"
            );
        }
    }

    #[test]
    fn writing_0_1_warns_about_everything_it_drops() {
        let written = write_json(&doc_0_0_3(), SchemaGeneration::V0_1).unwrap();
        assert_eq!(
            written.warnings,
            [
                "dropped providers for nvidia, prio: schema 0.1.x cannot express them",
                "dropped static-properties for prio: schema 0.1.x cannot express them",
                "dropped default-priorities.feature for nvidia, prio: schema 0.1.x cannot express them",
                "dropped default-priorities.property for nvidia, prio: schema 0.1.x cannot express them",
            ]
        );
    }

    #[test]
    fn long_labels_are_an_error_in_0_0_x_only() {
        let meta = read(json!({
            "default-priorities": {"namespace": ["x"]},
            "variants": {"a_label_of_17_chr": {"x": {"f": ["1"]}}}
        }));
        for g in [SchemaGeneration::V0_0_2, SchemaGeneration::V0_0_3] {
            let mut with_provider = meta.clone();
            with_provider.providers.insert(
                "x".parse().unwrap(),
                ProviderInfo {
                    kind: ProviderKind::InstallTime,
                    requires: vec!["x-plugin".into()],
                    build_requires: vec![],
                    enable_if: None,
                    optional: false,
                    plugin_api: None,
                },
            );
            let e = write_json(&with_provider, g).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!("variants.a_label_of_17_chr: the label is 17 characters long; schema {g} allows at most 16")
            );
            assert!(write_json(&with_provider, SchemaGeneration::V0_2).is_ok());
        }
        assert!(write_json(&meta, SchemaGeneration::V0_1).is_ok());
    }

    #[test]
    fn builtin_providers_need_0_2() {
        let meta = read(json!({
            "$schema": SchemaGeneration::V0_2.url(),
            "default-priorities": {"namespace": ["cpu"]},
            "providers": {"cpu": {"builtin": "x86_64"}},
            "variants": {}
        }));
        let e = write_json(&meta, SchemaGeneration::V0_0_3).unwrap_err();
        assert_eq!(
            e.to_string(),
            "providers.cpu: schema 0.0.3 cannot express a built-in provider (builtin = \"x86_64\"); write schema 0.2.x"
        );
        let written = write_json(&meta, SchemaGeneration::V0_2).unwrap();
        assert!(written.text.contains("\"builtin\": \"x86_64\""));
    }

    #[test]
    fn namespaces_need_providers_outside_0_1() {
        let meta = read(json!({"default-priorities": {"namespace": ["x"]}, "variants": {}}));
        let e = write_json(&meta, SchemaGeneration::V0_2).unwrap_err();
        assert_eq!(
            e.to_string(),
            "default-priorities.namespace[0]: namespace \"x\" has no provider, and schema 0.2.x needs one for every namespace (was the input schema 0.1.x?)"
        );
    }

    #[test]
    fn ahead_of_time_providers_need_static_properties_in_json() {
        let meta = crate::metadata::read_pyproject(
            "[variant.default-priorities]\nnamespace = [\"b\"]\n[variant.providers.b]\nbuild-requires = [\"b-plugin\"]\n",
        )
        .unwrap();
        let e = write_json(&meta, SchemaGeneration::V0_2).unwrap_err();
        assert_eq!(e.path, "providers.b");
        assert!(e
            .message
            .starts_with("an ahead-of-time provider without static properties"));
    }

    #[test]
    fn a_model_the_reader_would_reject_is_not_written() {
        let mut meta = read(json!({"default-priorities": {"namespace": ["x"]}, "variants": {}}));
        let mut props = crate::metadata::VariantProperties::new();
        props
            .get_or_insert_with("x".parse().unwrap(), Default::default)
            .insert(
                "f".parse().unwrap(),
                ["1".parse().unwrap()].into_iter().collect(),
            );
        meta.variants.insert(VariantLabel::null(), props);
        let e = write_json(&meta, SchemaGeneration::V0_1).unwrap_err();
        assert_eq!(
            e.to_string(),
            "variants.null: cannot be written as schema 0.1.x: the label \"null\" is reserved for the variant with no properties"
        );
    }

    #[test]
    fn abi_dependency_is_implicit_in_the_drafts_and_listed_in_pep_825() {
        let mut meta = doc_0_0_3();
        let abi: crate::metadata::VariantProperties = [(
            Namespace::new("abi_dependency").unwrap(),
            [(
                FeatureName::new("torch").unwrap(),
                ["2.8".parse().unwrap()].into_iter().collect(),
            )]
            .into_iter()
            .collect(),
        )]
        .into_iter()
        .collect();
        meta.variants.insert(VariantLabel::new("t28").unwrap(), abi);
        let pep825 = write_json(&meta, SchemaGeneration::V0_1).unwrap();
        let v: serde_json::Value = serde_json::from_str(&pep825.text).unwrap();
        assert_eq!(
            v["default-priorities"]["namespace"],
            json!(["nvidia", "prio", "abi_dependency"])
        );
        let back = read_json(&pep825.text, SourceKind::IndexFile).unwrap();
        let draft = write_json(&back, SchemaGeneration::V0_0_3).unwrap_err();
        // 0.1 lost the providers, so only abi_dependency may go without one (nvidia gets its
        // reference provider back; prio has none).
        assert!(
            draft.to_string().contains("\"prio\" has no provider"),
            "{draft}"
        );
        let draft = write_json(&meta, SchemaGeneration::V0_0_3).unwrap();
        let v: serde_json::Value = serde_json::from_str(&draft.text).unwrap();
        assert_eq!(
            v["default-priorities"]["namespace"],
            json!(["nvidia", "prio"])
        );
    }

    #[test]
    fn pep_850_drops_enable_if_with_a_warning_and_variantlib_keeps_it() {
        let meta = read(json!({
            "$schema": VARIANTLIB_URL_FOR_TESTS,
            "default-priorities": {"namespace": ["nvidia"]},
            "providers": {"nvidia": {"requires": ["nv-plugin"], "enable-if": "platform_system == 'Linux'"}},
            "variants": {"null": {}, "gpu": {"nvidia": {"sm_arch": ["90_real"]}}}
        }));
        let standard = write_json(&meta, SchemaGeneration::V0_2).unwrap();
        let value: serde_json::Value = serde_json::from_str(&standard.text).unwrap();
        assert_eq!(value["$schema"], json!(crate::metadata::PEP_850_URL));
        assert_eq!(
            value["providers"]["nvidia"],
            json!({"requires": ["nv-plugin"]})
        );
        assert_eq!(standard.warnings.len(), 1, "{:?}", standard.warnings);
        assert!(standard.warnings[0].starts_with("dropped providers.nvidia.enable-if"));
        let variantlib =
            write_json_as(&meta, SchemaGeneration::V0_2, SchemaUrl::Variantlib).unwrap();
        let value: serde_json::Value = serde_json::from_str(&variantlib.text).unwrap();
        assert_eq!(value["$schema"], json!(VARIANTLIB_URL_FOR_TESTS));
        assert_eq!(
            value["providers"]["nvidia"]["enable-if"],
            json!("platform_system == 'Linux'")
        );
        assert!(variantlib.warnings.is_empty());
    }

    #[test]
    fn built_in_namespaces_get_their_reference_providers() {
        let meta = read(json!({
            "default-priorities": {"namespace": ["nvidia", "x86_64"]},
            "variants": {"null": {}, "gpu": {"nvidia": {"sm_arch": ["90_real"]}}}
        }));
        for g in [SchemaGeneration::V0_2, SchemaGeneration::V0_0_3] {
            let written = write_json(&meta, g).unwrap();
            let value: serde_json::Value = serde_json::from_str(&written.text).unwrap();
            assert_eq!(
                value["providers"]["nvidia"]["requires"],
                json!(["nvidia-variant-provider>=0.0.1,<1.0.0"])
            );
            assert_eq!(
                value["providers"]["nvidia"]["plugin-api"],
                json!("nvidia_variant_provider.plugin:NvidiaVariantPlugin")
            );
            assert_eq!(
                value["providers"]["x86_64"],
                json!({"requires": ["x86-64-variant-provider>=0.2.1,<1.0.0"]})
            );
            assert_eq!(written.warnings.len(), 2, "{:?}", written.warnings);
        }
        // A namespace vari knows no provider for is still an error.
        let unknown = read(json!({
            "default-priorities": {"namespace": ["blas"]},
            "variants": {"null": {}}
        }));
        assert!(write_json(&unknown, SchemaGeneration::V0_2).is_err());
    }

    const VARIANTLIB_URL_FOR_TESTS: &str = "https://variants-schema.wheelnext.dev/v0.2.0.json";
}
