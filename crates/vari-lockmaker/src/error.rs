//! Why a lock could not be made: each failure says the one line a front-end prints.

use vari_select::InputError;

use crate::locking::LockingError;

/// Why [`make_lock`](crate::make_lock) failed.
#[derive(Debug, thiserror::Error)]
pub enum LockMakeError {
    /// A file's content is wrong at a key path (a `pyproject.toml`, the existing lock's
    /// `[tool.vari]`), or a file could not be read.
    #[error(transparent)]
    Input(#[from] InputError),
    /// The requirements given are not requirements, or there are none.
    #[error("{0}")]
    Requirements(String),
    /// The existing lock or a requirements file could not be read.
    #[error("{0}")]
    Read(String),
    /// The targets could not be made (the front-end's [`MakeTargets`](crate::MakeTargets)
    /// error, kept as it was raised).
    #[error("{0}")]
    Targets(Box<dyn std::error::Error + Send + Sync>),
    /// Resolving or listing the files failed.
    #[error(transparent)]
    Locking(#[from] LockingError),
    /// The releases do not make a lock, or the lock cannot be written.
    #[error("{0}")]
    Build(String),
    /// The lock file could not be written.
    #[error("{0}")]
    Write(String),
    /// The network runtime could not start.
    #[error("cannot start the network runtime: {0}")]
    Runtime(std::io::Error),
}
