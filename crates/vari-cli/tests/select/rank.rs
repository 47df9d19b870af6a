//! `vari rank` on the real fixtures: index files of every generation, single wheels, the wheel
//! directory, partly invalid files, and the selection options.

use std::path::{Path, PathBuf};

use crate::common::{data, test_plugin_profile, vari_run, write_json};

/// A profile file that supports nothing at all (a machine without any provider).
fn empty_profile(dir: &Path) -> PathBuf {
    write_json(
        dir,
        "empty.json",
        &serde_json::json!({"schema": "vari-profile/1"}),
    )
}

fn rank_json(file: &Path, profile: &Path, extra: &[&str]) -> serde_json::Value {
    let mut cmd = crate::common::vari();
    cmd.arg("rank")
        .arg(file)
        .arg("--profile")
        .arg(profile)
        .arg("--json")
        .args(extra);
    crate::common::run(&mut cmd).expect_code(0).json()
}

fn order(out: &serde_json::Value) -> Vec<String> {
    out["order"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn without_support_only_the_null_variant_is_selectable() {
    let dir = tempfile::tempdir().unwrap();
    let profile = empty_profile(dir.path());
    for name in [
        "torch-2.9.0-variants.json",
        "torch-2.10.0-variants.json",
        "dummy_project-1.0.0-variants.json",
        "sandbox_project-1.0.0-variants.json",
    ] {
        let file = data(&format!("variants-json/{name}"));
        let out = rank_json(&file, &profile, &[]);
        let listed = crate::common::data_json(&format!("variants-json/{name}"));
        let has_null = listed["variants"].get("null").is_some();
        let expected: Vec<String> = if has_null {
            vec!["null".into()]
        } else {
            vec![]
        };
        assert_eq!(order(&out), expected, "{name}");
        for v in out["variants"].as_array().unwrap() {
            if v["label"] != "null" {
                assert_eq!(v["compatible"], false, "{name}: {v}");
                assert!(
                    v["reason"].as_str().is_some_and(|r| !r.is_empty()),
                    "{name}: {v}"
                );
            }
        }
    }
}

#[test]
fn torch_2_8s_null_label_is_the_null_variant_with_a_warning() {
    // torch 2.8.0 labels its null variant `00000000` (PEP 825 says `null`): read tolerantly.
    let dir = tempfile::tempdir().unwrap();
    let profile = empty_profile(dir.path());
    let file = data("variants-json/torch-2.8.0-variants.json");
    let mut cmd = crate::common::vari();
    cmd.arg("rank")
        .arg(&file)
        .arg("--profile")
        .arg(&profile)
        .arg("--json");
    let run = crate::common::run(&mut cmd).expect_code(0);
    let warnings: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(warnings.len(), 1, "{}", run.stderr);
    assert!(warnings[0].starts_with("warning: "), "{}", warnings[0]);
    assert!(warnings[0].contains("variants.00000000"), "{}", warnings[0]);
    let out = run.json();
    // Without any support, the CPU build (the null variant) is the one that fits.
    assert_eq!(order(&out), ["00000000"]);
    let listed = crate::common::data_json("variants-json/torch-2.8.0-variants.json");
    assert_eq!(
        out["variants"].as_array().unwrap().len(),
        listed["variants"].as_object().unwrap().len()
    );
}

#[test]
fn invalid_entries_are_dropped_with_a_warning_and_the_rest_ranked() {
    let dir = tempfile::tempdir().unwrap();
    let profile = empty_profile(dir.path());
    let mut document = crate::common::data_json("variants-json/torch-2.10.0-variants.json");
    document["variants"]["broken"] = serde_json::json!({"nvidia": {"sm_arch": "not a list"}});
    let file = write_json(dir.path(), "torch-2.10.0-variants.json", &document);
    let mut cmd = crate::common::vari();
    cmd.arg("rank")
        .arg(&file)
        .arg("--profile")
        .arg(&profile)
        .arg("--json");
    let run = crate::common::run(&mut cmd).expect_code(0);
    let warnings: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(warnings.len(), 1, "{}", run.stderr);
    assert!(warnings[0].starts_with("warning: "), "{}", warnings[0]);
    assert!(warnings[0].contains("variants.broken"), "{}", warnings[0]);
    let out = run.json();
    let labels: Vec<&str> = out["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["label"].as_str().unwrap())
        .collect();
    assert!(!labels.contains(&"broken"), "{labels:?}");
    assert_eq!(order(&out), ["null"]);
}

/// Reasoning (format.md §6) for variantlib's test package under a profile supporting
/// `installable_plugin :: feat1 :: val1c` and `… :: feat2 :: val2b` (features in that order):
/// keys are (namespace, feature, value) indices of each variant's properties:
/// `5d8be4b9` = [(0,0,0), (0,1,0)], `60567bd9` = `foo` = [(0,0,0)], `bar` = `fbe82642` =
/// [(0,1,0)]. `5d8be4b9` extends `60567bd9`'s key, and more properties win; equal keys break by
/// label; `null` comes last.
const TEST_PACKAGE_ORDER: [&str; 6] = ["5d8be4b9", "60567bd9", "foo", "bar", "fbe82642", "null"];

#[test]
fn the_index_file_and_the_wheel_directory_rank_alike() {
    let dir = tempfile::tempdir().unwrap();
    let profile = test_plugin_profile(dir.path());
    let index = rank_json(&data("wheels/test_package-0-variants.json"), &profile, &[]);
    assert_eq!(order(&index), TEST_PACKAGE_ORDER);

    // The fixture directory holds the index file too: it is used, and every wheel has an entry.
    let wheels = rank_json(&data("wheels"), &profile, &[]);
    assert_eq!(order(&wheels), TEST_PACKAGE_ORDER);

    // Without the index file, the wheels' own variant.json files are combined.
    let copy = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(data("wheels")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "whl") {
            std::fs::copy(&path, copy.path().join(path.file_name().unwrap())).unwrap();
        }
    }
    let combined = rank_json(copy.path(), &profile, &[]);
    assert_eq!(order(&combined), TEST_PACKAGE_ORDER);
}

#[test]
fn a_single_wheel_ranks_its_one_variant() {
    let dir = tempfile::tempdir().unwrap();
    let profile = test_plugin_profile(dir.path());
    let out = rank_json(
        &data("wheels/test_package-0-py3-none-any-foo.whl"),
        &profile,
        &[],
    );
    assert_eq!(order(&out), ["foo"]);
    let empty = empty_profile(dir.path());
    let out = rank_json(
        &data("wheels/test_package-0-py3-none-any-foo.whl"),
        &empty,
        &[],
    );
    assert_eq!(order(&out), Vec::<String>::new());
}

#[test]
fn wheels_without_metadata_for_their_label_are_incompatible() {
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(data("wheels")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "whl") {
            std::fs::copy(&path, dir.path().join(path.file_name().unwrap())).unwrap();
        }
    }
    // The index file forgets `foo`.
    let mut index = crate::common::data_json("wheels/test_package-0-variants.json");
    index["variants"].as_object_mut().unwrap().remove("foo");
    write_json(dir.path(), "test_package-0-variants.json", &index);
    let profiles = tempfile::tempdir().unwrap();
    let profile = test_plugin_profile(profiles.path());
    let out = rank_json(dir.path(), &profile, &[]);
    let expected: Vec<&str> = TEST_PACKAGE_ORDER
        .iter()
        .copied()
        .filter(|l| *l != "foo")
        .collect();
    assert_eq!(order(&out), expected);
    let forgotten = out["variants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["label"] == "foo")
        .expect("foo is reported");
    assert_eq!(forgotten["compatible"], false);
    assert!(
        forgotten["reason"].as_str().unwrap().contains("no entry"),
        "{forgotten}"
    );
}

#[test]
fn unreadable_wheels_in_a_directory_are_skipped_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    for name in [
        "test_package-0-py3-none-any-foo.whl",
        "test_package-0-py3-none-any-null.whl",
    ] {
        std::fs::copy(data(&format!("wheels/{name}")), dir.path().join(name)).unwrap();
    }
    std::fs::write(
        dir.path().join("test_package-0-py3-none-any-bar.whl"),
        b"not a zip",
    )
    .unwrap();
    std::fs::write(dir.path().join("not-a-wheel-name.whl"), b"").unwrap();
    let profiles = tempfile::tempdir().unwrap();
    let profile = test_plugin_profile(profiles.path());
    let mut cmd = crate::common::vari();
    cmd.arg("rank")
        .arg(dir.path())
        .arg("--profile")
        .arg(&profile)
        .arg("--json");
    let run = crate::common::run(&mut cmd).expect_code(0);
    assert!(run.stderr.starts_with("warning: "), "{}", run.stderr);
    assert!(
        run.stderr.contains("test_package-0-py3-none-any-bar.whl"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("not-a-wheel-name.whl"),
        "{}",
        run.stderr
    );
    assert_eq!(run.stderr.lines().count(), 2, "{}", run.stderr);
    let out = run.json();
    assert_eq!(order(&out), ["foo", "null"]);
    let bar = out["variants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["label"] == "bar")
        .unwrap();
    assert_eq!(bar["compatible"], false);
}

#[test]
fn selection_options_change_the_order_but_never_select_unsupported_variants() {
    let dir = tempfile::tempdir().unwrap();
    let profile = test_plugin_profile(dir.path());
    let file = data("wheels/test_package-0-variants.json");

    let out = rank_json(&file, &profile, &["--variant", "bar"]);
    assert_eq!(order(&out), ["bar"]);

    let mut cmd = crate::common::vari();
    cmd.arg("rank").arg(&file).arg("--profile").arg(&profile);
    let run = crate::common::run(cmd.args(["--json", "--variant", "nosuchlabel"])).expect_code(0);
    assert_eq!(order(&run.json()), Vec::<String>::new());
    assert!(
        run.stderr.starts_with("warning: --variant nosuchlabel"),
        "{}",
        run.stderr
    );

    let out = rank_json(&file, &profile, &["--no-variants"]);
    assert!(order(&out).iter().all(|l| l == "null"), "{out}");

    let out = rank_json(&file, &profile, &["--forbid", "installable_plugin::feat1"]);
    assert_eq!(order(&out), ["bar", "fbe82642", "null"]);

    let out = rank_json(&file, &profile, &["--prefer", "installable_plugin::feat2"]);
    assert_eq!(order(&out)[0], "5d8be4b9");
    assert_eq!(order(&out)[1..3], ["bar", "fbe82642"]);

    // The optional namespace has no support in the profile: enabling it selects nothing new.
    let out = rank_json(
        &file,
        &profile,
        &["--enable-optional", "non_existing_plugin"],
    );
    assert_eq!(order(&out), TEST_PACKAGE_ORDER);
}

#[test]
fn human_output_is_a_table() {
    let dir = tempfile::tempdir().unwrap();
    let profile = test_plugin_profile(dir.path());
    let mut cmd = crate::common::vari();
    cmd.arg("rank")
        .arg(data("wheels"))
        .arg("--profile")
        .arg(&profile);
    let run = crate::common::run(&mut cmd).expect_code(0);
    crate::common::assert_output(
        &run.stdout,
        r#"6 variants, 6 selectable for profile [DIR]/plugin.json

#  label     properties
1  5d8be4b9  installable_plugin :: feat1 :: val1c
             installable_plugin :: feat2 :: val2b
2  60567bd9  installable_plugin :: feat1 :: val1c
3  foo       installable_plugin :: feat1 :: val1c
4  bar       installable_plugin :: feat2 :: val2b
5  fbe82642  installable_plugin :: feat2 :: val2b
6  null      (no properties)

non-variant fallback (after every variant): test_package-0-py3-none-any.whl

install: test_package-0-py3-none-any-5d8be4b9.whl (variant 5d8be4b9)
"#,
        &[(dir.path(), "[DIR]")],
    );
    assert!(
        !run.stdout.contains('\u{1b}'),
        "no colour when not a terminal"
    );

    // Asked for colour, the same table with its styles; without them, the same text.
    cmd.env_remove("NO_COLOR").env("CLICOLOR_FORCE", "1");
    let coloured = crate::common::run(&mut cmd).expect_code(0);
    assert!(coloured.stdout.contains('\u{1b}'), "{}", coloured.stdout);
    let plain = anstream::adapter::strip_str(&coloured.stdout).to_string();
    assert_eq!(plain, run.stdout);
}

#[test]
fn bad_inputs_fail_with_one_error_line() {
    let dir = tempfile::tempdir().unwrap();
    let profile = empty_profile(dir.path());
    let bad_profile = write_json(
        dir.path(),
        "bad-profile.json",
        &serde_json::json!({"schema": "vari-profile/1", "namespaces": [{"namespace": "Bad", "features": []}]}),
    );
    let index = data("wheels/test_package-0-variants.json");
    let mut cmd = crate::common::vari();
    cmd.arg("rank")
        .arg(&index)
        .arg("--profile")
        .arg(&bad_profile);
    crate::common::run(&mut cmd).expect_one_error(&["bad-profile.json", "namespaces[0].namespace"]);

    let mut cmd = crate::common::vari();
    cmd.arg("rank")
        .arg(dir.path().join("missing-1.0-variants.json"))
        .arg("--profile")
        .arg(&profile);
    crate::common::run(&mut cmd).expect_one_error(&["missing-1.0-variants.json"]);

    let not_json = dir.path().join("x-1.0-variants.json");
    std::fs::write(&not_json, "{").unwrap();
    let mut cmd = crate::common::vari();
    cmd.arg("rank")
        .arg(&not_json)
        .arg("--profile")
        .arg(&profile);
    crate::common::run(&mut cmd).expect_one_error(&["x-1.0-variants.json", "invalid JSON"]);

    let empty_dir = tempfile::tempdir().unwrap();
    let mut cmd = crate::common::vari();
    cmd.arg("rank")
        .arg(empty_dir.path())
        .arg("--profile")
        .arg(&profile);
    crate::common::run(&mut cmd).expect_one_error(&["no wheels"]);

    vari_run(["rank", "x.json", "--prefer", "Not A Pattern"]).expect_code(2);
    vari_run(["rank", "x.json", "--variant", "a", "--no-variants"]).expect_code(2);
}

#[test]
fn an_empty_namespace_table_is_dropped_with_a_warning_and_its_variant_ranked() {
    // PEP 825 0.1.1 allows `"unused": {}` in a variant (uv drops it): the variant stays.
    let dir = tempfile::tempdir().unwrap();
    let profile = write_json(
        dir.path(),
        "gpu.json",
        &serde_json::json!({
            "schema": "vari-profile/1",
            "namespaces": [{"namespace": "nvidia", "features": [
                {"name": "sm_arch", "values": ["90_real"]}
            ]}]
        }),
    );
    let document = serde_json::json!({
        "$schema": "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json",
        "default-priorities": {"namespace": ["nvidia"]},
        "variants": {
            "null": {},
            "gpu": {"nvidia": {"sm_arch": ["90_real"]}, "unused": {}}
        }
    });
    let file = write_json(dir.path(), "pkg-1.0-variants.json", &document);
    let mut cmd = crate::common::vari();
    cmd.arg("rank")
        .arg(&file)
        .arg("--profile")
        .arg(&profile)
        .arg("--json");
    let run = crate::common::run(&mut cmd).expect_code(0);
    let warnings: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(warnings.len(), 1, "{}", run.stderr);
    assert!(warnings[0].starts_with("warning: "), "{}", warnings[0]);
    assert!(
        warnings[0].contains("variants.gpu.unused") && warnings[0].contains("empty"),
        "{}",
        warnings[0]
    );
    assert_eq!(order(&run.json()), ["gpu", "null"]);
}

#[test]
fn a_variants_values_are_shown_in_number_order() {
    // Value sets have no order; they are stored as text (`100_real` < `50_real`) and shown by
    // number.
    let dir = tempfile::tempdir().unwrap();
    let profile = empty_profile(dir.path());
    let document = serde_json::json!({
        "$schema": "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json",
        "default-priorities": {"namespace": ["nvidia"]},
        "variants": {
            "null": {},
            "gpu": {"nvidia": {"sm_arch": ["100_real", "50_real", "120_real", "90_real"]}}
        }
    });
    let file = write_json(dir.path(), "pkg-1.0-variants.json", &document);
    let mut cmd = crate::common::vari();
    cmd.env("COLUMNS", "200")
        .arg("rank")
        .arg(&file)
        .arg("--profile")
        .arg(&profile);
    let run = crate::common::run(&mut cmd).expect_code(0);
    assert!(
        run.stdout
            .contains("nvidia :: sm_arch :: 50_real 90_real 100_real 120_real"),
        "{}",
        run.stdout
    );
}
