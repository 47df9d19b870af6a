//! What can go wrong reading a target or a release: always a file (or directory), often a key
//! path inside it, and a message. Front-ends render it; the messages name no command-line flag.

use std::path::{Path, PathBuf};

use vari_core::metadata::MetadataError;

/// A problem with one input, located as precisely as known.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {}{message}", .path.display(), .key.as_ref().map(|k| format!("{k}: ")).unwrap_or_default())]
pub struct InputError {
    /// The file or directory at fault, as the caller named it.
    pub path: PathBuf,
    /// Where inside it (`variants.cu128`, `line 3 column 7`, a wheel member), when known.
    pub key: Option<String>,
    /// What is wrong there.
    pub message: String,
}

impl InputError {
    /// A problem with `path` as a whole.
    pub fn new(path: impl AsRef<Path>, message: impl Into<String>) -> Self {
        Self {
            path: path.as_ref().to_path_buf(),
            key: None,
            message: message.into(),
        }
    }

    /// A problem at `key` inside `path`.
    pub fn at(path: impl AsRef<Path>, key: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            path: path.as_ref().to_path_buf(),
            key: Some(key.into()).filter(|k: &String| !k.is_empty()),
            message: message.into(),
        }
    }

    /// An I/O failure on `path`.
    pub fn io(path: impl AsRef<Path>, error: &std::io::Error) -> Self {
        Self::new(path, io_message(error))
    }

    /// The first of a file's metadata problems, counting the others.
    pub fn from_metadata(path: impl AsRef<Path>, errors: &[MetadataError]) -> Self {
        let Some(first) = errors.first() else {
            return Self::new(path, "invalid variant metadata");
        };
        let more = match errors.len() - 1 {
            0 => String::new(),
            1 => " (and 1 more problem)".to_owned(),
            n => format!(" (and {n} more problems)"),
        };
        Self::at(path, first.path.clone(), format!("{}{more}", first.message))
    }
}

/// An I/O error's message without the `(os error N)` suffix, lower-cased like the rest.
pub(crate) fn io_message(error: &std::io::Error) -> String {
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
