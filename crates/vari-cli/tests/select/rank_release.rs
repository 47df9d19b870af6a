//! `vari rank` on releases given with their wheels: the file to install, tags that fit the
//! target interpreter, and the target options (`--sysroot`, `--python*`, standard input).

use std::path::Path;

use crate::common::{data, test_plugin_profile as plugin_profile, vari, vari_run, write_json};

/// Options that fix the target Python, so results do not depend on this machine's interpreter.
const LINUX_312: [&str; 4] = [
    "--python-version",
    "3.12",
    "--python-platform",
    "x86_64-manylinux_2_28",
];

/// Copies fixture wheels into a new directory, renamed where asked: `(fixture label, new name)`.
fn release(copies: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (from, to) in copies {
        let source = match *from {
            "" => data("wheels/test_package-0-py3-none-any.whl"),
            label => data(&format!("wheels/test_package-0-py3-none-any-{label}.whl")),
        };
        std::fs::copy(source, dir.path().join(to)).unwrap();
    }
    dir
}

fn rank(dir: &Path, profile: &Path, extra: &[&str]) -> crate::common::Run {
    let mut cmd = vari();
    cmd.arg("rank")
        .arg(dir)
        .arg("--profile")
        .arg(profile)
        .args(LINUX_312)
        .args(extra);
    crate::common::run(&mut cmd)
}

#[test]
fn a_wheel_for_another_interpreter_is_not_selectable() {
    let dir = release(&[
        ("foo", "test_package-0-py3-none-any-foo.whl"),
        ("bar", "test_package-0-cp27-cp27m-win32-bar.whl"),
        ("null", "test_package-0-py3-none-any-null.whl"),
        ("", "test_package-0-py3-none-any.whl"),
    ]);
    let profiles = tempfile::tempdir().unwrap();
    let profile = plugin_profile(profiles.path());
    let out = rank(dir.path(), &profile, &["--json"])
        .expect_code(0)
        .json();
    crate::common::assert_json_schema("rank", &out);
    assert_eq!(out["order"], serde_json::json!(["foo", "null"]));
    let bar = out["variants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["label"] == "bar")
        .unwrap();
    assert_eq!(bar["compatible"], false);
    let reason = bar["reason"].as_str().unwrap();
    assert!(reason.contains("cp27-cp27m-win32"), "{reason}");
    assert_eq!(
        bar["files"],
        serde_json::json!(["test_package-0-cp27-cp27m-win32-bar.whl"])
    );
    assert_eq!(out["chosen"], "test_package-0-py3-none-any-foo.whl");
    assert_eq!(
        out["non_variant"],
        serde_json::json!(["test_package-0-py3-none-any.whl"])
    );
}

#[test]
fn the_human_output_names_the_file_to_install() {
    let dir = release(&[
        ("foo", "test_package-0-py3-none-any-foo.whl"),
        ("", "test_package-0-py3-none-any.whl"),
    ]);
    let profiles = tempfile::tempdir().unwrap();
    let profile = plugin_profile(profiles.path());
    let run = rank(dir.path(), &profile, &[]).expect_code(0);
    assert!(
        run.stdout
            .contains("install: test_package-0-py3-none-any-foo.whl (variant foo)"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.starts_with("1 variant, 1 selectable"),
        "{}",
        run.stdout
    );
    // Without support for the plugin, the non-variant wheel is the answer.
    let empty = write_json(
        profiles.path(),
        "empty.json",
        &serde_json::json!({"schema": "vari-profile/1"}),
    );
    let run = rank(dir.path(), &empty, &[]).expect_code(0);
    assert!(
        run.stdout.contains(
            "install: test_package-0-py3-none-any.whl (the non-variant wheel: no variant fits)"
        ),
        "{}",
        run.stdout
    );
}

#[test]
fn a_plain_wheel_alone_is_the_non_variant_answer() {
    let dir = release(&[("", "test_package-0-py3-none-any.whl")]);
    let profiles = tempfile::tempdir().unwrap();
    let profile = plugin_profile(profiles.path());
    for input in [
        dir.path().to_path_buf(),
        dir.path().join("test_package-0-py3-none-any.whl"),
    ] {
        let run = rank(&input, &profile, &[]).expect_code(0);
        assert!(
            run.stdout
                .contains("install: test_package-0-py3-none-any.whl (the non-variant wheel)"),
            "{}",
            run.stdout
        );
    }
}

#[test]
fn a_sysroot_is_a_target_for_rank() {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("proc")).unwrap();
    std::fs::copy(
        data("cpuinfo/linux-rhel7-haswell"),
        root.path().join("proc/cpuinfo"),
    )
    .unwrap();
    let meta = write_json(
        root.path(),
        "demo-1.0-variants.json",
        &serde_json::json!({
            "$schema": "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json",
            "default-priorities": {"namespace": ["x86_64"]},
            "variants": {
                "v4": {"x86_64": {"level": ["v4"]}},
                "v3": {"x86_64": {"level": ["v3"]}},
                "null": {}
            }
        }),
    );
    let mut cmd = vari();
    cmd.arg("rank")
        .arg(&meta)
        .arg("--sysroot")
        .arg(root.path())
        .args(LINUX_312)
        .arg("--json");
    let out = crate::common::run(&mut cmd).expect_code(0).json();
    // Haswell is x86-64-v3: the v4 build is not for it.
    assert_eq!(out["order"], serde_json::json!(["v3", "null"]));
}

#[test]
fn standard_input_is_a_metadata_file() {
    let text = std::fs::read(data("variants-json/torch-2.10.0-variants.json")).unwrap();
    let profiles = tempfile::tempdir().unwrap();
    let empty = write_json(
        profiles.path(),
        "empty.json",
        &serde_json::json!({"schema": "vari-profile/1"}),
    );
    let mut child = vari()
        .args(["rank", "-", "--json", "--profile"])
        .arg(&empty)
        .args(LINUX_312)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(&text).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let out: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(out["order"], serde_json::json!(["null"]));
}

#[test]
fn inputs_that_are_not_what_they_seem_are_named() {
    let dir = tempfile::tempdir().unwrap();
    // A zip that is not a wheel.
    let zip = dir.path().join("foo.zip");
    std::fs::copy(data("wheels/test_package-0-py3-none-any.whl"), &zip).unwrap();
    vari_run([Path::new("rank"), &zip]).expect_one_error(&["foo.zip", "zip archive"]);
    // A snapshot directory given as a profile.
    let mut cmd = vari();
    cmd.arg("rank")
        .arg(data("variants-json/torch-2.10.0-variants.json"))
        .arg("--profile")
        .arg(dir.path());
    crate::common::run(&mut cmd).expect_one_error(&["is a directory", "--sysroot"]);
    // Facts TOML under a .json name.
    let facts = dir.path().join("facts.json");
    std::fs::write(&facts, "[nvidia]\ncuda_version = \"12.8\"\n").unwrap();
    let mut cmd = vari();
    cmd.arg("rank")
        .arg(data("variants-json/torch-2.10.0-variants.json"))
        .arg("--profile")
        .arg(&facts);
    crate::common::run(&mut cmd).expect_one_error(&["facts.json", "*.toml"]);
}

#[test]
fn a_python_that_is_not_there_is_an_error() {
    let file = data("variants-json/torch-2.10.0-variants.json");
    for python in ["/nonexistent/python3", "/usr/bin/ls"] {
        let run = vari_run([
            Path::new("rank"),
            &file,
            Path::new("--python"),
            Path::new(python),
        ]);
        run.expect_one_error(&[python]);
    }
}

#[test]
fn options_that_match_nothing_are_warned_about() {
    let profiles = tempfile::tempdir().unwrap();
    let profile = plugin_profile(profiles.path());
    let file = data("wheels/test_package-0-variants.json");
    let mut cmd = vari();
    cmd.arg("rank")
        .arg(&file)
        .arg("--profile")
        .arg(&profile)
        .args(LINUX_312)
        .args([
            "--forbid",
            "nope",
            "--prefer",
            "amd",
            "--enable-optional",
            "nothing",
        ])
        .arg("--json");
    let run = crate::common::run(&mut cmd).expect_code(0);
    let warnings: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(warnings.len(), 3, "{}", run.stderr);
    assert!(
        warnings[0].starts_with("warning: --prefer amd"),
        "{}",
        run.stderr
    );
    assert!(
        warnings[1].starts_with("warning: --forbid nope"),
        "{}",
        run.stderr
    );
    assert!(
        warnings[2].starts_with("warning: --enable-optional nothing"),
        "{}",
        run.stderr
    );
}
