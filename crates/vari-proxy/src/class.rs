//! Machine classes: one proxy serving several targets side by side, each under its own URLs.
//!
//! A class's name is checked against a small grammar before anything uses it: the one rule of
//! every command that names classes ([`ClassName`], in `vari_core::class`). No `.` in it: it
//! separates the name from the fingerprint in the class's own URLs (`/t/{name}.{fingerprint}/`),
//! so a name can never be mistaken for another class's fingerprinted segment.

pub use vari_core::class::{ClassName, ClassNameError};
use vari_select::Target;

/// One machine class a proxy serves: its name and the target its wheels are chosen for.
#[derive(Debug, Clone)]
pub struct TargetClass {
    /// The name in its URLs.
    pub name: ClassName,
    /// The machine and Python environment its wheels are chosen for.
    pub target: Target,
}

/// Where a running proxy serves one machine class
/// ([`RunningProxy::classes`](crate::RunningProxy::classes)).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ClassUrls {
    /// The class's name.
    pub name: String,
    /// The fingerprint of what decides its choices (as a single target's, see
    /// [`fingerprint_of`](crate::fingerprint_of)).
    pub fingerprint: String,
    /// `…/t/{name}.{fingerprint}/simple/`: the URL that changes with the class's facts, for
    /// uv (which reuses cached wheels by index URL and file name).
    pub index_url: String,
    /// `…/t/{name}/simple/`: the URL that stays the same when the class's profile changes,
    /// for pip (which checks each download against the listed hash) and a `pip.conf`.
    pub alias_url: String,
    /// Where its hardware facts come from (`facts profiles/a100.toml`).
    pub source: String,
}

/// The path segment of a class's own URLs: `{name}.{fingerprint}`.
pub(crate) fn segment(name: &ClassName, fingerprint: &str) -> String {
    format!("{name}.{fingerprint}")
}
