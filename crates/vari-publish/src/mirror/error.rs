//! Why a mirror run failed. Every message names the lock entry, file, URL or path at fault.

use std::io;
use std::path::PathBuf;

use crate::error::BuildError;

/// One file that could not be mirrored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileFailure {
    /// The file name.
    pub filename: String,
    /// Where it was fetched from.
    pub url: String,
    /// What went wrong (a hash mismatch, a transfer error, a write error).
    pub problem: String,
}

impl std::fmt::Display for FileFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}): {}", self.filename, self.url, self.problem)
    }
}

/// Why [`crate::mirror::mirror`] failed. When files fail to download nothing is published: the
/// site stays as the previous run left it (the files that did arrive are kept for the next
/// run).
#[derive(Debug, thiserror::Error)]
pub enum MirrorError {
    /// The lock cannot be mirrored as it is (a chosen file it does not list, a file without
    /// an http(s) URL or SHA-256, a name that is not a plain file name).
    #[error("{entry}: {problem}")]
    Plan {
        /// The lock entry (`name==version`).
        entry: String,
        /// What is wrong with it.
        problem: String,
    },
    /// Files could not be downloaded or did not match their hash; nothing was published.
    #[error("{} could not be mirrored; nothing was published: {}", plural(.0.len()), .0.first().map(ToString::to_string).unwrap_or_default())]
    Files(Vec<FileFailure>),
    /// The mirror's store (its downloaded files and their state) could not be read or written.
    #[error("{}: {source}", .path.display())]
    Store {
        /// The path in the store.
        path: PathBuf,
        /// The operating system's reason.
        source: io::Error,
    },
    /// A file of the store could not be written atomically.
    #[error(transparent)]
    Write(#[from] vari_fs::WriteError),
    /// Publishing the site failed (the site builder's error, naming the file).
    #[error(transparent)]
    Publish(#[from] BuildError),
}

fn plural(n: usize) -> String {
    match n {
        1 => "1 file".to_owned(),
        n => format!("{n} files"),
    }
}
