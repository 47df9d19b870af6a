//! Installing exact files from a lock (`vari sync`, `vari install -r pylock.toml`; the whole
//! run is [`sync`], whose opening and fetching `vari export` shares): every file
//! fetched and checked against the lock's SHA-256 and size before anything is installed, then
//! installed with pip or uv without dependency resolution, and (for an exact sync) what the
//! lock does not list removed.
//!
//! - [`fetch_locked`]: each file from the store (a content-addressed directory, by SHA-256),
//!   else a wheelhouse (`--find-links DIR`, looked up by file name), else the lock's `path`,
//!   else its URL through `vari-client` (never with `offline`). Whatever the source, the bytes
//!   are streamed into the store, hashed and counted on the way; a file that does not match
//!   is one [`SyncError::Mismatch`] naming the file and where it came from, and no file is
//!   installed. The store's copy is checked again each time it is used: hashed, unless the
//!   record written when it was last hashed vouches that it has not changed since (same
//!   size, times, inode and device; `record.rs` says what that does and does not catch). A
//!   variant wheel whose dependencies use variant markers gets a copy beside it with them
//!   evaluated for the target (`vari_wheel::replace_metadata`), as `vari proxy` serves it;
//!   whether a wheel has such markers is kept in its record, so a wheel without them is not
//!   opened again. The paths the installer gets are the same on every run (`{store}/{sha256}/
//!   {name}`, or `{store}/{sha256}/m-{key}/{name}` for such a copy), and the files are not
//!   rewritten when they are used, so uv's and pip's caches of them stay valid.
//! - [`survey`], then [`apply`]: what is installed already as the lock wants it (name, version, label) is left
//!   alone; the rest is installed with `--no-deps` from the verified copies, a variant wheel
//!   under its name without the label (pip and uv do not know variant file names, as the
//!   proxy presents them); with `exact`, the distributions the lock does not list are
//!   uninstalled, except pip, setuptools and wheel, which `uv pip sync` keeps too, and uv.

mod apply;
mod cache_layout;
mod early;
mod fetch;
mod from_lock;
mod operation;
mod record;
mod request;

use std::path::PathBuf;

use url::Url;

pub use apply::{apply, survey, SyncOutcome, PROTECTED};
pub use cache_layout::LockedCacheLayout;
pub use early::EarlyInstall;
pub use fetch::{
    fetch_locked, fetch_locked_reporting, sha256_file, FetchOptions, Staged, MAX_FILE_BYTES,
};
pub use from_lock::{open_lock, planned_files, read_lock_text, LoadError};
pub use operation::{
    fetch, sync, Entry, FetchSettings, LockedPlan, PlanFailure, SyncEvents, SyncFailure, SyncJob,
    Synced,
};
pub use request::{
    lock_environment, lock_path, waiting_note, RequestError, SyncRequest, ENVIRONMENT_LOCK,
};

/// The directory of vari's cache where locked files are kept (`{cache}/locked`), the `locked`
/// area of `vari cache` ([`LockedCacheLayout`]).
pub const STORE_AREA: &str = "locked";

/// One file a lock wants installed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockedFile {
    /// The distribution's normalised name.
    pub project: String,
    /// Its version, when the lock fixes one.
    pub version: Option<String>,
    /// The variant label of the wheel; `None` for a non-variant wheel or an sdist.
    pub label: Option<String>,
    /// The file name the lock lists.
    pub filename: String,
    /// Its `url`, if any.
    pub url: Option<Url>,
    /// Its `path` resolved under the lock's directory, if any.
    pub path: Option<PathBuf>,
    /// Its SHA-256 (lowercase hex): the lock's.
    pub sha256: String,
    /// Its size in bytes, when the lock says.
    pub size: Option<u64>,
    /// For a wheel: what its variant markers see on the target (the empty label for a
    /// non-variant wheel). Its METADATA's
    /// `Requires-Dist` markers naming variant variables are evaluated with it before the
    /// installer sees the wheel (released pip and uv refuse such markers), as the proxy does.
    pub markers: Option<vari_core::markers::VariantMarkerContext>,
    /// For a variant wheel: the properties the lock's `variants-json` gives its label, which
    /// its own `variant.json` must give too (checked once its bytes are).
    pub locked_variant: Option<vari_core::metadata::VariantProperties>,
}

impl LockedFile {
    /// Where the file comes from, for messages: its URL, else its path.
    pub fn origin(&self) -> String {
        match (&self.url, &self.path) {
            (Some(url), _) => url.to_string(),
            (None, Some(path)) => path.display().to_string(),
            (None, None) => self.filename.clone(),
        }
    }

    /// The name the installer sees: a variant wheel's without its label (pip and uv parse
    /// only the standard wheel name), anything else as listed.
    pub fn installer_name(&self) -> String {
        match vari_core::filename::WheelFilename::parse(&self.filename) {
            Ok(mut wheel) if wheel.label.is_some() => {
                wheel.label = None;
                wheel.to_string()
            }
            _ => self.filename.clone(),
        }
    }
}

/// Why a lock's files could not be installed.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// A file's bytes are not the ones the lock lists: nothing was installed.
    #[error("{filename} ({origin}): {what}; nothing was installed")]
    Mismatch {
        /// The file name.
        filename: String,
        /// Where its bytes came from (URL, wheelhouse file, path).
        origin: String,
        /// `sha256 is X, the lock says Y`, or the size.
        what: String,
    },
    /// A variant wheel's own `variant.json` (hash-checked with the wheel) does not say what
    /// the lock's `variants-json` says of its label: the lock relabels the wheel, and the
    /// wheel decides. Nothing was installed.
    #[error(
        "{filename}: the lock says variant {label} has {lock}, the wheel's own variant.json \
         says {wheel}; nothing was installed"
    )]
    VariantMismatch {
        /// The file name.
        filename: String,
        /// The label.
        label: String,
        /// The lock's properties for the label.
        lock: String,
        /// The wheel's.
        wheel: String,
    },
    /// A file could not be had: offline and not in a wheelhouse, missing, or the transfer
    /// failed.
    #[error("{filename}: {message}")]
    Unavailable {
        /// The file name.
        filename: String,
        /// Why, naming the URL or path.
        message: String,
    },
    /// A variant wheel's METADATA could not be rewritten for the target.
    #[error("{filename}: {message}")]
    Rewrite {
        /// The file name.
        filename: String,
        /// Why.
        message: String,
    },
    /// The network client could not be set up (its settings name what is wrong).
    #[error("{0}")]
    Client(String),
    /// The store could not be written or read.
    #[error("{}: {message}", .path.display())]
    Store {
        /// The path at fault.
        path: PathBuf,
        /// What failed.
        message: String,
    },
    /// The installer could not be started.
    #[error("cannot run {program}: {message}")]
    Installer {
        /// The program.
        program: String,
        /// Why.
        message: String,
    },
}

/// Where locked files are kept: `{cache}/locked` in vari's cache directory, else (no cache
/// directory) a temporary one removed when this is dropped.
#[derive(Debug)]
pub enum Store {
    /// In vari's cache: reused from one run to the next (the installers' caches see the same
    /// paths again).
    Cache(PathBuf),
    /// A temporary directory.
    Temporary(vari_fs::interrupt::TempDir),
}

impl Store {
    /// The store of this process (`VARI_CACHE_DIR` and the usual cache locations).
    pub fn open() -> Result<Self, SyncError> {
        match vari_fs::cache_dir() {
            Some(dir) => Ok(Self::Cache(dir.join(STORE_AREA))),
            None => vari_fs::interrupt::TempDir::new(crate::run::TEMPORARY_PREFIX)
                .map(Self::Temporary)
                .map_err(|e| SyncError::Store {
                    path: std::env::temp_dir(),
                    message: format!("cannot make a temporary directory: {e}"),
                }),
        }
    }

    /// Its directory.
    pub fn path(&self) -> &std::path::Path {
        match self {
            Self::Cache(dir) => dir,
            Self::Temporary(dir) => dir.path(),
        }
    }
}
