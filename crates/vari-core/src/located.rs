//! The one located error: a file, where inside it, and what is wrong.
//!
//! Every reader of a file (configuration, profiles, facts, releases, locks) reports the same three
//! things, and every front-end prints them the same way, `FILE: KEY: MESSAGE`, so they share one
//! type. A reader that only sees a document's text returns a [`Diagnostic`] (key path and message)
//! and the caller, who knows the file, turns it into a [`Located`] with [`Diagnostic::in_file`].

use std::fmt;
use std::path::{Path, PathBuf};

use crate::diagnostic::Diagnostic;

/// A problem with one file, located as precisely as known.
///
/// Displayed on one line as `FILE: KEY: MESSAGE (line N)`; the key and the line are left out when
/// they are not known (a file that cannot be read, a problem with the file as a whole).
///
/// ```
/// use vari_core::Located;
/// let e = Located::at("a/b.json", "variants.x", "bad");
/// assert_eq!(e.to_string(), "a/b.json: variants.x: bad");
/// assert_eq!(Located::new("a/b.json", "gone").to_string(), "a/b.json: gone");
/// assert_eq!(Located::at("c.toml", "k", "bad").with_line(3).to_string(), "c.toml: k: bad (line 3)");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Located {
    /// The file or directory at fault, as the caller named it.
    pub path: PathBuf,
    /// Where inside it (`variants.cu128`, `prefer[1]`, `line 3 column 7`, a wheel member), when
    /// known; never empty.
    pub key: Option<String>,
    /// The 1-based line of the key or value at fault, when known (printed after the message).
    pub line: Option<usize>,
    /// What is wrong there, as a sentence fragment.
    pub message: String,
}

impl Located {
    /// A problem with `path` as a whole.
    pub fn new(path: impl AsRef<Path>, message: impl Into<String>) -> Self {
        Self {
            path: path.as_ref().to_path_buf(),
            key: None,
            line: None,
            message: message.into(),
        }
    }

    /// A problem at `key` inside `path`; an empty key is the file as a whole.
    pub fn at(path: impl AsRef<Path>, key: impl Into<String>, message: impl Into<String>) -> Self {
        let key = key.into();
        Self {
            key: (!key.is_empty()).then_some(key),
            ..Self::new(path, message)
        }
    }

    /// The same problem, at 1-based `line` of the file when it is known.
    #[must_use]
    pub fn with_line(self, line: impl Into<Option<usize>>) -> Self {
        Self {
            line: line.into(),
            ..self
        }
    }

    /// An I/O failure on `path`, in the words of the other messages (see [`io_message`]).
    pub fn io(path: impl AsRef<Path>, error: &std::io::Error) -> Self {
        Self::new(path, io_message(error))
    }

    /// The first of a file's problems, counting the others: `KEY: MESSAGE (and 2 more problems)`.
    pub fn first_of(path: impl AsRef<Path>, problems: &[Diagnostic], fallback: &str) -> Self {
        let Some(first) = problems.first() else {
            return Self::new(path, fallback);
        };
        let more = match problems.len() - 1 {
            0 => String::new(),
            1 => " (and 1 more problem)".to_owned(),
            n => format!(" (and {n} more problems)"),
        };
        Self::at(path, first.path.clone(), format!("{}{more}", first.message))
    }

    /// The message with the line, as it follows the key: `not a pattern (line 3)`.
    pub fn message_with_line(&self) -> String {
        match self.line {
            Some(line) => format!("{} (line {line})", self.message),
            None => self.message.clone(),
        }
    }
}

impl fmt::Display for Located {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.path.display())?;
        if let Some(key) = &self.key {
            write!(f, "{key}: ")?;
        }
        f.write_str(&self.message)?;
        if let Some(line) = self.line {
            write!(f, " (line {line})")?;
        }
        Ok(())
    }
}

impl std::error::Error for Located {}

impl Diagnostic {
    /// This problem, found in the file `path`.
    ///
    /// ```
    /// use vari_core::Diagnostic;
    /// let d = Diagnostic::new("packages[0].name", "is missing");
    /// assert_eq!(d.in_file("vari.lock").to_string(), "vari.lock: packages[0].name: is missing");
    /// ```
    pub fn in_file(self, path: impl AsRef<Path>) -> Located {
        Located::at(path, self.path, self.message)
    }
}

/// An I/O error's message without the `(os error N)` suffix, lower-cased like the rest.
///
/// The error is only looked at (its kind and text): nothing here does I/O.
pub fn io_message(error: &std::io::Error) -> String {
    match error.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".to_owned(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        std::io::ErrorKind::IsADirectory => "is a directory".to_owned(),
        std::io::ErrorKind::InvalidData => "is not valid UTF-8 text".to_owned(),
        _ => {
            let text = error.to_string();
            match text.find(" (os error") {
                Some(at) => text[..at].to_owned(),
                None => text,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_file_key_line_and_message() {
        let e = Located::at("/c/vari.toml", "prefer[1]", "bad").with_line(3);
        assert_eq!(e.to_string(), "/c/vari.toml: prefer[1]: bad (line 3)");
        assert_eq!(e.message_with_line(), "bad (line 3)");
        let e = Located::at("/c/vari.toml", "", "gone");
        assert_eq!(e.key, None);
        assert_eq!(e.to_string(), "/c/vari.toml: gone");
    }

    #[test]
    fn the_first_problem_counts_the_others() {
        let one = [Diagnostic::new("a", "x")];
        assert_eq!(Located::first_of("f", &one, "?").to_string(), "f: a: x");
        let three = [
            Diagnostic::new("a", "x"),
            Diagnostic::new("b", "y"),
            Diagnostic::new("", "z"),
        ];
        assert_eq!(
            Located::first_of("f", &three, "?").to_string(),
            "f: a: x (and 2 more problems)"
        );
        assert_eq!(Located::first_of("f", &[], "none").to_string(), "f: none");
    }

    #[test]
    fn io_messages_drop_the_os_error_number() {
        let e = std::io::Error::from_raw_os_error(28);
        assert!(!io_message(&e).contains("os error"), "{}", io_message(&e));
        let e = std::io::Error::from(std::io::ErrorKind::NotFound);
        assert_eq!(io_message(&e), "no such file or directory");
    }
}
