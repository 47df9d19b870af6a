//! # vari-lock
//!
//! The `pylock.toml` model: PEP 751's lock file with PEP 825's `[packages.variants-json]`
//! ([PEP 751](https://peps.python.org/pep-0751/), [PEP 825](https://peps.python.org/pep-0825/)
//! "Integration with pylock.toml"), and what
//! vari adds under `[tool.vari]` and `[packages.tool.vari]`. No I/O of its own: callers read
//! the file (bounded by [`MAX_LOCK_BYTES`]; [`LockFile::open`] takes their reader and only
//! resolves the lock's directory) and write it atomically.
//!
//! - [`read_lock`]: text → [`Lock`], every field checked (names, PEP 440 versions, hashes,
//!   http(s) URLs, paths that stay under the lock's directory, wheel names that match their
//!   entry, variant labels defined by the entry's variants-json, bounded counts), the first
//!   problem reported as a [`LockError`] with its key path.
//! - [`write_lock`]: [`Lock`] → deterministic text, laid out as PEP 751's examples.
//! - [`LockFile`]: the one way to open a lock (a file, a directory holding `pylock.toml`, or a
//!   lock built in memory), with the directory its `path` entries are relative to.
//!
//! What vari records beyond PEP 751 ([`LockInfo`], [`PackageInfo`]): the inputs' hash (for
//! `vari lock --check`), the targets, and per package the dependencies its variants bring in
//! through variant markers, which PEP 751 has no field for (its `packages.marker` cannot use
//! variant markers, PEP 825 says, because they depend on the wheel selected).
//!
//! - [`build_lock`]: the releases `vari lock` pinned, with the files kept for its targets,
//!   arranged as a [`Lock`] (which entries only variants bring in, which only an extra or a
//!   dependency group needs, sorted for deterministic bytes); [`InputsHash`] for `--check`.
//!
//! How `vari lock` resolves, and why it does not resolve itself: it drives `uv pip compile`
//! (`vari_lockmaker::compile`) once per target through vari's proxy, which shows uv the variant
//! that target would install with its variant markers already evaluated, the runs at once,
//! then (only when they disagree) one after another, each preferring the versions the runs
//! before it pinned (uv reads its output file as preferences). A resolver
//! written here would have to match what users already trust on everything that is not about
//! variants — extras, markers, `requires-python`, yanked files, pre-releases, sdists that must
//! be built to learn their dependencies, index strategies — and keep matching as uv and pip
//! change. Building on the `pubgrub` crate was considered: it gives the version solving, not
//! the rest (metadata from sdists, PEP 508 markers per target, preferences), which is most of
//! the work and most of the risk. Driving uv costs one resolution per target (warm caches
//! make them cheap) and leaves one thing to vari: agreeing across targets, which preferences
//! settle in most cases and a clear error names in the rest.
//!
//! Why by hand: PEP 751 readers exist in Python (`packaging.pylock`) and inside uv (not a
//! library), and none knows `[packages.variants-json]`; the TOML itself is read by `toml` and
//! written by `toml_edit`.

mod build;
mod error;
pub mod export;
mod families;
mod fields;
mod file;
pub mod limits;
mod model;
mod read;
mod write;

pub use build::{
    build_lock, uses_variants, variant_requirements, BuildError, InputsHash, LockInputs,
    LockedRelease,
};
pub use error::LockError;
pub use families::{MAX_BUILDS, MAX_FAMILIES, MAX_REQUIRES};
pub use file::{LockFile, OpenError, LOCK_FILE_NAME};
pub use limits::{MAX_LOCK_BYTES, MAX_PACKAGES, MAX_WHEELS_PER_PACKAGE};
pub use model::{
    Artifact, BuildRef, DependencyRef, Lock, LockFamily, LockInfo, LockTarget, LockedBuild,
    Package, PackageInfo, LOCK_VERSION,
};
pub use read::read_lock;
pub use write::write_lock;
