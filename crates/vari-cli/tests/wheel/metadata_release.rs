//! Metadata of one release: `merge` refuses to mix projects or versions, `validate` checks the
//! files given together against each other.

use std::path::Path;

use crate::common::{data, vari_run, write_json};

fn copy(from: &str, dir: &Path, to: &str) -> std::path::PathBuf {
    let path = dir.join(to);
    std::fs::copy(data(from), &path).unwrap();
    path
}

#[test]
fn merge_takes_one_release_only() {
    let dir = tempfile::tempdir().unwrap();
    let foo = copy(
        "wheels/test_package-0-py3-none-any-foo.whl",
        dir.path(),
        "test_package-0-py3-none-any-foo.whl",
    );
    let other = copy(
        "wheels/test_package-0-variants.json",
        dir.path(),
        "test_package-1.0-variants.json",
    );
    let out = dir.path().join("test_package-0-variants.json");
    vari_run([
        Path::new("metadata"),
        Path::new("merge"),
        &foo,
        &other,
        Path::new("-o"),
        &out,
    ])
    .expect_one_error(&[
        "test_package-1.0-variants.json",
        "test_package 1.0",
        "test_package 0",
    ]);
    assert!(!out.exists());
    // An output named for another release.
    let wrong = dir.path().join("test_package-2-variants.json");
    vari_run([
        Path::new("metadata"),
        Path::new("merge"),
        &foo,
        Path::new("-o"),
        &wrong,
    ])
    .expect_one_error(&[
        "test_package-2-variants.json",
        "test_package-0-variants.json",
    ]);
    assert!(!wrong.exists());
    vari_run([
        Path::new("metadata"),
        Path::new("merge"),
        &foo,
        Path::new("-o"),
        &out,
    ])
    .expect_code(0);
}

#[test]
fn validate_checks_files_given_together() {
    let dir = tempfile::tempdir().unwrap();
    let foo = copy(
        "wheels/test_package-0-py3-none-any-foo.whl",
        dir.path(),
        "test_package-0-py3-none-any-foo.whl",
    );
    // An index file of the same release that describes `foo` differently.
    let mut index: serde_json::Value = serde_json::from_slice(
        &std::fs::read(data("wheels/test_package-0-variants.json")).unwrap(),
    )
    .unwrap();
    index["variants"]["foo"] = serde_json::json!({"installable_plugin": {"feat1": ["val1a"]}});
    let index = write_json(dir.path(), "test_package-0-variants.json", &index);
    let run = vari_run([
        Path::new("metadata"),
        Path::new("validate"),
        &index,
        &foo,
        Path::new("--json"),
    ]);
    let run = run.expect_code(1);
    let out = run.json();
    assert_eq!(out["files"][0]["ok"], true);
    assert_eq!(out["files"][1]["ok"], false, "{out}");
    // The release's own index file and wheel agree.
    let good = data("wheels/test_package-0-variants.json");
    vari_run([Path::new("metadata"), Path::new("validate"), &good, &foo]).expect_code(0);
}

#[test]
fn validate_checks_every_member_of_a_wheel_against_record() {
    let dir = tempfile::tempdir().unwrap();
    let bad = crate::common::tampered_wheel(dir.path());
    let run = vari_run([
        Path::new("metadata"),
        Path::new("validate"),
        &bad,
        Path::new("--json"),
    ]);
    let out = run.expect_code(1).json();
    assert_eq!(out["files"][0]["ok"], false);
    let errors = out["files"][0]["errors"].to_string();
    assert!(errors.contains("test_package.py"), "{errors}");
    assert!(errors.contains("hash mismatch"), "{errors}");
}

#[test]
fn several_values_of_a_single_value_feature_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_json(
        dir.path(),
        "multi-1.0-variants.json",
        &serde_json::json!({
            "$schema": "https://variants-schema.wheelnext.dev/v0.0.3.json",
            "default-priorities": {"namespace": ["nvidia"]},
            "providers": {"nvidia": {"requires": ["nvidia-variant-provider"]}},
            "variants": {
                "cu": {"nvidia": {"cuda_version_lower_bound": ["12.0", "11.8"]}},
                "ok": {"nvidia": {"cuda_version_lower_bound": ["12.0"]}}
            }
        }),
    );
    let run = vari_run([Path::new("metadata"), Path::new("validate"), &file]).expect_code(1);
    assert!(
        run.stderr
            .contains("variants.cu.nvidia.cuda_version_lower_bound")
            && run.stderr.contains("single-value"),
        "{}",
        run.stderr
    );
    // rank skips the variant that must not exist, with a warning, and ranks the rest.
    let mut cmd = crate::common::vari();
    cmd.arg("rank")
        .arg(&file)
        .args([
            "--json",
            "--python-version",
            "3.12",
            "--python-platform",
            "linux",
        ])
        .env("NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION", "12.8")
        .env("NV_VARIANT_PROVIDER_FORCE_SM_ARCH", "8.6");
    let run = crate::common::run(&mut cmd).expect_code(0);
    assert!(run.stderr.starts_with("warning: "), "{}", run.stderr);
    assert!(run.stderr.contains("variants.cu.nvidia"), "{}", run.stderr);
    assert_eq!(run.json()["order"], serde_json::json!(["ok"]));
}
