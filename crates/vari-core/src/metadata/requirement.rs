//! Parsing PEP 508 requirements and markers through `pep508_rs`, guarded against its known
//! panics. Every call into `pep508_rs`'s parsers goes through this module's checks first.
//!
//! `pep508_rs` 0.9.2 (the newest release) panics instead of returning an error:
//! - when a project name or an extra ends in `-`, `_` or `.` and more text follows (`a-,b`,
//!   `a_;x`, `a[b_]`; found by `fuzz/fuzz_targets/metadata.rs`, inputs in
//!   `fuzz/regressions/metadata/`). PEP 508 requires names to start and end with a letter or
//!   digit, so such requirements are invalid anyway;
//! - on `"literal" ~= string_marker` (`'x' ~= platform_machine`; found by
//!   `fuzz/fuzz_targets/markers.rs`, input in `fuzz/regressions/markers/`): it ignores `~=`
//!   between a string marker and a string only when the marker comes first. `~=` compares
//!   versions, so such a comparison is refused here.
//!
//! - on a character outside ASCII after a complete comparison (`os_name == 'a'\u{feff}`: its
//!   cursor slices by a character count as if it were a byte count; found by
//!   `fuzz/fuzz_targets/metadata.rs`, input in `fuzz/regressions/metadata/`). Outside quoted
//!   strings a marker is ASCII (names, operators, spaces), so such a marker is refused.
//!
//! All are rejected here before `pep508_rs` sees them. So is a marker nested deeper than
//! [`MAX_MARKER_DEPTH`](crate::markers::MAX_MARKER_DEPTH): `pep508_rs` recurses once per
//! parenthesis, and 60,000 of them overflow the stack.

use std::str::FromStr;

use pep508_rs::{Requirement, VerbatimUrl};

/// Parses a PEP 508 requirement, or explains why it is invalid. Never panics: the inputs on
/// which `pep508_rs` 0.9.2 panics are refused first (see the module docs). Every crate that
/// parses a requirement goes through this function.
///
/// ```
/// use vari_core::metadata::parse_requirement;
/// let r = parse_requirement("torch[opt]>=2.9; python_version >= '3.10'").unwrap();
/// assert_eq!(r.name.as_ref(), "torch");
/// assert!(parse_requirement("torch; 'x' ~= platform_machine").is_err()); // a pep508_rs panic
/// assert!(parse_requirement("a-[x]").is_err()); // another one
/// ```
pub fn parse_requirement(text: &str) -> Result<Requirement<VerbatimUrl>, String> {
    check_names(text)?;
    // The whole text too: the part before the marker nests one level at most (`a (>=1)`), so
    // this holds whatever `pep508_rs` takes for the start of the marker.
    crate::markers::check_marker_depth(text).map_err(|e| e.to_string())?;
    if let (_, Some(marker)) = split_requirement(text) {
        check_marker_text(marker)?;
    }
    Requirement::<VerbatimUrl>::from_str(text).map_err(|e| e.message.to_string())
}

/// Splits a `Requires-Dist` value into the requirement and its marker (if any).
///
/// The marker starts at the first `;`, except in a URL requirement (`name @ URL`), where PEP 508
/// requires whitespace before the `;` because URLs may contain one.
///
/// ```
/// use vari_core::markers::split_requirement;
/// assert_eq!(split_requirement("a>=1; extra == 'x@y'"), ("a>=1", Some(" extra == 'x@y'")));
/// assert_eq!(split_requirement("a @ https://h/a;b.whl ; python_version > '3'"),
///            ("a @ https://h/a;b.whl ", Some(" python_version > '3'")));
/// ```
pub fn split_requirement(requires_dist: &str) -> (&str, Option<&str>) {
    let at = requires_dist.find('@');
    let semi = requires_dist.find(';');
    let split = match (at, semi) {
        (Some(at), Some(semi)) if at < semi => {
            let bytes = requires_dist.as_bytes();
            requires_dist[at..]
                .match_indices(';')
                .map(|(i, _)| at + i)
                .find(|&i| bytes[i - 1].is_ascii_whitespace())
        }
        (_, semi) => semi,
    };
    match split {
        Some(i) => (&requires_dist[..i], Some(&requires_dist[i + 1..])),
        None => (requires_dist, None),
    }
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

/// The marker variables whose values are versions (the only ones `~=` may compare), and
/// `extra`, which `pep508_rs` handles apart.
const VERSION_MARKERS: [&str; 4] = [
    "python_version",
    "python_full_version",
    "implementation_version",
    "extra",
];

/// Refuses what `pep508_rs` panics on in a marker: a character outside ASCII that is not in
/// a quoted string, and `"literal" ~= marker` where the marker is not a version; and what
/// overflows its stack, parentheses nested deeper than the limit. Quoted text is skipped: PEP 508
/// strings have no escapes.
pub(crate) fn check_marker_text(text: &str) -> Result<(), String> {
    crate::markers::check_marker_depth(text).map_err(|e| e.to_string())?;
    let bytes = text.as_bytes();
    let mut quote: Option<u8> = None;
    for (i, &b) in bytes.iter().enumerate() {
        match quote {
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None if !b.is_ascii() => {
                let c = text[i..].chars().next().unwrap_or_default();
                return Err(format!(
                    "unexpected character {c:?} (outside quotes, a marker is ASCII)"
                ));
            }
            None if b == b'\'' || b == b'"' => quote = Some(b),
            None if b == b'~' && bytes.get(i + 1) == Some(&b'=') => {
                let before = text[..i].trim_end();
                let after = text[i + 2..].trim_start();
                let name_len = after
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
                    .unwrap_or(after.len());
                let name = &after[..name_len];
                let literal_first = before.ends_with(['\'', '"']);
                if literal_first && !name.is_empty() && !VERSION_MARKERS.contains(&name) {
                    return Err(format!(
                        "`~=` compares versions, and `{name}` is not a version marker"
                    ));
                }
            }
            None => {}
        }
    }
    Ok(())
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
    fn characters_outside_ascii_outside_quotes_are_errors_not_panics() {
        let e = check_marker_text("platform_system == 'Linux'\u{feff}").unwrap_err();
        assert_eq!(
            e,
            "unexpected character '\\u{feff}' (outside quotes, a marker is ASCII)"
        );
        assert!(parse_requirement("a; os_name == 'x' é").is_err());
        assert_eq!(check_marker_text("platform_system == 'Lïnux'"), Ok(()));
        // A URL requirement's URL is not a marker.
        assert!(check_names("a @ https://x/é ; os_name == 'x'").is_ok());
    }

    #[test]
    fn compatible_release_with_a_string_marker_is_an_error_not_a_panic() {
        for text in [
            "'xl1'  ~= platform_machine",
            "\"x\" ~= sys_platform and python_version > '3'",
            "a; 'x' ~=platform_machine",
        ] {
            let e = check_marker_text(text).unwrap_err();
            assert!(e.contains("is not a version marker"), "{e}");
        }
        assert!(parse_requirement("a; 'x' ~= platform_machine").is_err());
        for text in [
            "python_version ~= '3.10'",
            "'3.10' ~= python_version",
            "platform_machine == '~=x'",
            "\"a ~= b\" == os_name",
        ] {
            assert_eq!(check_marker_text(text), Ok(()), "{text}");
        }
    }

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
