//! Parsing PEP 508 requirements through `pep508_rs`, guarded against its one known panic.
//!
//! `pep508_rs` 0.9.2 (the newest release) panics instead of returning an error when a project
//! name or an extra ends in `-`, `_` or `.` and more text follows (`a-,b`, `a_;x`, `a[b_]`;
//! found by `fuzz/fuzz_targets/metadata.rs`, inputs in `fuzz/regressions/metadata/`). PEP 508
//! requires names to start and end with a letter or digit, so such requirements are invalid
//! anyway: they are rejected here before `pep508_rs` sees them.

use std::str::FromStr;

use pep508_rs::{Requirement, VerbatimUrl};

/// Parses a PEP 508 requirement, or explains why it is invalid. Never panics.
pub(crate) fn parse_requirement(text: &str) -> Result<Requirement<VerbatimUrl>, String> {
    check_names(text)?;
    Requirement::<VerbatimUrl>::from_str(text).map_err(|e| e.message.to_string())
}

/// The project name a requirement starts with (`nvidia-variant-provider>=0.1; …` →
/// `nvidia-variant-provider`), without parsing the rest.
pub(crate) fn requirement_name(requirement: &str) -> &str {
    let requirement = requirement.trim_start();
    let end = requirement
        .find(|c| !is_name_char(c))
        .unwrap_or(requirement.len());
    &requirement[..end]
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')
}

/// A name must start and end with a letter or digit (PEP 508 `identifier`).
fn check_identifier(kind: &str, name: &str) -> Result<(), String> {
    let bad_edge = |c: Option<char>| c.is_some_and(|c| !c.is_ascii_alphanumeric());
    if bad_edge(name.chars().next()) || bad_edge(name.chars().last()) {
        return Err(format!(
            "{kind} {name:?} must start and end with a letter or digit"
        ));
    }
    Ok(())
}

/// Checks the project name and the extras, the two places the panic comes from.
fn check_names(text: &str) -> Result<(), String> {
    let name = requirement_name(text);
    check_identifier("project name", name)?;
    let rest = text.trim_start()[name.len()..].trim_start();
    if let Some(extras) = rest.strip_prefix('[') {
        // Up to the closing bracket, or the end when it is missing (pep508_rs then reports the
        // bracket, but only after validating the names it has seen).
        let extras = extras.split(']').next().unwrap_or(extras);
        for extra in extras.split(',').map(str::trim) {
            let name_len = extra.find(|c| !is_name_char(c)).unwrap_or(extra.len());
            check_identifier("extra", &extra[..name_len])?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_requirements_parse() {
        for r in [
            "nvidia-variant-provider>=0.0.2,<1.0.0",
            "provider-fictional-hw == 1.0.0",
            "a[b,c]>=1; python_version >= '3.12'",
            "My.Provider_Plugin",
            "pkg @ https://example.com/pkg-1.0.tar.gz",
        ] {
            assert!(parse_requirement(r).is_ok(), "{r}");
        }
    }

    #[test]
    fn names_ending_in_a_separator_are_errors_not_panics() {
        // The fuzzer's reproducers, and neighbours of them.
        for (r, message) in [
            (
                "a-,b",
                "project name \"a-\" must start and end with a letter or digit",
            ),
            (
                "a_;x",
                "project name \"a_\" must start and end with a letter or digit",
            ),
            (
                "a.>=1",
                "project name \"a.\" must start and end with a letter or digit",
            ),
            (
                "_a",
                "project name \"_a\" must start and end with a letter or digit",
            ),
            (
                "a[b_]",
                "extra \"b_\" must start and end with a letter or digit",
            ),
            (
                "a [x, -y]",
                "extra \"-y\" must start and end with a letter or digit",
            ),
            // No closing bracket: pep508_rs still validates the names first.
            (
                "a[b--,c",
                "extra \"b--\" must start and end with a letter or digit",
            ),
            (
                "a[b, c- d]",
                "extra \"c-\" must start and end with a letter or digit",
            ),
        ] {
            assert_eq!(parse_requirement(r).unwrap_err(), message, "{r}");
        }
        // Other invalid requirements are pep508_rs's errors.
        assert!(parse_requirement("a[b").is_err());
        assert!(parse_requirement(">=1").is_err());
        assert!(parse_requirement("").is_err());
    }
}
