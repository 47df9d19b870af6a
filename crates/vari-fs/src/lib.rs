//! # vari-fs
//!
//! File-system plumbing that every vari crate shares, so that each question has one answer:
//!
//! - **How is a file written safely?** [`write_atomic`] and [`AtomicFile`]: the whole content
//!   goes to a temporary file beside the destination and is renamed over it once complete, so a
//!   failure never leaves a partial file. Symbolic links are followed to the file they name (the
//!   link stays a link); a replaced file keeps its permission bits and a new one gets the umask's;
//!   devices and FIFOs (`/dev/null`, `/dev/stdout`) are written through, never replaced; a
//!   directory or socket is refused. Errors name the path the caller gave, never the temporary.
//! - **Where is the cache?** [`cache_dir`]. **What is in it, and how is it trimmed?**
//!   [`cache_admin`]: each area's entries and sizes, emptying areas, removing what has not been
//!   used for a while.
//! - **How is a helper program run without hanging?** [`run_with_timeout`].
//! - **How is a path from input joined under an output directory, or deleted from it?**
//!   [`join_under`], [`check_name`], [`remove_file_under`] (see [`safe_path`]).
//! - **How is a user-named input file read without hanging or exhausting memory?**
//!   [`read_input`], [`open_input`] (see [`input`]).
//! - **How is the cache written without following planted links?** [`write_cache_file`],
//!   [`AtomicFile::create_in_cache`], [`read_cache_file`] (see [`cache_write`]).
//! - **What is cleaned up when a command is interrupted, or was killed earlier?**
//!   [`interrupt`] and [`stale`].
//! - **How does a second run wait for the first to finish with a directory?**
//!   [`lock::lock_exclusive`].
//! - **When may a stored file be trusted by its hash without reading it again?** [`Seal`]:
//!   while its [`Stamp`] is the one taken after the hashing and that stamp was settled against
//!   a [`ClockProbe`] taken before (see [`stamp`]).
//!
//! Format rules live elsewhere (`vari-core`); this crate knows nothing about wheels or variants.
//! (It does not know where the other crates keep their cache entries: each says so in its own
//! [`cache_admin::AreaLayout`], and [`cache_admin`] walks, counts and removes them in one place.)
//!
//! ```
//! let dir = tempfile::tempdir().unwrap();
//! let out = dir.path().join("torch-2.8.0-variants.json");
//! vari_fs::write_atomic(&out, b"{}").unwrap();
//! assert_eq!(std::fs::read(&out).unwrap(), b"{}");
//! ```

mod atomic;
mod cache;
pub mod cache_admin;
pub mod cache_write;
mod human;
mod identity;
pub mod input;
pub mod interrupt;
pub mod lock;
mod process;
pub mod safe_path;
pub mod stale;
pub mod stamp;

pub use atomic::{write_atomic, AtomicFile, WriteError, WriteErrorKind};
pub use cache::{cache_dir, cache_dir_with, CACHE_DIR_ENV};
pub use cache_write::{ensure_cache_dir, open_cache_file, read_cache_file, write_cache_file};
pub use human::human_bytes;
pub use identity::{inode, same_file};
pub use input::{
    open_input, raise_input_limit, read_input, read_input_limited, read_input_to_string,
    InputError, InputKind,
};
pub use process::{run_with_timeout, ProcessOutput, RunError};
pub use safe_path::{
    check_name, check_relative, join_under, remove_file_under, RemoveError, UnsafePath,
};
pub use stamp::{ClockProbe, Seal, Stamp};
