//! Python project (distribution) names: which spellings are valid (PEP 508) and their normal form
//! (PEP 503). Every crate that compares, files or looks up a project by name goes through these,
//! so `Foo.Bar`, `foo_bar` and `FOO-bar` are one project everywhere.

/// Whether `name` is a valid project name (PEP 508): ASCII letters, digits, `-`, `_` and `.`,
/// starting and ending with a letter or digit.
///
/// ```
/// use vari_core::project::is_valid;
/// assert!(is_valid("Foo.Bar-2"));
/// assert!(!is_valid("-foo") && !is_valid("foo bar") && !is_valid(""));
/// ```
pub fn is_valid(name: &str) -> bool {
    let bytes = name.as_bytes();
    let (Some(first), Some(last)) = (bytes.first(), bytes.last()) else {
        return false;
    };
    first.is_ascii_alphanumeric()
        && last.is_ascii_alphanumeric()
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// The PEP 503 normal form: lowercase, each run of `-`, `_` and `.` replaced by one `-`. It is
/// the form index URLs use and the one to compare names in.
///
/// ```
/// assert_eq!(vari_core::project::normalize("Foo.-_Bar"), "foo-bar");
/// ```
pub fn normalize(name: &str) -> String {
    normalize_with(name, '-')
}

/// The normal form with `separator` for each run of `-`, `_` and `.`: `-` for PEP 503, `_` for
/// wheel filenames ([`crate::filename::normalize_name`]). Lowercasing is Unicode's, as Python's
/// `str.lower` in PEP 503's reference code; valid names are ASCII, where it is ASCII's.
pub(crate) fn normalize_with(name: &str, separator: char) -> String {
    let mut out = String::with_capacity(name.len());
    let mut in_separator_run = false;
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !in_separator_run {
                out.push(separator);
            }
            in_separator_run = true;
        } else {
            out.extend(c.to_lowercase());
            in_separator_run = false;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_of_one_project_normalise_alike() {
        for spelling in ["Foo-Bar", "foo_bar", "FOO.BAR", "foo--_.bar"] {
            assert_eq!(normalize(spelling), "foo-bar", "{spelling}");
            assert_eq!(normalize_with(spelling, '_'), "foo_bar", "{spelling}");
        }
        assert_ne!(normalize("foobar"), normalize("foo-bar"));
    }

    #[test]
    fn validity_follows_pep_508() {
        for good in ["a", "A1", "foo-bar", "foo_bar.baz", "1foo"] {
            assert!(is_valid(good), "{good}");
        }
        for bad in ["", "-foo", "foo.", "_", "foo bar", "föö", "foo/bar"] {
            assert!(!is_valid(bad), "{bad}");
        }
    }
}
