//! The one error of reading or writing a lock: the key path at fault and what is wrong.

/// A problem with a lock, at a key path (`packages[3].wheels[0].hashes.sha256`): the core's
/// [`Diagnostic`](vari_core::Diagnostic), as every document reader reports. The caller, who
/// knows the lock's file, locates it with [`in_file`](vari_core::Diagnostic::in_file). Displays
/// as `path: message` (just the message for the whole file).
///
/// ```
/// let err = vari_lock::LockError::new("packages[0].name", "is missing");
/// assert_eq!(err.to_string(), "packages[0].name: is missing");
/// assert_eq!(err.in_file("vari.lock").to_string(), "vari.lock: packages[0].name: is missing");
/// ```
pub type LockError = vari_core::Diagnostic;
