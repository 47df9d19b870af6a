//! Inputs that once crashed a fuzz target (`fuzz/regressions/`) must now give errors.

use std::path::Path;

use vari_core::metadata::{read_json, read_json_lenient, read_pyproject, SourceKind};

/// Each reproducer and a fragment of the error it must now give.
const METADATA: &[(&str, &str)] = &[
    (
        "pep508-extra-ending-in-underscore.json",
        "must start and end with a letter or digit",
    ),
    (
        "pep508-name-ending-in-dash-pyproject.toml",
        "must start and end with a letter or digit",
    ),
    (
        "pep508-name-ending-in-underscore.json",
        "must start and end with a letter or digit",
    ),
    (
        "pep508-extra-without-closing-bracket-pyproject.toml",
        "must start and end with a letter or digit",
    ),
    (
        "pep508-non-ascii-after-marker-pyproject.toml",
        "outside quotes, a marker is ASCII",
    ),
    (
        "label-longer-than-16-in-0.0.2.json",
        "characters long; schema 0.0.2 allows at most 16",
    ),
];

#[test]
fn metadata_regressions_are_errors_not_panics() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/regressions/metadata");
    let on_disk = std::fs::read_dir(&dir).unwrap().count();
    assert_eq!(
        on_disk,
        METADATA.len(),
        "every reproducer in {} is listed",
        dir.display()
    );
    for (name, fragment) in METADATA {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        let errors = if name.ends_with(".toml") {
            read_pyproject(&text).unwrap_err()
        } else {
            // The lenient reader may drop the bad entry or refuse the file; it must not panic.
            let _ = read_json_lenient(&text, SourceKind::IndexFile);
            read_json(&text, SourceKind::IndexFile).unwrap_err()
        };
        let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert!(
            messages.iter().any(|m| m.contains(fragment)),
            "{name}: {messages:?}"
        );
    }
}

/// Each marker reproducer and a fragment of the error it must now give.
const MARKERS: &[(&str, &str)] = &[(
    "pep508-tilde-equal-string-first.txt",
    "is not a version marker",
)];

#[test]
fn marker_regressions_are_errors_not_panics() {
    use vari_core::markers::Marker;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/regressions/markers");
    let on_disk = std::fs::read_dir(&dir).unwrap().count();
    assert_eq!(
        on_disk,
        MARKERS.len(),
        "every reproducer in {} is listed",
        dir.display()
    );
    for (name, fragment) in MARKERS {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        let error = Marker::parse(&text).unwrap_err().to_string();
        assert!(error.contains(fragment), "{name}: {error}");
        // The same comparison in an enable-if or a requirement's marker.
        let enable_if = r#"{"$schema": "https://variants-schema.wheelnext.dev/v0.0.3.json",
            "default-priorities": {"namespace": ["x"]},
            "providers": {"x": {"requires": ["x-provider; 'a' ~= platform_machine"],
                                 "enable-if": "'a' ~= platform_machine"}},
            "variants": {"null": {}}}"#;
        let errors = read_json(enable_if, SourceKind::IndexFile).unwrap_err();
        for path in ["providers.x.enable-if", "providers.x.requires[0]"] {
            assert!(
                errors
                    .iter()
                    .any(|e| e.path == path && e.message.contains(fragment)),
                "{path}: {errors:?}"
            );
        }
    }
}
