//! `validate` on built sites, intact and tampered with.

use std::path::Path;

use vari_publish::{
    build, validate, BuildOptions, FilePlacement, LocalSite, Problem, Severity, ValidationReport,
};

use crate::common::*;

fn check(site: &Path) -> ValidationReport {
    validate(&LocalSite::new(site).unwrap()).unwrap()
}

fn errors(report: &ValidationReport) -> Vec<&Problem> {
    report
        .problems
        .iter()
        .filter(|p| p.severity == Severity::Error)
        .collect()
}

/// A site from three x86-64 variants and a plain wheel of `pkg 1.0`.
pub(crate) fn site_with_variants() -> (tempfile::TempDir, tempfile::TempDir) {
    let input = tempfile::tempdir().unwrap();
    for level in ["v2", "v3", "v4"] {
        WheelSpec::x86_64("pkg", "1.0", level).write(input.path());
    }
    WheelSpec::plain("pkg", "1.0").write(input.path());
    let site = tempfile::tempdir().unwrap();
    build(&BuildOptions::new(input.path(), site.path())).unwrap();
    (input, site)
}

/// Rewrites the page JSON of `pkg` with `edit`.
fn edit_page(site: &Path, edit: impl FnOnce(&mut serde_json::Value)) {
    let path = site.join("simple/pkg/index.json");
    let mut page = site_json(site, "simple/pkg/index.json");
    edit(&mut page);
    std::fs::write(path, serde_json::to_string(&page).unwrap()).unwrap();
}

/// Replaces the variants.json and fixes its hash on the page, so only its content is at fault.
pub(crate) fn replace_variants_json(site: &Path, text: &str) {
    let old = sha256_hex(&std::fs::read(site.join("files/pkg-1.0-variants.json")).unwrap());
    std::fs::write(site.join("files/pkg-1.0-variants.json"), text).unwrap();
    let hash = sha256_hex(text.as_bytes());
    // The HTML page links it with its hash too.
    let html = site.join("simple/pkg/index.html");
    let page = std::fs::read_to_string(&html).unwrap();
    std::fs::write(&html, page.replace(&old, &hash)).unwrap();
    edit_page(site, |page| {
        for file in page["files"].as_array_mut().unwrap() {
            if file["filename"] == "pkg-1.0-variants.json" {
                file["hashes"]["sha256"] = serde_json::json!(hash);
            }
        }
    });
}

#[test]
fn built_sites_validate_cleanly() {
    let site = tempfile::tempdir().unwrap();
    build(&BuildOptions::new(fixture_wheels(), site.path())).unwrap();
    let report = check(site.path());
    assert_eq!((report.projects, report.files), (1, 8));
    // variantlib's fixtures give two labels the same properties twice: allowed, worth a word.
    let warnings: Vec<_> = report
        .problems
        .iter()
        .map(|p| {
            (
                p.severity,
                p.key.as_deref().unwrap_or(""),
                p.message.as_str(),
            )
        })
        .collect();
    assert_eq!(
        warnings,
        [
            (
                Severity::Warning,
                "variants.fbe82642",
                "has the same properties as `bar`, which installers prefer"
            ),
            (
                Severity::Warning,
                "variants.foo",
                "has the same properties as `60567bd9`, which installers prefer"
            ),
        ]
    );
    let (_input, site) = site_with_variants();
    assert_eq!(check(site.path()).problems, []);
}

#[test]
fn a_release_without_its_variants_json_is_an_error() {
    let (_input, site) = site_with_variants();
    edit_page(site.path(), |page| {
        page["files"]
            .as_array_mut()
            .unwrap()
            .retain(|f| f["filename"] != "pkg-1.0-variants.json");
    });
    let report = check(site.path());
    let errors = errors(&report);
    assert_eq!(errors.len(), 1, "{report:?}");
    assert_eq!(errors[0].file, "simple/pkg/index.json");
    assert!(
        errors[0].message.contains("links no pkg-1.0-variants.json"),
        "{errors:?}"
    );
}

#[test]
fn an_uncovered_label_and_a_disagreeing_variant_are_errors() {
    let (_input, site) = site_with_variants();
    let full = std::fs::read_to_string(site.path().join("files/pkg-1.0-variants.json")).unwrap();
    let mut doc: serde_json::Value = serde_json::from_str(&full).unwrap();
    doc["variants"].as_object_mut().unwrap().remove("v2");
    doc["variants"]["v3"] = serde_json::json!({"x86_64": {"level": ["v1"]}});
    doc["variants"]["v9"] = serde_json::json!({"x86_64": {"level": ["v4"]}});
    replace_variants_json(site.path(), &serde_json::to_string_pretty(&doc).unwrap());

    let report = check(site.path());
    let missing = report
        .problems
        .iter()
        .find(|p| p.key.as_deref() == Some("variants.v2"))
        .unwrap_or_else(|| panic!("{report:?}"));
    assert_eq!(missing.severity, Severity::Error);
    assert_eq!(missing.file, "pkg-1.0-variants.json");
    assert!(missing.message.contains("pkg-1.0-py3-none-any-v2.whl"));
    let conflict = report
        .problems
        .iter()
        .find(|p| p.file == "pkg-1.0-py3-none-any-v3.whl")
        .unwrap_or_else(|| panic!("{report:?}"));
    assert_eq!(conflict.severity, Severity::Error);
    assert!(conflict.message.contains("variants.v3"), "{conflict:?}");
    let extra = report
        .problems
        .iter()
        .find(|p| p.key.as_deref() == Some("variants.v9"))
        .unwrap_or_else(|| panic!("{report:?}"));
    assert_eq!(extra.severity, Severity::Warning);
}

#[test]
fn a_variants_json_missing_a_namespace_the_wheel_declares_is_an_error() {
    let (_input, site) = site_with_variants();
    let full = std::fs::read_to_string(site.path().join("files/pkg-1.0-variants.json")).unwrap();
    let mut doc: serde_json::Value = serde_json::from_str(&full).unwrap();
    // An index file whose namespace list is shorter than the wheels': combining changes it.
    doc["default-priorities"]["namespace"] = serde_json::json!([]);
    doc["variants"] = serde_json::json!({});
    replace_variants_json(site.path(), &serde_json::to_string_pretty(&doc).unwrap());
    let report = check(site.path());
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.file == "pkg-1.0-variants.json"
                && p.key.as_deref() == Some("default-priorities.namespace")),
        "{report:?}"
    );
}

#[test]
fn hashes_are_checked_for_files_and_metadata_files() {
    let (_input, site) = site_with_variants();
    let wheel = site.path().join("files/pkg-1.0-py3-none-any.whl");
    // Replace (not modify in place): the site file is a hard link to the input.
    std::fs::remove_file(&wheel).unwrap();
    std::fs::write(&wheel, b"tampered").unwrap();
    let metadata = site
        .path()
        .join("files/pkg-1.0-py3-none-any-v3.whl.metadata");
    std::fs::remove_file(&metadata).unwrap();
    std::fs::write(&metadata, b"Name: other\n").unwrap();
    std::fs::write(site.path().join("files/pkg-1.0-variants.json"), b"{}").unwrap();

    let report = check(site.path());
    let find = |file: &str| {
        report
            .problems
            .iter()
            .find(|p| p.file == file && p.severity == Severity::Error)
            .unwrap_or_else(|| panic!("no error for {file}: {report:?}"))
    };
    assert_eq!(
        find("pkg-1.0-py3-none-any.whl").key.as_deref(),
        Some("hashes.sha256")
    );
    assert!(find("pkg-1.0-py3-none-any-v3.whl.metadata")
        .message
        .contains("core-metadata"));
    assert_eq!(
        find("pkg-1.0-variants.json").key.as_deref(),
        Some("hashes.sha256")
    );
}

#[test]
fn a_missing_site_or_page_is_reported() {
    assert!(LocalSite::new(Path::new("/nonexistent/site")).is_err());
    let empty = tempfile::tempdir().unwrap();
    let report = check(empty.path());
    assert_eq!(errors(&report)[0].file, "simple/index.json");
    let (_input, site) = site_with_variants();
    std::fs::remove_file(site.path().join("simple/pkg/index.json")).unwrap();
    let report = check(site.path());
    assert_eq!(errors(&report)[0].file, "simple/pkg/index.json");
}

#[test]
fn files_hosted_elsewhere_are_reported_unchecked() {
    let input = tempfile::tempdir().unwrap();
    WheelSpec::x86_64("pkg", "1.0", "v3").write(input.path());
    let site = tempfile::tempdir().unwrap();
    let options = BuildOptions {
        placement: FilePlacement::External {
            base_url: "https://downloads.example.org/".to_owned(),
        },
        ..BuildOptions::new(input.path(), site.path())
    };
    build(&options).unwrap();
    let report = check(site.path());
    assert!(!report.has_errors(), "{report:?}");
    assert_eq!(report.problems.len(), 1, "{report:?}");
    assert!(report.problems[0].message.contains("not checked"));
}
