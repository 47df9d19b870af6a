//! Small but valid wheels (RECORD with hashes, so pip and uv install them), and the releases
//! the tests serve: a torch 2.10.0 built from its real `variants.json` with its real variant
//! markers (tags `py3-none-any`, so the machine's Python installs it), its dependencies, a
//! variant project without markers, a project without variants, one with a corrupt
//! `variants.json`, and one that only has GPU builds.

use std::io::Write;
use std::path::{Path, PathBuf};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The workspace's test data.
pub(crate) fn testdata(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(relative)
}

/// Writes `dir/{filename}`: `{name}/__init__.py` (`LABEL = "…"`), METADATA with `requires`,
/// WHEEL, `variant.json` when given, and a RECORD that lists them all with their hashes.
pub(crate) fn wheel(
    dir: &Path,
    filename: &str,
    variant_json: Option<&str>,
    requires: &[&str],
) -> PathBuf {
    let parsed = vari_core::filename::WheelFilename::parse(filename).unwrap();
    let dist_info = format!("{}-{}.dist-info", parsed.name, parsed.version);
    let label = parsed
        .label
        .as_ref()
        .map(|l| l.to_string())
        .unwrap_or_default();
    let mut metadata = format!(
        "Metadata-Version: 2.1\nName: {}\nVersion: {}\n",
        parsed.name, parsed.version
    );
    for requirement in requires {
        if let Some((_, rest)) = requirement.split_once("extra == \"") {
            let extra = rest.split('"').next().unwrap();
            metadata.push_str(&format!("Provides-Extra: {extra}\n"));
        }
    }
    for requirement in requires {
        metadata.push_str(&format!("Requires-Dist: {requirement}\n"));
    }
    metadata.push_str("\nA test package.\n");
    let mut members: Vec<(String, Vec<u8>)> = vec![
        (
            format!("{}/__init__.py", parsed.name),
            format!("LABEL = {label:?}\n").into_bytes(),
        ),
        (format!("{dist_info}/METADATA"), metadata.into_bytes()),
        (
            format!("{dist_info}/WHEEL"),
            b"Wheel-Version: 1.0\nGenerator: vari-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
                .to_vec(),
        ),
    ];
    if let Some(json) = variant_json {
        members.push((
            format!("{dist_info}/variant.json"),
            json.as_bytes().to_vec(),
        ));
    }
    let mut record = String::new();
    for (name, bytes) in &members {
        let hash = URL_SAFE_NO_PAD.encode(Sha256::digest(bytes));
        record.push_str(&format!("{name},sha256={hash},{}\n", bytes.len()));
    }
    record.push_str(&format!("{dist_info}/RECORD,,\n"));
    members.push((format!("{dist_info}/RECORD"), record.into_bytes()));
    let path = dir.join(filename);
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
    let options = zip::write::SimpleFileOptions::default();
    for (name, bytes) in members {
        zip.start_file(name, options).unwrap();
        zip.write_all(&bytes).unwrap();
    }
    zip.finish().unwrap();
    path
}

/// The METADATA member of a wheel's bytes.
pub(crate) fn metadata_of(wheel: &[u8]) -> String {
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(wheel)).unwrap();
    let name = archive
        .file_names()
        .find(|n| n.ends_with(".dist-info/METADATA"))
        .unwrap()
        .to_owned();
    let mut text = String::new();
    std::io::Read::read_to_string(&mut archive.by_name(&name).unwrap(), &mut text).unwrap();
    text
}

/// A document with only `label` among its variants (the `variant.json` of that wheel).
pub(crate) fn one_variant(document: &str, label: &str) -> String {
    let mut value: Value = serde_json::from_str(document).unwrap();
    value["variants"]
        .as_object_mut()
        .unwrap()
        .retain(|l, _| l == label);
    value.to_string()
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

/// torch's dependencies as in its real METADATA: variant markers included.
pub(crate) const TORCH_REQUIRES: &[&str] = &[
    "filelock",
    "nvidia-cuda-runtime-cu12==12.8.90; \"nvidia :: cuda_version_lower_bound :: 12.0\" in variant_properties and variant_label == \"cuda12.8\"",
    "nvidia-cuda-runtime==13.0.96; variant_label == \"cuda13.0\"",
    "pytorch-triton-rocm==3.6.0; \"amd\" in variant_namespaces",
    "pytorch-triton-xpu==3.6.0; \"intel\" in variant_namespaces and platform_system == \"Linux\"",
    "opt-einsum>=3.3; extra == \"opt-einsum\"",
];

/// The labels of the generated torch 2.10.0.
pub(crate) const TORCH_LABELS: &[&str] = &[
    "cuda12.6", "cuda12.8", "cuda13.0", "rocm7.0", "rocm7.1", "xpu", "null",
];

/// Writes torch 2.10.0 (every label, `py3-none-any`, the real `variants.json`), its
/// dependencies, and the sdist into `dir`.
pub(crate) fn torch_release(dir: &Path) {
    let document =
        std::fs::read_to_string(testdata("variants-json/torch-2.10.0-variants.json")).unwrap();
    for label in TORCH_LABELS {
        wheel(
            dir,
            &format!("torch-2.10.0-py3-none-any-{label}.whl"),
            Some(&one_variant(&document, label)),
            TORCH_REQUIRES,
        );
    }
    std::fs::write(dir.join("torch-2.10.0-variants.json"), &document).unwrap();
    std::fs::write(dir.join("torch-2.10.0.tar.gz"), b"not really a tarball").unwrap();
    for (name, version) in [
        ("filelock", "3.20.0"),
        ("nvidia_cuda_runtime_cu12", "12.8.90"),
        ("nvidia_cuda_runtime", "13.0.96"),
        ("pytorch_triton_rocm", "3.6.0"),
        ("pytorch_triton_xpu", "3.6.0"),
        ("opt_einsum", "3.4.0"),
    ] {
        wheel(
            dir,
            &format!("{name}-{version}-py3-none-any.whl"),
            None,
            &[],
        );
    }
}

/// `fastpkg` 1.0: x86-64 level variants v1, v3, v4 and a non-variant wheel; no variant
/// markers, so the chosen wheel is served as its original bytes.
pub(crate) fn fastpkg_release(dir: &Path) {
    let document = level_variants(&["v1", "v3", "v4"]);
    for level in ["v1", "v3", "v4"] {
        wheel(
            dir,
            &format!("fastpkg-1.0-py3-none-any-{level}.whl"),
            Some(&one_variant(&document, level)),
            &["filelock"],
        );
    }
    wheel(dir, "fastpkg-1.0-py3-none-any.whl", None, &["filelock"]);
    std::fs::write(dir.join("fastpkg-1.0-variants.json"), document).unwrap();
}

/// `plainpkg` 1.0 and 2.0: no variants at all.
pub(crate) fn plainpkg_release(dir: &Path) {
    wheel(dir, "plainpkg-1.0-py3-none-any.whl", None, &[]);
    wheel(dir, "plainpkg-2.0-py3-none-any.whl", None, &["filelock"]);
    std::fs::write(dir.join("plainpkg-2.0.tar.gz"), b"an sdist").unwrap();
}

/// `corrupt` 1.0 (good variant metadata) and 2.0 (a `variants.json` that is not JSON), each
/// with x86-64 level variants and a non-variant wheel.
pub(crate) fn corrupt_release(dir: &Path) {
    let document = level_variants(&["v1", "v3"]);
    for version in ["1.0", "2.0"] {
        for level in ["v1", "v3"] {
            wheel(
                dir,
                &format!("corrupt-{version}-py3-none-any-{level}.whl"),
                Some(&one_variant(&document, level)),
                &[],
            );
        }
        wheel(
            dir,
            &format!("corrupt-{version}-py3-none-any.whl"),
            None,
            &[],
        );
    }
    std::fs::write(dir.join("corrupt-1.0-variants.json"), &document).unwrap();
    std::fs::write(
        dir.join("corrupt-2.0-variants.json"),
        "{\"variants\": [not json",
    )
    .unwrap();
}

/// `gpuonly` 1.0: CUDA builds only (the torch metadata's `cuda12.8`), nothing for a CPU.
pub(crate) fn gpuonly_release(dir: &Path) {
    let document =
        std::fs::read_to_string(testdata("variants-json/torch-2.10.0-variants.json")).unwrap();
    let mut value: Value = serde_json::from_str(&document).unwrap();
    value["variants"]
        .as_object_mut()
        .unwrap()
        .retain(|l, _| l == "cuda12.8");
    let document = value.to_string();
    wheel(
        dir,
        "gpuonly-1.0-py3-none-any-cuda12.8.whl",
        Some(&document),
        &[],
    );
    std::fs::write(dir.join("gpuonly-1.0-variants.json"), document).unwrap();
}

/// The lowercase hex SHA-256 of `bytes`.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
