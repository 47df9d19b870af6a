//! Integration tests of vari-scan: generated ELF files (known instructions, the real fat-binary
//! sections of `testdata/fatbin/`) zipped into wheels, scanned through the public API.

mod support;

mod check;
mod compiled;
mod errors;
mod scan;
