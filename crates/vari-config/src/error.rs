//! The one error type: a file, the key path inside it, the line, and what is wrong.

/// Why a configuration file could not be used: the workspace's one located error.
///
/// Displayed on one line as `FILE: KEY: MESSAGE (line N)`; the key and line are left out when
/// they are not known (a file that cannot be read, a syntax error before any key).
pub type ConfigError = vari_core::Located;

/// The 1-based line of byte offset `offset` in `text`.
pub(crate) fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    #[test]
    fn one_line_with_key_and_line() {
        let e = ConfigError::at(Path::new("/c/vari.toml"), "prefer[1]", "bad").with_line(3);
        assert_eq!(e.to_string(), "/c/vari.toml: prefer[1]: bad (line 3)");
        let e = ConfigError::new(Path::new("/c/vari.toml"), "gone");
        assert_eq!(e.to_string(), "/c/vari.toml: gone");
    }

    #[test]
    fn lines_count_from_one() {
        assert_eq!(line_of("a\nb\nc", 0), 1);
        assert_eq!(line_of("a\nb\nc", 2), 2);
        assert_eq!(line_of("a\nb\nc", 99), 3);
    }
}
