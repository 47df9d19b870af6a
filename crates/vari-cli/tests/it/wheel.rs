//! `vari wheel inspect` on the real wheels and on broken ones.

use std::path::{Path, PathBuf};

use crate::common::{data, vari_run};

fn inspect_json(wheel: &Path) -> serde_json::Value {
    vari_run([
        Path::new("wheel"),
        Path::new("inspect"),
        Path::new("--json"),
        wheel,
    ])
    .expect_code(0)
    .json()
}

#[test]
fn variant_wheels_report_label_properties_and_metadata() {
    let index = crate::common::data_json("wheels/test_package-0-variants.json");
    for (label, variant) in index["variants"].as_object().unwrap() {
        let wheel = data(&format!("wheels/test_package-0-py3-none-any-{label}.whl"));
        let out = inspect_json(&wheel);
        assert_eq!(out["name"], "test_package");
        assert_eq!(out["version"], "0");
        assert_eq!(out["label"], label.as_str());
        // The properties are the index entry's, written `ns :: f :: v`.
        let mut expected: Vec<String> = Vec::new();
        for (ns, features) in variant.as_object().unwrap() {
            for (f, values) in features.as_object().unwrap() {
                for v in values.as_array().unwrap() {
                    expected.push(format!("{ns} :: {f} :: {}", v.as_str().unwrap()));
                }
            }
        }
        expected.sort();
        assert_eq!(out["properties"], serde_json::json!(expected), "{label}");
        // The metadata is the wheel's variant.json: exactly this variant.
        let meta = &out["metadata"];
        assert_eq!(meta["variants"].as_object().unwrap().len(), 1, "{label}");
        assert_eq!(&meta["variants"][label], variant, "{label}");
        assert!(meta["$schema"].is_string());

        let human = vari_run([Path::new("wheel"), Path::new("inspect"), &wheel]).expect_code(0);
        assert!(human.stdout.contains(label.as_str()), "{}", human.stdout);
        assert!(human.stdout.contains("RECORD"), "{}", human.stdout);
    }
}

#[test]
fn a_plain_wheel_is_not_a_variant_wheel() {
    let wheel = data("wheels/test_package-0-py3-none-any.whl");
    let out = inspect_json(&wheel);
    assert_eq!(out["label"], serde_json::Value::Null);
    assert_eq!(out["metadata"], serde_json::Value::Null);
    assert_eq!(out["properties"], serde_json::json!([]));
    let human = vari_run([Path::new("wheel"), Path::new("inspect"), &wheel]).expect_code(0);
    assert!(
        human.stdout.contains("not a variant wheel"),
        "{}",
        human.stdout
    );
}

/// Copies a fixture wheel to `dir/name`, optionally cut to `len` bytes.
fn copy_wheel(dir: &Path, fixture: &str, name: &str, len: Option<usize>) -> PathBuf {
    let mut bytes = std::fs::read(data(&format!("wheels/{fixture}"))).unwrap();
    if let Some(len) = len {
        bytes.truncate(len);
    }
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// Each broken wheel and a fragment its one error line must contain.
fn broken_wheels(dir: &Path) -> Vec<(PathBuf, &'static str)> {
    let labelled = "test_package-0-py3-none-any-foo.whl";
    let size = std::fs::metadata(data(&format!("wheels/{labelled}")))
        .unwrap()
        .len() as usize;
    let not_zip = dir.join("test_package-0-py3-none-any-baz.whl");
    std::fs::write(&not_zip, b"this is not a zip archive").unwrap();
    vec![
        (
            copy_wheel(
                dir,
                labelled,
                "test_package-0-py3-none-any-cut.whl",
                Some(size / 2),
            ),
            "zip",
        ),
        (not_zip, "zip"),
        // The variant.json says `foo`, the filename says `bar2`.
        (
            copy_wheel(dir, labelled, "test_package-0-py3-none-any-bar2.whl", None),
            "bar2",
        ),
        // A label in the filename of a wheel without variant.json.
        (
            copy_wheel(
                dir,
                "test_package-0-py3-none-any.whl",
                "test_package-0-py3-none-any-lonely.whl",
                None,
            ),
            "lonely",
        ),
        // A variant.json in a wheel whose filename has no label.
        (
            copy_wheel(dir, labelled, "test_package-0-py3-none-any.whl", None),
            "variant.json",
        ),
    ]
}

#[test]
fn broken_wheels_fail_with_one_error_line() {
    let dir = tempfile::tempdir().unwrap();
    for (wheel, fragment) in broken_wheels(dir.path()) {
        let name = wheel.display().to_string();
        vari_run([Path::new("wheel"), Path::new("inspect"), &wheel])
            .expect_one_error(&[&name, fragment]);
        vari_run([
            Path::new("wheel"),
            Path::new("inspect"),
            Path::new("--json"),
            &wheel,
        ])
        .expect_one_error(&[&name, fragment]);
        let run = vari_run([
            Path::new("metadata"),
            Path::new("validate"),
            Path::new("--json"),
            &wheel,
        ])
        .expect_code(1);
        assert_eq!(run.json()["files"][0]["ok"], false);
        assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    }
}

#[test]
fn a_missing_wheel_is_one_error_line() {
    vari_run(["wheel", "inspect", "/nonexistent/a-1-py3-none-any.whl"])
        .expect_one_error(&["/nonexistent/a-1-py3-none-any.whl"]);
}
