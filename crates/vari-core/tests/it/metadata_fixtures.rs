//! The metadata reader and writer against real-world files of every generation found in the
//! wild (`testdata/variants-json/` at the workspace root).

use std::fs;
use std::path::PathBuf;

use vari_core::markers::TargetEnvironment;
use vari_core::metadata::{
    read_json, read_json_lenient, read_json_with_warnings, write_json, write_json_as,
    SchemaGeneration, SchemaUrl, SourceKind, VariantMetadata,
};
use vari_core::ordering::{rank, SelectionOptions};
use vari_core::Profile;

fn data(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/variants-json")
        .join(name);
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

const VALID: [(&str, SchemaGeneration); 5] = [
    ("torch-2.9.0-variants.json", SchemaGeneration::V0_0_2),
    ("torch-2.10.0-variants.json", SchemaGeneration::V0_0_3),
    (
        "dummy_project-1.0.0-variants.json",
        SchemaGeneration::V0_0_3,
    ),
    (
        "sandbox_project-1.0.0-variants.json",
        SchemaGeneration::V0_0_3,
    ),
    ("test_package-0-variants.json", SchemaGeneration::V0_0_3),
];

fn read(name: &str) -> VariantMetadata {
    read_json(&data(name), SourceKind::IndexFile)
        .unwrap_or_else(|errors| panic!("{name}: {errors:?}"))
}

#[test]
fn every_data_file_is_covered() {
    let mut names: Vec<String> = fs::read_dir(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/variants-json"),
    )
    .unwrap()
    .map(|e| e.unwrap().file_name().into_string().unwrap())
    .filter(|n| n.ends_with(".json"))
    .collect();
    names.sort();
    let mut known: Vec<String> = VALID.iter().map(|(n, _)| n.to_string()).collect();
    known.push("torch-2.8.0-variants.json".to_owned());
    known.sort();
    assert_eq!(names, known);
}

#[test]
fn valid_files_parse_in_their_generation() {
    for (name, generation) in VALID {
        let meta = read(name);
        assert_eq!(meta.generation, generation, "{name}");
        assert!(!meta.variants.is_empty(), "{name}");
        assert!(meta.variants.contains_key("null"), "{name}");
    }
}

#[test]
fn torch_2_8_keeps_its_cpu_build_labelled_00000000() {
    let text = data("torch-2.8.0-variants.json");
    let (meta, warnings) = read_json_with_warnings(&text, SourceKind::IndexFile).unwrap();
    let shown: Vec<String> = warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
        shown,
        [
            r#"variants.00000000: the null variant should use the label "null"; read as the null variant (written as "null")"#
        ]
    );
    assert_eq!(
        meta.generation,
        SchemaGeneration::V0_0_3,
        "inferred from the keys"
    );
    // Wheels of that release carry `00000000`: the label stays, and it is the null variant.
    assert_eq!(meta.null_variant().map(|l| l.as_str()), Some("00000000"));
    let labels: Vec<&str> = meta.variants.keys().map(|l| l.as_str()).collect();
    assert_eq!(labels, ["00000000", "cu126", "cu128", "cu129"]);
    assert!(read_json(&text, SourceKind::IndexFile).is_ok());
    let (lenient, same) = read_json_lenient(&text, SourceKind::IndexFile).unwrap();
    assert_eq!((&lenient, &same), (&meta, &warnings));

    // On a machine without NVIDIA support the CPU build is the one selectable, last as the
    // null variant always is.
    let env = TargetEnvironment::from_platform(None, "3.12").unwrap();
    let ranking = rank(&meta, &Profile::empty(), &env, &SelectionOptions::default());
    let order: Vec<&str> = ranking.order.iter().map(|l| l.as_str()).collect();
    assert_eq!(order, ["00000000"]);

    // Written strictly: `null`.
    let written = write_json(&meta, SchemaGeneration::V0_0_3).unwrap();
    let again = read_json(&written.text, SourceKind::IndexFile).unwrap();
    assert_eq!(again.null_variant().map(|l| l.as_str()), Some("null"));
    assert!(!written.text.contains("00000000"));
}

#[test]
fn torch_2_9_ahead_of_time_values_come_from_property_priorities() {
    let meta = read("torch-2.9.0-variants.json");
    let statics = &meta.static_properties["priority"];
    assert_eq!(statics.len(), 1);
    assert_eq!(statics[0].0.as_str(), "order");
    let values: Vec<&str> = statics[0].1.iter().map(|v| v.as_str()).collect();
    assert_eq!(values, ["1", "2", "3"]);
    assert!(
        meta.priorities.property.is_empty(),
        "moved into static properties"
    );
}

#[test]
fn torch_2_9_converts_to_the_shape_of_torch_2_10() {
    let nine = read("torch-2.9.0-variants.json");
    let written = write_json(&nine, SchemaGeneration::V0_0_3).unwrap();
    assert!(written.warnings.is_empty(), "{:?}", written.warnings);
    let converted = read_json(&written.text, SourceKind::IndexFile).unwrap();
    let ten = read("torch-2.10.0-variants.json");
    assert_eq!(
        converted.providers.keys().collect::<Vec<_>>(),
        ten.providers.keys().collect::<Vec<_>>()
    );
    assert_eq!(converted.static_properties, ten.static_properties);
    assert_eq!(converted.priorities, ten.priorities);
    assert_eq!(converted.providers["priority"], ten.providers["priority"]);
}

#[test]
fn round_trip_is_identity_in_every_generation() {
    for (name, _) in VALID {
        let meta = read(name);
        for generation in SchemaGeneration::ALL {
            let Ok(written) = write_json(&meta, generation) else {
                continue;
            };
            let once = read_json(&written.text, SourceKind::IndexFile)
                .unwrap_or_else(|e| panic!("{name} as {generation}: {e:?}\n{}", written.text));
            let again = write_json(&once, generation).unwrap();
            assert_eq!(again.text, written.text, "{name} as {generation}");
            let twice = read_json(&again.text, SourceKind::IndexFile).unwrap();
            assert_eq!(twice, once, "{name} as {generation}");
        }
        // Written back in its own generation, the model is unchanged (but for the URL).
        let own = write_json(&meta, meta.generation).unwrap();
        assert!(own.warnings.is_empty(), "{name}: {:?}", own.warnings);
        let mut back = read_json(&own.text, SourceKind::IndexFile).unwrap();
        back.schema_url = meta.schema_url.clone();
        assert_eq!(back, meta, "{name}");
    }
}

#[test]
fn converting_0_0_3_to_0_2_and_back_keeps_selection_data() {
    for name in [
        "torch-2.10.0-variants.json",
        "test_package-0-variants.json",
        "sandbox_project-1.0.0-variants.json",
    ] {
        let meta = read(name);
        // variantlib's 0.2 keeps enable-if; PEP 850's (the default) drops it, with a warning.
        let pep_850 = write_json(&meta, SchemaGeneration::V0_2).unwrap();
        let with_enable_if = meta.providers.values().any(|p| p.enable_if.is_some());
        assert_eq!(
            pep_850.warnings.iter().any(|w| w.contains(".enable-if")),
            with_enable_if,
            "{name}: {:?}",
            pep_850.warnings
        );
        let two = write_json_as(&meta, SchemaGeneration::V0_2, SchemaUrl::Variantlib).unwrap();
        assert!(two.warnings.is_empty(), "{name}: {:?}", two.warnings);
        let two = read_json(&two.text, SourceKind::IndexFile).unwrap();
        assert_eq!(two.generation, SchemaGeneration::V0_2);
        let back = write_json(&two, SchemaGeneration::V0_0_3).unwrap();
        let mut back = read_json(&back.text, SourceKind::IndexFile).unwrap();
        back.schema_url = meta.schema_url.clone();
        assert_eq!(back, meta, "{name}");
    }
}

#[test]
fn feature_priorities_of_plugins_are_a_warning_when_writing_0_2() {
    let meta = read("dummy_project-1.0.0-variants.json");
    let written = write_json_as(&meta, SchemaGeneration::V0_2, SchemaUrl::Variantlib).unwrap();
    assert_eq!(written.warnings.len(), 2, "{:?}", written.warnings);
    assert!(written.warnings[0]
        .starts_with("dropped default-priorities.feature for fictional_hw, fictional_tech: "));
    assert!(
        written.warnings[1].starts_with("dropped default-priorities.property for fictional_tech: ")
    );
    let two = read_json(&written.text, SourceKind::IndexFile).unwrap();
    assert_eq!(two.variants, meta.variants);
    assert_eq!(two.providers, meta.providers);
}

#[test]
fn writing_0_1_drops_providers_with_a_warning() {
    let meta = read("torch-2.10.0-variants.json");
    let written = write_json(&meta, SchemaGeneration::V0_1).unwrap();
    assert_eq!(
        written.warnings,
        [
            "dropped providers for amd, intel, nvidia, priority: schema 0.1.x cannot express them",
            "dropped static-properties for priority: schema 0.1.x cannot express them",
        ]
    );
    let one = read_json(&written.text, SourceKind::IndexFile).unwrap();
    assert_eq!(one.generation, SchemaGeneration::V0_1);
    assert_eq!(one.variants, meta.variants);
    assert_eq!(one.priorities.namespace, meta.priorities.namespace);
    assert!(one.providers.is_empty());
}
