//! Why the target Python could not be worked out.

use std::path::PathBuf;

use crate::env::Source;

/// Why the target Python could not be worked out. Each message names the path, variable or
/// value at fault and what was expected there.
#[derive(Debug, thiserror::Error)]
pub enum PythonError {
    /// A Python version that is not `MAJOR.MINOR[.PATCH][t]`.
    #[error("invalid Python version `{version}`: expected MAJOR.MINOR[.PATCH], e.g. 3.12 or 3.13.1 (3.13t and later for a free-threaded build)")]
    InvalidVersion {
        /// The text given.
        version: String,
    },
    /// A platform name that is not one of the known targets.
    #[error("unknown Python platform `{name}`: expected one of {}", known.join(", "))]
    UnknownPlatform {
        /// The text given.
        name: String,
        /// The accepted names.
        known: Vec<String>,
    },
    /// A path that does not exist.
    #[error("{from}: {} does not exist; expected a Python interpreter or an environment directory", path.display())]
    NotFound {
        /// Where the path came from.
        from: Source,
        /// The path.
        path: PathBuf,
    },
    /// An environment directory without an interpreter in it.
    #[error("{from}: {} is a directory without a Python interpreter (looked for {})", path.display(), looked.join(", "))]
    NoInterpreterInDirectory {
        /// Where the path came from.
        from: Source,
        /// The directory.
        path: PathBuf,
        /// The relative paths looked for.
        looked: Vec<&'static str>,
    },
    /// A file that is not a Python interpreter.
    #[error("{from}: {} is not a Python interpreter: {reason}", path.display())]
    NotPython {
        /// Where the path came from.
        from: Source,
        /// The file.
        path: PathBuf,
        /// What gave it away.
        reason: String,
    },
    /// No interpreter anywhere, and no version to describe a target with.
    #[error("no Python interpreter found (VIRTUAL_ENV and CONDA_PREFIX are not set and there is no python3 on PATH), and no Python version was given")]
    NoInterpreter,
}
