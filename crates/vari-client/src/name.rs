//! Project names normalised as PEP 503 says, the form an index page URL uses.

use std::fmt;

/// A project name in PEP 503 normal form: lowercase, each run of `-`, `_` and `.` replaced by
/// one `-`. Two spellings of one project (`Foo.Bar`, `foo_bar`) compare equal.
///
/// ```
/// use vari_client::ProjectName;
/// let name = ProjectName::new("Foo.-_Bar").unwrap();
/// assert_eq!(name.as_str(), "foo-bar");
/// assert!(ProjectName::new("-bad").is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ProjectName(String);

/// A project name that PEP 508 does not allow.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid project name `{0}` (ASCII letters, digits, `-`, `_` and `.`, starting and ending \
     with a letter or digit)"
)]
pub struct InvalidProjectName(pub String);

impl ProjectName {
    /// Validates `name` (PEP 508's name rule) and normalises it.
    pub fn new(name: &str) -> Result<Self, InvalidProjectName> {
        if !vari_core::project::is_valid(name) {
            return Err(InvalidProjectName(name.to_owned()));
        }
        Ok(Self(vari_core::project::normalize(name)))
    }

    /// The normal form (`foo-bar`).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `other`, in any spelling, names this project.
    pub(crate) fn matches(&self, other: &str) -> bool {
        vari_core::project::normalize(other) == self.0
    }
}

impl fmt::Display for ProjectName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::str::FromStr for ProjectName {
    type Err = InvalidProjectName;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::new(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_of_one_project_are_equal() {
        for spelling in ["Foo-Bar", "foo_bar", "FOO.BAR", "foo--_.bar"] {
            assert_eq!(ProjectName::new(spelling).unwrap().as_str(), "foo-bar");
        }
        assert!(ProjectName::new("foo-bar").unwrap().matches("Foo__Bar"));
        assert!(!ProjectName::new("foo-bar").unwrap().matches("foobar"));
    }

    #[test]
    fn invalid_names_are_refused() {
        for bad in ["", "-foo", "foo.", "foo bar", "föö", "foo/bar"] {
            assert!(ProjectName::new(bad).is_err(), "{bad}");
        }
        assert!(ProjectName::new("a").is_ok());
    }
}
