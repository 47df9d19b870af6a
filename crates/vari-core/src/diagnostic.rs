//! The one problem report of every reader: a key path and a message.
//!
//! Metadata documents, profiles, hardware facts and wheels all report what is wrong the same
//! way, so a front-end renders them once (`FILE: KEY: message`) whatever was being read.

use std::fmt;

/// One problem found in a document.
///
/// `path` is the key path inside the document (`variants.cu128.nvidia.sm_arch[2]`,
/// `namespaces[1].features[0].values[2]`, `platform.extra`), empty for the document itself.
/// Problems with the text rather than a key (a JSON syntax error) have an empty path and say
/// where they are in the message. Callers prefix the file name when they print it.
///
/// ```
/// use vari_core::Diagnostic;
/// let d = Diagnostic::new("variants.cu128", "duplicate variant label");
/// assert_eq!(d.to_string(), "variants.cu128: duplicate variant label");
/// assert_eq!(Diagnostic::new("", "the file is empty").to_string(), "the file is empty");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Diagnostic {
    /// Key path of the offending item; empty for the whole document.
    pub path: String,
    /// What is wrong, as a sentence fragment without a trailing period.
    pub message: String,
}

impl Diagnostic {
    /// A problem at `path`.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            message: message.into(),
        }
    }

    /// A problem with the document as a whole (no key path).
    pub fn document(message: impl Into<String>) -> Self {
        Self::new("", message)
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for Diagnostic {}

/// The text without a leading UTF-8 byte order mark.
///
/// Editors on Windows write one at the start of JSON and TOML files; it carries no meaning, and
/// JSON and TOML parsers reject it, so every reader of a text document strips it first.
///
/// ```
/// assert_eq!(vari_core::strip_bom("\u{feff}{}"), "{}");
/// assert_eq!(vari_core::strip_bom("{}"), "{}");
/// ```
pub fn strip_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// The problem for JSON text that does not parse, after `what` (`invalid JSON`): a file with
/// nothing in it says so (without a position, which would only repeat "line 1"), otherwise
/// serde's message with its position, once.
pub(crate) fn json_syntax(what: &str, text: &str, error: &serde_json::Error) -> Diagnostic {
    if text.trim().is_empty() {
        Diagnostic::document(format!(
            "{what}: the file is empty (expected a JSON object)"
        ))
    } else {
        Diagnostic::document(format!("{what}: {error}"))
    }
}

/// The problem for TOML text that does not parse: the parser's message on one line, with the
/// line and column of the problem (the parser's own rendering spans several lines with a
/// snippet of the text).
pub(crate) fn toml_syntax(what: &str, text: &str, error: &toml::de::Error) -> Diagnostic {
    let message = error.message().trim().replace('\n', "; ");
    match error.span() {
        Some(span) => {
            let (line, column) = line_column(text, span.start);
            Diagnostic::document(format!("{what}: {message} at line {line} column {column}"))
        }
        None => Diagnostic::document(format!("{what}: {message}")),
    }
}

/// 1-based line and column (in characters) of byte offset `at` in `text`.
fn line_column(text: &str, at: usize) -> (usize, usize) {
    let before = text.get(..at.min(text.len())).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_json_names_no_position() {
        let e = serde_json::from_str::<serde_json::Value>(" \n").unwrap_err();
        let d = json_syntax("invalid JSON", " \n", &e);
        assert_eq!(
            d.to_string(),
            "invalid JSON: the file is empty (expected a JSON object)"
        );
        let e = serde_json::from_str::<serde_json::Value>("{,").unwrap_err();
        let d = json_syntax("invalid JSON", "{,", &e);
        assert_eq!(d.message.matches("line").count(), 1, "{d}");
    }

    #[test]
    fn toml_errors_keep_their_position_on_one_line() {
        let text = "a = 1\n[b\n";
        let e = toml::from_str::<toml::Value>(text).unwrap_err();
        let d = toml_syntax("invalid TOML", text, &e);
        assert!(d.message.contains("at line 2 column"), "{d}");
        assert!(!d.message.contains('\n'), "{d}");
    }

    #[test]
    fn line_columns_count_characters() {
        assert_eq!(line_column("ab\ncé\nx", 6), (2, 3));
        assert_eq!(line_column("", 0), (1, 1));
    }
}
