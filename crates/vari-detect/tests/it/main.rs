//! Integration tests of vari-detect: whole detection with the cache, the real FFI paths of the
//! GPU providers against stub driver libraries compiled from `stubs/*.c` at test time, and the
//! README's table of variables.

mod support;

mod detect_cache;
mod intel_stubs;
mod nvidia_stubs;
mod readme;

/// The probe child is this test binary itself (see [`crate::support::use_this_binary_as_probe_runner`]).
#[test]
fn probe_child_entry() {
    crate::support::serve_probe();
}
