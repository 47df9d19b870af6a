//! What the index scenarios share: the shared test index server, the
//! PyTorch 2.10 release generated from its real `variants.json`, small `demo` releases,
//! client settings for a test server, targets, and selecting from a served directory.

use std::path::{Path, PathBuf};
use std::time::Duration;

use vari_client::{CacheMode, ClientSettings, IndexClient, IndexUrl, NetrcSource};
use vari_select::{
    select, CandidateFate, ChosenBecause, IndexOptions, Outcome, Request, Resolution, Target,
    TargetSettings,
};

use crate::test_wheels::{level_variants, one_variant, testdata, wheel, TORCH_REQUIRES};

pub(crate) use vari_test_support::index as server;

pub(crate) use server::{FileAttrs, TestIndex};

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

/// A test index serving the torch 2.10.0 release ([`torch_release`]).
pub(crate) async fn torch_index(with_variants_json: bool) -> (tempfile::TempDir, TestIndex) {
    let dir = tempfile::tempdir().unwrap();
    torch_release(dir.path(), with_variants_json);
    let server = TestIndex::start(dir.path()).await;
    (dir, server)
}

/// `demo-{version}` into `dir`: a pure wheel per label of `labels` and the `variants.json`
/// that describes them, and a plain wheel when `plain`.
pub(crate) fn demo_release(dir: &Path, version: &str, labels: &[&str], plain: bool) {
    let document = level_variants(labels);
    for label in labels {
        let json = one_variant(&document, label);
        wheel(
            dir,
            &format!("demo-{version}-py3-none-any-{label}.whl"),
            Some(&json),
            &[],
        );
    }
    if plain {
        wheel(dir, &format!("demo-{version}-py3-none-any.whl"), None, &[]);
    }
    std::fs::write(dir.join(format!("demo-{version}-variants.json")), document).unwrap();
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
/// (Python `version` on `platform`), no cache, none of the process's variables but `HOME`
/// and `PATH`; the hardware is left to the caller.
fn described(version: &str, platform: &str) -> TargetSettings {
    let mut settings = TargetSettings::from_process_env();
    settings.env.retain(|k, _| k == "HOME" || k == "PATH");
    settings.use_cache = false;
    settings.python.version = Some(version.parse().unwrap());
    settings.python.platform = Some(platform.parse().unwrap());
    settings
}

/// CPython 3.12 on `platform` with the hardware detected under an empty directory: no
/// namespace is present but what the provider override variables `env` force.
pub(crate) fn cpython_3_12(platform: &str, env: &[(&str, &str)]) -> Target {
    let empty = tempfile::tempdir().unwrap();
    let mut settings = described("3.12", platform);
    settings
        .env
        .extend(env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
    settings.sysroot = Some(empty.path().to_path_buf());
    Target::resolve(&settings).unwrap()
}

/// The provider override variables of an NVIDIA GPU (SM 8.6) with a CUDA 12.8 driver.
pub(crate) const NV_12_8: &[(&str, &str)] = &[
    ("NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION", "12.8"),
    ("NV_VARIANT_PROVIDER_FORCE_SM_ARCH", "8.6"),
];

/// Linux x86_64 CPython `version` whose hardware is what the file `profile` says
/// (`vari-profile/1` JSON, or hardware facts when its name ends in `.toml`).
pub(crate) fn profile_target(profile: &Path, version: &str) -> Target {
    let mut settings = described(version, "x86_64-manylinux_2_28");
    settings.profile = Some(profile.to_path_buf());
    Target::resolve(&settings).unwrap()
}

/// A facts profile (`.toml`) in `dir` with the given body.
pub(crate) fn facts(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap();
    path
}

/// Facts of an NVIDIA GPU (compute capability 12.0) with a CUDA 13.0 driver, in `dir`.
pub(crate) fn blackwell_facts(dir: &Path) -> PathBuf {
    facts(
        dir,
        "blackwell.toml",
        "[nvidia]\ncuda_version = \"13.0\"\ncompute_capability = \"12.0\"\n",
    )
}

/// A Linux x86_64 CPython 3.12 target whose CPU supports x86-64 up to `level` (a facts
/// profile written into `dir`).
pub(crate) fn level_target(dir: &Path, level: u8) -> Target {
    let profile = facts(
        dir,
        &format!("v{level}.toml"),
        &format!("[x86_64]\nlevel = {level}\n"),
    );
    profile_target(&profile, "3.12")
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

/// [`resolve`] from `server`, through a client of its own, with the default options.
pub(crate) async fn resolve_from(
    server: &TestIndex,
    requirement: &str,
    target: &Target,
) -> Resolution {
    resolve(
        &client(&server.index_url()),
        requirement,
        target,
        &IndexOptions::default(),
    )
    .await
}

/// The chosen file's name.
pub(crate) fn chosen(resolution: &Resolution) -> Option<&str> {
    resolution.chosen.as_ref().map(|c| c.file.filename.as_str())
}

/// Why the chosen file was chosen (there must be one).
pub(crate) fn chosen_because(resolution: &Resolution) -> &ChosenBecause {
    let chosen = resolution.chosen.as_ref();
    &chosen.unwrap_or_else(|| panic!("nothing chosen")).because
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
