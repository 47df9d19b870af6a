//! Variant wheels installed by the real pip and uv of the test venv, then listed.
//!
//! Released pip rejects a variant filename ("Invalid build number"), so each wheel is installed
//! under its name without the label, as `vari proxy` serves it: the `variant.json` inside is
//! what records the variant, and both installers keep it in the `.dist-info` directory.

use std::path::{Path, PathBuf};
use std::process::Command;

use vari_install::list_installed;

use vari_test_support::venv::{run_ok as run, test_venv as venv};
use vari_test_support::wheels::{member_text, metadata_header, variant_of};

fn wheel(name: &str) -> PathBuf {
    vari_test_support::paths::testdata("wheels").join(name)
}

/// Copies a variant wheel to `dir` under its name without the label.
fn without_label(variant_wheel: &str, dir: &Path) -> PathBuf {
    let (stem, _label) = variant_wheel
        .strip_suffix(".whl")
        .unwrap()
        .rsplit_once('-')
        .unwrap();
    let plain = dir.join(format!("{stem}.whl"));
    std::fs::copy(wheel(variant_wheel), &plain).unwrap();
    plain
}

/// The label and properties the wheel's own `variant.json` gives, read with serde_json alone
/// (not with vari): the expected answer.
fn expected_variant(variant_wheel: &str) -> (String, Vec<String>) {
    variant_of(&wheel(variant_wheel))
}

/// The `Name:` of the wheel's METADATA (the name as installers record it).
fn metadata_name(fixture: &str) -> String {
    let bytes = std::fs::read(wheel(fixture)).unwrap();
    metadata_header(&member_text(&bytes, ".dist-info/METADATA"), "Name")
}

fn listed(target: &Path) -> (String, String, Option<(String, Vec<String>)>) {
    let installed = list_installed(&[target.to_path_buf()]);
    assert!(installed.problems.is_empty(), "{:?}", installed.problems);
    assert_eq!(installed.distributions.len(), 1);
    let dist = &installed.distributions[0];
    let variant = dist.variant.as_ref().map(|v| {
        let properties = v.property_list().iter().map(ToString::to_string).collect();
        (v.label.to_string(), properties)
    });
    (dist.name.clone(), dist.version.clone(), variant)
}

#[test]
fn pip_keeps_variant_json_and_the_listing_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    for fixture in [
        "test_package-0-py3-none-any-foo.whl",
        "test_package-0-py3-none-any-5d8be4b9.whl",
        "test_package-0-py3-none-any-null.whl",
    ] {
        let wheels = dir.path().join(fixture).join("wheels");
        let target = dir.path().join(fixture).join("target");
        std::fs::create_dir_all(&wheels).unwrap();
        let file = without_label(fixture, &wheels);
        run(Command::new(venv().join("bin/python"))
            .args(["-m", "pip", "install", "--no-deps", "--no-index", "--quiet"])
            .args(["--disable-pip-version-check", "--no-cache-dir", "--target"])
            .arg(&target)
            .arg(&file));
        let expected = expected_variant(fixture);
        assert_eq!(
            listed(&target),
            (metadata_name(fixture), "0".to_owned(), Some(expected)),
            "{fixture}"
        );
    }
}

#[test]
fn uv_keeps_variant_json_and_the_listing_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = "test_package-0-py3-none-any-bar.whl";
    let file = without_label(fixture, dir.path());
    let target = dir.path().join("target");
    run(Command::new(venv().join("bin/uv"))
        .args([
            "pip",
            "install",
            "--no-deps",
            "--offline",
            "--quiet",
            "--target",
        ])
        .arg(&target)
        .arg(&file)
        .env("UV_CACHE_DIR", dir.path().join("uv-cache")));
    assert_eq!(
        listed(&target),
        (
            metadata_name(fixture),
            "0".to_owned(),
            Some(expected_variant(fixture))
        )
    );
}

#[test]
fn a_plain_wheel_installs_without_a_variant() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("target");
    run(Command::new(venv().join("bin/python"))
        .args(["-m", "pip", "install", "--no-deps", "--no-index", "--quiet"])
        .args(["--disable-pip-version-check", "--no-cache-dir", "--target"])
        .arg(&target)
        .arg(wheel("test_package-0-py3-none-any.whl")));
    assert_eq!(
        listed(&target),
        (
            metadata_name("test_package-0-py3-none-any.whl"),
            "0".to_owned(),
            None
        )
    );
}
