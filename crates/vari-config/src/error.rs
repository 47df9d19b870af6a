//! The one error type: a file, the key path inside it, the line, and what is wrong.

use std::fmt;
use std::path::{Path, PathBuf};

/// Why a configuration file could not be used.
///
/// Displayed on one line as `FILE: KEY: MESSAGE (line N)`; the key and line are left out when
/// they are not known (a file that cannot be read, a syntax error before any key).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ConfigError {
    /// The file at fault.
    pub path: PathBuf,
    /// The key path inside it (`prefer[1]`, `tool.vari.index-strategy`), when known.
    pub key: Option<String>,
    /// The 1-based line of the key or value at fault, when known.
    pub line: Option<usize>,
    /// What is wrong there.
    pub message: String,
}

impl ConfigError {
    /// A problem with the file as a whole (it cannot be read).
    pub(crate) fn file(path: &Path, message: impl Into<String>) -> Self {
        Self {
            path: path.to_path_buf(),
            key: None,
            line: None,
            message: message.into(),
        }
    }

    /// A problem at a key path and, when the span is known, a line of `text`.
    pub(crate) fn at(
        path: &Path,
        key: impl Into<String>,
        position: Option<usize>,
        message: impl Into<String>,
    ) -> Self {
        let key = key.into();
        Self {
            path: path.to_path_buf(),
            key: (!key.is_empty()).then_some(key),
            line: position,
            message: message.into(),
        }
    }

    /// The message with the line, as it follows the key: `not a pattern (line 3)`.
    pub fn message_with_line(&self) -> String {
        match self.line {
            Some(line) => format!("{} (line {line})", self.message),
            None => self.message.clone(),
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.path.display())?;
        if let Some(key) = &self.key {
            write!(f, "{key}: ")?;
        }
        f.write_str(&self.message_with_line())
    }
}

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
    use super::*;

    #[test]
    fn one_line_with_key_and_line() {
        let e = ConfigError::at(Path::new("/c/vari.toml"), "prefer[1]", Some(3), "bad");
        assert_eq!(e.to_string(), "/c/vari.toml: prefer[1]: bad (line 3)");
        let e = ConfigError::file(Path::new("/c/vari.toml"), "gone");
        assert_eq!(e.to_string(), "/c/vari.toml: gone");
    }

    #[test]
    fn lines_count_from_one() {
        assert_eq!(line_of("a\nb\nc", 0), 1);
        assert_eq!(line_of("a\nb\nc", 2), 2);
        assert_eq!(line_of("a\nb\nc", 99), 3);
    }
}
