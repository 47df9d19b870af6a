//! Small but valid wheels (a RECORD with true hashes, so pip and uv install them) and the
//! variant metadata (PEP 825) they carry.

use std::io::Write;
use std::path::{Path, PathBuf};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The schema URL of PEP 825's variant metadata (0.1.1).
pub const SCHEMA_0_1: &str = "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json";

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A RECORD row for `name` with the true hash and size of `bytes` (newline included).
pub fn record_row(name: &str, bytes: &[u8]) -> String {
    format!(
        "{name},sha256={},{}\n",
        URL_SAFE_NO_PAD.encode(Sha256::digest(bytes)),
        bytes.len()
    )
}

/// A wheel to write: `{name}/__init__.py` (`LABEL = "…"`), METADATA, WHEEL, `variant.json`
/// when given, and a RECORD listing them all with their hashes. The name, version and label
/// come from the file name.
#[derive(Debug, Clone)]
pub struct TestWheel<'a> {
    filename: &'a str,
    metadata_version: &'a str,
    variant_json: Option<&'a str>,
    requires: &'a [&'a str],
    requires_python: Option<&'a str>,
    description: bool,
}

impl<'a> TestWheel<'a> {
    /// A wheel called `filename` (`name-version[-build]-py-abi-platform[-label].whl`) with
    /// Metadata-Version 2.1, no requirements and a one-line description.
    pub fn new(filename: &'a str) -> Self {
        Self {
            filename,
            metadata_version: "2.1",
            variant_json: None,
            requires: &[],
            requires_python: None,
            description: true,
        }
    }

    /// Carries this `variant.json`.
    pub fn variant_json(mut self, json: Option<&'a str>) -> Self {
        self.variant_json = json;
        self
    }

    /// Requires these (`Requires-Dist`; `extra == "…"` markers add `Provides-Extra`).
    pub fn requires(mut self, requires: &'a [&'a str]) -> Self {
        self.requires = requires;
        self
    }

    /// Says `Requires-Python: {spec}`.
    pub fn requires_python(mut self, spec: Option<&'a str>) -> Self {
        self.requires_python = spec;
        self
    }

    /// Says this `Metadata-Version`, with no description (the form `vari-publish`'s tests use).
    pub fn bare_metadata(mut self, version: &'a str) -> Self {
        self.metadata_version = version;
        self.description = false;
        self
    }

    /// Writes the wheel into `dir`; returns its path.
    pub fn write(&self, dir: &Path) -> PathBuf {
        let (name, version, label) = filename_parts(self.filename);
        let name = normalized(name);
        let dist_info = format!("{name}-{version}.dist-info");
        let mut metadata = format!(
            "Metadata-Version: {}\nName: {name}\nVersion: {version}\n",
            self.metadata_version
        );
        if let Some(spec) = self.requires_python {
            metadata.push_str(&format!("Requires-Python: {spec}\n"));
        }
        for requirement in self.requires {
            if let Some((_, rest)) = requirement.split_once("extra == \"") {
                let extra = rest.split('"').next().unwrap_or_default();
                metadata.push_str(&format!("Provides-Extra: {extra}\n"));
            }
        }
        for requirement in self.requires {
            metadata.push_str(&format!("Requires-Dist: {requirement}\n"));
        }
        if self.description {
            metadata.push_str("\nA test package.\n");
        }
        let mut members: Vec<(String, Vec<u8>)> = vec![
            (
                format!("{name}/__init__.py"),
                format!("LABEL = {:?}\n", label.unwrap_or("")).into_bytes(),
            ),
            (format!("{dist_info}/METADATA"), metadata.into_bytes()),
            (
                format!("{dist_info}/WHEEL"),
                b"Wheel-Version: 1.0\nGenerator: vari-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
                    .to_vec(),
            ),
        ];
        if let Some(json) = self.variant_json {
            members.push((
                format!("{dist_info}/variant.json"),
                json.as_bytes().to_vec(),
            ));
        }
        let mut record: String = members
            .iter()
            .map(|(name, bytes)| record_row(name, bytes))
            .collect();
        record.push_str(&format!("{dist_info}/RECORD,,\n"));
        members.push((format!("{dist_info}/RECORD"), record.into_bytes()));
        write_zip(&dir.join(self.filename), &members)
    }
}

/// Writes `members` (deflated, in this order) as the zip archive `path`; returns `path`.
pub fn write_zip(path: &Path, members: &[(String, Vec<u8>)]) -> PathBuf {
    let file = std::fs::File::create(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut zip = zip::ZipWriter::new(file);
    let options = zip::write::SimpleFileOptions::default();
    for (name, bytes) in members {
        zip.start_file(name.as_str(), options).unwrap();
        zip.write_all(bytes).unwrap();
    }
    zip.finish().unwrap();
    path.to_path_buf()
}

/// Rewrites the wheel at `path` with a second `.dist-info` directory first in the archive
/// (`aaa-1.0.dist-info/METADATA`, and its `variant.json` when given), its own members copied
/// raw after it: the wheel pip, uv and every vari reader refuse (issue 33, item 11).
pub fn add_second_dist_info(path: &Path, variant_json: Option<&str>) {
    let original = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut source = zip::ZipArchive::new(std::io::Cursor::new(original)).expect("a zip archive");
    let file = std::fs::File::create(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut zip = zip::ZipWriter::new(file);
    let options = zip::write::SimpleFileOptions::default();
    zip.start_file("aaa-1.0.dist-info/METADATA", options)
        .unwrap();
    zip.write_all(b"Metadata-Version: 2.1\nName: aaa\nVersion: 1.0\n")
        .unwrap();
    if let Some(json) = variant_json {
        zip.start_file("aaa-1.0.dist-info/variant.json", options)
            .unwrap();
        zip.write_all(json.as_bytes()).unwrap();
    }
    for i in 0..source.len() {
        zip.raw_copy_file(source.by_index_raw(i).unwrap()).unwrap();
    }
    zip.finish().unwrap();
}

/// Name, version and label (PEP 817: the sixth part, or the seventh after a build tag) of a
/// wheel file name. A build tag starts with a digit; a Python tag never does.
fn filename_parts(filename: &str) -> (&str, &str, Option<&str>) {
    let parts: Vec<&str> = filename.trim_end_matches(".whl").split('-').collect();
    assert!(parts.len() >= 5, "not a wheel file name: {filename}");
    let has_build = parts[2].starts_with(|c: char| c.is_ascii_digit());
    let label = parts.get(if has_build { 6 } else { 5 }).copied();
    (parts[0], parts[1], label)
}

/// The text of the first member of the wheel (zip bytes) whose name ends with `suffix`
/// (`.dist-info/METADATA`, `/variant.json`), read with zip alone, not with vari.
pub fn member_text(wheel: &[u8], suffix: &str) -> String {
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(wheel)).expect("a zip archive");
    let name = archive
        .file_names()
        .find(|n| n.ends_with(suffix))
        .unwrap_or_else(|| panic!("no member ending in {suffix}"))
        .to_owned();
    let mut text = String::new();
    std::io::Read::read_to_string(&mut archive.by_name(&name).unwrap(), &mut text).unwrap();
    text
}

/// The value of the header `key` in a METADATA text.
pub fn metadata_header(metadata: &str, key: &str) -> String {
    metadata
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{key}: ")))
        .unwrap_or_else(|| panic!("no {key} in METADATA:\n{metadata}"))
        .to_owned()
}

/// The label and sorted properties (`ns :: feature :: value`) the wheel file's own
/// `variant.json` gives, read with zip and serde_json alone (not with vari): the answer a test
/// expects vari to find.
pub fn variant_of(wheel: &Path) -> (String, Vec<String>) {
    let bytes = std::fs::read(wheel).unwrap_or_else(|e| panic!("{}: {e}", wheel.display()));
    let json: Value = serde_json::from_str(&member_text(&bytes, ".dist-info/variant.json"))
        .expect("variant.json is JSON");
    let variants = json["variants"]
        .as_object()
        .expect("`variants` is an object");
    assert_eq!(variants.len(), 1, "{json}");
    let (label, namespaces) = variants.iter().next().unwrap();
    let mut properties = Vec::new();
    for (ns, features) in namespaces.as_object().unwrap() {
        for (feature, values) in features.as_object().unwrap() {
            for value in values.as_array().unwrap() {
                properties.push(format!("{ns} :: {feature} :: {}", value.as_str().unwrap()));
            }
        }
    }
    properties.sort();
    (label.clone(), properties)
}

/// A name as wheel file names spell it: lowercase, each run of `-`, `_` and `.` one `_`.
fn normalized(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !out.ends_with('_') {
                out.push('_');
            }
        } else {
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

/// [`TestWheel`] in one call: `dir/{filename}` with `variant_json` and `requires`.
pub fn wheel(dir: &Path, filename: &str, variant_json: Option<&str>, requires: &[&str]) -> PathBuf {
    TestWheel::new(filename)
        .variant_json(variant_json)
        .requires(requires)
        .write(dir)
}

/// torch's dependencies as in its real METADATA: variant markers included.
pub const TORCH_REQUIRES: &[&str] = &[
    "filelock",
    "nvidia-cuda-runtime-cu12==12.8.90; \"nvidia :: cuda_version_lower_bound :: 12.0\" in variant_properties and variant_label == \"cuda12.8\"",
    "nvidia-cuda-runtime==13.0.96; variant_label == \"cuda13.0\"",
    "pytorch-triton-rocm==3.6.0; \"amd\" in variant_namespaces",
    "pytorch-triton-xpu==3.6.0; \"intel\" in variant_namespaces and platform_system == \"Linux\"",
    "opt-einsum>=3.3; extra == \"opt-einsum\"",
];

/// A document with only `label` among the variants of `document` (that wheel's
/// `variant.json`).
pub fn one_variant(document: &str, label: &str) -> String {
    let mut value: Value = serde_json::from_str(document).expect("a variants document");
    value["variants"]
        .as_object_mut()
        .expect("`variants` is an object")
        .retain(|l, _| l == label);
    value.to_string()
}

/// A 0.1.1 `variants.json` whose labels need `x86_64 :: level :: LEVEL`, the level being the
/// label's last `_`-separated part (`v3`, `x86_64_v3`); `null` needs nothing.
pub fn level_variants(labels: &[&str]) -> String {
    let entries: Vec<String> = labels
        .iter()
        .map(|label| match *label {
            "null" => "\"null\": {}".to_owned(),
            other => {
                let level = other.rsplit('_').next().unwrap_or(other);
                format!("\"{other}\": {{\"x86_64\": {{\"level\": [\"{level}\"]}}}}")
            }
        })
        .collect();
    format!(
        "{{\"$schema\": \"{SCHEMA_0_1}\", \
          \"default-priorities\": {{\"namespace\": [\"x86_64\"]}}, \
          \"variants\": {{{}}}}}",
        entries.join(", ")
    )
}

/// A pretty `variant.json` with one variant: `label` with `properties` (`(namespace, feature,
/// value)`) and `namespaces` as the default namespace order.
pub fn variant_json(namespaces: &[&str], label: &str, properties: &[(&str, &str, &str)]) -> String {
    let mut variant = serde_json::Map::new();
    for (namespace, feature, value) in properties {
        let features = variant
            .entry(namespace.to_string())
            .or_insert_with(|| serde_json::json!({}));
        features
            .as_object_mut()
            .expect("an object")
            .entry(feature.to_string())
            .or_insert_with(|| serde_json::json!([]))
            .as_array_mut()
            .expect("an array")
            .push(serde_json::json!(value));
    }
    serde_json::to_string_pretty(&serde_json::json!({
        "$schema": SCHEMA_0_1,
        "default-priorities": {"namespace": namespaces},
        "variants": {label: variant},
    }))
    .expect("JSON")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_give_name_version_and_label() {
        assert_eq!(
            filename_parts("demo-1.0-py3-none-any.whl"),
            ("demo", "1.0", None)
        );
        assert_eq!(
            filename_parts("demo-1.0-py3-none-any-v3.whl"),
            ("demo", "1.0", Some("v3"))
        );
        assert_eq!(
            filename_parts("demo-1.0-1-py3-none-any.whl"),
            ("demo", "1.0", None)
        );
        assert_eq!(
            filename_parts("demo-1.0-1-py3-none-any-cuda12.8.whl"),
            ("demo", "1.0", Some("cuda12.8"))
        );
    }

    #[test]
    fn names_are_normalised_as_in_file_names() {
        assert_eq!(normalized("Foo.-Bar_baz"), "foo_bar_baz");
    }

    #[test]
    fn level_documents_name_the_level() {
        let doc: Value = serde_json::from_str(&level_variants(&["x86_64_v3", "null"])).unwrap();
        assert_eq!(
            doc["variants"]["x86_64_v3"]["x86_64"]["level"][0],
            serde_json::json!("v3")
        );
        assert_eq!(doc["variants"]["null"], serde_json::json!({}));
        let one: Value = serde_json::from_str(&one_variant(&doc.to_string(), "null")).unwrap();
        assert_eq!(one["variants"].as_object().unwrap().len(), 1);
    }
}
