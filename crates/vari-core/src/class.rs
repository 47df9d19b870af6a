//! Machine classes: the kinds of machine a fleet has, each named and described by a profile
//! (a `vari-profile/1` JSON file, a `.toml` of hardware facts, or a snapshot directory).
//!
//! Pure rules only (reading a class's source is `vari_select::MachineClass`'s): the name
//! grammar ([`ClassName`]) and the command-line grammar `[NAME=]PROFILE` ([`ClassArg`]) that
//! every command taking a class accepts (`vari lock --target`, `vari mirror --target`,
//! `vari proxy --target`, `vari detect --class`).
//!
//! A class's name ends up in URL paths (the proxy's `/t/{name}.{fingerprint}/`), lock files,
//! log lines and file names of provisioning scripts, so it is checked against a small grammar
//! before anything uses it: lowercase ASCII letters, digits, `-` and `_`, starting with a
//! letter or a digit, at most [`ClassName::MAX_LEN`] characters. No `.`: it separates the name
//! from the fingerprint in the proxy's class URLs, so a name can never be mistaken for another
//! class's fingerprinted segment.

use std::fmt;
use std::path::{Path, PathBuf};

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

/// One machine class as a command line gives it: `[NAME=]PROFILE`.
///
/// `NAME=PROFILE` when the text has a `=` (the first one separates); otherwise the whole text
/// is the profile, and the class is named after its file (its stem: `ci/a100.toml` is `a100`,
/// a snapshot directory `snaps/node1/` is `node1`). Either way the name follows
/// [`ClassName`]'s grammar; a name taken from a file is first brought to it (lowercased, any
/// other character a `-`: `ci/A100.cuda12.toml` is `a100-cuda12`), so that every profile path
/// `vari lock --target` took before still names a class, while a name given is taken as is. A profile whose own path has a `=` is given with a name in front
/// (`xy=./x=y.toml`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassArg {
    /// The class's name.
    pub name: ClassName,
    /// Its profile: a profile or facts file, or a snapshot directory (not yet looked at).
    pub profile: PathBuf,
}

/// Why a `[NAME=]PROFILE` text is not a class.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClassArgError {
    /// Nothing was given.
    #[error("expected [NAME=]PROFILE (a profile or facts file, or a snapshot directory)")]
    Empty,
    /// `NAME=` with nothing after it.
    #[error("the profile path is empty")]
    EmptyProfile,
    /// The name given is not a class name.
    #[error("{0}")]
    Name(ClassNameError),
    /// The profile's file name makes no class name.
    #[error("{0} (the class is named after the profile's file): name it NAME=PROFILE")]
    NameFromFile(ClassNameError),
}

impl ClassArg {
    /// Parses `[NAME=]PROFILE` (see the type's grammar).
    pub fn parse(text: &str) -> Result<Self, ClassArgError> {
        if text.is_empty() {
            return Err(ClassArgError::Empty);
        }
        if let Some((name, profile)) = text.split_once('=') {
            let name = ClassName::new(name).map_err(ClassArgError::Name)?;
            if profile.is_empty() {
                return Err(ClassArgError::EmptyProfile);
            }
            return Ok(Self {
                name,
                profile: PathBuf::from(profile),
            });
        }
        let profile = PathBuf::from(text);
        let name = ClassName::new(&name_from_file(&file_stem(&profile)))
            .map_err(ClassArgError::NameFromFile)?;
        Ok(Self { name, profile })
    }
}

/// A path's file stem as text (`ci/a100.toml`: `a100`; `node1/`: `node1`); empty when it has
/// none (`/`, `..`).
fn file_stem(path: &Path) -> String {
    path.file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// A file stem brought to the name grammar: ASCII letters lowercased, any character outside
/// the grammar a `-`, leading `-` and `_` dropped (`A100.cuda12` is `a100-cuda12`). Length is
/// not cut: a stem too long is refused rather than silently made to collide with another.
fn name_from_file(stem: &str) -> String {
    let mapped: String = stem
        .chars()
        .map(|c| match c.to_ascii_lowercase() {
            c @ ('a'..='z' | '0'..='9' | '-' | '_') => c,
            _ => '-',
        })
        .collect();
    mapped.trim_start_matches(['-', '_']).to_owned()
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

    fn parsed(text: &str) -> (String, PathBuf) {
        let arg = ClassArg::parse(text).unwrap();
        (arg.name.as_str().to_owned(), arg.profile)
    }

    #[test]
    fn a_class_is_named_or_named_after_its_profile() {
        assert_eq!(parsed("gpu=ci/a.toml"), ("gpu".into(), "ci/a.toml".into()));
        assert_eq!(
            parsed("ci/a100.toml"),
            ("a100".into(), "ci/a100.toml".into())
        );
        assert_eq!(
            parsed("snaps/node1/"),
            ("node1".into(), "snaps/node1/".into())
        );
        assert_eq!(parsed("cpu.json"), ("cpu".into(), "cpu.json".into()));
        // A file's name is brought to the grammar; a name given is not.
        assert_eq!(
            parsed("ci/A100.cuda12.toml"),
            ("a100-cuda12".into(), "ci/A100.cuda12.toml".into())
        );
        assert_eq!(
            parsed("ci/_GPU.toml"),
            ("gpu".into(), "ci/_GPU.toml".into())
        );
        // Only the first `=` separates; what comes before it is always a name.
        assert_eq!(parsed("xy=./x=y.toml"), ("xy".into(), "./x=y.toml".into()));
        assert!(matches!(
            ClassArg::parse("./x=y.toml"),
            Err(ClassArgError::Name(ClassNameError::Invalid(_)))
        ));
    }

    #[test]
    fn bad_classes_say_why() {
        assert_eq!(ClassArg::parse(""), Err(ClassArgError::Empty));
        assert_eq!(ClassArg::parse("gpu="), Err(ClassArgError::EmptyProfile));
        assert!(matches!(
            ClassArg::parse("=a.toml"),
            Err(ClassArgError::Name(ClassNameError::Empty))
        ));
        assert!(matches!(
            ClassArg::parse("GPU=a.toml"),
            Err(ClassArgError::Name(ClassNameError::Invalid(_)))
        ));
        // Named after a file whose stem breaks the grammar: the message says how to name it.
        let e = ClassArg::parse(&format!("ci/{}.toml", "a".repeat(41))).unwrap_err();
        assert!(matches!(e, ClassArgError::NameFromFile(_)), "{e:?}");
        assert!(e.to_string().contains("NAME=PROFILE"), "{e}");
        for nameless in ["/", "ci/__.toml"] {
            assert!(matches!(
                ClassArg::parse(nameless),
                Err(ClassArgError::NameFromFile(ClassNameError::Empty))
            ));
        }
    }
}
