//! The one error of reading or writing a lock: the key path at fault and what is wrong.

/// A problem with a lock, at a key path (`packages[3].wheels[0].hashes.sha256`); the caller
/// adds the file's name. Displays as `path: message` (just the message for the whole file).
///
/// ```
/// let err = vari_lock::LockError::new("packages[0].name", "is missing");
/// assert_eq!(err.to_string(), "packages[0].name: is missing");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", if .path.is_empty() { .message.clone() } else { format!("{}: {}", .path, .message) })]
pub struct LockError {
    /// Key path of the offending item (`line N` for a syntax error); empty for the whole file.
    pub path: String,
    /// What is wrong, as a sentence fragment.
    pub message: String,
}

impl LockError {
    /// A problem at `path`.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            message: message.into(),
        }
    }
}
