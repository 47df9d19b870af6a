//! `make_variant`, `unmake` and `validate` on generated wheels.

use std::path::Path;

use vari_core::metadata::{read_pyproject, SchemaGeneration};
use vari_core::{FeatureSupport, Namespace, Property, VariantLabel};
use vari_wheel::{
    inspect, make_variant, unmake, validate, LabelChoice, ValidValues, VariantSpec, WheelErrorKind,
};

use crate::support::{member, members, plain_wheel, testdata};

fn valid() -> ValidValues {
    let mut v = ValidValues::default();
    v.insert(
        Namespace::new("x86_64").unwrap(),
        vec![FeatureSupport {
            name: "level".parse().unwrap(),
            values: ["v4", "v3", "v2", "v1"]
                .iter()
                .map(|s| s.parse().unwrap())
                .collect(),
            multi_value: false,
        }],
    );
    v
}

fn props(list: &[&str]) -> Vec<Property> {
    list.iter().map(|p| p.parse().unwrap()).collect()
}

fn spec(list: &[&str]) -> VariantSpec {
    VariantSpec {
        properties: props(list),
        ..VariantSpec::default()
    }
}

use vari_test_support::paths::file_names as files_in;

#[test]
fn make_variant_copies_members_raw_and_unmake_gives_the_plain_wheel_back() {
    let dir = tempfile::tempdir().unwrap();
    let input = plain_wheel(dir.path(), "demo", "1.0", "py3-none-any", &[]);
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let made = make_variant(&input, &out, &spec(&["x86_64 :: level :: v3"]), &valid()).unwrap();

    let label = vari_core::label::default_label(&props(&["x86_64 :: level :: v3"]));
    assert_eq!(made.label.as_ref(), Some(&label));
    assert_eq!(
        made.path,
        out.join(format!("demo-1.0-py3-none-any-{label}.whl"))
    );
    let before = members(&input);
    let after = members(&made.path);
    // Same order, variant.json inserted just before RECORD.
    let names: Vec<&str> = after.iter().map(|m| m.name.as_str()).collect();
    let mut expected: Vec<&str> = before.iter().map(|m| m.name.as_str()).collect();
    expected.insert(expected.len() - 1, "demo-1.0.dist-info/variant.json");
    assert_eq!(names, expected);
    // Every unchanged member: the same compressed bytes, method, timestamp and mode.
    for m in before.iter().filter(|m| !m.name.ends_with("RECORD")) {
        assert_eq!(member(&after, &m.name), m, "{}", m.name);
    }
    let record = member(&after, "demo-1.0.dist-info/RECORD");
    let original_record = member(&before, "demo-1.0.dist-info/RECORD");
    assert_eq!(record.modified, original_record.modified);
    assert_eq!(record.mode, original_record.mode);

    let info = inspect(&made.path).unwrap();
    assert_eq!(info.filename.label.as_ref(), Some(&label));
    let v = validate(&made.path).unwrap();
    assert!(v.is_ok(), "{:?}", v.problems);
    assert_eq!(v.record.unwrap().verified.len(), 6);

    // Deterministic: the same input and spec give the same bytes.
    let again = dir.path().join("again");
    std::fs::create_dir(&again).unwrap();
    let second = make_variant(&input, &again, &spec(&["x86_64 :: level :: v3"]), &valid()).unwrap();
    assert_eq!(
        std::fs::read(&made.path).unwrap(),
        std::fs::read(&second.path).unwrap()
    );

    let plain_dir = dir.path().join("plain");
    std::fs::create_dir(&plain_dir).unwrap();
    let plain = unmake(&made.path, &plain_dir).unwrap();
    assert_eq!(plain.path, plain_dir.join("demo-1.0-py3-none-any.whl"));
    let back = members(&plain.path);
    assert_eq!(back.len(), before.len());
    for (b, a) in before.iter().zip(&back) {
        assert_eq!(a.name, b.name);
        assert_eq!(a.contents, b.contents, "{}", a.name);
        assert_eq!(a.modified, b.modified, "{}", a.name);
        assert_eq!(a.mode, b.mode, "{}", a.name);
    }
    assert!(validate(&plain.path).unwrap().is_ok());
}

#[test]
fn the_written_variant_json_is_valid_pep_825_0_1_1() {
    let dir = tempfile::tempdir().unwrap();
    let input = plain_wheel(dir.path(), "demo", "1.0", "py3-none-any", &[]);
    let made = make_variant(
        &input,
        dir.path(),
        &spec(&["x86_64 :: level :: v3"]),
        &valid(),
    )
    .unwrap();
    let label = made.label.unwrap();
    let all = members(&made.path);
    let json = &member(&all, "demo-1.0.dist-info/variant.json").contents;
    let instance: serde_json::Value = serde_json::from_slice(json).unwrap();
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testdata/schema/pep-0825-variant-schema-0.1.1.json"
        ))
        .expect("the PEP 825 schema (testdata/schema/pep-0825-variant-schema-0.1.1.json)"),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&instance)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}\n{instance:#}");
    assert_eq!(
        instance["variants"][label.as_str()]["x86_64"]["level"],
        serde_json::json!(["v3"])
    );
}

#[test]
fn labels_null_and_given() {
    let dir = tempfile::tempdir().unwrap();
    let input = plain_wheel(dir.path(), "demo", "1.0", "py3-none-any", &[]);
    let given = VariantSpec {
        label: LabelChoice::Given(VariantLabel::new("v3").unwrap()),
        ..spec(&["x86_64 :: level :: v3"])
    };
    let made = make_variant(&input, dir.path(), &given, &valid()).unwrap();
    assert!(made.path.ends_with("demo-1.0-py3-none-any-v3.whl"));

    let metadata = read_pyproject(
        "[variant.default-priorities]\nnamespace = [\"x86_64\"]\n\
         [variant.providers.x86_64]\nrequires = [\"provider-variant-x86-64\"]\n",
    )
    .unwrap();
    let null = VariantSpec {
        label: LabelChoice::Null,
        metadata: Some(metadata),
        ..VariantSpec::default()
    };
    let made = make_variant(&input, dir.path(), &null, &valid()).unwrap();
    assert!(made.path.ends_with("demo-1.0-py3-none-any-null.whl"));
    let info = inspect(&made.path).unwrap();
    assert!(info.filename.is_null_variant());
    // Without a schema, the metadata's generation is kept (a pyproject reads as 0.2 or 0.0.3).
    assert!(info.metadata.unwrap().generation.has_providers());
}

#[test]
fn bad_input_leaves_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let input = plain_wheel(dir.path(), "demo", "1.0", "py3-none-any", &[]);
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();

    let e = make_variant(&input, &out, &spec(&["x86_64 :: level :: v9"]), &valid()).unwrap_err();
    assert!(matches!(*e.kind, WheelErrorKind::InvalidProperties { .. }));
    assert!(
        e.to_string()
            .contains("`x86_64 :: level :: v9`: not a valid value"),
        "{e}"
    );
    let e = make_variant(&input, &out, &spec(&["acme :: f :: v"]), &valid()).unwrap_err();
    assert!(
        e.to_string().contains("`acme`: no built-in provider"),
        "{e}"
    );
    let skip = VariantSpec {
        skip_validation: true,
        ..spec(&["acme :: f :: v"])
    };
    let made = make_variant(&input, &out, &skip, &valid()).unwrap();
    assert!(made.warnings[0].contains("acme"), "{:?}", made.warnings);
    std::fs::remove_file(&made.path).unwrap();

    let e = make_variant(
        &made_twice(&input, dir.path()),
        &out,
        &spec(&["x86_64 :: level :: v3"]),
        &valid(),
    )
    .unwrap_err();
    assert!(
        matches!(*e.kind, WheelErrorKind::AlreadyVariant { .. }),
        "{e}"
    );

    // A missing output directory is created, as pip and build do; a bad input creates none.
    let missing = dir.path().join("no-such-dir").join("nested");
    let e = make_variant(&input, &missing, &spec(&["acme :: f :: v"]), &valid()).unwrap_err();
    assert!(
        matches!(*e.kind, WheelErrorKind::InvalidProperties { .. }),
        "{e}"
    );
    assert!(!dir.path().join("no-such-dir").exists());
    let made = make_variant(
        &input,
        &missing,
        &spec(&["x86_64 :: level :: v3"]),
        &valid(),
    )
    .unwrap();
    assert_eq!(made.path.parent(), Some(missing.as_path()));
    let plain = missing.join("plain");
    let unmade = vari_wheel::unmake(&made.path, &plain).unwrap();
    assert_eq!(unmade.path.parent(), Some(plain.as_path()));

    let as_dir = dir.path().join("dir-1.0-py3-none-any.whl");
    std::fs::create_dir(&as_dir).unwrap();
    let e = inspect(&as_dir).unwrap_err();
    assert!(e.to_string().contains("is a directory"), "{e}");

    assert!(files_in(&out).is_empty(), "{:?}", files_in(&out));
}

/// A variant wheel made from `input` (for the "already a variant" check).
fn made_twice(input: &Path, dir: &Path) -> std::path::PathBuf {
    let sub = dir.join("first");
    std::fs::create_dir_all(&sub).unwrap();
    make_variant(input, &sub, &spec(&["x86_64 :: level :: v2"]), &valid())
        .unwrap()
        .path
}

#[test]
fn validate_reports_every_record_problem_as_data() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let good = plain_wheel(dir.path(), "demo", "1.0", "py3-none-any", &[]);
    assert!(validate(&good).unwrap().is_ok());

    // Tamper: change a member's contents, add an unlisted member, drop a listed one.
    let original = members(&good);
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default();
    for m in &original {
        if m.name == "demo/__init__.py" {
            continue;
        }
        zip.start_file(m.name.as_str(), options).unwrap();
        if m.name.ends_with("_native.so") {
            zip.write_all(b"changed").unwrap();
        } else {
            zip.write_all(&m.contents).unwrap();
        }
    }
    zip.start_file("demo/extra.py", options).unwrap();
    zip.write_all(b"x").unwrap();
    let bad = dir.path().join("bad").join("demo-1.0-py3-none-any.whl");
    std::fs::create_dir(bad.parent().unwrap()).unwrap();
    std::fs::write(&bad, zip.finish().unwrap().into_inner()).unwrap();

    let v = validate(&bad).unwrap();
    let text: Vec<String> = v.problems.iter().map(ToString::to_string).collect();
    assert_eq!(v.problems.len(), 3, "{text:#?}");
    assert!(
        matches!(v.problems[0], WheelErrorKind::HashMismatch { ref member, .. } if member == "demo/_native.so")
    );
    assert!(
        matches!(v.problems[1], WheelErrorKind::NotInRecord { ref member, .. } if member == "demo/extra.py")
    );
    assert!(
        matches!(v.problems[2], WheelErrorKind::MissingFromArchive { ref member, .. } if member == "demo/__init__.py")
    );
    // inspect reads only RECORD and variant.json: the plain wheel still inspects.
    assert!(inspect(&bad).is_ok());
}

#[test]
fn variantlib_fixture_wheels_validate() {
    for entry in std::fs::read_dir(testdata("wheels")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "whl") {
            let v = validate(&path).unwrap();
            assert!(v.is_ok(), "{}: {:?}", path.display(), v.problems);
        }
    }
}

#[test]
fn schema_0_2_for_variantlib() {
    let dir = tempfile::tempdir().unwrap();
    let input = plain_wheel(dir.path(), "demo", "1.0", "py3-none-any", &[]);
    let metadata = read_pyproject(
        "[variant.default-priorities]\nnamespace = [\"x86_64\"]\n\
         [variant.providers.x86_64]\nrequires = [\"provider-variant-x86-64\"]\n\
         enable-if = \"platform_machine == 'x86_64'\"\n",
    )
    .unwrap();
    let s = VariantSpec {
        metadata: Some(metadata),
        schema: Some(SchemaGeneration::V0_2),
        ..spec(&["x86_64 :: level :: v3"])
    };
    let made = make_variant(&input, dir.path(), &s, &valid()).unwrap();
    assert!(made.warnings.iter().any(|w| w.contains("enable-if")));
    let json = String::from_utf8(
        member(&members(&made.path), "demo-1.0.dist-info/variant.json")
            .contents
            .clone(),
    )
    .unwrap();
    assert!(
        json.contains("v0.2.0.json") && !json.contains("enable-if"),
        "{json}"
    );
}

/// `make-variant --schema 0.2` on a built-in namespace without release metadata: the writer
/// fills in the namespace's reference provider (as uv vendors it) instead of failing.
#[test]
fn schema_0_2_on_built_in_namespaces_gets_their_reference_providers() {
    let dir = tempfile::tempdir().unwrap();
    let input = plain_wheel(dir.path(), "demo", "1.0", "py3-none-any", &[]);
    let s = VariantSpec {
        schema: Some(SchemaGeneration::V0_2),
        ..spec(&["x86_64 :: level :: v3"])
    };
    let made = make_variant(&input, dir.path(), &s, &valid()).unwrap();
    let json: serde_json::Value = serde_json::from_slice(
        &member(&members(&made.path), "demo-1.0.dist-info/variant.json").contents,
    )
    .unwrap();
    assert_eq!(
        json["$schema"],
        "https://variants-schema.wheelnext.dev/peps/850/v0.2.0.json"
    );
    assert_eq!(
        json["providers"]["x86_64"],
        serde_json::json!({"requires": ["x86-64-variant-provider>=0.2.1,<1.0.0"]})
    );
    assert!(
        made.warnings
            .iter()
            .any(|w| w.contains("added providers.x86_64")),
        "{:?}",
        made.warnings
    );
    // A namespace vari knows no provider for still needs the release's metadata.
    let mut unknown_valid = valid();
    unknown_valid.insert(
        Namespace::new("blas").unwrap(),
        vec![FeatureSupport {
            name: "impl".parse().unwrap(),
            values: vec!["mkl".parse().unwrap()],
            multi_value: false,
        }],
    );
    let s = VariantSpec {
        schema: Some(SchemaGeneration::V0_2),
        ..spec(&["blas :: impl :: mkl"])
    };
    let e = make_variant(&input, dir.path(), &s, &unknown_valid).unwrap_err();
    assert!(e.to_string().contains("needs a provider"), "{e}");
}
