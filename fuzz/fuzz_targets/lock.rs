//! The lock reader (`vari_lock::read_lock`) on arbitrary text: never panic; whatever it
//! accepts, the writer writes and the reader reads back the same (one set of limits on both
//! sides); and no string naming a file holds a line break, a control character, whitespace
//! or `#`, so nothing read from a lock can add a line to an exported requirements file.
#![no_main]

use libfuzzer_sys::fuzz_target;

mod lock_check;

fuzz_target!(|data: &[u8]| lock_check::check(data));
