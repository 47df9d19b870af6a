//! Why an index could not be built. Every message names the file (wheel, page, output) at fault.

use std::io;
use std::path::PathBuf;

use vari_core::metadata::{CombineError, MetadataError};
use vari_wheel::WheelError;

/// Why [`crate::build`] failed. Nothing in the site is changed when reading or combining fails:
/// every input is read and every `*-variants.json` combined before the first write.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The input directory could not be listed.
    #[error("{}: cannot list the directory: {source}", .path.display())]
    ListInput {
        /// The input directory.
        path: PathBuf,
        /// The operating system's reason.
        source: io::Error,
    },
    /// An input file could not be read.
    #[error("{}: {source}", .path.display())]
    Read {
        /// The input file.
        path: PathBuf,
        /// The operating system's reason.
        source: io::Error,
    },
    /// A wheel is broken (bad filename, RECORD, `variant.json`, label).
    #[error(transparent)]
    Wheel(#[from] WheelError),
    /// A wheel's core metadata (`*.dist-info/METADATA`) is missing or unreadable.
    #[error("wheel `{}`: {member}: {problem}", .path.display())]
    CoreMetadata {
        /// The wheel.
        path: PathBuf,
        /// The archive member.
        member: String,
        /// What is wrong with it.
        problem: String,
    },
    /// The variant wheels of one release disagree (`spec/format.md` §5). The message names both
    /// wheels and the key.
    #[error("{file}: {source}")]
    Combine {
        /// The `{name}-{version}-variants.json` that could not be made.
        file: String,
        /// The conflict, naming both wheels.
        source: CombineError,
    },
    /// The combined metadata cannot be written in its schema generation.
    #[error("{file}: {source}")]
    WriteVariantsJson {
        /// The `{name}-{version}-variants.json` that could not be written.
        file: String,
        /// The problem, with its key path.
        source: MetadataError,
    },
    /// A site file could not be written.
    #[error(transparent)]
    Write(#[from] vari_fs::WriteError),
    /// The build state file names a path outside the site, or is not a regular file: it was
    /// not written by vari (or was altered), and nothing in it is trusted.
    #[error("{}: {key}: {problem}; remove the file to rebuild the index from scratch", .path.display())]
    State {
        /// The state file.
        path: PathBuf,
        /// The key at fault (`outputs[3]`).
        key: String,
        /// What is wrong with it.
        problem: String,
    },
    /// A path derived from input is not a plain path inside the site.
    #[error("{}: {source}", .site.display())]
    Unsafe {
        /// The site directory.
        site: PathBuf,
        /// The path and the rule it breaks.
        source: vari_fs::UnsafePath,
    },
    /// A site file or directory could not be created, linked or removed.
    #[error("{}: {source}", .path.display())]
    Site {
        /// The path in the site.
        path: PathBuf,
        /// The operating system's reason.
        source: io::Error,
    },
    /// An object store could not be reached, listed or written: the message names the object's
    /// URL and what failed (credentials, a missing bucket, a refusal).
    #[error("{location}: {problem}")]
    Store {
        /// The URL of the store, prefix or object.
        location: String,
        /// What failed, on one line.
        problem: String,
    },
    /// `-o` names no usable destination.
    #[error(transparent)]
    Destination(#[from] DestinationError),
}

/// Why a destination is not usable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DestinationError {
    /// A URL with a scheme no object store here serves.
    #[error("`{0}`: unsupported destination scheme (use a directory, s3://, gs://, az:// or an http(s) WebDAV URL)")]
    UnsupportedScheme(String),
    /// A URL that does not parse, or names no bucket.
    #[error("`{url}`: {problem}")]
    BadUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        problem: String,
    },
}
