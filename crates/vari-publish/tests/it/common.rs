//! Wheels generated for the tests, the fixture directory, and reading a built site.
#![allow(dead_code)] // Each module uses a different subset.

use std::path::{Path, PathBuf};

use vari_test_support::wheels::TestWheel;

pub(crate) use vari_test_support::wheels::{sha256_hex, variant_json};

/// variantlib's fixture wheels (one project, named and hash labels, null, plain).
pub(crate) fn fixture_wheels() -> PathBuf {
    vari_test_support::paths::testdata("wheels")
}

/// A wheel to generate.
pub(crate) struct WheelSpec<'a> {
    pub(crate) name: &'a str,
    pub(crate) version: &'a str,
    pub(crate) label: Option<&'a str>,
    pub(crate) variant_json: Option<String>,
    pub(crate) requires_python: Option<&'a str>,
}

impl<'a> WheelSpec<'a> {
    /// A plain wheel.
    pub(crate) fn plain(name: &'a str, version: &'a str) -> Self {
        Self {
            name,
            version,
            label: None,
            variant_json: None,
            requires_python: None,
        }
    }

    /// An x86-64 level variant (`v3`, …) of `name` (label = the level).
    pub(crate) fn x86_64(name: &'a str, version: &'a str, level: &'a str) -> Self {
        Self {
            label: Some(level),
            variant_json: Some(variant_json(
                &["x86_64"],
                level,
                &[("x86_64", "level", level)],
            )),
            ..Self::plain(name, version)
        }
    }

    /// Writes the wheel into `dir` with a valid RECORD; returns its path.
    pub(crate) fn write(&self, dir: &Path) -> PathBuf {
        let filename = match self.label {
            Some(label) => format!("{}-{}-py3-none-any-{label}.whl", self.name, self.version),
            None => format!("{}-{}-py3-none-any.whl", self.name, self.version),
        };
        TestWheel::new(&filename)
            .bare_metadata("2.4")
            .requires_python(self.requires_python)
            .variant_json(self.variant_json.as_deref())
            .write(dir)
    }
}

/// Every file under `root` (relative path → bytes), sorted.
pub(crate) use vari_test_support::paths::files_under as tree;

/// A JSON file of the site.
pub(crate) fn site_json(site: &Path, relative: &str) -> serde_json::Value {
    let text =
        std::fs::read_to_string(site.join(relative)).unwrap_or_else(|e| panic!("{relative}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{relative}: {e}"))
}

/// Checks a PEP 691 (API 1.x, with PEP 700 and PEP 714) project list.
pub(crate) fn assert_pep691_root(root: &serde_json::Value) {
    assert_api_version(root);
    let projects = root["projects"].as_array().expect("`projects` is a list");
    for project in projects {
        assert!(project["name"].is_string(), "projects[].name: {project}");
    }
}

fn assert_api_version(page: &serde_json::Value) {
    let version = page["meta"]["api-version"]
        .as_str()
        .expect("meta.api-version is a string");
    let (major, minor) = version.split_once('.').expect("api-version is MAJOR.MINOR");
    assert_eq!(major, "1", "api-version {version}");
    assert!(minor.parse::<u32>().is_ok(), "api-version {version}");
}

/// Checks a PEP 691 project page: the keys PEP 691 requires with their types, PEP 700's
/// `versions` and `size` (API 1.1), and the optional keys' types where present.
pub(crate) fn assert_pep691_project(page: &serde_json::Value) {
    assert_api_version(page);
    assert!(page["name"].is_string(), "name");
    let versions = page["versions"].as_array().expect("versions (API 1.1)");
    assert!(versions.iter().all(serde_json::Value::is_string));
    for file in page["files"].as_array().expect("files is a list") {
        assert!(file["filename"].is_string(), "filename: {file}");
        assert!(file["url"].is_string(), "url: {file}");
        let hashes = file["hashes"].as_object().expect("hashes is an object");
        assert!(hashes.values().all(|h| h
            .as_str()
            .is_some_and(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))));
        assert!(file["size"].is_u64(), "size (API 1.1): {file}");
        if let Some(requires) = file.get("requires-python") {
            assert!(requires.is_string(), "requires-python: {file}");
        }
        for key in ["core-metadata", "dist-info-metadata"] {
            if let Some(value) = file.get(key) {
                assert!(
                    value.is_boolean()
                        || value
                            .as_object()
                            .is_some_and(|o| o.values().all(serde_json::Value::is_string)),
                    "{key}: {file}"
                );
            }
        }
        if let Some(yanked) = file.get("yanked") {
            assert!(yanked.is_boolean() || yanked.is_string(), "yanked: {file}");
        }
        for key in file.as_object().unwrap().keys() {
            assert!(
                [
                    "filename",
                    "url",
                    "hashes",
                    "requires-python",
                    "core-metadata",
                    "dist-info-metadata",
                    "gpg-sig",
                    "yanked",
                    "size",
                    "upload-time"
                ]
                .contains(&key.as_str()),
                "unknown key {key}: {file}"
            );
        }
    }
}
