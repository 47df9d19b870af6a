//! `vari --version`: the version, the commit the binary was built from and its target triple.
//!
//! The commit and the triple come from `build.rs`; the version from `[workspace.package]` in the
//! workspace manifest, the one place it is written (the wheel's version is read from there too).

use std::process::ExitCode;

use crate::output;

/// The package version (`workspace.package.version`).
const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The short commit name, or "unknown" when built outside a git checkout (from an sdist).
const COMMIT: &str = env!("VARI_BUILD_COMMIT");
/// The target triple the binary was compiled for.
const TARGET: &str = env!("VARI_BUILD_TARGET");

/// The one-line form: `vari 0.1.0 (commit 1a2b3c4d5e, x86_64-unknown-linux-gnu)`.
fn line() -> String {
    format!("vari {VERSION} (commit {COMMIT}, {TARGET})\n")
}

/// The JSON form: `{"name", "version", "commit", "target"}`.
fn json() -> String {
    let value = serde_json::json!({
        "name": "vari",
        "version": VERSION,
        "commit": COMMIT,
        "target": TARGET,
    });
    // Serialising a `serde_json::Value` of strings cannot fail.
    let mut text = serde_json::to_string_pretty(&value).unwrap_or_default();
    text.push('\n');
    text
}

/// Prints the version (as JSON with `json`) and returns the exit status.
pub(crate) fn print(json_output: bool) -> ExitCode {
    let text = if json_output { json() } else { line() };
    match output::print_data(&text) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", e.one_line());
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_names_version_commit_and_target() {
        let line = line();
        assert!(
            line.starts_with(&format!("vari {VERSION} (commit ")),
            "{line}"
        );
        assert!(line.ends_with(&format!(", {TARGET})\n")), "{line}");
        assert!(!COMMIT.is_empty() && !TARGET.is_empty());
    }

    #[test]
    fn json_has_the_same_facts() {
        let value: serde_json::Value = serde_json::from_str(&json()).unwrap();
        assert_eq!(value["version"], VERSION);
        assert_eq!(value["commit"], COMMIT);
        assert_eq!(value["target"], TARGET);
        assert_eq!(value["name"], "vari");
    }
}
