//! Everything that changes an environment or makes a lock: `vari install`, `lock`, `sync`,
//! `export`, `mirror` and `cache`, with the real pip and uv.
//!
//! One of the CLI's end-to-end test binaries, one per area; each runs the real `vari` binary and
//! shares the helpers of `tests/common/`. One module of it:
//! `cargo test -p vari-cli --test install MODULE::`.

#[path = "../common/mod.rs"]
mod common;

mod cache;
mod classes;
mod counting_index;
mod environment_rule;
mod export;
mod family_sync;
mod groups;
mod install;
mod interrupted;
mod lock;
mod lock_bytes;
mod lock_sync;
mod mirror;
mod mirror_destinations;
mod mirror_families;
mod mirror_slim;
mod profile_platform;
mod sync;
