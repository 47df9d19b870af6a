//! # vari-lockmaker
//!
//! The lock maker: from requirements and the machine classes a lock covers to the `pylock.toml`
//! that lists, for every class, the releases and files it installs. It stands beside the format
//! crate, `vari-lock` (which reads, builds and writes the file and does no I/O), as a solver
//! stands beside its lock format. `vari lock`, `vari lock --check` and `vari mirror` make their
//! locks through its one operation, [`make_lock`], so that they cannot answer the same question
//! by different rules: a front-end parses its arguments into a [`LockJob`] and prints the
//! [`Made`] that comes back.
//!
//! What it owns:
//! - the lock's inputs: requirements given, `-r` files, a project's `pyproject.toml` (extras,
//!   PEP 735 groups with their includes, uv's `default-groups`, `requires-python`), or those the
//!   existing lock records when it is made again, with its indexes, find-links and targets;
//! - the inputs hash, and with it `--check` ([`Staleness`]), which needs no network;
//! - preferences from the existing lock, less what `--upgrade`/`--upgrade-package` name;
//! - resolving: `uv pip compile` through vari's proxy (the `compile` module), all targets at
//!   once when they differ only in hardware ([`PER_TARGET_VARIABLE`] turns that off), their
//!   versions kept in agreement; then each pinned release's files the targets can use, local
//!   files named by a `path` relative to the lock's directory (PEP 751);
//! - build families (issue 35; the `families` module): with the catalog, each class locks the
//!   builds the catalog chooses for it, classes with other choices resolved apart and merged,
//!   and the lock builder told which builds each class took;
//! - building the lock (`vari_lock::build_lock`) and writing it.
//!
//! What it leaves to others: the lock's format (`vari-lock`), choosing variants
//! (`vari-select`), serving indexes to uv (`vari-proxy`), the plumbing it shares with
//! installing (`vari-install`: finding uv, the proxy's stable port, requirements files and lock
//! files read within their limits), making a target from a machine class (the front-end's
//! [`MakeTargets`]), and printing.

mod compile;
mod error;
mod existing;
mod families;
mod family_pins;
mod inputs;
mod job;
mod lock_files;
mod locking;
mod make;
mod staleness;

pub use compile::{DEFAULT_RESOLVE_TIMEOUT, RESOLVE_TIMEOUT_ENV};
pub use error::LockMakeError;
pub use job::{LockJob, Made, MakeTargets, Output, Requested, Sources, TargetsError, Upgrade};
pub use lock_files::LockFilesTarget;
pub use locking::{LockingError, LockingProgress, LockingTarget, NoProgress, PER_TARGET_VARIABLE};
pub use make::make_lock;
pub use staleness::Staleness;

/// The steps [`make_lock`] takes, public for their documentation, their examples and tests of
/// one step alone. A front-end makes a lock through [`make_lock`] only (`scripts/check-layering`
/// holds the CLI to that).
pub mod steps {
    pub use crate::compile::{
        compile, compile_through, read_pins, read_via, resolve_timeout_from, CompileError,
        CompileRequest, Pin,
    };
    pub use crate::lock_files::{locked_releases, LockFilesError, PinnedRelease};
    pub use crate::locking::{find_uv, resolve_releases, LockingRequest};
}
