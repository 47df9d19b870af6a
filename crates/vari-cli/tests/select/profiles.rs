//! Target profiles in both forms: `vari-profile/1` JSON and TOML hardware facts.

use std::path::{Path, PathBuf};

use crate::common::{data, vari_run};

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// The facts of a Linux machine with a CUDA 12.8 driver and an sm 8.6 GPU.
const CUDA_12_8_SM_8_6: &str = r#"
[platform]
system = "Linux"
machine = "x86_64"

[nvidia]
cuda_version = "12.8"
compute_capability = "8.6"
"#;

#[test]
fn facts_rank_torch_like_the_forced_driver() {
    // Same facts as the override variables in `detect.rs`, so the same order (reasoned there).
    let dir = tempfile::tempdir().unwrap();
    let facts = write(dir.path(), "gpu-node.toml", CUDA_12_8_SM_8_6);
    let file = data("variants-json/torch-2.10.0-variants.json");
    let out = vari_run([
        Path::new("rank"),
        &file,
        Path::new("--profile"),
        &facts,
        Path::new("--json"),
    ])
    .expect_code(0)
    .json();
    assert_eq!(
        out["order"],
        serde_json::json!(["cuda12.8", "cuda12.6", "null"])
    );
}

#[test]
fn detect_json_of_facts_is_a_profile_that_ranks_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let facts = write(dir.path(), "gpu-node.toml", CUDA_12_8_SM_8_6);
    let run = vari_run([
        Path::new("detect"),
        Path::new("--profile"),
        &facts,
        Path::new("--json"),
    ])
    .expect_code(0);
    let profile = write(dir.path(), "gpu-node.json", &run.stdout);
    let sm = &run.json()["namespaces"][0];
    assert_eq!(sm["namespace"], "nvidia");
    let file = data("variants-json/torch-2.10.0-variants.json");
    let from_toml = vari_run([
        Path::new("rank"),
        &file,
        Path::new("--profile"),
        &facts,
        Path::new("--json"),
    ])
    .expect_code(0)
    .json();
    let from_json = vari_run([
        Path::new("rank"),
        &file,
        Path::new("--profile"),
        &profile,
        Path::new("--json"),
    ])
    .expect_code(0)
    .json();
    assert_eq!(from_toml, from_json);
}

#[test]
fn facts_may_inherit_from_this_machine() {
    let dir = tempfile::tempdir().unwrap();
    let facts = write(
        dir.path(),
        "host-plus-gpu.toml",
        "inherit = \"host\"\n[nvidia]\ncuda_version = \"12.4\"\ncompute_capability = \"9.0\"\n",
    );
    let host = vari_run(["detect", "--json"]).expect_code(0).json();
    let out = vari_run([
        Path::new("detect"),
        Path::new("--profile"),
        &facts,
        Path::new("--json"),
    ])
    .expect_code(0)
    .json();
    let names = |p: &serde_json::Value| -> Vec<String> {
        p["namespaces"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["namespace"].as_str().unwrap().to_owned())
            .collect()
    };
    for ns in names(&host) {
        assert!(names(&out).contains(&ns), "{ns} inherited");
    }
    assert!(names(&out).contains(&"nvidia".to_owned()));
}

#[test]
fn bad_profiles_fail_with_one_line_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let file = data("variants-json/torch-2.10.0-variants.json");
    let cases = [
        (
            "wrong-type.toml",
            "[nvidia]\ncuda_version = 12\n",
            "nvidia.cuda_version",
        ),
        (
            "unknown-key.toml",
            "[nvidia]\ncuda = \"12.8\"\n",
            "nvidia.cuda",
        ),
        ("malformed.toml", "[nvidia\n", "not valid TOML"),
        ("malformed.json", "{\"schema\": ", "not valid JSON"),
        (
            "wrong-schema.json",
            "{\"schema\": \"vari-profile/9\"}",
            "schema",
        ),
        (
            "bad-value.json",
            r#"{"schema": "vari-profile/1", "namespaces": [{"namespace": "a", "features": [{"name": "f", "values": ["OK"]}]}]}"#,
            "namespaces[0].features[0].values[0]",
        ),
    ];
    for (name, text, key) in cases {
        let profile = write(dir.path(), name, text);
        let shown = profile.display().to_string();
        vari_run([Path::new("rank"), &file, Path::new("--profile"), &profile])
            .expect_one_error(&[&shown, key]);
        vari_run([Path::new("detect"), Path::new("--profile"), &profile])
            .expect_one_error(&[&shown, key]);
    }
}
