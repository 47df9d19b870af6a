//! The example repack config end to end: `vari wheel repack --config examples/repack/cupy.toml`
//! turns generated `cupy-cuda11x` / `cupy-cuda12x` builds into one `cupy` release, and
//! `vari select` picks from it by the (forced) NVIDIA driver, or says NVIDIA is needed.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use base64::Engine as _;
use sha2::Digest as _;

use crate::common::{run, vari, vari_run, Run};
use crate::scan::support::{code, fatbin, Elf, CUDA12_FATBIN, CUDA13_FATBIN};

/// A CuPy extension module with real fat-binary code: CUDA 13's for the cu13 build (compute
/// capability 7.5 and up, as CUDA 13 dropped Volta), CUDA 12's otherwise (5.0 to 9.0).
pub(crate) fn cupy_core(dist: &str) -> Vec<u8> {
    let name = if dist.contains("cuda13") {
        CUDA13_FATBIN
    } else {
        CUDA12_FATBIN
    };
    let section = fatbin(name);
    Elf {
        fatbin: Some((".nv_fatbin", &section)),
        ..Elf::x86_64_library(code::RET)
    }
    .build()
}

/// A small plain wheel of distribution `dist` (underscored, as in file names) 13.4.0 with a
/// valid RECORD.
fn cupy_build(dir: &Path, dist: &str) -> PathBuf {
    let info = format!("{dist}-13.4.0.dist-info");
    let name = dist.replace('_', "-");
    let members: Vec<(String, Vec<u8>)> = vec![
        ("cupy/__init__.py".to_owned(), format!("BUILD = {dist:?}\n").into_bytes()),
        ("cupy/_core.so".to_owned(), cupy_core(dist)),
        (
            format!("{info}/METADATA"),
            format!("Metadata-Version: 2.1\nName: {name}\nVersion: 13.4.0\n\n").into_bytes(),
        ),
        (
            format!("{info}/WHEEL"),
            b"Wheel-Version: 1.0\nGenerator: vari-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
                .to_vec(),
        ),
    ];
    let path = dir.join(format!("{dist}-13.4.0-py3-none-any.whl"));
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

/// The repacked `cupy` release in `dir/site`.
fn repacked_cupy(dir: &Path) -> PathBuf {
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/repack/cupy.toml");
    let site = dir.join("site");
    std::fs::create_dir(&site).unwrap();
    let mut args: Vec<PathBuf> = vec!["wheel".into(), "repack".into(), "--config".into(), config];
    for dist in ["cupy_cuda11x", "cupy_cuda12x", "cupy_cuda13x"] {
        args.push(cupy_build(dir, dist));
    }
    args.extend(["-o".into(), site.clone()]);
    vari_run(&args).expect_code(0);
    site
}

/// `vari select cupy --find-links SITE` for CPython 3.12 on manylinux x86-64, with no index
/// from the environment.
fn select(site: &Path, configure: impl FnOnce(&mut Command)) -> Run {
    let mut cmd = vari();
    cmd.args(["select", "cupy", "--json", "--find-links"])
        .arg(site)
        .args([
            "--python-version",
            "3.12",
            "--python-platform",
            "x86_64-manylinux_2_28",
        ])
        .env_remove("UV_INDEX_URL")
        .env_remove("UV_DEFAULT_INDEX")
        .env_remove("PIP_INDEX_URL")
        .env_remove("NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION")
        .env_remove("NV_VARIANT_PROVIDER_FORCE_SM_ARCH");
    configure(&mut cmd);
    run(&mut cmd)
}

#[test]
fn the_cupy_example_picks_by_the_cuda_driver() {
    let dir = tempfile::tempdir().unwrap();
    let site = repacked_cupy(dir.path());
    let chosen = select(&site, |cmd| {
        cmd.env("NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION", "12.8")
            .env("NV_VARIANT_PROVIDER_FORCE_SM_ARCH", "8.6");
    })
    .expect_code(0)
    .json();
    let selection = &chosen["selections"][0];
    assert_eq!(selection["name"], "cupy", "{chosen}");
    assert_eq!(selection["label"], "cu12", "{chosen}");
    assert_eq!(
        selection["filename"], "cupy-13.4.0-py3-none-any-cu12.whl",
        "{chosen}"
    );
    // The same machine with a CUDA 11 driver: only the cu11 build fits.
    let chosen = select(&site, |cmd| {
        cmd.env("NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION", "11.8")
            .env("NV_VARIANT_PROVIDER_FORCE_SM_ARCH", "8.6");
    })
    .expect_code(0)
    .json();
    assert_eq!(chosen["selections"][0]["label"], "cu11", "{chosen}");
}

/// On a CUDA 13 driver a V100 (compute capability 7.0) must not get cu13, whose binaries have no
/// sm_70 code (the example infers sm_arch from them): it gets cu12, which has. A100 gets cu13.
#[test]
fn the_cupy_example_gives_a_v100_on_cuda_13_the_build_with_its_code() {
    let dir = tempfile::tempdir().unwrap();
    let site = repacked_cupy(dir.path());
    for (sm, label) in [("7.0", "cu12"), ("8.0", "cu13")] {
        let chosen = select(&site, |cmd| {
            cmd.env("NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION", "13.0")
                .env("NV_VARIANT_PROVIDER_FORCE_SM_ARCH", sm);
        })
        .expect_code(0)
        .json();
        assert_eq!(chosen["selections"][0]["label"], label, "{sm}: {chosen}");
    }
}

#[test]
fn the_cupy_example_without_a_gpu_says_nvidia_is_needed() {
    let dir = tempfile::tempdir().unwrap();
    let site = repacked_cupy(dir.path());
    let profile = dir.path().join("no-gpu.json");
    std::fs::write(&profile, r#"{"schema": "vari-profile/1"}"#).unwrap();
    let failed = select(&site, |cmd| {
        cmd.arg("--profile").arg(&profile);
    });
    assert_ne!(failed.code, 0, "{}", failed.stdout);
    assert!(
        failed.stderr.contains("NVIDIA") && failed.stderr.contains("cu12"),
        "{}",
        failed.stderr
    );
}

/// `vari index build` over the directory `wheel repack` wrote (`-o`) as `run` reports it.
fn index_build(input: &Path, site: &Path) -> Run {
    vari_run([
        "index".as_ref(),
        "build".as_ref(),
        input.as_os_str(),
        "-o".as_ref(),
        site.as_os_str(),
    ])
    .expect_code(0)
}

/// The `*-variants.json` that `wheel repack` writes beside its wheels is accepted silently by
/// `index build` when it matches them; tampered with, it is a warning naming the file and what
/// differs (and the index still publishes the one combined from the wheels).
#[test]
fn index_build_accepts_the_variants_json_repack_wrote_and_names_a_tampered_one() {
    let dir = tempfile::tempdir().unwrap();
    let repacked = repacked_cupy(dir.path());
    let variants_json = repacked.join("cupy-13.4.0-variants.json");
    assert!(variants_json.is_file());

    let built = index_build(&repacked, &dir.path().join("index"));
    assert!(!built.stderr.contains("variants.json"), "{}", built.stderr);

    let text = std::fs::read_to_string(&variants_json).unwrap();
    let tampered = text.replace("\"12.0\"", "\"12.8\"");
    assert_ne!(text, tampered);
    std::fs::write(&variants_json, tampered).unwrap();
    let built = index_build(&repacked, &dir.path().join("index"));
    let warning = built
        .stderr
        .lines()
        .find(|l| l.contains("cupy-13.4.0-variants.json"))
        .unwrap_or_else(|| panic!("{}", built.stderr));
    assert!(
        warning.starts_with("warning: ")
            && warning.contains("does not match the wheels")
            && warning.contains("variant `cu12` has nvidia :: cuda_version_lower_bound :: 12.8, ")
            && warning.contains("where its wheel has nvidia :: cuda_version_lower_bound :: 12.0, "),
        "{warning}"
    );
    let published =
        std::fs::read_to_string(dir.path().join("index/files/cupy-13.4.0-variants.json")).unwrap();
    assert_eq!(published, text);
}
