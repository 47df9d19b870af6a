//! Small but valid wheels (RECORD with hashes, so pip and uv install them) and the variant
//! metadata they carry, for vari-select's tests and vari-proxy's, which `#[path]`-include
//! this file: it depends on vari-core, zip, base64, sha2 and serde_json only.

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
