//! What can go wrong reading a target or a release: always a file (or directory), often a key
//! path inside it, and a message. Front-ends render it; the messages name no command-line flag.

use std::path::Path;

use vari_core::metadata::MetadataError;

/// A problem with one input, located as precisely as known: the workspace's one located error,
/// so that the CLI prints it like a configuration or lock problem (`FILE: KEY: MESSAGE`).
pub type InputError = vari_core::Located;

/// The first of a file's metadata problems, counting the others.
pub(crate) fn from_metadata(path: impl AsRef<Path>, errors: &[MetadataError]) -> InputError {
    InputError::first_of(path, errors, "invalid variant metadata")
}
