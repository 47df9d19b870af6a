//! Parity with uv's own variant support: uv 0.13.9 from the test environment
//! (`scripts/test-requirements.txt`) and `vari select` choose the same file for releases
//! written with `vari wheel repack --for uv` — the demo release and a torch-like one — across a
//! matrix of simulated NVIDIA targets (the override variables both honour), and the x86-64
//! level of this machine (uv cannot be given a profile, so only the detected level is shared).
//! `bench/uv_parity.sh` runs the same comparison and prints the table.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use base64::Engine as _;
use sha2::Digest as _;

use crate::common::{run, test_python, vari, vari_run};

/// The NVIDIA targets: (driver version, compute capability); `None` leaves the variable unset.
const TARGETS: &[(Option<&str>, Option<&str>)] = &[
    (None, None),
    (Some("11.8"), Some("7.0")),
    (Some("12.4"), Some("8.6")),
    (Some("12.6"), Some("6.1")),
    (Some("12.8"), Some("7.0")),
    (Some("12.8"), Some("12.0")),
    (Some("12.9"), Some("9.0")),
    (Some("13.0"), Some("7.0")),
    (Some("13.0"), Some("8.6")),
    (Some("13.0"), Some("12.0")),
    (Some("13.0"), None),
];

const FORCE_DRIVER: &str = "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION";
const FORCE_SM: &str = "NV_VARIANT_PROVIDER_FORCE_SM_ARCH";

fn uv() -> PathBuf {
    let python = test_python();
    let uv = python.parent().unwrap().join("uv");
    let version = Command::new(&uv).arg("--version").output().unwrap();
    let version = String::from_utf8_lossy(&version.stdout).into_owned();
    assert!(
        version.starts_with("uv 0.13."),
        "{} is {version:?}; scripts/test-env pins uv 0.13.9",
        uv.display()
    );
    uv
}

/// A plain `py3-none-any` wheel `{dist}-{version}` with `requires` and a valid RECORD.
fn plain_wheel(dir: &Path, dist: &str, version: &str, requires: &[&str]) -> PathBuf {
    let info = format!("{dist}-{version}.dist-info");
    let name = dist.replace('_', "-");
    let mut metadata = format!("Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n");
    for r in requires {
        metadata.push_str(&format!("Requires-Dist: {r}\n"));
    }
    let members: Vec<(String, Vec<u8>)> = vec![
        (format!("{dist}/__init__.py"), format!("BUILD = {version:?}\n").into_bytes()),
        (format!("{info}/METADATA"), metadata.into_bytes()),
        (
            format!("{info}/WHEEL"),
            b"Wheel-Version: 1.0\nGenerator: vari-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
                .to_vec(),
        ),
    ];
    let path = dir.join(format!("{dist}-{version}-py3-none-any.whl"));
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
    let options = zip::write::SimpleFileOptions::default();
    let mut record = String::new();
    for (member, bytes) in &members {
        let digest =
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(bytes));
        record.push_str(&format!("{member},sha256={digest},{}\n", bytes.len()));
        zip.start_file(member.as_str(), options).unwrap();
        zip.write_all(bytes).unwrap();
    }
    record.push_str(&format!("{info}/RECORD,,\n"));
    zip.start_file(format!("{info}/RECORD"), options).unwrap();
    zip.write_all(record.as_bytes()).unwrap();
    zip.finish().unwrap();
    path
}

/// `vari wheel repack --for uv` of builds (local versions) of `dist` with `config`, into
/// `dir/site`; `extra` files are copied beside them.
fn repack_for_uv(
    dir: &Path,
    config: &Path,
    dist: &str,
    version: &str,
    locals: &[&str],
    requires: &[&str],
) -> PathBuf {
    let builds = dir.join("builds");
    std::fs::create_dir_all(&builds).unwrap();
    let site = dir.join("site");
    let mut args: Vec<PathBuf> = vec![
        "wheel".into(),
        "repack".into(),
        "--for".into(),
        "uv".into(),
        "--config".into(),
        config.to_owned(),
    ];
    for local in locals {
        args.push(plain_wheel(
            &builds,
            dist,
            &format!("{version}+{local}"),
            requires,
        ));
    }
    args.extend(["-o".into(), site.clone()]);
    vari_run(&args).expect_code(0);
    site
}

/// The file uv 0.13 installs for `project` from `site` with `env` set (its `Selecting:` line).
fn uv_choice(uv: &Path, site: &Path, cache: &Path, project: &str, env: &[(&str, &str)]) -> String {
    let mut cmd = Command::new(uv);
    cmd.args([
        "pip",
        "install",
        "--dry-run",
        "--no-index",
        "-v",
        "--find-links",
    ])
    .arg(site)
    .arg("--python")
    .arg(test_python())
    .arg("--cache-dir")
    .arg(cache)
    .args(["--preview-features", "wheel-variants", project])
    .env_remove(FORCE_DRIVER)
    .env_remove(FORCE_SM)
    .env_remove("UV_INDEX_URL")
    .env_remove("UV_DEFAULT_INDEX");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "uv failed for {env:?}:\n{text}");
    let line = text
        .lines()
        .find(|l| l.contains("Selecting:") && l.contains(&format!("{project}==")))
        .unwrap_or_else(|| panic!("no Selecting line for {project}:\n{text}"));
    line.rsplit_once('(')
        .and_then(|(_, rest)| rest.strip_suffix(')'))
        .unwrap_or_else(|| panic!("unexpected line {line:?}"))
        .to_owned()
}

/// The file `vari select` chooses for `project` from `site` with `env` set.
fn vari_choice(site: &Path, project: &str, env: &[(&str, &str)]) -> String {
    let mut cmd = vari();
    cmd.args(["select", project, "--json", "--find-links"])
        .arg(site)
        .arg("--python")
        .arg(test_python())
        .env_remove("UV_INDEX_URL")
        .env_remove("UV_DEFAULT_INDEX")
        .env_remove("PIP_INDEX_URL")
        .env_remove(FORCE_DRIVER)
        .env_remove(FORCE_SM);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let chosen = run(&mut cmd).expect_code(0).json();
    chosen["selections"][0]["filename"]
        .as_str()
        .unwrap_or_else(|| panic!("no filename in {chosen}"))
        .to_owned()
}

/// Asserts uv and vari choose the same file on every NVIDIA target; returns the choices.
fn same_choice_on_every_target(site: &Path, project: &str) -> Vec<String> {
    let uv = uv();
    let cache = site.parent().unwrap().join("uv-cache");
    let mut rows = Vec::new();
    for (driver, sm) in TARGETS {
        let mut env = Vec::new();
        if let Some(d) = driver {
            env.push((FORCE_DRIVER, *d));
        }
        if let Some(s) = sm {
            env.push((FORCE_SM, *s));
        }
        let by_uv = uv_choice(&uv, site, &cache, project, &env);
        let by_vari = vari_choice(site, project, &env);
        assert_eq!(
            by_uv, by_vari,
            "driver {driver:?}, compute capability {sm:?}"
        );
        // The table bench/uv_parity.sh shows (`--nocapture`).
        println!(
            "| {project} | {} | {} | {by_uv} | {by_vari} |",
            driver.unwrap_or("-"),
            sm.unwrap_or("-")
        );
        rows.push(by_vari);
    }
    rows
}

/// The demo release (`examples/demo`) as a repack config: its labels, properties and
/// namespace order, and its CUDA runtime dependency behind a variant marker.
const DEMO_CONFIG: &str = r#"
[variant.default-priorities]
namespace = ["nvidia", "amd", "intel"]

[[build]]
match = { local-version = "cu126" }
label = "cu126"
properties = ["nvidia :: cuda_version_lower_bound :: 12.6"]

[[build]]
match = { local-version = "cu128" }
label = "cu128"
properties = ["nvidia :: cuda_version_lower_bound :: 12.8"]

[[build]]
match = { local-version = "cu130" }
label = "cu130"
properties = ["nvidia :: cuda_version_lower_bound :: 13.0"]

[[build]]
match = { local-version = "rocm64" }
label = "rocm6.4"
properties = ["amd :: rocm_version :: 6.4", "amd :: gfx_arch :: gfx942"]

[[build]]
match = { local-version = "xpu" }
label = "xpu"
properties = ["intel :: device_ip :: 12.60.7"]

[[build]]
match = { local-version = "cpu" }
label = "null"
"#;

#[test]
fn uv_and_vari_choose_the_same_demo_build_on_every_nvidia_target() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("demo.toml");
    std::fs::write(&config, DEMO_CONFIG).unwrap();
    let site = repack_for_uv(
        dir.path(),
        &config,
        "vari_demo",
        "1.0.0",
        &["cu126", "cu128", "cu130", "rocm64", "xpu", "cpu"],
        &["vari-demo-cuda-runtime==1.0.0; \"nvidia\" in variant_namespaces"],
    );
    let runtime = "vari_demo_cuda_runtime-1.0.0-py3-none-any.whl";
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/demo");
    std::fs::copy(demo.join(runtime), site.join(runtime)).unwrap();
    // The uv check of the converted metadata: the NVIDIA builds reach uv's users, the ROCm and
    // XPU builds cannot (uv has no amd or intel provider), which it says, and fails.
    let report = vari_run([
        "metadata".as_ref(),
        "validate".as_ref(),
        "--json".as_ref(),
        "--for".as_ref(),
        "uv".as_ref(),
        site.join("vari_demo-1.0.0-variants.json").as_os_str(),
    ])
    .expect_code(1)
    .json();
    let uv = &report["files"][0]["uv"];
    assert_eq!(uv["rejected"], serde_json::Value::Null, "{report}");
    let targets: Vec<&str> = uv["differences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["target"].as_str().unwrap())
        .collect();
    assert_eq!(targets, ["rocm6.4", "xpu"], "{report}");
    let rows = same_choice_on_every_target(&site, "vari-demo");
    // The matrix reaches every NVIDIA build and the CPU fallback: the test can tell them apart.
    for label in ["cu126", "cu128", "cu130", "null"] {
        assert!(
            rows.iter().any(|f| f.ends_with(&format!("-{label}.whl"))),
            "{label}: {rows:?}"
        );
    }
}

#[test]
fn uv_and_vari_choose_the_same_torch_build_on_every_nvidia_target() {
    let dir = tempfile::tempdir().unwrap();
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/repack/pytorch.toml");
    let site = repack_for_uv(
        dir.path(),
        &config,
        "torch",
        "2.10.0",
        &["cu126", "cu128", "cu130", "xpu", "rocm7.1", "cpu"],
        &[],
    );
    let rows = same_choice_on_every_target(&site, "torch");
    // A V100 (sm_70) on a CUDA 13 driver gets the 12.8 build: 13.0 has no sm_70 code.
    let v100 = TARGETS
        .iter()
        .position(|t| *t == (Some("13.0"), Some("7.0")))
        .unwrap();
    assert!(rows[v100].ends_with("-cuda12.8.whl"), "{rows:?}");
    for label in ["cuda12.6", "cuda12.8", "cuda13.0", "null"] {
        assert!(
            rows.iter().any(|f| f.ends_with(&format!("-{label}.whl"))),
            "{label}: {rows:?}"
        );
    }
}

/// uv detects this machine's x86-64 level and cannot be given another; vari detects the same
/// machine. A release with a build per level must resolve to the same one.
#[test]
fn uv_and_vari_choose_the_same_x86_64_level_on_this_machine() {
    if std::env::consts::ARCH != "x86_64" {
        eprintln!("skipped: this machine is not x86-64");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("levels.toml");
    let mut text = String::from("[variant.default-priorities]\nnamespace = [\"x86_64\"]\n");
    for level in ["v1", "v2", "v3", "v4"] {
        text.push_str(&format!(
            "\n[[build]]\nmatch = {{ local-version = \"{level}\" }}\nlabel = \"{level}\"\n\
             properties = [\"x86_64 :: level :: {level}\"]\n"
        ));
    }
    text.push_str("\n[[build]]\nmatch = { local-version = \"generic\" }\nlabel = \"null\"\n");
    std::fs::write(&config, text).unwrap();
    let site = repack_for_uv(
        dir.path(),
        &config,
        "levels",
        "1.0",
        &["v1", "v2", "v3", "v4", "generic"],
        &[],
    );
    let uv = uv();
    let by_uv = uv_choice(&uv, &site, &dir.path().join("uv-cache"), "levels", &[]);
    let by_vari = vari_choice(&site, "levels", &[]);
    assert_eq!(by_uv, by_vari);
    println!("| levels | (this machine's x86-64 level) | - | {by_uv} | {by_vari} |");
    assert!(!by_vari.ends_with("-null.whl"), "{by_vari}");
}

/// `vari wheel make-variant` of `plain` with `args` into `site`: the wheel's path and stderr.
fn make_variant(plain: &Path, site: &Path, args: &[&str]) -> (PathBuf, String) {
    let mut command = vari();
    command
        .args(["wheel", "make-variant"])
        .arg(plain)
        .args(args)
        .arg("-o")
        .arg(site);
    let made = run(&mut command).expect_code(0);
    (PathBuf::from(made.stdout.trim()), made.stderr)
}

/// A release of a cu128 build and the null build made one wheel at a time with make-variant
/// (`for_uv`: with `--for uv`), and its `*-variants.json` merged from them, in `dir/site`.
fn made_release(dir: &Path, for_uv: bool) -> (PathBuf, String) {
    let builds = dir.join("builds");
    let site = dir.join("site");
    std::fs::create_dir_all(&builds).unwrap();
    let plain = plain_wheel(&builds, "made_demo", "1.0", &[]);
    let for_args: &[&str] = if for_uv { &["--for", "uv"] } else { &[] };
    let (cu128, stderr) = make_variant(
        &plain,
        &site,
        &[
            &[
                "-p",
                "nvidia :: cuda_version_lower_bound :: 12.8",
                "--label",
                "cu128",
            ],
            for_args,
        ]
        .concat(),
    );
    let variants = site.join("made_demo-1.0-variants.json");
    vari_run([
        Path::new("metadata"),
        Path::new("merge"),
        &cu128,
        Path::new("-o"),
        &variants,
    ])
    .expect_code(0);
    let (null, _) = make_variant(
        &plain,
        &site,
        &[
            &["--null", "--metadata", variants.to_str().unwrap()],
            for_args,
        ]
        .concat(),
    );
    vari_run([
        Path::new("metadata"),
        Path::new("merge"),
        &cu128,
        &null,
        Path::new("-o"),
        &variants,
    ])
    .expect_code(0);
    (site, stderr)
}

#[test]
fn make_variant_for_uv_is_selected_by_uv_and_otherwise_says_uv_would_not() {
    let uv = uv();
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("uv-cache");
    let on_cuda = [(FORCE_DRIVER, "12.8"), (FORCE_SM, "9.0")];

    // As PEP 825 alone: uv 0.13.9 has no provider for nvidia and installs the null build on a
    // CUDA 12.8 machine; make-variant says so.
    let plain_dir = dir.path().join("plain");
    let (site, stderr) = made_release(&plain_dir, false);
    assert!(
        stderr.contains("uv 0.13 ignores namespace(s) nvidia") && stderr.contains("--for uv"),
        "{stderr}"
    );
    assert!(
        uv_choice(&uv, &site, &cache, "made-demo", &on_cuda).ends_with("-null.whl"),
        "uv selected the variant without --for uv: the warning is wrong"
    );

    // With --for uv: uv selects the CUDA build where the driver is there, the null one
    // elsewhere, as vari does; no warning about uv.
    let for_uv_dir = dir.path().join("for-uv");
    let (site, stderr) = made_release(&for_uv_dir, true);
    assert!(!stderr.contains("uv 0.13 ignores"), "{stderr}");
    let by_uv = uv_choice(&uv, &site, &cache, "made-demo", &on_cuda);
    assert!(by_uv.ends_with("-cu128.whl"), "{by_uv}");
    assert_eq!(by_uv, vari_choice(&site, "made-demo", &on_cuda));
    let without = uv_choice(&uv, &site, &cache, "made-demo", &[]);
    assert!(without.ends_with("-null.whl"), "{without}");
}
