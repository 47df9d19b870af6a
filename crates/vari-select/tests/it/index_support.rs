//! What the index scenarios share: vari-client's test server (included, not copied), tiny
//! wheels with real filename patterns, the PyTorch 2.10 release generated from its real
//! `variants.json`, client settings for a test server, and targets.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use vari_client::{CacheMode, ClientSettings, IndexClient, IndexUrl, NetrcSource};
use vari_select::{
    select, CandidateFate, IndexOptions, Outcome, Request, Resolution, Target, TargetSettings,
};

#[path = "../../../vari-client/tests/it/server.rs"]
pub(crate) mod server;

pub(crate) use server::{FileAttrs, TestIndex};

/// The workspace's test data.
pub(crate) fn testdata(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(relative)
}

/// Writes a tiny wheel `dir/filename` with `METADATA` (the given `Requires-Dist` lines) and,
/// when given, `variant.json`.
pub(crate) fn wheel(dir: &Path, filename: &str, variant_json: Option<&str>, requires: &[&str]) {
    let parsed = vari_core::filename::WheelFilename::parse(filename).unwrap();
    let info = format!("{}-{}.dist-info", parsed.name, parsed.version);
    let mut zip = zip::ZipWriter::new(std::fs::File::create(dir.join(filename)).unwrap());
    let options = zip::write::SimpleFileOptions::default();
    zip.start_file(format!("{}/__init__.py", parsed.name), options)
        .unwrap();
    zip.start_file(format!("{info}/METADATA"), options).unwrap();
    let mut metadata = format!(
        "Metadata-Version: 2.1\nName: {}\nVersion: {}\n",
        parsed.name, parsed.version
    );
    for requirement in requires {
        metadata.push_str(&format!("Requires-Dist: {requirement}\n"));
    }
    zip.write_all(metadata.as_bytes()).unwrap();
    if let Some(json) = variant_json {
        zip.start_file(format!("{info}/variant.json"), options)
            .unwrap();
        zip.write_all(json.as_bytes()).unwrap();
    }
    zip.start_file(format!("{info}/RECORD"), options).unwrap();
    zip.finish().unwrap();
}

/// A 0.1.1 `variants.json` whose labels need `x86_64 :: level :: LABEL` (`null`: nothing).
pub(crate) fn level_variants(labels: &[&str]) -> String {
    let entries: Vec<String> = labels
        .iter()
        .map(|label| match *label {
            "null" => "\"null\": {}".to_owned(),
            level => format!("\"{level}\": {{\"x86_64\": {{\"level\": [\"{level}\"]}}}}"),
        })
        .collect();
    format!(
        "{{\"$schema\": \"https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json\", \
          \"default-priorities\": {{\"namespace\": [\"x86_64\"]}}, \
          \"variants\": {{{}}}}}",
        entries.join(", ")
    )
}

/// The `variant.json` of one label of an index-level document: the same document with only
/// that variant.
pub(crate) fn one_variant(document: &str, label: &str) -> String {
    let mut value: Value = serde_json::from_str(document).unwrap();
    let variants = value["variants"].as_object_mut().unwrap();
    variants.retain(|l, _| l == label);
    value.to_string()
}

/// The dependencies every generated torch wheel declares, variant markers included.
pub(crate) const TORCH_REQUIRES: &[&str] = &[
    "filelock",
    "nvidia-cuda-runtime-cu12==12.8.90; \"nvidia :: cuda_version_lower_bound :: 12.0\" in variant_properties and variant_label == \"cuda12.8\"",
    "nvidia-cuda-runtime==13.0.96; variant_label == \"cuda13.0\"",
    "pytorch-triton-rocm==3.6.0; \"amd\" in variant_namespaces",
    "pytorch-triton-xpu==3.6.0; \"intel\" in variant_namespaces and platform_system == \"Linux\"",
    "opt-einsum>=3.3; extra == \"opt-einsum\"",
];

/// The wheels generated for torch 2.10.0 from its real `variants.json`:
/// - Linux x86_64: every label (CUDA 12.6, 12.8, 13.0, ROCm 7.0, 7.1, XPU, null/CPU);
/// - Windows x86_64: CUDA 12.6, 12.8, 13.0, XPU, CPU;
/// - Linux aarch64: CUDA 12.6 and 13.0 and CPU — `cuda12.8` has no wheel there;
/// - macOS arm64: one non-variant wheel (CPU only);
/// - the sdist.
pub(crate) const TORCH_WHEELS: &[(&str, &str)] = &[
    ("cp312-cp312-manylinux_2_28_x86_64", "cuda12.6"),
    ("cp312-cp312-manylinux_2_28_x86_64", "cuda12.8"),
    ("cp312-cp312-manylinux_2_28_x86_64", "cuda13.0"),
    ("cp312-cp312-manylinux_2_28_x86_64", "rocm7.0"),
    ("cp312-cp312-manylinux_2_28_x86_64", "rocm7.1"),
    ("cp312-cp312-manylinux_2_28_x86_64", "xpu"),
    ("cp312-cp312-manylinux_2_28_x86_64", "null"),
    ("cp312-cp312-win_amd64", "cuda12.6"),
    ("cp312-cp312-win_amd64", "cuda12.8"),
    ("cp312-cp312-win_amd64", "cuda13.0"),
    ("cp312-cp312-win_amd64", "xpu"),
    ("cp312-cp312-win_amd64", "null"),
    ("cp312-cp312-manylinux_2_28_aarch64", "cuda12.6"),
    ("cp312-cp312-manylinux_2_28_aarch64", "cuda13.0"),
    ("cp312-cp312-manylinux_2_28_aarch64", "null"),
];

/// Writes the torch 2.10.0 release into `dir`; `with_variants_json` adds the real
/// `torch-2.10.0-variants.json` (without it the index has only the wheels' own metadata).
pub(crate) fn torch_release(dir: &Path, with_variants_json: bool) {
    let document =
        std::fs::read_to_string(testdata("variants-json/torch-2.10.0-variants.json")).unwrap();
    for (tags, label) in TORCH_WHEELS {
        let json = one_variant(&document, label);
        wheel(
            dir,
            &format!("torch-2.10.0-{tags}-{label}.whl"),
            Some(&json),
            TORCH_REQUIRES,
        );
    }
    wheel(
        dir,
        "torch-2.10.0-cp312-none-macosx_11_0_arm64.whl",
        None,
        &["filelock"],
    );
    std::fs::write(dir.join("torch-2.10.0.tar.gz"), b"not really a tarball").unwrap();
    if with_variants_json {
        std::fs::write(dir.join("torch-2.10.0-variants.json"), &document).unwrap();
    }
}

/// Settings for a test server: no cache, no netrc, one quick retry.
pub(crate) fn settings(index: &str) -> ClientSettings {
    ClientSettings {
        indexes: vec![IndexUrl::parse(index).unwrap()],
        cache_dir: None,
        cache_mode: CacheMode::Normal,
        read_timeout: Duration::from_secs(10),
        retries: 1,
        retry_backoff: Duration::from_millis(10),
        netrc: NetrcSource::Disabled,
        ..ClientSettings::default()
    }
}

pub(crate) fn client(index: &str) -> IndexClient {
    IndexClient::new(settings(index)).unwrap()
}

/// Target settings that read nothing from this machine but what is asked: no interpreter
/// (Python `version` on `platform`), and the hardware from `profile` or, without one, detected
/// under an empty directory (so no namespace but what `env` overrides is present).
pub(crate) fn target(
    profile: Option<&Path>,
    version: &str,
    platform: &str,
    env: &[(&str, &str)],
    empty_root: &Path,
) -> Target {
    let mut settings = TargetSettings::from_process_env();
    settings.env.retain(|k, _| k == "HOME" || k == "PATH");
    settings
        .env
        .extend(env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
    settings.use_cache = false;
    match profile {
        Some(profile) => settings.profile = Some(profile.to_path_buf()),
        None => settings.sysroot = Some(empty_root.to_path_buf()),
    }
    settings.python.version = Some(version.parse().unwrap());
    settings.python.platform = Some(platform.parse().unwrap());
    Target::resolve(&settings).unwrap()
}

/// A facts profile (`.toml`) in `dir` with the given body.
pub(crate) fn facts(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap();
    path
}

/// Selects `requirement` and expects the project to have been looked at.
pub(crate) async fn resolve(
    client: &IndexClient,
    requirement: &str,
    target: &Target,
    options: &IndexOptions,
) -> Resolution {
    let request = Request::parse(requirement).unwrap();
    match select(client, &request, target, options).await.unwrap() {
        Outcome::Resolved(resolution) => *resolution,
        Outcome::Skipped { marker } => panic!("{requirement} skipped ({marker})"),
    }
}

/// The chosen file's name.
pub(crate) fn chosen(resolution: &Resolution) -> Option<&str> {
    resolution.chosen.as_ref().map(|c| c.file.filename.as_str())
}

/// The fate of `filename` in the report of `version`.
pub(crate) fn fate<'r>(
    resolution: &'r Resolution,
    version: &str,
    filename: &str,
) -> &'r CandidateFate {
    let report = resolution
        .versions
        .iter()
        .find(|r| r.version.to_string() == version)
        .unwrap_or_else(|| panic!("{version} not considered"));
    &report
        .files
        .iter()
        .find(|f| f.filename == filename)
        .unwrap_or_else(|| panic!("{filename} not in the report of {version}"))
        .fate
}

/// The versions considered, newest first.
pub(crate) fn considered(resolution: &Resolution) -> Vec<String> {
    resolution
        .versions
        .iter()
        .map(|r| r.version.to_string())
        .collect()
}
