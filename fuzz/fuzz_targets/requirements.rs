//! The requirements-file writer (`vari_lock::export::requirements_txt`) on arbitrary names,
//! locations, hashes and headers: never panic; whatever it writes, a reader that follows pip's
//! rules (lines as Python's `str.splitlines` ends them, `\` continuations, ` #` comments,
//! `${VAR}` expansion, options after the requirement) reads back exactly the requirements and
//! hashes meant, nothing more. Real pip checks the same on chosen inputs in vari-lock's tests.
#![no_main]

use libfuzzer_sys::fuzz_target;

mod requirements_check;

fuzz_target!(|data: &[u8]| requirements_check::check(data));
