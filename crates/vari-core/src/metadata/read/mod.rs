//! Reading and validating variant metadata of every generation into [`VariantMetadata`].
//!
//! The reader walks a tree that keeps keys in document order and keeps duplicate keys (see
//! `tree.rs`), records every problem with its key path, and builds the model from whatever
//! is valid. [`read_json`] fails on any problem; [`read_json_lenient`] drops invalid variant
//! entries (PEP 825: consumers "SHOULD prefer to degrade gracefully") and fails only when the
//! document as a whole cannot be used.
//!
//! Generation detection: the `$schema` URL's version (`…/v0.0.3.json`,
//! `…/peps/825/v0.1.1.json`, `…/v0.2.0.json`). 0.0.2 and 0.0.3 must match exactly, 0.1.x and
//! 0.2.x accept any patch number, and any other version (another 0.x draft, or a major
//! version ≥ 1) is refused: PEP 825 forbids assuming compatibility between drafts and
//! requires rejecting unknown major versions. Without a version (torch 2.8's
//! `https://variants-schema.wheelnext.dev/`, or no `$schema`), the generation is inferred
//! from the keys present (see [`detect`]).

mod compact;
mod detect;
mod issues;
mod priorities;
mod providers;
mod root;
mod source;
mod static_props;
mod variants;

use std::collections::{BTreeMap, HashSet};

use serde::de::IgnoredAny;

use self::compact::compact_json;
pub use self::compact::CompactJson;
use self::issues::{as_str, get, key_path, unique_entries, Issue, Issues};
use self::priorities::{
    check_namespace_not_empty, namespace_path, read_priorities, PrioritiesRead,
};
use self::providers::read_providers;
use self::root::{parse_root, Mode};
use self::source::Sections;
pub use self::source::SourceKind;
use self::static_props::{check_static_0_0_3, derive_static_0_0_2, read_static_0_0_3, StaticCheck};
use self::variants::{read_variants_raw, Streamed, VariantRules};
use super::error::MetadataError;
use super::generation::{is_pep_850_url, version_in_url, UrlVersion, SUPPORTED_VERSIONS};
use super::model::{SchemaGeneration, VariantMetadata};
use super::tree::{parse_toml, Node};
use crate::diagnostic::{json_syntax, strip_bom, toml_syntax};

/// Reads and validates a JSON metadata document strictly.
///
/// On failure, every problem found is returned (never an empty list), in document order.
///
/// ```
/// use vari_core::metadata::{read_json, SourceKind};
/// let json = r#"{
///     "$schema": "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json",
///     "default-priorities": {"namespace": ["x86_64"]},
///     "variants": {"v3": {"x86_64": {"level": ["v3"]}}, "00000000": {}}
/// }"#;
/// let errors = read_json(json, SourceKind::IndexFile).unwrap_err();
/// assert_eq!(errors[0].to_string(), r#"variants.00000000: the null variant must use the label "null""#);
/// // (0.0.x files are read tolerantly: see `read_json_with_warnings`.)
/// ```
pub fn read_json(text: &str, kind: SourceKind) -> Result<VariantMetadata, Vec<MetadataError>> {
    read_json_with_warnings(text, kind).map(|(meta, _)| meta)
}

/// [`read_json`], also returning what was read tolerantly although the schema forbids it: in
/// a 0.0.x file, a variant without properties under another label than `null` (PyTorch 2.8
/// labels it `00000000`) is the null variant, with a warning naming the label.
///
/// ```
/// use vari_core::metadata::{read_json_with_warnings, SourceKind};
/// let json = r#"{"$schema": "https://variants-schema.wheelnext.dev/v0.0.3.json",
///     "default-priorities": {"namespace": ["x86_64"]},
///     "providers": {"x86_64": {"requires": ["provider-variant-x86-64"]}},
///     "variants": {"00000000": {}, "v3": {"x86_64": {"level": ["v3"]}}}}"#;
/// let (meta, warnings) = read_json_with_warnings(json, SourceKind::IndexFile).unwrap();
/// assert_eq!(meta.null_variant().unwrap().as_str(), "00000000");
/// assert_eq!(warnings[0].path, "variants.00000000");
/// ```
pub fn read_json_with_warnings(
    text: &str,
    kind: SourceKind,
) -> Result<(VariantMetadata, Vec<MetadataError>), Vec<MetadataError>> {
    let (meta, issues, warnings) = read_json_document(text, kind)?;
    if issues.is_empty() {
        Ok((meta, warnings))
    } else {
        Err(issues.into_iter().map(|i| i.error).collect())
    }
}

/// Reads a JSON metadata document for an installer: invalid variant entries are dropped and
/// returned as warnings, with what was read tolerantly (see [`read_json_with_warnings`]).
///
/// Fails only when the document as a whole is unusable: not JSON, not an object, an
/// unsupported schema version, or problems outside the variant entries
/// (`default-priorities`, `providers`, `static-properties`, the shape of `variants`). The
/// error list then holds every problem found.
pub fn read_json_lenient(
    text: &str,
    kind: SourceKind,
) -> Result<(VariantMetadata, Vec<MetadataError>), Vec<MetadataError>> {
    lenient(read_json_document(text, kind)?)
}

/// Why [`read_compact_json_lenient`] could not read a document.
#[derive(Debug)]
pub enum CompactReadError {
    /// The text is not UTF-8 or not JSON. Positions in the compacted text would mean nothing
    /// to a reader: read the text as written with [`read_json_lenient`] for the error.
    NotJson,
    /// The document is JSON but cannot be used: what [`read_json_lenient`] returns.
    Invalid(Vec<MetadataError>),
}

/// [`read_json_lenient`] for a document compacted as it was read ([`CompactJson`]), so that
/// the indented original is never held whole. The result is the one `read_json_lenient`
/// gives for the original text.
///
/// ```
/// use vari_core::metadata::{read_compact_json_lenient, CompactJson, SourceKind};
/// let mut compact = CompactJson::default();
/// compact.push(br#"{"$schema": "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json",
///     "default-priorities": {"namespace": ["x86_64"]},
///     "variants": {"null": {}, "v3": {"x86_64": {"level": ["v3"]}}}}"#);
/// let (meta, warnings) = read_compact_json_lenient(compact, SourceKind::IndexFile).unwrap();
/// assert_eq!(meta.variants.len(), 2);
/// assert!(warnings.is_empty());
/// ```
pub fn read_compact_json_lenient(
    compact: CompactJson,
    kind: SourceKind,
) -> Result<(VariantMetadata, Vec<MetadataError>), CompactReadError> {
    let text = compact.into_text().ok_or(CompactReadError::NotJson)?;
    let read = read_compacted(&text, kind).map_err(|e| match e {
        CompactedError::Syntax(_) => CompactReadError::NotJson,
        CompactedError::Invalid(errors) => CompactReadError::Invalid(errors),
    })?;
    lenient(read).map_err(CompactReadError::Invalid)
}

/// The lenient reading of what [`read_document`] found: invalid variant entries dropped and
/// reported with the warnings; any other problem fails the document.
fn lenient(
    (mut meta, issues, mut warnings): DocumentRead,
) -> Result<(VariantMetadata, Vec<MetadataError>), Vec<MetadataError>> {
    if issues.iter().any(|i| i.variant.is_none()) {
        return Err(issues.into_iter().map(|i| i.error).collect());
    }
    let dropped: HashSet<&str> = issues.iter().filter_map(|i| i.variant.as_deref()).collect();
    meta.variants
        .retain(|label, _| !dropped.contains(label.as_str()));
    // Both lists are about variant entries, each in document order; keep them apart (dropped
    // entries first) rather than pretend to interleave them.
    let mut all: Vec<MetadataError> = issues.into_iter().map(|i| i.error).collect();
    all.append(&mut warnings);
    Ok((meta, all))
}

/// Reads and validates the `[variant]` table of a `pyproject.toml` strictly.
///
/// Key paths start with `variant.` (`variant.providers.x86_64.requires`).
pub fn read_pyproject(text: &str) -> Result<VariantMetadata, Vec<MetadataError>> {
    let text = strip_bom(text);
    crate::check_toml_depth(text)
        .map_err(|e| vec![MetadataError::document(format!("invalid TOML: {e}"))])?;
    let root = parse_toml(text).map_err(|e| vec![toml_syntax("invalid TOML", text, &e)])?;
    let Node::Object(entries) = &root else {
        return Err(vec![MetadataError::new("", "expected a TOML table")]);
    };
    let Some((_, table)) = entries.iter().find(|(k, _)| k == "variant") else {
        return Err(vec![MetadataError::new(
            "variant",
            "pyproject.toml has no [variant] table",
        )]);
    };
    let (meta, issues, _) = read_document(table, SourceKind::Pyproject, "variant", None)?
        .ok_or_else(|| vec![MetadataError::document("pyproject.toml could not be read")])?;
    if issues.is_empty() {
        Ok(meta)
    } else {
        Err(issues.into_iter().map(|i| i.error).collect())
    }
}

fn json_error(text: &str, e: &serde_json::Error) -> MetadataError {
    json_syntax("invalid JSON", text, e)
}

/// What [`read_document`] found: the model, every problem, the warnings.
type DocumentRead = (VariantMetadata, Vec<Issue>, Vec<MetadataError>);

/// Parses and reads a JSON document (see [`read_compacted`]).
fn read_json_document(text: &str, kind: SourceKind) -> Result<DocumentRead, Vec<MetadataError>> {
    let text = strip_bom(text);
    let compact = compact_json(text);
    read_compacted(&compact, kind).map_err(|e| match e {
        // Positions in the compacted text mean nothing to the reader: report the original's.
        CompactedError::Syntax(e) => {
            let e = serde_json::from_str::<IgnoredAny>(text).err().unwrap_or(e);
            vec![json_error(text, &e)]
        }
        CompactedError::Invalid(errors) => errors,
    })
}

/// Why [`read_compacted`] failed.
enum CompactedError {
    /// The text is not JSON.
    Syntax(serde_json::Error),
    /// The document cannot be read at all (see [`read_document`]).
    Invalid(Vec<MetadataError>),
}

/// Parses and reads compacted JSON text, streaming `variants` into the model in one pass when
/// the keys before it give the rules the whole document gives (always, in files written by
/// known tools), else in a second pass.
fn read_compacted(compact: &str, kind: SourceKind) -> Result<DocumentRead, CompactedError> {
    let rules_of = |root: &[(&str, &Node)]| variant_rules(root, "");
    let (root, streamed) =
        parse_root(compact, Mode::Stream, &rules_of).map_err(CompactedError::Syntax)?;
    if let Some(read) = read_document(&root, kind, "", streamed).map_err(CompactedError::Invalid)? {
        return Ok(read);
    }
    let (root, _) = parse_root(compact, Mode::Raw, &rules_of).map_err(CompactedError::Syntax)?;
    read_document(&root, kind, "", None)
        .map_err(CompactedError::Invalid)?
        .ok_or_else(|| {
            CompactedError::Invalid(vec![MetadataError::document(
                "the document could not be read",
            )])
        })
}

/// The rules `variants` is read under, from the document's other sections; `None` when the
/// document cannot be read at all (an unsupported schema version).
fn variant_rules(root: &[(&str, &Node)], base: &str) -> Option<VariantRules> {
    let mut scratch = Issues::default();
    let (generation, _) = detect_generation(root, base, &mut scratch).ok()?;
    let priorities = read_priorities(
        get(root, "default-priorities"),
        &key_path(base, "default-priorities"),
        generation,
        true,
        &mut scratch,
    );
    Some(rules_from(generation, &priorities))
}

/// See [`VariantRules`].
fn rules_from(generation: SchemaGeneration, priorities: &PrioritiesRead) -> VariantRules {
    // PEP 817: `abi_dependency` has no provider, so the drafts with providers do not list it
    // in default-priorities either (PEP 825 lists it like any other).
    let known_namespaces = priorities.namespace_ok.then(|| {
        let implicit = crate::Namespace::new(crate::Namespace::ABI_DEPENDENCY)
            .ok()
            .filter(|_| generation.has_providers());
        let mut known: Vec<crate::Namespace> = priorities
            .value
            .namespace
            .iter()
            .cloned()
            .chain(implicit)
            .collect();
        known.sort();
        known.dedup();
        known
    });
    VariantRules {
        generation,
        known_namespaces,
    }
}

/// Reads one metadata document rooted at `root` (`base` is the key path of the root).
///
/// `Err` for fatal problems after which nothing else can be checked; otherwise the model
/// built from the valid parts, every problem found, and the warnings. `streamed` is the root's
/// `variants` as read while parsing; `Ok(None)` when the document gives other rules than it
/// was read by (parse again with `variants` kept raw).
fn read_document(
    root: &Node,
    kind: SourceKind,
    base: &str,
    mut streamed: Option<Streamed>,
) -> Result<Option<DocumentRead>, Vec<MetadataError>> {
    let mut issues = Issues::default();
    let Node::Object(entries) = root else {
        return Err(vec![MetadataError::new(
            base,
            format!("expected an object, found {}", root.kind()),
        )]);
    };
    let root = unique_entries(entries, base, &mut issues);
    let sections = Sections::of(&root);

    let (generation, schema_url) = detect_generation(&root, base, &mut issues)?;

    issues.order = sections.default_priorities;
    let priorities_path = key_path(base, "default-priorities");
    let mut priorities = read_priorities(
        get(&root, "default-priorities"),
        &priorities_path,
        generation,
        kind != SourceKind::Pyproject,
        &mut issues,
    );

    let rules = rules_from(generation, &priorities);

    issues.order = sections.providers;
    let providers_path = key_path(base, "providers");
    let providers = if generation.has_providers() {
        read_providers(
            get(&root, "providers"),
            &providers_path,
            generation,
            kind,
            schema_url.as_deref().is_some_and(is_pep_850_url),
            &mut issues,
        )
    } else {
        providers::ProvidersRead::default()
    };

    let check = StaticCheck {
        generation,
        kind,
        base,
        sections: &sections,
    };
    let static_properties = match check.generation {
        SchemaGeneration::V0_0_3 => {
            issues.order = sections.static_properties;
            let mut statics = match get(&root, "static-properties") {
                Some(node) => {
                    read_static_0_0_3(node, &key_path(base, "static-properties"), &mut issues)
                }
                None => BTreeMap::new(),
            };
            check_static_0_0_3(&check, &mut statics, &providers, &priorities, &mut issues);
            statics
        }
        SchemaGeneration::V0_0_2 => {
            derive_static_0_0_2(&check, &providers, &mut priorities, &mut issues)
        }
        SchemaGeneration::V0_2 => providers.static_properties.clone(),
        SchemaGeneration::V0_1 => BTreeMap::new(),
    };

    if let Some(abi) = providers.declared.iter().find(|ns| ns.is_abi_dependency()) {
        issues.order = sections.providers;
        issues.add(
            key_path(&providers_path, abi.as_str()),
            "the abi_dependency namespace is reserved for ABI dependencies and must not \
             have a provider (PEP 817)",
        );
    }

    if generation.has_providers() && priorities.namespace_ok && providers.keys_ok {
        check_namespaces_match_providers(
            &priorities.value.namespace,
            &providers.declared,
            &priorities_path,
            &providers_path,
            &sections,
            &mut issues,
        );
    }

    issues.order = sections.variants;
    let variants_path = key_path(base, "variants");
    let mut has_variants = false;
    let variants = match (get(&root, "variants"), kind) {
        (Some(_), SourceKind::Pyproject) => {
            issues.add(
                &variants_path,
                "pyproject.toml must not list variants (they belong in variant.json and \
                 *-variants.json)",
            );
            BTreeMap::new()
        }
        (None, SourceKind::Pyproject) => BTreeMap::new(),
        (None, _) => {
            issues.add(&variants_path, "required key is missing");
            BTreeMap::new()
        }
        (Some(node), _) => {
            let first_issue = issues.count();
            let read = match node {
                Node::Streamed => match streamed.take() {
                    Some(s) if s.rules == rules => {
                        issues.append(s.issues);
                        s.read
                    }
                    _ => return Ok(None),
                },
                Node::RawJson(text) => read_variants_raw(text, &variants_path, &rules, &mut issues),
                // Only JSON has variants to read, and its root never makes them a tree.
                other => {
                    issues.add(
                        &variants_path,
                        format!("expected an object, found {}", other.kind()),
                    );
                    None
                }
            };
            match read {
                None => BTreeMap::new(),
                Some(read) => {
                    has_variants = read.entries != 0;
                    if kind == SourceKind::WheelFile && read.entries != 1 {
                        // Before the entries' own problems, where the tree walker put it.
                        issues.insert(
                            first_issue,
                            &variants_path,
                            format!(
                                "a wheel's variant.json must list exactly one variant, found {}",
                                read.entries
                            ),
                        );
                    }
                    read.variants
                }
            }
        }
    };

    issues.order = sections.default_priorities;
    check_namespace_not_empty(&priorities, has_variants, &priorities_path, &mut issues);

    let meta = VariantMetadata {
        generation,
        schema_url,
        priorities: priorities.value,
        providers: providers.value,
        static_properties,
        variants,
    };
    let (issues, warnings) = issues.into_sorted();
    Ok(Some((meta, issues, warnings)))
}

/// The generation from `$schema`, else inferred. An unsupported version is fatal.
fn detect_generation(
    root: &[(&str, &Node)],
    base: &str,
    issues: &mut Issues,
) -> Result<(SchemaGeneration, Option<String>), Vec<MetadataError>> {
    let schema_path = key_path(base, "$schema");
    issues.order = root
        .iter()
        .position(|(k, _)| *k == "$schema")
        .unwrap_or(usize::MAX);
    let url = get(root, "$schema").and_then(|n| as_str(n, &schema_path, issues));
    let version = url.map_or(UrlVersion::Missing, version_in_url);
    let generation = match version {
        UrlVersion::Known(g) => g,
        UrlVersion::Unsupported(v) => {
            return Err(vec![MetadataError::new(
                schema_path,
                format!("unsupported schema version {v} (vari reads {SUPPORTED_VERSIONS})"),
            )])
        }
        UrlVersion::Missing => detect::infer_generation(root),
    };
    Ok((generation, url.map(str::to_owned)))
}

/// `default-priorities.namespace` must list exactly the namespaces of `providers`.
fn check_namespaces_match_providers(
    namespaces: &[crate::Namespace],
    providers: &std::collections::BTreeSet<crate::Namespace>,
    priorities_path: &str,
    providers_path: &str,
    sections: &Sections,
    issues: &mut Issues,
) {
    issues.order = sections.default_priorities;
    for (i, ns) in namespaces.iter().enumerate() {
        if !providers.contains(ns) {
            issues.add(
                namespace_path(priorities_path, i),
                format!("namespace \"{ns}\" has no entry in providers"),
            );
        }
    }
    issues.order = sections.providers;
    let listed: HashSet<&crate::Namespace> = namespaces.iter().collect();
    for ns in providers {
        if !listed.contains(ns) {
            issues.add(
                key_path(providers_path, ns.as_str()),
                format!("namespace \"{ns}\" is not listed in default-priorities.namespace"),
            );
        }
    }
}

#[cfg(test)]
mod tests;
