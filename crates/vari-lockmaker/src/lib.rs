//! # vari-lockmaker
//!
//! The lock maker: from requirements and the machine classes a lock covers to the releases and
//! files a `pylock.toml` lists. It stands beside the format crate, `vari-lock` (which reads and
//! writes the file and does no I/O), as a solver stands beside its lock format; `vari lock` and
//! `vari mirror` make their locks through it.
//!
//! - Resolving: [`compile`] runs `uv pip compile` through vari's proxy for one target;
//!   [`resolve_releases`] resolves every target (together when they differ only in hardware,
//!   [`PER_TARGET_VARIABLE`] turns that off) and keeps their versions in agreement.
//! - Files: [`locked_releases`] lists each pinned release's files that the targets can use.
//!
//! What it leaves to others: the lock's format (`vari-lock`), choosing variants
//! (`vari-select`), serving indexes to uv (`vari-proxy`), finding the installer and the proxy's
//! stable port (`vari-install`), and printing (the front-end).

mod compile;
mod lock_files;
mod locking;

pub use compile::{
    compile, compile_through, read_pins, read_via, resolve_timeout_from, CompileError,
    CompileRequest, Pin, DEFAULT_RESOLVE_TIMEOUT, RESOLVE_TIMEOUT_ENV,
};
pub use lock_files::{locked_releases, LockFilesError, LockFilesTarget, PinnedRelease};
pub use locking::{
    find_uv, resolve_releases, LockingError, LockingProgress, LockingRequest, LockingTarget,
    NoProgress, PER_TARGET_VARIABLE,
};
