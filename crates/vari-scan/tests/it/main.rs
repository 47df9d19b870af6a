//! Integration tests of vari-scan: generated ELF files (known instructions, the real fat-binary
//! sections of `testdata/fatbin/`) zipped into wheels, scanned through the public API.

// The ELF and wheel builders, under the name these tests use.
use vari_test_support::elf as support;

mod check;
mod compiled;
mod errors;
mod scan;
