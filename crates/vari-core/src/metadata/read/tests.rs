//! One test per reading rule: each checks the exact key path and message.

use serde_json::{json, Value};

use super::*;
use crate::metadata::model::ProviderKind;

const V002: &str = "https://variants-schema.wheelnext.dev/v0.0.2.json";
const V003: &str = "https://variants-schema.wheelnext.dev/v0.0.3.json";
const V01: &str = "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json";
const V02: &str = "https://variants-schema.wheelnext.dev/v0.2.0.json";

/// A valid 0.0.3 index file: one install-time and one ahead-of-time namespace.
fn doc_0_0_3() -> Value {
    json!({
        "$schema": V003,
        "default-priorities": {"namespace": ["nvidia", "prio"]},
        "providers": {
            "nvidia": {"requires": ["nvidia-variant-provider>=0.0.2"], "enable-if": "platform_system == 'Linux'"},
            "prio": {"install-time": false}
        },
        "static-properties": {"prio": {"order": ["1", "2"]}},
        "variants": {
            "null": {},
            "cu128": {"nvidia": {"sm_arch": ["80_real", "90_real"]}, "prio": {"order": ["1"]}}
        }
    })
}

/// A valid 0.2 index file.
fn doc_0_2() -> Value {
    json!({
        "$schema": V02,
        "default-priorities": {"namespace": ["nvidia", "prio", "cpu"]},
        "providers": {
            "nvidia": {"requires": ["nvidia-variant-provider"], "plugin-api": "nv.plugin:P"},
            "prio": {"static-properties": {"b": ["x"], "a": ["y", "z"]}, "feature-order": ["b", "a"]},
            "cpu": {"builtin": "x86_64", "optional": true}
        },
        "variants": {"null": {}, "gpu": {"nvidia": {"sm_arch": ["90_real"]}, "prio": {"a": ["z"]}}}
    })
}

/// A valid 0.0.2 index file (torch 2.9's shape).
fn doc_0_0_2() -> Value {
    json!({
        "$schema": V002,
        "default-priorities": {
            "namespace": ["nvidia", "prio"],
            "property": {"prio": {"order": ["1", "2", "3"]}}
        },
        "providers": {
            "nvidia": {"requires": ["nvidia-variant-provider"]},
            "prio": {"plugin-use": "none", "requires": []}
        },
        "variants": {"null": {}, "a": {"prio": {"order": ["2"]}}}
    })
}

fn doc_0_1() -> Value {
    json!({
        "$schema": V01,
        "default-priorities": {"namespace": ["x86_64"]},
        "variants": {"null": {}, "v3": {"x86_64": {"level": ["v3"]}}}
    })
}

fn set(doc: &mut Value, pointer: &str, value: Value) {
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    let parent = doc
        .pointer_mut(parent)
        .unwrap_or_else(|| panic!("{parent}"));
    parent
        .as_object_mut()
        .unwrap()
        .insert(key.replace("~1", "/"), value);
}

fn remove(doc: &mut Value, pointer: &str) {
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    doc.pointer_mut(parent)
        .unwrap()
        .as_object_mut()
        .unwrap()
        .remove(key);
}

fn errors_of(text: &str, kind: SourceKind) -> Vec<String> {
    match read_json(text, kind) {
        Ok(_) => Vec::new(),
        Err(errors) => {
            assert!(!errors.is_empty());
            errors.iter().map(ToString::to_string).collect()
        }
    }
}

fn errors(doc: &Value) -> Vec<String> {
    errors_of(&doc.to_string(), SourceKind::IndexFile)
}

/// Exactly one error, with this display.
#[track_caller]
fn only(doc: &Value, expected: &str) {
    assert_eq!(errors(doc), [expected]);
}

#[test]
fn base_documents_are_valid() {
    for (doc, g) in [
        (doc_0_0_2(), SchemaGeneration::V0_0_2),
        (doc_0_0_3(), SchemaGeneration::V0_0_3),
        (doc_0_1(), SchemaGeneration::V0_1),
        (doc_0_2(), SchemaGeneration::V0_2),
    ] {
        let meta = read_json(&doc.to_string(), SourceKind::IndexFile)
            .unwrap_or_else(|e| panic!("{g}: {e:?}"));
        assert_eq!(meta.generation, g);
        assert!(meta.schema_url.is_some());
    }
}

// ---- document level -------------------------------------------------------------------

#[test]
fn invalid_json_is_one_error_at_the_root() {
    let e = read_json("{\"a\": ", SourceKind::IndexFile).unwrap_err();
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].path, "");
    assert!(e[0].message.starts_with("invalid JSON: "), "{}", e[0]);
    assert!(read_json_lenient("nope", SourceKind::IndexFile).is_err());
}

#[test]
fn a_byte_order_mark_is_accepted_and_an_empty_file_says_so() {
    let text = format!("\u{feff}{}", doc_0_2());
    assert!(read_json(&text, SourceKind::IndexFile).is_ok());
    assert!(read_json_lenient(&text, SourceKind::IndexFile).is_ok());
    assert!(
        read_pyproject("\u{feff}[variant]\n[variant.default-priorities]\nnamespace = []\n").is_ok()
    );
    let e = read_json("", SourceKind::IndexFile).unwrap_err();
    assert_eq!(
        e[0].to_string(),
        "invalid JSON: the file is empty (expected a JSON object)"
    );
}

#[test]
fn toml_syntax_errors_keep_their_position() {
    let e = read_pyproject("[project]\n[variant\n").unwrap_err();
    assert!(e[0].message.contains("at line 2 column"), "{}", e[0]);
    assert!(!e[0].message.contains('\n'), "{}", e[0]);
}

#[test]
fn the_root_must_be_an_object() {
    assert_eq!(
        errors_of("[1]", SourceKind::IndexFile),
        ["expected an object, found a list"]
    );
}

#[test]
fn unknown_major_and_draft_versions_are_refused() {
    for (url, version) in [
        ("https://variants-schema.wheelnext.dev/v1.0.0.json", "1.0.0"),
        ("https://packaging.python.org/variants/v2.1.json", "2.1"),
        ("https://variants-schema.wheelnext.dev/v0.3.0.json", "0.3.0"),
        ("https://variants-schema.wheelnext.dev/v0.0.4.json", "0.0.4"),
    ] {
        let mut doc = doc_0_1();
        set(&mut doc, "/$schema", json!(url));
        let expected = format!(
            "$schema: unsupported schema version {version} (vari reads 0.0.2, 0.0.3, 0.1.x, 0.2.x)"
        );
        assert_eq!(errors(&doc), std::slice::from_ref(&expected));
        let lenient = read_json_lenient(&doc.to_string(), SourceKind::IndexFile).unwrap_err();
        assert_eq!(lenient[0].to_string(), expected);
    }
}

#[test]
fn a_newer_patch_of_a_known_draft_is_read() {
    let mut doc = doc_0_1();
    set(
        &mut doc,
        "/$schema",
        json!("https://variants-schema.wheelnext.dev/peps/825/v0.1.9.json"),
    );
    assert_eq!(
        read_json(&doc.to_string(), SourceKind::IndexFile)
            .unwrap()
            .generation,
        SchemaGeneration::V0_1
    );
    let mut doc = doc_0_2();
    set(
        &mut doc,
        "/$schema",
        json!("https://variants-schema.wheelnext.dev/v0.2.5.json"),
    );
    assert_eq!(
        read_json(&doc.to_string(), SourceKind::IndexFile)
            .unwrap()
            .generation,
        SchemaGeneration::V0_2
    );
}

#[test]
fn schema_must_be_a_string() {
    let mut doc = doc_0_1();
    set(&mut doc, "/$schema", json!(3));
    only(&doc, "$schema: expected a string, found a number");
}

#[test]
fn without_a_versioned_schema_the_generation_is_inferred() {
    let mut doc = doc_0_0_2();
    set(
        &mut doc,
        "/$schema",
        json!("https://variants-schema.wheelnext.dev/"),
    );
    let meta = read_json(&doc.to_string(), SourceKind::IndexFile).unwrap();
    assert_eq!(meta.generation, SchemaGeneration::V0_0_2);
    assert_eq!(
        meta.schema_url.as_deref(),
        Some("https://variants-schema.wheelnext.dev/")
    );
    let mut doc = doc_0_2();
    remove(&mut doc, "/$schema");
    let meta = read_json(&doc.to_string(), SourceKind::IndexFile).unwrap();
    assert_eq!(
        (meta.generation, meta.schema_url),
        (SchemaGeneration::V0_2, None)
    );
    let mut doc = doc_0_1();
    remove(&mut doc, "/$schema");
    assert_eq!(
        read_json(&doc.to_string(), SourceKind::IndexFile)
            .unwrap()
            .generation,
        SchemaGeneration::V0_1
    );
}

#[test]
fn unknown_top_level_keys_are_ignored() {
    let mut doc = doc_0_0_3();
    set(&mut doc, "/x-future", json!({"anything": [1, 2]}));
    assert!(errors(&doc).is_empty());
    // 0.1 ignores a providers table, 0.2 a top-level static-properties.
    let mut doc = doc_0_1();
    set(&mut doc, "/providers", json!({"x86_64": {"bogus": 1}}));
    assert!(errors(&doc).is_empty());
}

#[test]
fn duplicate_keys_are_errors() {
    let text = r#"{"$schema": "https://variants-schema.wheelnext.dev/v0.0.3.json",
        "default-priorities": {"namespace": ["a"]},
        "providers": {"a": {"requires": ["x"]}, "a": {"requires": ["y"]}},
        "variants": {}}"#;
    assert_eq!(
        errors_of(text, SourceKind::IndexFile),
        ["providers.a: duplicate key"]
    );
}

#[test]
fn errors_come_in_document_order_with_every_problem() {
    let text = r#"{"variants": {"BAD": {}, "x": {"a": {"f": []}}},
        "providers": {"a": {"requires": ["x"], "optional": "no"}},
        "default-priorities": {"namespace": ["a", "a"]},
        "$schema": "https://variants-schema.wheelnext.dev/v0.0.3.json"}"#;
    assert_eq!(
        errors_of(text, SourceKind::IndexFile),
        [
            "variants.BAD: invalid variant label \"BAD\": only lowercase letters, digits, `_` and `.` are allowed",
            "variants.x.a.f: must list at least one value",
            "providers.a.optional: expected a boolean, found a string",
            "default-priorities.namespace[1]: duplicate value \"a\"",
        ]
    );
}

// ---- variants -------------------------------------------------------------------------

#[test]
fn variants_before_the_keys_that_rule_them_are_read_by_those_rules() {
    // Streaming takes its rules from the keys before `variants`; here they come after, so the
    // document is read again with the rules of the whole document.
    let first = format!(
        r#"{{"variants": {{"00000000": {{}}, "v3": {{"y": {{"f": ["1"]}}}}}},
            "default-priorities": {{"namespace": ["x"]}},
            "providers": {{"x": {{"requires": ["x-provider"]}}}},
            "$schema": "{V003}"}}"#
    );
    let last = format!(
        r#"{{"$schema": "{V003}",
            "default-priorities": {{"namespace": ["x"]}},
            "providers": {{"x": {{"requires": ["x-provider"]}}}},
            "variants": {{"00000000": {{}}, "v3": {{"y": {{"f": ["1"]}}}}}}}}"#
    );
    let expected = ["variants.v3.y: namespace \"y\" is not listed in default-priorities.namespace"];
    for text in [&first, &last] {
        let e: Vec<String> = read_json(text, SourceKind::IndexFile)
            .unwrap_err()
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(e, expected, "{text}");
        // 0.0.3 rules: the null variant under another label is a warning, not an error.
        let (meta, warnings) = read_json_lenient(text, SourceKind::IndexFile).unwrap();
        assert_eq!(meta.null_variant().map(|l| l.as_str()), Some("00000000"));
        assert_eq!(warnings.len(), 2, "{warnings:?}");
    }
}

#[test]
fn variants_are_streamed_with_every_rule_of_the_tree_walk() {
    // Escaped keys are the same keys (so their repeats are repeats), wrong types deep inside
    // are reported with their kind and skipped, and reading goes on after each problem.
    let text = r#"{
        "$schema": "https://variants-schema.wheelnext.dev/v0.2.0.json",
        "default-priorities": {"namespace": ["x"]},
        "providers": {"x": {"requires": ["x-provider"]}},
        "variants": {
            "null": {},
            "\u0061": {"x": {"f": ["1", {"deep": [1, {"x": null}]}, "\u0032", true]}},
            "a": {"x": {"f": ["3"]}},
            "b": {"x": {"f": ["1"], "\u0066": ["2"]}, "\u0078": {"g": ["1"]}},
            "c": {"x": {"f": [[], "1"], "g": {"h": 1}}, "y": 7},
            "d": {"x": {"f": ["1"]}}
        }
    }"#;
    let e: Vec<String> = read_json(text, SourceKind::IndexFile)
        .unwrap_err()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        e,
        [
            "variants.a.x.f[1]: expected a string, found an object",
            "variants.a.x.f[3]: expected a string, found a boolean",
            "variants.a: duplicate variant label (each label must appear once)",
            "variants.b.x.f: duplicate key",
            "variants.b.x: duplicate key",
            "variants.c.x.f[0]: expected a string, found a list",
            "variants.c.x.g: expected a list of feature values, found an object",
            "variants.c.y: namespace \"y\" is not listed in default-priorities.namespace",
            "variants.c.y: expected an object, found a number",
        ]
    );
    let (meta, _) = read_json_lenient(text, SourceKind::IndexFile).unwrap();
    let labels: Vec<&str> = meta.variants.keys().map(|l| l.as_str()).collect();
    assert_eq!(labels, ["d", "null"]);
}

#[test]
fn the_null_variant_must_use_the_null_label() {
    for mut doc in [doc_0_2(), doc_0_1()] {
        set(&mut doc, "/variants/00000000", json!({}));
        remove(&mut doc, "/variants/null");
        only(
            &doc,
            "variants.00000000: the null variant must use the label \"null\"",
        );
        let e = read_json(&doc.to_string(), SourceKind::IndexFile).unwrap_err();
        assert_eq!(e[0].path, "variants.00000000");
        assert_eq!(e[0].message, "the null variant must use the label \"null\"");
    }
}

#[test]
fn drafts_0_0_x_may_give_the_null_variant_another_label_with_a_warning() {
    for mut doc in [doc_0_0_3(), doc_0_0_2()] {
        remove(&mut doc, "/variants/null");
        set(&mut doc, "/variants/00000000", json!({}));
        let (meta, warnings) =
            read_json_with_warnings(&doc.to_string(), SourceKind::IndexFile).unwrap();
        assert_eq!(meta.null_variant().map(|l| l.as_str()), Some("00000000"));
        let shown: Vec<String> = warnings.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "variants.00000000: the null variant should use the label \"null\"; read as the \
              null variant (written as \"null\")"
            ]
        );
        // The lenient reader keeps it and says the same.
        let (lenient, same) = read_json_lenient(&doc.to_string(), SourceKind::IndexFile).unwrap();
        assert_eq!((lenient, same), (meta, warnings));

        // Two variants without properties: the second is an error (dropped by the lenient
        // reader).
        set(&mut doc, "/variants/null", json!({}));
        only(
            &doc,
            "variants.null: a second variant without properties (\"00000000\" is the null \
             variant already)",
        );
        let (meta, _) = read_json_lenient(&doc.to_string(), SourceKind::IndexFile).unwrap();
        assert_eq!(meta.null_variant().map(|l| l.as_str()), Some("00000000"));
    }
}

#[test]
fn the_null_label_must_have_no_properties() {
    let mut doc = doc_0_0_3();
    set(
        &mut doc,
        "/variants/null",
        json!({"nvidia": {"sm_arch": ["90_real"]}}),
    );
    only(
        &doc,
        "variants.null: the label \"null\" is reserved for the variant with no properties",
    );
}

#[test]
fn an_empty_namespace_table_in_a_variant_is_dropped_with_a_warning() {
    // Both schemas allow it (no `minProperties`); uv drops it; so does vari, and says so.
    for mut doc in [doc_0_0_3(), doc_0_1(), doc_0_2()] {
        let gpu = doc["variants"]
            .as_object()
            .and_then(|v| v.iter().find(|(l, _)| *l != "null"))
            .map(|(l, p)| (l.clone(), p.clone()))
            .unwrap();
        let expected = read_json(&doc.to_string(), SourceKind::IndexFile).unwrap();
        // Listed or not in default-priorities: an empty table uses no namespace.
        for ns in ["nvidia", "unused"] {
            let mut with_empty = gpu.1.clone();
            with_empty[ns] = json!({});
            let mut doc = doc.clone();
            set(&mut doc, &format!("/variants/{}", gpu.0), with_empty);
            let (meta, warnings) =
                read_json_with_warnings(&doc.to_string(), SourceKind::IndexFile).unwrap();
            if ns == "unused" {
                assert_eq!(meta, expected);
            }
            let shown: Vec<String> = warnings.iter().map(ToString::to_string).collect();
            assert_eq!(
                shown,
                [format!(
                    "variants.{}.{ns}: empty namespace table (no features); ignored",
                    gpu.0
                )]
            );
        }
        // The only namespace of a variant empty: what is left is a variant without
        // properties, under the null-variant rules (a second one is an error).
        set(&mut doc, "/variants/x", json!({"unused": {}}));
        assert!(read_json(&doc.to_string(), SourceKind::IndexFile).is_err());
    }
}

#[test]
fn an_unlisted_namespace_is_still_reported_before_its_features_problems() {
    let mut doc = doc_0_1();
    set(&mut doc, "/variants/x", json!({"other": {"f": []}}));
    assert_eq!(
        errors_of(&doc.to_string(), SourceKind::IndexFile),
        [
            "variants.x.other: namespace \"other\" is not listed in default-priorities.namespace",
            "variants.x.other.f: must list at least one value",
        ]
    );
}

#[test]
fn duplicate_labels_are_errors_and_dropped_by_the_lenient_reader() {
    let text = r#"{"$schema": "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json",
        "default-priorities": {"namespace": ["a"]},
        "variants": {"x": {"a": {"f": ["1"]}}, "y": {"a": {"f": ["3"]}}, "x": {"a": {"f": ["2"]}}}}"#;
    assert_eq!(
        errors_of(text, SourceKind::IndexFile),
        ["variants.x: duplicate variant label (each label must appear once)"]
    );
    let (meta, warnings) = read_json_lenient(text, SourceKind::IndexFile).unwrap();
    assert_eq!(warnings.len(), 1);
    let labels: Vec<&str> = meta.variants.keys().map(|l| l.as_str()).collect();
    assert_eq!(labels, ["y"]);
}

#[test]
fn labels_must_match_the_label_grammar() {
    let mut doc = doc_0_1();
    set(
        &mut doc,
        "/variants/cu-128",
        json!({"x86_64": {"level": ["v3"]}}),
    );
    only(&doc, "variants.cu-128: invalid variant label \"cu-128\": only lowercase letters, digits, `_` and `.` are allowed");
    // Long labels are fine when reading.
    let mut doc = doc_0_1();
    set(
        &mut doc,
        "/variants/a_label_longer_than_sixteen",
        json!({"x86_64": {"level": ["v3"]}}),
    );
    assert!(errors(&doc).is_empty());
}

#[test]
fn values_must_match_the_value_grammar_at_their_index() {
    let mut doc = doc_0_0_3();
    set(
        &mut doc,
        "/variants/cu128/nvidia/sm_arch",
        json!(["80_real", "90_real", "100-real"]),
    );
    only(&doc, "variants.cu128.nvidia.sm_arch[2]: invalid feature value \"100-real\": only lowercase letters, digits, `_` and `.` are allowed");
}

#[test]
fn namespace_and_feature_keys_must_match_the_name_grammar() {
    let mut doc = doc_0_0_3();
    set(&mut doc, "/variants/cu128/nvidia/sm.arch", json!(["1"]));
    only(&doc, "variants.cu128.nvidia.sm.arch: invalid feature name \"sm.arch\": only lowercase letters, digits and `_` are allowed");
    let mut doc = doc_0_0_3();
    set(&mut doc, "/variants/cu128/NV", json!({"f": ["1"]}));
    only(&doc, "variants.cu128.NV: invalid namespace \"NV\": only lowercase letters, digits and `_` are allowed");
}

#[test]
fn value_lists_are_non_empty_unique_lists_of_strings() {
    let mut doc = doc_0_1();
    set(&mut doc, "/variants/v3/x86_64/level", json!([]));
    only(
        &doc,
        "variants.v3.x86_64.level: must list at least one value",
    );
    set(&mut doc, "/variants/v3/x86_64/level", json!(["v3", "v3"]));
    only(&doc, "variants.v3.x86_64.level[1]: duplicate value \"v3\"");
    set(&mut doc, "/variants/v3/x86_64/level", json!("v3"));
    only(
        &doc,
        "variants.v3.x86_64.level: expected a list of feature values, found a string",
    );
    set(&mut doc, "/variants/v3/x86_64/level", json!(["v3", 4]));
    only(
        &doc,
        "variants.v3.x86_64.level[1]: expected a string, found a number",
    );
    set(&mut doc, "/variants/v3/x86_64", json!(["level"]));
    only(&doc, "variants.v3.x86_64: expected an object, found a list");
    set(&mut doc, "/variants/v3", json!(null));
    only(&doc, "variants.v3: expected an object, found null");
}

#[test]
fn several_values_for_one_feature_are_fine() {
    let mut doc = doc_0_1();
    set(&mut doc, "/variants/v3/x86_64/level", json!(["v4", "v3"]));
    let meta = read_json(&doc.to_string(), SourceKind::IndexFile).unwrap();
    assert_eq!(
        crate::metadata::properties_of(&meta.variants["v3"]).count(),
        2
    );
}

#[test]
fn variant_namespaces_must_be_in_the_namespace_priorities() {
    let mut doc = doc_0_1();
    set(
        &mut doc,
        "/variants/v3/aarch64",
        json!({"version": ["8.1a"]}),
    );
    only(
        &doc,
        "variants.v3.aarch64: namespace \"aarch64\" is not listed in default-priorities.namespace",
    );
}

#[test]
fn variants_is_a_required_object() {
    let mut doc = doc_0_1();
    remove(&mut doc, "/variants");
    only(&doc, "variants: required key is missing");
    set(&mut doc, "/variants", json!([]));
    only(&doc, "variants: expected an object, found a list");
    assert!(read_json_lenient(&doc.to_string(), SourceKind::IndexFile).is_err());
}

#[test]
fn a_wheel_lists_exactly_one_variant() {
    let doc = doc_0_1();
    assert_eq!(
        errors_of(&doc.to_string(), SourceKind::WheelFile),
        ["variants: a wheel's variant.json must list exactly one variant, found 2"]
    );
    let mut doc = doc_0_1();
    remove(&mut doc, "/variants/null");
    assert!(errors_of(&doc.to_string(), SourceKind::WheelFile).is_empty());
}

// ---- default-priorities ---------------------------------------------------------------

#[test]
fn default_priorities_is_required_with_a_namespace_list() {
    let mut doc = doc_0_1();
    remove(&mut doc, "/default-priorities");
    only(&doc, "default-priorities: required key is missing");
    set(&mut doc, "/default-priorities", json!({}));
    only(
        &doc,
        "default-priorities.namespace: required key is missing",
    );
    set(&mut doc, "/default-priorities", json!("x86_64"));
    only(
        &doc,
        "default-priorities: expected an object, found a string",
    );
    set(
        &mut doc,
        "/default-priorities",
        json!({"namespace": "x86_64"}),
    );
    only(
        &doc,
        "default-priorities.namespace: expected a list of strings, found a string",
    );
}

#[test]
fn the_namespace_list_is_non_empty_when_variants_exist() {
    let doc =
        json!({"$schema": V01, "default-priorities": {"namespace": []}, "variants": {"null": {}}});
    only(&doc, "default-priorities.namespace: must list at least one namespace when the file lists variants");
    let doc = json!({"$schema": V01, "default-priorities": {"namespace": []}, "variants": {}});
    assert!(errors(&doc).is_empty());
}

#[test]
fn the_namespace_list_is_unique_and_well_formed() {
    let mut doc = doc_0_1();
    set(
        &mut doc,
        "/default-priorities/namespace",
        json!(["x86_64", "x86_64"]),
    );
    only(
        &doc,
        "default-priorities.namespace[1]: duplicate value \"x86_64\"",
    );
    set(
        &mut doc,
        "/default-priorities/namespace",
        json!(["x86_64", "X"]),
    );
    only(&doc, "default-priorities.namespace[1]: invalid namespace \"X\": only lowercase letters, digits and `_` are allowed");
}

#[test]
fn unknown_keys_in_default_priorities_are_errors() {
    let mut doc = doc_0_1();
    set(&mut doc, "/default-priorities/feature", json!({}));
    only(
        &doc,
        "default-priorities.feature: unknown key (expected one of: namespace)",
    );
    let mut doc = doc_0_0_3();
    set(&mut doc, "/default-priorities/features", json!({}));
    only(
        &doc,
        "default-priorities.features: unknown key (expected one of: namespace, feature, property)",
    );
}

#[test]
fn feature_and_property_priorities_are_checked() {
    let mut doc = doc_0_0_3();
    set(
        &mut doc,
        "/default-priorities/feature",
        json!({"nvidia": ["sm_arch", "Bad"]}),
    );
    only(&doc, "default-priorities.feature.nvidia[1]: invalid feature name \"Bad\": only lowercase letters, digits and `_` are allowed");
    let mut doc = doc_0_0_3();
    set(
        &mut doc,
        "/default-priorities/property",
        json!({"nvidia": {"sm_arch": ["90_real", "90_real"]}}),
    );
    only(
        &doc,
        "default-priorities.property.nvidia.sm_arch[1]: duplicate value \"90_real\"",
    );
    let mut doc = doc_0_0_3();
    set(
        &mut doc,
        "/default-priorities/property",
        json!({"nvidia": ["x"]}),
    );
    only(
        &doc,
        "default-priorities.property.nvidia: expected an object, found a list",
    );
    let mut doc = doc_0_0_3();
    set(
        &mut doc,
        "/default-priorities/feature",
        json!({"nvidia": ["sm_arch"]}),
    );
    set(
        &mut doc,
        "/default-priorities/property",
        json!({"nvidia": {"sm_arch": ["90_real"]}}),
    );
    let meta = read_json(&doc.to_string(), SourceKind::IndexFile).unwrap();
    assert_eq!(meta.priorities.feature["nvidia"][0].as_str(), "sm_arch");
    assert_eq!(
        meta.priorities.property["nvidia"]["sm_arch"][0].as_str(),
        "90_real"
    );
}

#[test]
fn namespaces_and_providers_must_match() {
    let mut doc = doc_0_0_3();
    set(
        &mut doc,
        "/default-priorities/namespace",
        json!(["nvidia", "prio", "amd"]),
    );
    only(
        &doc,
        "default-priorities.namespace[2]: namespace \"amd\" has no entry in providers",
    );
    let mut doc = doc_0_0_3();
    set(
        &mut doc,
        "/providers/amd",
        json!({"requires": ["amd-variant-provider"]}),
    );
    only(
        &doc,
        "providers.amd: namespace \"amd\" is not listed in default-priorities.namespace",
    );
}

// ---- providers ------------------------------------------------------------------------

#[test]
fn install_time_providers_need_requirements() {
    let mut doc = doc_0_0_3();
    set(&mut doc, "/providers/nvidia/requires", json!([]));
    only(&doc, "providers.nvidia.requires: an install-time provider (install-time = true) must list at least one requirement");
    remove(&mut doc, "/providers/nvidia/requires");
    only(&doc, "providers.nvidia.requires: an install-time provider (install-time = true) must list at least one requirement");
}

#[test]
fn requirements_must_be_pep_508() {
    let mut doc = doc_0_0_3();
    set(
        &mut doc,
        "/providers/nvidia/requires",
        json!(["good-name>=1", "bad name ==="]),
    );
    let e = errors(&doc);
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].starts_with("providers.nvidia.requires[1]: invalid requirement \"bad name ===\": "),
        "{}",
        e[0]
    );
    set(&mut doc, "/providers/nvidia/requires", json!(["a", "a"]));
    only(&doc, "providers.nvidia.requires[1]: duplicate value \"a\"");
    set(&mut doc, "/providers/nvidia/requires", json!("a"));
    only(
        &doc,
        "providers.nvidia.requires: expected a list of strings, found a string",
    );
}

#[test]
fn enable_if_must_be_a_pep_508_marker() {
    let mut doc = doc_0_0_3();
    set(
        &mut doc,
        "/providers/nvidia/enable-if",
        json!("platform_sistem == 'Linux'"),
    );
    let e = errors(&doc);
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].starts_with("providers.nvidia.enable-if: invalid environment marker \"platform_sistem == 'Linux'\": "),
        "{}",
        e[0]
    );
    set(&mut doc, "/providers/nvidia/enable-if", json!(""));
    only(&doc, "providers.nvidia.enable-if: must not be empty");
    set(&mut doc, "/providers/nvidia/enable-if", json!(true));
    only(
        &doc,
        "providers.nvidia.enable-if: expected a string, found a boolean",
    );
}

#[test]
fn plugin_api_is_an_object_reference_checked_loosely() {
    let mut doc = doc_0_0_3();
    for ok in ["mod:Obj", "pkg.mod", "pkg.mod : Obj.attr", "a_1.b:C_2"] {
        set(&mut doc, "/providers/nvidia/plugin-api", json!(ok));
        assert!(errors(&doc).is_empty(), "{ok}");
    }
    for bad in [
        "",
        "pkg mod:Obj",
        "pkg:",
        ":Obj",
        "pkg:Obj:x",
        "pkg-mod:Obj",
    ] {
        set(&mut doc, "/providers/nvidia/plugin-api", json!(bad));
        let expected = format!("providers.nvidia.plugin-api: invalid plugin-api {bad:?}: expected an object reference like `module.path:Object`");
        assert_eq!(errors(&doc), [expected], "{bad}");
    }
}

#[test]
fn provider_keys_have_types() {
    let mut doc = doc_0_0_3();
    set(&mut doc, "/providers/nvidia/install-time", json!("yes"));
    only(
        &doc,
        "providers.nvidia.install-time: expected a boolean, found a string",
    );
    let mut doc = doc_0_0_3();
    set(&mut doc, "/providers/nvidia/optional", json!(1));
    only(
        &doc,
        "providers.nvidia.optional: expected a boolean, found a number",
    );
    let mut doc = doc_0_0_3();
    set(&mut doc, "/providers/nvidia", json!(["x"]));
    only(&doc, "providers.nvidia: expected an object, found a list");
    let mut doc = doc_0_0_3();
    set(&mut doc, "/providers", json!([]));
    only(&doc, "providers: expected an object, found a list");
    assert!(read_json_lenient(&doc.to_string(), SourceKind::IndexFile).is_err());
}

#[test]
fn unknown_provider_keys_are_errors() {
    let mut doc = doc_0_0_3();
    set(&mut doc, "/providers/nvidia/plugin-use", json!("all"));
    only(&doc, "providers.nvidia.plugin-use: unknown key (expected one of: enable-if, install-time, optional, plugin-api, requires)");
}

#[test]
fn providers_read_into_the_model() {
    let meta = read_json(&doc_0_0_3().to_string(), SourceKind::IndexFile).unwrap();
    let nvidia = &meta.providers["nvidia"];
    assert_eq!(nvidia.kind, ProviderKind::InstallTime);
    assert_eq!(
        nvidia.enable_if.as_ref().map(|m| m.as_str()),
        Some("platform_system == 'Linux'")
    );
    // Parsed once, when read: ranking evaluates it without parsing again.
    let linux = crate::markers::TargetEnvironment::from_platform(
        Some(&crate::Platform {
            system: Some("Linux".into()),
            ..Default::default()
        }),
        "3.12",
    )
    .unwrap();
    let enable_if = nvidia.enable_if.as_ref().unwrap();
    assert!(enable_if.evaluate(&linux, &crate::markers::VariantMarkerContext::non_variant()));
    assert_eq!(
        nvidia.effective_plugin_api().as_deref(),
        Some("nvidia_variant_provider")
    );
    assert_eq!(meta.providers["prio"].kind, ProviderKind::AheadOfTime);
}

// ---- static properties (0.0.3) --------------------------------------------------------

#[test]
fn ahead_of_time_namespaces_need_static_properties() {
    let mut doc = doc_0_0_3();
    remove(&mut doc, "/static-properties");
    only(&doc, "providers.prio: an ahead-of-time provider (install-time = false) needs its supported values in static-properties.prio");
}

#[test]
fn static_properties_with_several_features_need_a_feature_order() {
    let mut doc = doc_0_0_3();
    set(
        &mut doc,
        "/static-properties/prio",
        json!({"order": ["1"], "extra": ["a"]}),
    );
    only(&doc, "static-properties.prio: lists several features, so default-priorities.feature.prio must give their order (missing: extra, order)");
    set(
        &mut doc,
        "/default-priorities/feature",
        json!({"prio": ["order", "extra"]}),
    );
    let meta = read_json(&doc.to_string(), SourceKind::IndexFile).unwrap();
    let order: Vec<&str> = meta.static_properties["prio"]
        .iter()
        .map(|(f, _)| f.as_str())
        .collect();
    assert_eq!(order, ["order", "extra"]);
}

#[test]
fn static_properties_belong_to_ahead_of_time_providers() {
    let mut doc = doc_0_0_3();
    set(
        &mut doc,
        "/static-properties/nvidia",
        json!({"sm_arch": ["90_real"]}),
    );
    only(&doc, "static-properties.nvidia: namespace \"nvidia\" is not an ahead-of-time provider (providers.nvidia.install-time is not false)");
    let mut doc = doc_0_0_3();
    set(&mut doc, "/static-properties/ghost", json!({"f": ["1"]}));
    only(
        &doc,
        "static-properties.ghost: namespace \"ghost\" has no entry in providers",
    );
}

#[test]
fn static_values_are_non_empty_unique_names() {
    let mut doc = doc_0_0_3();
    set(&mut doc, "/static-properties/prio/order", json!([]));
    only(&doc, "static-properties.prio.order: must not be empty");
    set(&mut doc, "/static-properties/prio/order", json!(["1", "1"]));
    only(
        &doc,
        "static-properties.prio.order[1]: duplicate value \"1\"",
    );
    set(&mut doc, "/static-properties/prio", json!({}));
    only(
        &doc,
        "static-properties.prio: must list at least one feature",
    );
}

// ---- 0.0.2 ----------------------------------------------------------------------------

#[test]
fn plugin_use_none_and_build_are_ahead_of_time_with_values_from_property_priorities() {
    let meta = read_json(&doc_0_0_2().to_string(), SourceKind::IndexFile).unwrap();
    assert_eq!(meta.providers["prio"].kind, ProviderKind::AheadOfTime);
    assert_eq!(meta.providers["nvidia"].kind, ProviderKind::InstallTime);
    let values: Vec<&str> = meta.static_properties["prio"][0]
        .1
        .iter()
        .map(|v| v.as_str())
        .collect();
    assert_eq!(values, ["1", "2", "3"]);
    assert!(meta.priorities.property.is_empty());

    let mut doc = doc_0_0_2();
    set(
        &mut doc,
        "/providers/prio",
        json!({"plugin-use": "build", "requires": ["prio-plugin"]}),
    );
    let meta = read_json(&doc.to_string(), SourceKind::IndexFile).unwrap();
    assert_eq!(meta.providers["prio"].build_requires, ["prio-plugin"]);
    assert!(meta.providers["prio"].requires.is_empty());
}

#[test]
fn plugin_use_must_be_none_build_or_all() {
    let mut doc = doc_0_0_2();
    set(&mut doc, "/providers/prio/plugin-use", json!("sometimes"));
    let e = errors(&doc);
    assert_eq!(
        e[0],
        "providers.prio.plugin-use: expected \"none\", \"build\" or \"all\", found \"sometimes\""
    );
}

#[test]
fn plugin_use_all_needs_requirements() {
    let mut doc = doc_0_0_2();
    set(&mut doc, "/providers/nvidia/requires", json!([]));
    only(&doc, "providers.nvidia.requires: an install-time provider (plugin-use = \"all\") must list at least one requirement");
}

#[test]
fn ahead_of_time_0_0_2_needs_property_values() {
    let mut doc = doc_0_0_2();
    remove(&mut doc, "/default-priorities/property");
    only(&doc, "providers.prio: an ahead-of-time provider (plugin-use = \"none\" or \"build\") needs its supported values in default-priorities.property.prio");
}

#[test]
fn ahead_of_time_0_0_2_with_several_features_needs_their_order() {
    let mut doc = doc_0_0_2();
    set(
        &mut doc,
        "/default-priorities/property/prio/extra",
        json!(["a"]),
    );
    only(&doc, "default-priorities.property.prio: an ahead-of-time namespace with several features needs their order in default-priorities.feature.prio (missing: extra, order)");
    set(
        &mut doc,
        "/default-priorities/feature",
        json!({"prio": ["order", "extra", "unused"]}),
    );
    let meta = read_json(&doc.to_string(), SourceKind::IndexFile).unwrap();
    let order: Vec<&str> = meta.static_properties["prio"]
        .iter()
        .map(|(f, _)| f.as_str())
        .collect();
    assert_eq!(order, ["order", "extra"]);
}

// ---- 0.2 ------------------------------------------------------------------------------

#[test]
fn providers_0_2_read_into_the_model() {
    let meta = read_json(&doc_0_2().to_string(), SourceKind::IndexFile).unwrap();
    assert_eq!(meta.providers["nvidia"].kind, ProviderKind::InstallTime);
    assert_eq!(meta.providers["prio"].kind, ProviderKind::AheadOfTime);
    assert_eq!(
        meta.providers["cpu"].kind,
        ProviderKind::Builtin("x86_64".into())
    );
    assert!(meta.providers["cpu"].optional);
    let order: Vec<&str> = meta.static_properties["prio"]
        .iter()
        .map(|(f, _)| f.as_str())
        .collect();
    assert_eq!(order, ["b", "a"]);
}

#[test]
fn a_0_2_provider_has_exactly_one_kind() {
    let mut doc = doc_0_2();
    set(&mut doc, "/providers/cpu/requires", json!(["x"]));
    only(&doc, "providers.cpu: exactly one of requires, build-requires, static-properties or builtin must be given (found: requires, builtin)");
    set(&mut doc, "/providers/cpu", json!({"optional": true}));
    only(&doc, "providers.cpu: exactly one of requires, build-requires, static-properties or builtin must be given (found: none)");
}

#[test]
fn build_requires_only_in_pyproject() {
    let mut doc = doc_0_2();
    set(
        &mut doc,
        "/providers/prio",
        json!({"build-requires": ["prio-plugin"]}),
    );
    only(&doc, "providers.prio.build-requires: is only allowed in pyproject.toml (a built wheel carries static-properties instead)");
}

#[test]
fn plugin_api_only_with_a_plugin_in_0_2() {
    let mut doc = doc_0_2();
    set(&mut doc, "/providers/cpu/plugin-api", json!("x:Y"));
    only(
        &doc,
        "providers.cpu.plugin-api: is only allowed with requires or build-requires",
    );
}

#[test]
fn feature_order_rules_in_0_2() {
    let mut doc = doc_0_2();
    remove(&mut doc, "/providers/prio/feature-order");
    only(&doc, "providers.prio.feature-order: is required when static-properties lists more than one feature");
    set(&mut doc, "/providers/prio/feature-order", json!(["b", "c"]));
    only(&doc, "providers.prio.feature-order: must list every feature of static-properties (missing: a; not in static-properties: c)");
    set(&mut doc, "/providers/cpu/feature-order", json!(["a"]));
    set(&mut doc, "/providers/prio/feature-order", json!(["b", "a"]));
    only(
        &doc,
        "providers.cpu.feature-order: is only allowed with static-properties",
    );
}

#[test]
fn requires_in_0_2_is_non_empty() {
    let mut doc = doc_0_2();
    set(&mut doc, "/providers/nvidia/requires", json!([]));
    let e = errors(&doc);
    assert!(
        e.contains(&"providers.nvidia.requires: must list at least one requirement".to_owned()),
        "{e:?}"
    );
}

#[test]
fn builtin_is_a_non_empty_string() {
    let mut doc = doc_0_2();
    set(&mut doc, "/providers/cpu/builtin", json!(""));
    only(&doc, "providers.cpu.builtin: must not be empty");
    set(&mut doc, "/providers/cpu/builtin", json!(["x86_64"]));
    only(
        &doc,
        "providers.cpu.builtin: expected a string, found a list",
    );
}

#[test]
fn unknown_keys_in_0_2_providers_are_errors() {
    let mut doc = doc_0_2();
    set(&mut doc, "/providers/nvidia/install-time", json!(true));
    only(&doc, "providers.nvidia.install-time: unknown key (expected one of: build-requires, builtin, enable-if, feature-order, optional, plugin-api, requires, static-properties)");
}

// ---- lenient reading ------------------------------------------------------------------

#[test]
fn lenient_reading_drops_bad_variants_and_keeps_the_rest() {
    let mut doc = doc_0_0_3();
    set(
        &mut doc,
        "/variants/bad",
        json!({"nvidia": {"sm_arch": ["9 0"]}}),
    );
    set(
        &mut doc,
        "/variants/other",
        json!({"amd": {"gfx_arch": ["gfx90a"]}}),
    );
    let strict = errors(&doc);
    assert_eq!(strict.len(), 2);
    let (meta, warnings) = read_json_lenient(&doc.to_string(), SourceKind::IndexFile).unwrap();
    let shown: Vec<String> = warnings.iter().map(ToString::to_string).collect();
    assert_eq!(shown, strict);
    let labels: Vec<&str> = meta.variants.keys().map(|l| l.as_str()).collect();
    assert_eq!(labels, ["cu128", "null"]);
}

#[test]
fn lenient_reading_fails_on_broken_priorities_or_providers() {
    let mut doc = doc_0_0_3();
    set(&mut doc, "/default-priorities/namespace", json!(["nvidia"]));
    let e = read_json_lenient(&doc.to_string(), SourceKind::IndexFile).unwrap_err();
    assert_eq!(
        e[0].to_string(),
        "providers.prio: namespace \"prio\" is not listed in default-priorities.namespace"
    );
    let mut doc = doc_0_0_3();
    set(&mut doc, "/providers/nvidia/requires", json!([]));
    assert!(read_json_lenient(&doc.to_string(), SourceKind::IndexFile).is_err());
}

// ---- pyproject.toml -------------------------------------------------------------------

#[test]
fn pyproject_is_read_with_variant_prefixed_paths() {
    let toml = r#"
[project]
name = "x"

[variant.default-priorities]
namespace = ["x86_64", "blas"]
feature.x86_64 = ["level"]
property.x86_64.level = ["v3", "v2"]

[variant.providers.x86_64]
requires = ["provider-variant-x86-64 >=0.0.1"]
enable-if = "platform_machine == 'x86_64'"

[variant.providers.blas]
requires = ["blas-lapack-variant-provider"]
install-time = false
"#;
    let meta = read_pyproject(toml).unwrap();
    assert_eq!(meta.generation, SchemaGeneration::V0_0_3);
    assert!(meta.variants.is_empty());
    assert_eq!(
        meta.providers["blas"].build_requires,
        ["blas-lapack-variant-provider"]
    );

    let bad = toml.replace(
        "requires = [\"provider-variant-x86-64 >=0.0.1\"]",
        "requires = []",
    );
    assert_eq!(
        read_pyproject(&bad).unwrap_err().iter().map(ToString::to_string).collect::<Vec<_>>(),
        ["variant.providers.x86_64.requires: an install-time provider (install-time = true) must list at least one requirement"]
    );
}

#[test]
fn pyproject_aot_without_plugin_needs_static_properties() {
    let toml = r#"
[variant.default-priorities]
namespace = ["blas"]
[variant.providers.blas]
install-time = false
"#;
    let e = read_pyproject(toml).unwrap_err();
    assert_eq!(e[0].to_string(), "variant.providers.blas: an ahead-of-time provider (install-time = false) needs static-properties.blas or a build-time plugin in requires");
    let ok = format!("{toml}[variant.static-properties.blas]\nlibrary = [\"mkl\", \"openblas\"]\n");
    assert_eq!(
        read_pyproject(&ok).unwrap().static_properties["blas"][0]
            .1
            .len(),
        2
    );
}

#[test]
fn pyproject_0_2_allows_build_requires() {
    let toml = r#"
[variant.default-priorities]
namespace = ["blas"]
[variant.providers.blas]
build-requires = ["blas-plugin"]
"#;
    let meta = read_pyproject(toml).unwrap();
    assert_eq!(meta.generation, SchemaGeneration::V0_2);
    assert_eq!(meta.providers["blas"].kind, ProviderKind::AheadOfTime);
    assert_eq!(
        meta.providers["blas"].effective_plugin_api().as_deref(),
        Some("blas_plugin")
    );
}

#[test]
fn pyproject_must_not_list_variants_and_must_have_the_table() {
    let toml = "[variant.default-priorities]\nnamespace = []\n[variant.variants]\n";
    assert_eq!(
        read_pyproject(toml).unwrap_err()[0].to_string(),
        "variant.variants: pyproject.toml must not list variants (they belong in variant.json and *-variants.json)"
    );
    assert_eq!(
        read_pyproject("[project]\nname = \"x\"\n").unwrap_err()[0].to_string(),
        "variant: pyproject.toml has no [variant] table"
    );
    let e = read_pyproject("[variant\n").unwrap_err();
    assert!(e[0].message.starts_with("invalid TOML: "), "{}", e[0]);
    assert_eq!(
        read_pyproject("variant = 3\n").unwrap_err()[0].to_string(),
        "variant: expected an object, found a number"
    );
}

// ---- speed ----------------------------------------------------------------------------

#[test]
fn large_files_read_in_linear_time() {
    // 4,000 variants × 20 properties: a quadratic step would make this take seconds.
    let mut variants = serde_json::Map::new();
    for i in 0..4000 {
        let features: serde_json::Map<String, Value> = (0..20)
            .map(|f| (format!("f{f}"), json!([format!("v{}", (i + f) % 7)])))
            .collect();
        variants.insert(format!("l{i}"), json!({ "ns": features }));
    }
    let doc =
        json!({"$schema": V01, "default-priorities": {"namespace": ["ns"]}, "variants": variants});
    let text = doc.to_string();
    let start = std::time::Instant::now();
    let meta = read_json(&text, SourceKind::IndexFile).unwrap();
    assert_eq!(meta.variants.len(), 4000);
    assert!(start.elapsed().as_secs_f64() < 5.0, "{:?}", start.elapsed());
}

#[test]
fn abi_dependency_needs_no_provider_or_priority_in_the_drafts() {
    let mut doc = doc_0_0_3();
    set(
        &mut doc,
        "/variants/torch28",
        json!({"abi_dependency": {"torch": ["2.8", "2.9.0"]}, "nvidia": {"sm_arch": ["90_real"]}}),
    );
    let meta = read_json(&doc.to_string(), SourceKind::IndexFile).unwrap();
    assert!(meta.variants.keys().any(|l| l.as_str() == "torch28"));
    // PEP 825 has no providers: there the namespace must be listed like any other.
    let mut doc = doc_0_1();
    set(
        &mut doc,
        "/variants/t",
        json!({"abi_dependency": {"torch": ["2"]}}),
    );
    only(
        &doc,
        "variants.t.abi_dependency: namespace \"abi_dependency\" is not listed in default-priorities.namespace",
    );
}

#[test]
fn abi_dependency_must_not_have_a_provider() {
    let mut doc = doc_0_0_3();
    set(
        &mut doc,
        "/providers/abi_dependency",
        json!({"requires": ["abi-provider"]}),
    );
    set(
        &mut doc,
        "/default-priorities/namespace",
        json!(["nvidia", "prio", "abi_dependency"]),
    );
    only(
        &doc,
        "providers.abi_dependency: the abi_dependency namespace is reserved for ABI dependencies and must not have a provider (PEP 817)",
    );
}

#[test]
fn abi_dependency_values_are_short_releases() {
    for (value, ok) in [
        ("2", true),
        ("2.9", true),
        ("2.8.0", true),
        ("2.8.0.1", false),
        ("2.x", false),
        ("2..1", false),
    ] {
        let mut doc = doc_0_0_3();
        set(
            &mut doc,
            "/variants/t",
            json!({"abi_dependency": {"torch": [value]}}),
        );
        let errs = errors(&doc);
        if ok {
            assert!(errs.is_empty(), "{value}: {errs:?}");
        } else {
            assert_eq!(
                errs,
                [format!("variants.t.abi_dependency.torch: abi_dependency value {value:?} must be a release of one to three numbers (like 2, 2.9 or 2.8.0)")],
                "{value}"
            );
        }
    }
}

#[test]
fn labels_over_16_characters_are_errors_in_the_0_0_x_drafts_only() {
    // Found by the metadata fuzz target: such a file was read but could not be written back.
    let long = "a_label_of_17_chr";
    for (mut doc, capped) in [
        (doc_0_0_2(), true),
        (doc_0_0_3(), true),
        (doc_0_1(), false),
        (doc_0_2(), false),
    ] {
        set(&mut doc, &format!("/variants/{long}"), json!({}));
        remove(&mut doc, "/variants/null");
        let errs = errors(&doc);
        if capped {
            let g = doc["$schema"].as_str().unwrap();
            let g = if g.contains("0.0.2") {
                "0.0.2"
            } else {
                "0.0.3"
            };
            assert_eq!(
                errs,
                [format!("variants.{long}: the label is 17 characters long; schema {g} allows at most 16")]
            );
        } else {
            // Only the null-label rule applies (the entry has no properties).
            assert_eq!(
                errs,
                [format!(
                    "variants.{long}: the null variant must use the label \"null\""
                )]
            );
        }
    }
}

#[test]
fn deeply_nested_documents_are_errors_not_stack_overflows() {
    // JSON: serde_json stops at 128 levels, and skips what it does not build without
    // recursing; the compactor does not recurse either. An error every time, never a crash.
    let json = format!(
        "{{\"variants\": {}{}}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    for kind in [SourceKind::IndexFile, SourceKind::WheelFile] {
        assert!(read_json(&json, kind).is_err());
        assert!(read_json_lenient(&json, kind).is_err());
    }
    let mut compact = CompactJson::default();
    compact.push(json.as_bytes());
    assert!(read_compact_json_lenient(compact, SourceKind::IndexFile).is_err());
    let e = crate::Profile::read_json(&json).unwrap_err();
    assert!(e.message.contains("recursion limit exceeded"), "{e}");

    // TOML: arrays, and inline tables of dotted keys inside each other, which the toml crate's
    // own limit lets through (they overflowed the stack).
    let key = ["b"; 78].join(".");
    let mut tables = format!("[variant]\n{key} = ");
    for _ in 0..78 {
        tables.push_str(&format!("{{{key} = "));
    }
    tables.push('1');
    tables.push_str(&"}".repeat(78));
    let arrays = format!("[variant]\nx = {}", "[".repeat(100_000));
    for text in [tables, arrays] {
        let errors = read_pyproject(&text).unwrap_err();
        assert_eq!(errors.len(), 1);
        let message = errors[0].to_string();
        assert!(
            message.starts_with("invalid TOML: nested ")
                && message
                    .contains("levels deep, more than the limit of 64 (first exceeded on line 2)"),
            "{message}"
        );
    }
}

#[test]
fn pep_850_providers_have_no_enable_if_and_variantlib_s_may() {
    const PEP_850: &str = "https://variants-schema.wheelnext.dev/peps/850/v0.2.0.json";
    let doc = |url: &str| {
        json!({
            "$schema": url,
            "default-priorities": {"namespace": ["nvidia"]},
            "providers": {"nvidia": {"requires": ["nvidia-variant-provider"], "enable-if": "platform_system == 'Linux'"}},
            "variants": {"null": {}}
        })
    };
    let e = errors(&doc(PEP_850));
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].starts_with("providers.nvidia.enable-if: is not part of PEP 850's providers schema"),
        "{e:?}"
    );
    assert_eq!(errors(&doc(V02)), Vec::<String>::new());
    // Without enable-if both read, to the same generation.
    let mut plain = doc(PEP_850);
    plain["providers"]["nvidia"]
        .as_object_mut()
        .unwrap()
        .remove("enable-if");
    let meta = read_json(&plain.to_string(), SourceKind::IndexFile).unwrap();
    assert_eq!(meta.generation, SchemaGeneration::V0_2);
}
