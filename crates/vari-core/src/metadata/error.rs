//! The error every metadata reader reports: the crate's [`Diagnostic`].

use crate::diagnostic::Diagnostic;

/// One problem found in a metadata document: a [`Diagnostic`] (key path + message).
///
/// ```
/// use vari_core::metadata::MetadataError;
/// let e = MetadataError::new("variants.00000000", "the null variant must use the label \"null\"");
/// assert_eq!(e.to_string(), "variants.00000000: the null variant must use the label \"null\"");
/// assert_eq!(MetadataError::new("", "invalid JSON").to_string(), "invalid JSON");
/// ```
pub type MetadataError = Diagnostic;
