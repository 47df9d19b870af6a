//! Integration tests of vari-core: the public API on real metadata, the ordering vectors, and
//! every fuzzing crash reproducer.

mod fuzz_regressions;
mod metadata_fixtures;
mod ordering;
mod variant_markers;
