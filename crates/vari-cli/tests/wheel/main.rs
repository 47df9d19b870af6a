//! `vari wheel` (inspect, label, make, repack, scan, slim, split) and `vari metadata`: reading and
//! writing wheels and their variant metadata, and the wheel vari ships as.
//!
//! One of the CLI's end-to-end test binaries, one per area; each runs the real `vari` binary and
//! shares the helpers of `tests/common/`. One module of it:
//! `cargo test -p vari-cli --test wheel MODULE::`.

#[path = "../common/mod.rs"]
mod common;

mod hostile_wheels;
mod metadata;
mod metadata_release;
mod repack_select;
mod scan;
mod scan_limits;
mod slim;
mod slim_nvcc;
mod wheel;
// Packaging is tested for the platform the release scripts are run on here.
#[cfg(all(target_os = "linux", target_arch = "x86_64", target_env = "gnu"))]
mod ship;
