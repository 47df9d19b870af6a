//! `vari select`, `download`, `list`, `rank`, `detect`, `config` and `families`: choosing a variant
//! for a target, and the hostile indexes and file systems those commands meet.
//!
//! One of the CLI's end-to-end test binaries, one per area; each runs the real `vari` binary and
//! shares the helpers of `tests/common/`. One module of it:
//! `cargo test -p vari-cli --test select MODULE::`.

#[path = "../common/mod.rs"]
mod common;

mod config;
mod detect;
mod families;
mod families_lock;
mod families_pypi;
mod fs_guard;
mod hostile_index;
mod labels;
mod list;
mod nesting;
mod ordering;
mod output_safety;
mod profiles;
mod rank;
mod rank_release;
mod select;
mod uv_parity;
