//! The documentation: the generated reference pages equal what the code generates, and the README's
//! and the manual's examples run as written.
//!
//! One of the CLI's end-to-end test binaries, one per area; each runs the real `vari` binary and
//! shares the helpers of `tests/common/`. One module of it:
//! `cargo test -p vari-cli --test docs MODULE::`.

#[path = "../common/mod.rs"]
mod common;

mod readme_examples;
mod reference;
