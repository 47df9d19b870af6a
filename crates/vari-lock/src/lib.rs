//! # vari-lock
//!
//! The `pylock.toml` model: PEP 751's lock file with PEP 825's `[packages.variants-json]`
//! (`../shared/spec/pep-0751.rst`, `pep-0825.rst` "Integration with pylock.toml"), and what
//! vari adds under `[tool.vari]` and `[packages.tool.vari]`. No I/O: callers read the file
//! (bounded by [`MAX_LOCK_BYTES`]) and write it atomically.
//!
//! - [`read_lock`]: text → [`Lock`], every field checked (names, PEP 440 versions, hashes,
//!   http(s) URLs, paths that stay under the lock's directory, wheel names that match their
//!   entry, variant labels defined by the entry's variants-json, bounded counts), the first
//!   problem reported as a [`LockError`] with its key path.
//! - [`write_lock`]: [`Lock`] → deterministic text, laid out as PEP 751's examples.
//!
//! What vari records beyond PEP 751 ([`LockInfo`], [`PackageInfo`]): the inputs' hash (for
//! `vari lock --check`), the targets, and per package the dependencies its variants bring in
//! through variant markers, which PEP 751 has no field for (its `packages.marker` cannot use
//! variant markers, PEP 825 says, because they depend on the wheel selected).
//!
//! Why by hand: PEP 751 readers exist in Python (`packaging.pylock`) and inside uv (not a
//! library), and none knows `[packages.variants-json]`; the TOML itself is read by `toml` and
//! written by `toml_edit`.

mod error;
mod model;
pub mod plan;
mod read;
mod write;

pub use error::LockError;
pub use model::{
    Artifact, DependencyRef, Lock, LockInfo, LockTarget, Package, PackageInfo, LOCK_VERSION,
};
pub use plan::{plan, Plan, PlanError, PlanRequest, Planned, PlannedFile};
pub use read::{read_lock, MAX_PACKAGES, MAX_WHEELS_PER_PACKAGE};
pub use write::write_lock;

/// The largest lock vari reads: a lock of a few thousand packages with every PyTorch variant
/// is a few MiB.
pub const MAX_LOCK_BYTES: u64 = 32 << 20;
