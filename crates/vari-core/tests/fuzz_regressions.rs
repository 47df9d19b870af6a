//! Inputs that once crashed a fuzz target (`fuzz/regressions/`) must now give errors.

use std::path::Path;

use vari_core::metadata::{read_json, read_json_lenient, read_pyproject, SourceKind};

#[test]
fn metadata_regressions_are_errors_not_panics() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/regressions/metadata");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let errors = match path.extension().and_then(|e| e.to_str()) {
            Some("json") => {
                assert!(read_json_lenient(&text, SourceKind::IndexFile).is_err());
                read_json(&text, SourceKind::IndexFile).unwrap_err()
            }
            Some("toml") => read_pyproject(&text).unwrap_err(),
            _ => continue,
        };
        let message = errors[0].to_string();
        assert!(
            message.contains("must start and end with a letter or digit"),
            "{}: {message}",
            path.display()
        );
        seen += 1;
    }
    assert!(
        seen >= 3,
        "expected the regression inputs in {}",
        dir.display()
    );
}
