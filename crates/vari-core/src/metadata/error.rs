//! The error every metadata reader reports: a key path and a message.

use std::fmt;

/// One problem found in a metadata document.
///
/// `path` is the key path inside the document (`variants.cu128.nvidia.sm_arch[2]`,
/// `providers.nvidia.requires`, `default-priorities.namespace[2]`), empty for the document
/// itself. Callers prefix the file name when they print it.
///
/// ```
/// use vari_core::metadata::MetadataError;
/// let e = MetadataError::new("variants.00000000", "the null variant must use the label \"null\"");
/// assert_eq!(e.to_string(), "variants.00000000: the null variant must use the label \"null\"");
/// assert_eq!(MetadataError::new("", "invalid JSON").to_string(), "invalid JSON");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetadataError {
    /// Key path of the offending item; empty for the whole document.
    pub path: String,
    /// What is wrong, as a sentence fragment without a trailing period.
    pub message: String,
}

impl MetadataError {
    /// Builds an error at `path`.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for MetadataError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for MetadataError {}
