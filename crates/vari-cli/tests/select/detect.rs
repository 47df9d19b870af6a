//! `vari detect` (this machine, snapshots via `--sysroot`, profiles) and the issue's acceptance
//! checks for `vari rank` with detection.

use std::path::{Path, PathBuf};

use crate::common::{assert_output, data, data_json, vari_run};

/// The real `/proc/cpuinfo` dumps kept by vari-detect's tests (one copy in the repository).
fn cpuinfo(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/cpuinfo")
        .join(name)
}

/// A sysroot holding only `proc/cpuinfo`.
fn sysroot_with_cpuinfo(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("proc")).unwrap();
    std::fs::copy(cpuinfo(name), dir.path().join("proc/cpuinfo")).unwrap();
    dir
}

/// The supported features of `namespace` in a profile, as the vectors write them.
fn features_of(profile: &serde_json::Value, namespace: &str) -> Option<serde_json::Value> {
    let ns = profile["namespaces"]
        .as_array()?
        .iter()
        .find(|n| n["namespace"] == namespace)?;
    let features: Vec<serde_json::Value> = ns["features"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| serde_json::json!({"name": f["name"], "values": f["values"]}))
        .collect();
    Some(serde_json::Value::Array(features))
}

fn sysroot_matches_vectors(vectors: &str) {
    let vectors = data_json(vectors);
    let namespace = vectors["namespace"].as_str().unwrap();
    for case in vectors["cases"].as_array().unwrap() {
        let name = case["cpuinfo"].as_str().unwrap();
        let root = sysroot_with_cpuinfo(name);
        let run = vari_run([
            Path::new("detect"),
            Path::new("--sysroot"),
            root.path(),
            Path::new("--json"),
        ])
        .expect_code(0);
        let profile = run.json();
        let supported = &case["supported"];
        let expected_empty = supported.as_array().is_some_and(Vec::is_empty);
        match features_of(&profile, namespace) {
            Some(found) => assert_eq!(&found, supported, "{name}"),
            None => assert!(expected_empty, "{name}: {namespace} missing from {profile}"),
        }
    }
}

#[test]
fn sysroot_reproduces_the_x86_64_vectors() {
    sysroot_matches_vectors("vectors/x86_64_cpuinfo.json");
}

#[test]
fn sysroot_reproduces_the_aarch64_vectors() {
    sysroot_matches_vectors("vectors/aarch64_cpuinfo.json");
}

#[test]
fn this_machine_is_detected() {
    let run = vari_run(["detect", "--json", "--no-cache"]).expect_code(0);
    let profile = run.json();
    assert_eq!(profile["schema"], "vari-profile/1");
    let machine = std::env::consts::ARCH;
    assert_eq!(profile["platform"]["machine"], machine, "{profile}");
    if machine == "x86_64" {
        let level = features_of(&profile, "x86_64").expect("x86_64 namespace");
        assert_eq!(level[0]["name"], "level", "{level}");
    }

    // Human output: a table of namespaces, and a reason for each GPU namespace that is absent.
    let run = vari_run(["detect", "--no-cache"]).expect_code(0);
    let absent: Vec<&str> = ["nvidia", "amd", "intel"]
        .into_iter()
        .filter(|ns| features_of(&profile, ns).is_none())
        .collect();
    if !absent.is_empty() {
        let section = run
            .stdout
            .split("not supported here:")
            .nth(1)
            .unwrap_or_else(|| panic!("no absent section:\n{}", run.stdout));
        for ns in absent {
            let line = section
                .lines()
                .find(|l| l.starts_with(ns))
                .unwrap_or_else(|| panic!("{ns} not explained:\n{}", run.stdout));
            assert!(line.len() > ns.len() + 10, "{line}");
        }
    }
}

#[test]
fn cached_detection_gives_the_same_profile() {
    let first = vari_run(["detect", "--json"]).expect_code(0).json();
    let second = vari_run(["detect", "--json"]).expect_code(0).json();
    assert_eq!(first, second);
}

#[test]
fn detect_prints_a_given_profile() {
    let dir = tempfile::tempdir().unwrap();
    let case = &data_json("vectors/ordering.json")["cases"][0];
    let path = crate::common::write_json(dir.path(), "p.json", &case["profile"]);
    let run = vari_run([
        Path::new("detect"),
        Path::new("--profile"),
        &path,
        Path::new("--json"),
    ])
    .expect_code(0);
    assert_eq!(run.json()["namespaces"], case["profile"]["namespaces"]);
    vari_run([
        Path::new("detect"),
        Path::new("--sysroot"),
        Path::new("/nonexistent/dir"),
    ])
    .expect_one_error(&["/nonexistent/dir"]);
}

/// Issue 3 acceptance: torch 2.10's variants on a machine whose driver supports CUDA 12.8 with an
/// sm 8.6 GPU, forced through the reference plugin's override variables.
///
/// Reasoning with format.md §6 (namespace order `nvidia, intel, amd, priority`):
/// - nvidia supports `cuda_version_lower_bound` = 12.8 … 12.0 (index 8) … 11, then
///   `cuda_version_upper_bound`, then `sm_arch` = 86_real (0) … 80_real 80_virtual;
///   `priority` is ahead-of-time: `order` = 1, 2, 3; intel and amd are absent.
/// - `cuda13.0` needs lower bound 13.0 > 12.8: incompatible. `xpu` (intel) and `rocm7.x` (amd)
///   are incompatible. `null` is always compatible.
/// - `cuda12.8` = [(0,0,8), (0,2,0) for 86_real, (3,0,1) for order 2];
///   `cuda12.6` = [(0,0,8), (0,2,0), (3,0,2) for order 3]. They differ at the priority
///   property, so `cuda12.8` wins, then `cuda12.6`, then `null`.
#[test]
fn torch_2_10_for_cuda_12_8_and_sm_8_6() {
    let file = data("variants-json/torch-2.10.0-variants.json");
    let mut cmd = crate::common::vari();
    cmd.arg("rank")
        .arg(&file)
        .arg("--json")
        .env("NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION", "12.8")
        .env("NV_VARIANT_PROVIDER_FORCE_SM_ARCH", "8.6");
    let out = crate::common::run(&mut cmd).expect_code(0).json();
    // The enable-if markers need Linux or Windows; elsewhere nvidia is off and null wins.
    let expected: &[&str] = if cfg!(any(target_os = "linux", target_os = "windows")) {
        &["cuda12.8", "cuda12.6", "null"]
    } else {
        &["null"]
    };
    assert_eq!(out["order"], serde_json::json!(expected));
}

#[test]
fn torch_2_10_without_a_gpu_picks_null() {
    let dir = tempfile::tempdir().unwrap();
    // A CPU-only Linux target: platform known, no GPU namespace.
    let profile = crate::common::write_json(
        dir.path(),
        "cpu-only.json",
        &serde_json::json!({
            "schema": "vari-profile/1",
            "platform": {"system": "Linux", "machine": "x86_64"},
            "namespaces": [{"namespace": "x86_64", "features": [
                {"name": "level", "values": ["v3", "v2", "v1"]}]}]
        }),
    );
    let file = data("variants-json/torch-2.10.0-variants.json");
    let mut cmd = crate::common::vari();
    cmd.arg("rank")
        .arg(&file)
        .arg("--profile")
        .arg(&profile)
        .arg("--json");
    let out = crate::common::run(&mut cmd).expect_code(0).json();
    assert_eq!(out["order"], serde_json::json!(["null"]));
}

#[test]
fn a_snapshot_reproduces_this_machine() {
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("node");
    let run = vari_run([Path::new("snapshot"), Path::new("-o"), &snap]).expect_code(0);
    assert!(
        run.stdout.contains("vari detect --sysroot"),
        "{}",
        run.stdout
    );
    let here = vari_run(["detect", "--json", "--no-cache"])
        .expect_code(0)
        .json();
    let there = vari_run([
        Path::new("detect"),
        Path::new("--sysroot"),
        &snap,
        Path::new("--json"),
    ])
    .expect_code(0)
    .json();
    // Same support; only the sources differ (they name the files read).
    let without_sources = |profile: &serde_json::Value| {
        let mut namespaces = profile["namespaces"].clone();
        for ns in namespaces.as_array_mut().unwrap() {
            ns.as_object_mut().unwrap().remove("source");
        }
        namespaces
    };
    assert_eq!(without_sources(&here), without_sources(&there));
    assert_eq!(here["platform"]["machine"], there["platform"]["machine"]);

    // An existing snapshot is not overwritten unless asked.
    vari_run([Path::new("snapshot"), Path::new("-o"), &snap]).expect_one_error(&["node"]);
    vari_run([
        Path::new("snapshot"),
        Path::new("-o"),
        &snap,
        Path::new("--replace"),
    ])
    .expect_code(0);
}

/// A virtual environment on disk with `torch 2.8.0` and `numpy 2.1.3` installed.
fn venv_with_torch() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    // A real environment (the target Python must be a Python), without pip so that only the
    // distributions written below are installed.
    let made = std::process::Command::new(crate::common::test_python())
        .args(["-m", "venv", "--without-pip"])
        .arg(dir.path())
        .status()
        .unwrap();
    assert!(made.success());
    let site = std::fs::read_dir(dir.path().join("lib"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
        .join("site-packages");
    for (name, version) in [("torch", "2.8.0"), ("numpy", "2.1.3")] {
        let info = site.join(format!("{name}-{version}.dist-info"));
        std::fs::create_dir_all(&info).unwrap();
        std::fs::write(
            info.join("METADATA"),
            format!("Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"),
        )
        .unwrap();
    }
    dir
}

#[test]
fn abi_dependency_comes_from_the_target_environment() {
    let venv = venv_with_torch();
    let run = crate::common::run(
        crate::common::vari()
            .args(["detect", "--json", "--python"])
            .arg(venv.path()),
    )
    .expect_code(0);
    let abi = features_of(&run.json(), "abi_dependency").expect("abi_dependency present");
    assert_eq!(
        abi,
        serde_json::json!([
            {"name": "numpy", "values": ["2", "2.1", "2.1.3"]},
            {"name": "torch", "values": ["2", "2.8", "2.8.0"]}
        ])
    );

    // The active virtual environment is the default target, as for `pip install`.
    let run = crate::common::run(
        crate::common::vari()
            .args(["detect", "--json"])
            .env("VIRTUAL_ENV", venv.path()),
    )
    .expect_code(0);
    assert!(features_of(&run.json(), "abi_dependency").is_some());

    // No environment at all (no python3 on PATH either): the namespace is absent, and the
    // table says how to give one.
    let empty = tempfile::tempdir().unwrap();
    let run = crate::common::run(
        crate::common::vari()
            .arg("detect")
            .env("PATH", empty.path()),
    )
    .expect_code(0);
    assert!(run.stdout.contains("give --python"), "{}", run.stdout);
}

#[test]
fn a_malformed_override_is_one_clear_error() {
    let torch = data("variants-json/torch-2.10.0-variants.json");
    for (name, value) in [
        ("NV_VARIANT_PROVIDER_FORCE_SM_ARCH", "abc"),
        ("NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION", "twelve"),
        ("AMD_VARIANT_PROVIDER_FORCE_ROCM_VERSION", "x"),
        ("VARIANT_ABI_DEPENDENCY", "torch=2"),
    ] {
        crate::common::run(crate::common::vari().args(["detect"]).env(name, value))
            .expect_one_error(&[name, value]);
        // A selection made while ignoring it would silently be the wrong build.
        crate::common::run(
            crate::common::vari()
                .arg("rank")
                .arg(&torch)
                .env(name, value),
        )
        .expect_one_error(&[name, value]);
    }
}

#[test]
fn rank_on_this_machine_says_why_a_namespace_is_missing() {
    let torch = data("variants-json/torch-2.10.0-variants.json");
    let detected = vari_run(["detect", "--json"]).expect_code(0).json();
    let run = vari_run([Path::new("rank"), &torch, Path::new("--json")]).expect_code(0);
    let ranked = run.json();
    let reason = |label: &str| {
        ranked["variants"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["label"] == label)
            .unwrap()["reason"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    for (label, namespace) in [("cuda12.8", "nvidia"), ("rocm7.0", "amd"), ("xpu", "intel")] {
        if features_of(&detected, namespace).is_none() {
            // The detection's own reason, not a generic "not in the profile".
            let why = reason(label);
            assert!(
                why.starts_with(&format!(
                    "namespace `{namespace}` was not detected on this machine: "
                )),
                "{label}: {why}"
            );
        }
    }
}

/// Issue 7 point 3: a snapshot whose manifest is damaged or from an unknown version is an error
/// naming the manifest key, never silently read as files only (which drops the GPU answers).
#[test]
fn a_broken_snapshot_manifest_is_an_error_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("node");
    vari_run([Path::new("snapshot"), Path::new("-o"), &snap]).expect_code(0);
    let manifest_path = snap.join("vari-snapshot.json");
    let original: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest_path).unwrap()).unwrap();
    for (key, value) in [
        ("recorded", serde_json::json!("oops")),
        ("schema", serde_json::json!("vari-snapshot/2")),
        ("copied", serde_json::json!(7)),
    ] {
        let mut manifest = original.clone();
        manifest[key] = value;
        std::fs::write(&manifest_path, manifest.to_string()).unwrap();
        for json in [true, false] {
            let mut args = vec![Path::new("detect"), Path::new("--sysroot"), &snap];
            if json {
                args.push(Path::new("--json"));
            }
            vari_run(args).expect_one_error(&["vari-snapshot.json", key]);
        }
    }
    std::fs::write(&manifest_path, "{not json").unwrap();
    vari_run([Path::new("detect"), Path::new("--sysroot"), &snap])
        .expect_one_error(&["vari-snapshot.json", "not valid JSON"]);
}

/// Issue 7 points 3 and 17: a directory without a manifest is a plain file tree and `detect`
/// says so; an empty one says it holds nothing detection reads; the heading names the origin.
#[test]
fn a_directory_without_manifest_is_named_as_a_plain_tree() {
    let empty = tempfile::tempdir().unwrap();
    let run = vari_run([Path::new("detect"), Path::new("--sysroot"), empty.path()]).expect_code(0);
    assert!(
        run.stdout.contains("none of the files detection reads"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("not supported here"), "{}", run.stdout);
    let run = vari_run([
        Path::new("detect"),
        Path::new("--sysroot"),
        empty.path(),
        Path::new("--json"),
    ])
    .expect_code(0);
    assert!(
        run.stderr.contains("none of the files detection reads"),
        "{}",
        run.stderr
    );
    assert_eq!(run.json()["schema"], "vari-profile/1");

    let tree = sysroot_with_cpuinfo("linux-rhel7-zen");
    let run = vari_run([Path::new("detect"), Path::new("--sysroot"), tree.path()]).expect_code(0);
    let first = run.stdout.lines().next().unwrap();
    assert!(first.contains("file tree"), "{}", run.stdout);
    assert!(
        run.stdout.contains("has no vari-snapshot.json"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("not supported by the file tree:"),
        "{}",
        run.stdout
    );
}

/// Issue 7 point 17: a snapshot's heading names the node and shows its C library, which the
/// snapshot's files alone do not hold.
#[test]
fn a_snapshot_heading_names_the_node_and_its_libc() {
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("node");
    vari_run([Path::new("snapshot"), Path::new("-o"), &snap]).expect_code(0);
    let here = vari_run(["detect", "--json", "--no-cache"])
        .expect_code(0)
        .json();
    let run = vari_run([Path::new("detect"), Path::new("--sysroot"), &snap]).expect_code(0);
    let first = run.stdout.lines().next().unwrap();
    assert!(first.contains("snapshot of"), "{first}");
    if let Some(libc) = here["platform"]["libc"].as_str() {
        assert!(first.contains(libc), "{libc} not in {first}");
    }
    assert!(!run.stdout.contains("not supported here"), "{}", run.stdout);
    let there = vari_run([
        Path::new("detect"),
        Path::new("--sysroot"),
        &snap,
        Path::new("--json"),
    ])
    .expect_code(0)
    .json();
    assert_eq!(there["platform"], here["platform"]);
}

/// Issue 7 points 12 and 13: `snapshot -o` names what is in the way and the path given, never
/// suggests a flag that was given or cannot help, and takes an empty directory.
#[test]
fn snapshot_output_conflicts_are_explained() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, "keep").unwrap();
    let other = dir.path().join("home");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("notes"), "keep").unwrap();
    for target in [&file, &other] {
        for replace in [false, true] {
            let mut args = vec![Path::new("snapshot"), Path::new("-o"), target.as_path()];
            if replace {
                args.push(Path::new("--replace"));
            }
            let run = vari_run(args).expect_one_error(&["not a snapshot", "will not be replaced"]);
            assert!(!run.stderr.contains("explicitly"), "{}", run.stderr);
            assert!(!run.stderr.contains(".partial"), "{}", run.stderr);
            assert!(
                run.stderr.contains(&*target.to_string_lossy()),
                "{}",
                run.stderr
            );
        }
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep");
    let snap = dir.path().join("snap");
    vari_run([Path::new("snapshot"), Path::new("-o"), &snap]).expect_code(0);
    vari_run([Path::new("snapshot"), Path::new("-o"), &snap])
        .expect_one_error(&["already holds a snapshot", "--replace"]);
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    vari_run([Path::new("snapshot"), Path::new("-o"), &empty]).expect_code(0);
    assert!(empty.join("vari-snapshot.json").is_file());
}

/// Issue 7 points 7 and 8: a compute capability without a CUDA version, and nonsense values,
/// are errors naming the variable.
#[test]
fn incomplete_or_nonsense_variables_are_errors() {
    let has_driver =
        Path::new("/sys/module/nvidia").exists() || Path::new("/dev/nvidiactl").exists();
    if !has_driver {
        crate::common::run(
            crate::common::vari()
                .args(["detect", "--no-cache"])
                .env("NV_VARIANT_PROVIDER_FORCE_SM_ARCH", "8.6")
                .env_remove("NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION"),
        )
        .expect_one_error(&[
            "NV_VARIANT_PROVIDER_FORCE_SM_ARCH",
            "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION",
        ]);
    }
    for (name, value) in [
        ("NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION", "12.999"),
        ("AMD_VARIANT_PROVIDER_FORCE_GFX_ARCH", "gfxZZZ"),
        ("VARI_PROBE_TIMEOUT", "abc"),
        ("VARI_PROBE_TIMEOUT", "-5"),
        ("VARI_PROBE_TIMEOUT", "0"),
        ("VARI_PROBE_TIMEOUT", "99999999"),
    ] {
        crate::common::run(crate::common::vari().args(["detect"]).env(name, value))
            .expect_one_error(&[name, value]);
    }
    let mut cmd = crate::common::vari();
    cmd.args(["detect", "--json"])
        .env("NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION", "12.8")
        .env("NV_VARIANT_PROVIDER_FORCE_SM_ARCH", "8.99");
    crate::common::run(&mut cmd).expect_one_error(&["NV_VARIANT_PROVIDER_FORCE_SM_ARCH", "8.99"]);
}

#[test]
fn detect_shows_supported_values_in_the_providers_priority_order() {
    // Supported values are a priority list (most preferred first), not a set: detect shows them
    // as given, never re-sorted (by text or by number); only value *sets* are sorted for display.
    let dir = tempfile::tempdir().unwrap();
    let path = crate::common::write_json(
        dir.path(),
        "p.json",
        &serde_json::json!({
            "schema": "vari-profile/1",
            "namespaces": [{"namespace": "nvidia", "features": [
                {"name": "sm_arch", "values": ["90_real", "100_real", "50_real", "80_real"],
                 "multi_value": true}
            ]}]
        }),
    );
    let run = vari_run([Path::new("detect"), Path::new("--profile"), &path]).expect_code(0);
    assert_output(
        &run.stdout,
        r#"unknown platform (profile [PROFILE])

namespace  feature          values
nvidia     sm_arch (multi)  90_real 100_real 50_real 80_real
"#,
        &[(&path, "[PROFILE]")],
    );
}

#[test]
fn abi_dependency_packages_are_summarised_unless_asked_for() {
    // An environment gives one abi_dependency feature per installed package: the human output
    // shows the first few and a count; `-v` and `--json` list them all.
    let dir = tempfile::tempdir().unwrap();
    let features: Vec<serde_json::Value> = (0..10)
        .map(|i| serde_json::json!({"name": format!("pkg{i:02}"), "values": [format!("1.{i}")]}))
        .collect();
    let path = crate::common::write_json(
        dir.path(),
        "p.json",
        &serde_json::json!({
            "schema": "vari-profile/1",
            "namespaces": [{"namespace": "abi_dependency", "features": features}]
        }),
    );
    let listed = |out: &str| {
        (0..10)
            .filter(|i| out.contains(&format!("pkg{i:02} ")))
            .count()
    };
    let run = vari_run([Path::new("detect"), Path::new("--profile"), &path]).expect_code(0);
    assert_eq!(listed(&run.stdout), 3, "{}", run.stdout);
    assert_output(
        &run.stdout,
        r#"unknown platform (profile [PROFILE])

namespace       feature  values
abi_dependency  pkg00    1.0
                pkg01    1.1
                pkg02    1.2
                (more)   … and 7 more packages (10 in all; --json or -v lists all)
"#,
        &[(&path, "[PROFILE]")],
    );
    let run = vari_run([
        Path::new("-v"),
        Path::new("detect"),
        Path::new("--profile"),
        &path,
    ])
    .expect_code(0);
    assert_eq!(listed(&run.stdout), 10, "{}", run.stdout);
    assert_output(
        &run.stdout,
        r#"unknown platform (profile [PROFILE])

namespace       feature  values
abi_dependency  pkg00    1.0
                pkg01    1.1
                pkg02    1.2
                pkg03    1.3
                pkg04    1.4
                pkg05    1.5
                pkg06    1.6
                pkg07    1.7
                pkg08    1.8
                pkg09    1.9
"#,
        &[(&path, "[PROFILE]")],
    );
    let run = vari_run([
        Path::new("detect"),
        Path::new("--profile"),
        &path,
        Path::new("--json"),
    ])
    .expect_code(0);
    assert_eq!(
        run.json()["namespaces"][0]["features"]
            .as_array()
            .unwrap()
            .len(),
        10
    );
}
