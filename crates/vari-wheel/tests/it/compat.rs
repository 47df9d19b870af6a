//! Compatibility with the real tools (`scripts/test-env`): variantlib 0.2.2 reads a wheel made
//! with schema 0.2, and pip installs a vari-made variant wheel under its plain name.

use std::process::Command;

use vari_core::metadata::{read_pyproject, SchemaGeneration};
use vari_core::Property;
use vari_wheel::{make_variant, validate, ValidValues, VariantSpec};

use crate::support::{plain_wheel, venv};

fn x86_spec(schema: Option<SchemaGeneration>) -> VariantSpec {
    let metadata = read_pyproject(
        "[variant.default-priorities]\nnamespace = [\"x86_64\"]\n\
         [variant.providers.x86_64]\nrequires = [\"provider-variant-x86-64\"]\n\
         enable-if = \"platform_machine == 'x86_64'\"\n",
    )
    .unwrap();
    VariantSpec {
        properties: vec!["x86_64 :: level :: v3".parse::<Property>().unwrap()],
        metadata: Some(metadata),
        schema,
        skip_validation: true,
        ..VariantSpec::default()
    }
}

#[test]
fn variantlib_analyze_wheel_reads_a_schema_0_2_wheel() {
    let dir = tempfile::tempdir().unwrap();
    let input = plain_wheel(dir.path(), "demo", "1.0", "py3-none-any", &[]);
    let made = make_variant(
        &input,
        dir.path(),
        &x86_spec(Some(SchemaGeneration::V0_2)),
        &ValidValues::default(),
    )
    .unwrap();
    let out = Command::new(venv().join("bin/variantlib"))
        .args(["analyze-wheel", "-i"])
        .arg(&made.path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let all = format!("{stdout}{stderr}");
    assert!(all.contains("x86_64 :: level :: v3"), "{all}");
}

#[test]
fn pip_installs_a_variant_wheel_under_its_plain_name() {
    let dir = tempfile::tempdir().unwrap();
    let input = plain_wheel(dir.path(), "demo", "1.0", "py3-none-any", &[]);
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let made = make_variant(&input, &out, &x86_spec(None), &ValidValues::default()).unwrap();
    assert!(validate(&made.path).unwrap().is_ok());
    let plain_name = dir.path().join("copy").join("demo-1.0-py3-none-any.whl");
    std::fs::create_dir(plain_name.parent().unwrap()).unwrap();
    std::fs::copy(&made.path, &plain_name).unwrap();
    let target = dir.path().join("site");
    let status = Command::new(venv().join("bin/python"))
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-index",
            "--disable-pip-version-check",
            "--target",
        ])
        .arg(&target)
        .arg(&plain_name)
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(
        std::fs::read_to_string(target.join("demo/__init__.py")).unwrap(),
        "VALUE = 42\n"
    );
    assert!(target.join("demo-1.0.dist-info/variant.json").exists());
    let record = std::fs::read_to_string(target.join("demo-1.0.dist-info/RECORD")).unwrap();
    assert!(
        record.contains("demo-1.0.dist-info/variant.json,sha256="),
        "{record}"
    );
}
