//! What vari serves: `vari proxy` and the sites `vari index build` publishes, read by real
//! installers.
//!
//! One of the CLI's end-to-end test binaries, one per area; each runs the real `vari` binary and
//! shares the helpers of `tests/common/`. One module of it:
//! `cargo test -p vari-cli --test serve MODULE::`.

#[path = "../common/mod.rs"]
mod common;

mod index;
mod proxy_classes;
mod proxy_log;
mod proxy_server;
mod published_sites;
