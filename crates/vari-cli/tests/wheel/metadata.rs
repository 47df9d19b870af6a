//! `vari metadata validate|merge|convert` on the real fixtures and on broken input.

use std::path::{Path, PathBuf};

use crate::common::{assert_output, data, files_in, vari_run};

/// Every index fixture (the torch releases in three generations, variantlib's test projects).
fn index_fixtures() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(data("variants-json"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.push(data("wheels/test_package-0-variants.json"));
    files.sort();
    files
}

fn wheel_fixtures() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(data("wheels"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "whl"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 7);
    files
}

/// torch 2.8.0's index labels its null variant `00000000`, which PEP 825 forbids: it validates
/// with a warning (so it is left out of the warning-free fixtures below).
const TORCH_2_8: &str = "torch-2.8.0-variants.json";

#[test]
fn every_valid_fixture_validates() {
    let files: Vec<PathBuf> = index_fixtures()
        .into_iter()
        .filter(|p| !p.ends_with(TORCH_2_8))
        .chain(wheel_fixtures())
        .collect();
    for file in &files {
        let run = vari_run([Path::new("metadata"), Path::new("validate"), file]).expect_code(0);
        assert!(run.stdout.starts_with("ok"), "{}", run.stdout);
        assert!(run.stderr.is_empty(), "{}", run.stderr);
    }
    // All at once, as JSON.
    let mut args: Vec<&std::ffi::OsStr> =
        vec!["metadata".as_ref(), "validate".as_ref(), "--json".as_ref()];
    args.extend(files.iter().map(|f| f.as_os_str()));
    let out = vari_run(&args).expect_code(0).json();
    let reported = out["files"].as_array().unwrap();
    assert_eq!(reported.len(), files.len());
    for (entry, file) in reported.iter().zip(&files) {
        assert_eq!(entry["path"], file.display().to_string());
        assert_eq!(entry["ok"], true, "{entry}");
        assert_eq!(entry["errors"], serde_json::json!([]));
    }
}

#[test]
fn torch_2_8_is_valid_with_a_warning_about_its_null_label() {
    // PyTorch 2.8 (a 0.0.x-era file) labels its null variant `00000000`: read tolerantly, with
    // one warning naming the label; the file is valid.
    let file = data("variants-json").join(TORCH_2_8);
    let run = vari_run([Path::new("metadata"), Path::new("validate"), &file]).expect_code(0);
    assert!(run.stdout.starts_with("ok"), "{}", run.stdout);
    let warnings: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("warning: "))
        .collect();
    assert_eq!(warnings.len(), 1, "{}", run.stderr);
    assert!(warnings[0].contains("variants.00000000"), "{}", warnings[0]);

    // With other, valid files: every file is ok.
    let good = data("variants-json/torch-2.10.0-variants.json");
    let run = vari_run([
        Path::new("metadata"),
        Path::new("validate"),
        Path::new("--json"),
        &good,
        &file,
    ])
    .expect_code(0);
    let out = run.json();
    assert_eq!(out["files"][0]["ok"], true);
    assert_eq!(out["files"][1]["ok"], true);

    // Converted, it is written strictly: `null`.
    let run = vari_run([Path::new("metadata"), Path::new("convert"), &file]).expect_code(0);
    let variants = &run.json()["variants"];
    assert!(variants.get("null").is_some(), "{variants}");
    assert!(variants.get("00000000").is_none(), "{variants}");
}

/// A scratch directory with one file, for a broken-input case.
fn scratch(name: &str, contents: &[u8]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, contents).unwrap();
    (dir, path)
}

const SCHEMA_0_0_3: &str = "https://variants-schema.wheelnext.dev/v0.0.3.json";

/// An index file with the given `variants` object (and one provider, `x86_64`).
fn index_with(variants: &str) -> String {
    format!(
        r#"{{"$schema": "{SCHEMA_0_0_3}",
  "default-priorities": {{"namespace": ["x86_64"]}},
  "providers": {{"x86_64": {{"requires": ["provider-variant-x86-64"]}}}},
  "variants": {variants}}}"#
    )
}

/// Each broken document, the key path its error must name, and a fragment of the message.
fn broken_documents() -> Vec<(&'static str, String, &'static str)> {
    vec![
        (
            "malformed JSON",
            r#"{"variants": {"#.to_owned(),
            "invalid JSON",
        ),
        (
            "variants of the wrong type",
            index_with(r#"["v3"]"#),
            "variants",
        ),
        (
            "a value of the wrong type",
            index_with(r#"{"v3": {"x86_64": {"level": "v3"}}}"#),
            "variants.v3.x86_64.level",
        ),
        (
            "a namespace breaking the name pattern",
            index_with(r#"{"v3": {"X86-64": {"level": ["v3"]}}}"#),
            "variants.v3",
        ),
        (
            "a value breaking the value pattern",
            index_with(r#"{"v3": {"x86_64": {"level": ["V3!"]}}}"#),
            "variants.v3.x86_64.level",
        ),
        (
            "a label breaking the label pattern",
            index_with(r#"{"V-3": {"x86_64": {"level": ["v3"]}}}"#),
            "variants.V-3",
        ),
        (
            "a duplicate label",
            index_with(
                r#"{"v3": {"x86_64": {"level": ["v3"]}}, "v3": {"x86_64": {"level": ["v2"]}}}"#,
            ),
            "variants.v3",
        ),
        (
            "a null label with properties",
            index_with(r#"{"null": {"x86_64": {"level": ["v3"]}}}"#),
            "variants.null",
        ),
        (
            "a namespace without a provider",
            index_with(r#"{"v3": {"other": {"level": ["v3"]}}}"#),
            "other",
        ),
    ]
}

#[test]
fn broken_documents_fail_with_one_line_naming_file_and_key() {
    for (case, text, key) in broken_documents() {
        let (_dir, path) = scratch("broken-1.0-variants.json", text.as_bytes());
        let run = vari_run([Path::new("metadata"), Path::new("validate"), &path]);
        assert_eq!(run.code, 1, "{case}: {}", run.stderr);
        let lines: Vec<&str> = run.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{case}: {}", run.stderr);
        let prefix = format!("error: {}: ", path.display());
        assert!(lines[0].starts_with(&prefix), "{case}: {}", lines[0]);
        assert!(
            lines[0].contains(key),
            "{case}: {key:?} not in {}",
            lines[0]
        );
    }
}

#[test]
fn merge_and_convert_leave_nothing_behind_on_bad_input() {
    for (case, text, key) in broken_documents() {
        let (dir, path) = scratch("broken-1.0-variants.json", text.as_bytes());
        let out = dir.path().join("out-variants.json");
        let good = data("wheels/test_package-0-variants.json");
        let run = vari_run([
            Path::new("metadata"),
            Path::new("merge"),
            &good,
            &path,
            Path::new("-o"),
            &out,
        ]);
        assert_eq!(run.code, 1, "merge {case}: {}", run.stderr);
        assert!(run.stderr.contains(key), "merge {case}: {}", run.stderr);
        assert_eq!(
            run.stderr.lines().count(),
            1,
            "merge {case}: {}",
            run.stderr
        );
        let run = vari_run([
            Path::new("metadata"),
            Path::new("convert"),
            &path,
            Path::new("--schema"),
            Path::new("0.2.0"),
            Path::new("-o"),
            &out,
        ]);
        assert_eq!(run.code, 1, "convert {case}: {}", run.stderr);
        assert!(run.stdout.is_empty());
        assert_eq!(files_in(dir.path()), ["broken-1.0-variants.json"], "{case}");
    }
}

#[test]
fn pyproject_tables_are_checked() {
    let good = r#"
[project]
name = "demo"

[variant.default-priorities]
namespace = ["x86_64"]

[variant.providers.x86_64]
requires = ["provider-variant-x86-64>=0.0.1"]
"#;
    let (_dir, path) = scratch("pyproject.toml", good.as_bytes());
    vari_run([Path::new("metadata"), Path::new("validate"), &path]).expect_code(0);

    let (_dir, path) = scratch("pyproject.toml", b"[variant\nbroken = ");
    vari_run([Path::new("metadata"), Path::new("validate"), &path]).expect_code(1);

    let wrong_type = "[variant.default-priorities]\nnamespace = \"x86_64\"\n";
    let (_dir, path) = scratch("pyproject.toml", wrong_type.as_bytes());
    let run = vari_run([Path::new("metadata"), Path::new("validate"), &path]).expect_code(1);
    assert_output(
        &run.stderr,
        r#"error: [FILE]: variant.default-priorities.namespace: expected a list of strings, found a string
"#,
        &[(&path, "[FILE]")],
    );
}

#[test]
fn merging_the_wheels_reproduces_the_index_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("test_package-0-variants.json");
    let mut args: Vec<PathBuf> = vec!["metadata".into(), "merge".into()];
    // `dist/*.whl`: the plain wheel has no metadata to merge and is skipped with a warning.
    args.extend(wheel_fixtures());
    args.extend(["-o".into(), out.clone()]);
    let run = vari_run(&args).expect_code(0);
    assert_eq!(run.stdout.trim(), out.display().to_string());
    assert!(
        run.stderr
            .contains("test_package-0-py3-none-any.whl: not a variant wheel"),
        "{}",
        run.stderr
    );

    let merged: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let reference = crate::common::data_json("wheels/test_package-0-variants.json");
    assert_eq!(merged["variants"], reference["variants"]);
    assert_eq!(
        merged["default-priorities"],
        reference["default-priorities"]
    );
    assert_eq!(merged["providers"], reference["providers"]);
    assert_eq!(files_in(dir.path()), ["test_package-0-variants.json"]);
}

#[test]
fn merging_only_a_plain_wheel_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.json");
    let plain = data("wheels/test_package-0-py3-none-any.whl");
    vari_run([
        Path::new("metadata"),
        Path::new("merge"),
        &plain,
        Path::new("-o"),
        &out,
    ])
    .expect_one_error(&["test_package-0-py3-none-any.whl", "not a variant wheel"]);
    assert!(files_in(dir.path()).is_empty());
}

#[test]
fn conflicting_labels_do_not_merge() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a-variants.json");
    let b = dir.path().join("b-variants.json");
    std::fs::write(&a, index_with(r#"{"fast": {"x86_64": {"level": ["v3"]}}}"#)).unwrap();
    std::fs::write(&b, index_with(r#"{"fast": {"x86_64": {"level": ["v4"]}}}"#)).unwrap();
    let out = dir.path().join("out.json");
    let run = vari_run([
        Path::new("metadata"),
        Path::new("merge"),
        &a,
        &b,
        Path::new("-o"),
        &out,
    ])
    .expect_one_error(&["fast"]);
    assert_output(
        &run.stderr,
        r#"error: variants.fast: the label has different properties in [DIR]/a-variants.json and [DIR]/b-variants.json
"#,
        &[(dir.path(), "[DIR]")],
    );
    assert!(!out.exists());
}

/// A `variants` object with every value list sorted.
fn sorted_values(variants: &serde_json::Value) -> serde_json::Value {
    let mut variants = variants.clone();
    for features in variants.as_object_mut().unwrap().values_mut() {
        for values in features.as_object_mut().unwrap().values_mut() {
            for list in values.as_object_mut().unwrap().values_mut() {
                let mut sorted: Vec<String> = list
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_str().unwrap().to_owned())
                    .collect();
                sorted.sort();
                *list = serde_json::json!(sorted);
            }
        }
    }
    variants
}

#[test]
fn convert_between_generations_round_trips_the_variants() {
    let dir = tempfile::tempdir().unwrap();
    let source = data("variants-json/torch-2.10.0-variants.json");
    for generation in ["0.0.3", "0.2.0"] {
        let out = dir.path().join(format!("torch-{generation}.json"));
        vari_run([
            Path::new("metadata"),
            Path::new("convert"),
            &source,
            Path::new("--schema"),
            Path::new(generation),
            Path::new("-o"),
            &out,
        ])
        .expect_code(0);
        let converted: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        assert!(
            converted["$schema"].as_str().unwrap().contains(generation),
            "{converted}"
        );
        let original = crate::common::data_json("variants-json/torch-2.10.0-variants.json");
        // Values are sets, written sorted: compare them as sets.
        assert_eq!(
            sorted_values(&converted["variants"]),
            sorted_values(&original["variants"]),
            "{generation}"
        );
        // What was written reads back as valid.
        vari_run([Path::new("metadata"), Path::new("validate"), &out]).expect_code(0);
    }
    // Without -o the document goes to stdout, in the input's generation by default.
    let run = vari_run([Path::new("metadata"), Path::new("convert"), &source]).expect_code(0);
    assert!(run.json()["$schema"].as_str().unwrap().contains("0.0.3"));
}

#[test]
fn a_missing_file_is_one_error_line() {
    let run = vari_run(["metadata", "validate", "/nonexistent/x-1.0-variants.json"]).expect_code(1);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(run.stderr.contains("/nonexistent/x-1.0-variants.json"));
}

#[test]
fn usage_errors_exit_2() {
    vari_run(["metadata", "validate"]).expect_code(2);
    vari_run(["metadata", "convert", "x.json", "--schema", "9.9.9"]).expect_code(2);
    vari_run(["metadata", "merge", "x.json"]).expect_code(2);
    vari_run(["no-such-command"]).expect_code(2);
}

/// `validate --for uv` on a demo wheel: valid, but uv 0.13 cannot parse its variant marker
/// and gets no provider from PEP 825 metadata; each reason is listed, and the command fails.
#[test]
fn validate_for_uv_lists_why_uv_does_not_install_a_wheel_as_intended() {
    let wheel = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/demo/vari_demo-1.0.0-py3-none-any-cu128.whl");
    crate::common::vari_run(["metadata".as_ref(), "validate".as_ref(), wheel.as_os_str()])
        .expect_code(0);
    let run = crate::common::vari_run([
        "metadata".as_ref(),
        "validate".as_ref(),
        "--for".as_ref(),
        "uv".as_ref(),
        wheel.as_os_str(),
    ])
    .expect_code(1);
    let errors: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(errors.len(), 1, "{}", run.stderr);
    assert!(
        errors[0].starts_with("error: ")
            && errors[0].contains("uv 0.13 does not install it as intended: no providers"),
        "{}",
        run.stderr
    );
    assert!(
        run.stdout.contains(
            "Requires-Dist \"vari-demo-cuda-runtime==1.0.0; \\\"nvidia\\\" in variant_namespaces\": \
             uv cannot parse variant markers and fails"
        ),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("a target built for cu128: vari installs cu128, uv nothing"),
        "{}",
        run.stdout
    );
}

/// `convert --for uv` writes PEP 850 metadata with uv's vendored NVIDIA provider, warns about
/// the namespaces uv has no provider for, and the result passes the uv check but for those.
#[test]
fn convert_for_uv_writes_what_uv_installs_and_warns_about_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let input = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/demo/vari_demo-1.0.0-variants.json");
    let out = dir.path().join("vari_demo-1.0.0-variants.json");
    let run = crate::common::vari_run([
        "metadata".as_ref(),
        "convert".as_ref(),
        "--for".as_ref(),
        "uv".as_ref(),
        input.as_os_str(),
        "-o".as_ref(),
        out.as_os_str(),
    ])
    .expect_code(0);
    assert!(
        run.stderr
            .contains("namespace amd: uv 0.13 has no provider"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("namespace intel:"), "{}", run.stderr);
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(
        written["$schema"],
        "https://variants-schema.wheelnext.dev/peps/850/v0.2.0.json"
    );
    assert_eq!(
        written["providers"]["nvidia"]["requires"],
        serde_json::json!(["nvidia-variant-provider>=0.0.1,<1.0.0"])
    );
    // --variantlib-url spells 0.2 as variantlib does.
    let run = crate::common::vari_run([
        "metadata".as_ref(),
        "convert".as_ref(),
        "--schema".as_ref(),
        "0.2".as_ref(),
        "--variantlib-url".as_ref(),
        out.as_os_str(),
    ])
    .expect_code(0);
    assert!(
        run.stdout
            .contains("\"https://variants-schema.wheelnext.dev/v0.2.0.json\""),
        "{}",
        run.stdout
    );
}
