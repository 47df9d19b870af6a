//! Machine classes: one proxy serving several targets side by side, each under its own URLs.
//!
//! A class's name comes from a command line or a configuration file and ends up in URL paths,
//! log lines and file names of provisioning scripts, so it is checked against a small grammar
//! ([`ClassName`]) before anything uses it: lowercase ASCII letters, digits, `-` and `_`,
//! starting with a letter or a digit, at most [`ClassName::MAX_LEN`] characters. No `.`: it
//! separates the name from the fingerprint in the class's own URLs (`/t/{name}.{fingerprint}/`),
//! so a name can never be mistaken for another class's fingerprinted segment.

use std::fmt;

use vari_select::Target;

/// A machine class's name, valid by construction (see the module's grammar).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ClassName(String);

/// Why a text is not a class name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClassNameError {
    /// The text is empty.
    #[error("a machine class name cannot be empty")]
    Empty,
    /// The text is longer than [`ClassName::MAX_LEN`].
    #[error(
        "machine class name {0:?} is too long (at most {max} characters)",
        max = ClassName::MAX_LEN
    )]
    TooLong(String),
    /// The text has a character outside the grammar, or starts with `-` or `_`.
    #[error(
        "machine class name {0:?} is not valid: use lowercase letters, digits, `-` and `_`, \
         starting with a letter or a digit"
    )]
    Invalid(String),
}

impl ClassName {
    /// The longest name accepted: enough for `gpu-a100-cuda128-rack2`, short enough for a URL
    /// segment and a log line.
    pub const MAX_LEN: usize = 40;

    /// Checks `text` against the grammar.
    pub fn new(text: &str) -> Result<Self, ClassNameError> {
        if text.is_empty() {
            return Err(ClassNameError::Empty);
        }
        // Quoted in the error: at most a little more than the limit, so that a hostile value
        // cannot flood a log line.
        let quoted = || text.chars().take(Self::MAX_LEN + 8).collect::<String>();
        if text.len() > Self::MAX_LEN {
            return Err(ClassNameError::TooLong(quoted()));
        }
        let bytes = text.as_bytes();
        let allowed = |b: &u8| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_');
        if !bytes.iter().all(allowed) || matches!(bytes[0], b'-' | b'_') {
            return Err(ClassNameError::Invalid(quoted()));
        }
        Ok(Self(text.to_owned()))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ClassName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::str::FromStr for ClassName {
    type Err = ClassNameError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::new(text)
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_grammar() {
        for good in ["cpu", "gpu-a100", "v100_cuda126", "0", &"a".repeat(40)] {
            assert_eq!(ClassName::new(good).unwrap().as_str(), good);
        }
        assert_eq!(ClassName::new(""), Err(ClassNameError::Empty));
        assert!(matches!(
            ClassName::new(&"a".repeat(41)),
            Err(ClassNameError::TooLong(_))
        ));
        for bad in [
            "GPU", "gpu.a100", "gpu/a100", "../x", "-gpu", "_gpu", "gpu a100", "gpü", "%2e",
        ] {
            assert!(
                matches!(ClassName::new(bad), Err(ClassNameError::Invalid(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn errors_quote_a_bounded_part_of_the_text() {
        let long = "x".repeat(10_000);
        let message = ClassName::new(&long).unwrap_err().to_string();
        assert!(message.len() < 200, "{message}");
    }
}
