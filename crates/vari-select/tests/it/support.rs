//! Builds small but valid wheels (RECORD hashes included) and targets for the tests.

use std::io::Write;
use std::path::{Path, PathBuf};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use sha2::{Digest, Sha256};
use vari_select::{Target, TargetSettings};

/// Writes `dir/{filename}`: a wheel with METADATA, WHEEL, RECORD and, when given, variant.json.
pub(crate) fn wheel(dir: &Path, filename: &str, variant_json: Option<&str>) -> PathBuf {
    let parsed = vari_core::filename::WheelFilename::parse(filename).unwrap();
    let dist_info = format!("{}-{}.dist-info", parsed.name, parsed.version);
    let mut members: Vec<(String, Vec<u8>)> = vec![
        (format!("{}.py", parsed.name), b"".to_vec()),
        (
            format!("{dist_info}/METADATA"),
            format!("Metadata-Version: 2.1\nName: {}\nVersion: {}\n", parsed.name, parsed.version)
                .into_bytes(),
        ),
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
    let file = std::fs::File::create(&path).unwrap();
    let mut zip = zip::ZipWriter::new(file);
    let options = zip::write::SimpleFileOptions::default();
    for (name, bytes) in members {
        zip.start_file(name, options).unwrap();
        zip.write_all(&bytes).unwrap();
    }
    zip.finish().unwrap();
    path
}

/// A 0.0.3 `variant.json` (the generation that has `enable-if`) with one variant of the `x86_64 :: level` feature (or the null
/// variant for `None`), the x86_64 provider enabled only `if` the marker holds.
pub(crate) fn x86_variant_json(
    label: &str,
    level: Option<&str>,
    enable_if: Option<&str>,
) -> String {
    let enable_if = enable_if
        .map(|m| format!(r#", "enable-if": {m:?}"#))
        .unwrap_or_default();
    let properties = level
        .map(|l| format!(r#"{{"x86_64": {{"level": ["{l}"]}}}}"#))
        .unwrap_or_else(|| "{}".to_owned());
    format!(
        r#"{{"$schema": "https://variants-schema.wheelnext.dev/v0.0.3.json",
  "default-priorities": {{"namespace": ["x86_64"]}},
  "providers": {{"x86_64": {{"requires": ["provider-variant-x86-64"]{enable_if}}}}},
  "variants": {{"{label}": {properties}}}}}"#
    )
}

/// A `vari-profile/1` file supporting x86-64 up to `v3` on Linux x86_64 (or the platform given).
pub(crate) fn x86_profile(dir: &Path, platform: Option<&str>) -> PathBuf {
    let platform = platform
        .map(|p| format!(r#""platform": {p},"#))
        .unwrap_or_default();
    let path = dir.join("profile.json");
    std::fs::write(
        &path,
        format!(
            r#"{{"schema": "vari-profile/1", {platform}
  "namespaces": [{{"namespace": "x86_64", "features": [{{"name": "level", "values": ["v3", "v2", "v1"]}}]}}]}}"#
        ),
    )
    .unwrap();
    path
}

/// Settings for a described target: no interpreter, no host detection (a profile file).
pub(crate) fn described(profile: &Path, version: &str, platform: &str) -> TargetSettings {
    let mut settings = TargetSettings::from_process_env();
    settings.env.retain(|k, _| k == "HOME" || k == "PATH");
    settings.profile = Some(profile.to_path_buf());
    settings.python.version = Some(version.parse().unwrap());
    settings.python.platform = Some(platform.parse().unwrap());
    settings
}

/// Resolves a target.
pub(crate) fn target(settings: &TargetSettings) -> Target {
    Target::resolve(settings).unwrap()
}
