//! A Python language version as a target names it: `3.12`, `3.12.4`, or `3.13t` for the
//! free-threaded build.

use std::fmt;
use std::str::FromStr;

use crate::error::PythonError;

/// A Python version: `MAJOR.MINOR[.PATCH][t]`.
///
/// ```
/// use vari_python::PythonVersion;
/// let v: PythonVersion = "3.13t".parse().unwrap();
/// assert_eq!((v.major, v.minor, v.patch, v.free_threaded), (3, 13, None, true));
/// assert_eq!(v.to_string(), "3.13t");
/// assert_eq!(v.full(), "3.13.0");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PythonVersion {
    /// The major version (3).
    pub major: u8,
    /// The minor version (12).
    pub minor: u8,
    /// The patch level, when given.
    pub patch: Option<u16>,
    /// Whether this is a free-threaded (`--disable-gil`) build.
    pub free_threaded: bool,
}

impl PythonVersion {
    /// `MAJOR.MINOR` (the `python_version` marker).
    pub fn short(&self) -> String {
        format!("{}.{}", self.major, self.minor)
    }

    /// `MAJOR.MINOR.PATCH`, with patch 0 when not given (the `python_full_version` marker).
    pub fn full(&self) -> String {
        format!("{}.{}.{}", self.major, self.minor, self.patch.unwrap_or(0))
    }

    /// `MAJOR` and `MINOR` without a dot, as wheel tags write them (`312`).
    pub fn nodot(&self) -> String {
        format!("{}{}", self.major, self.minor)
    }
}

impl fmt::Display for PythonVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)?;
        if let Some(patch) = self.patch {
            write!(f, ".{patch}")?;
        }
        if self.free_threaded {
            f.write_str("t")?;
        }
        Ok(())
    }
}

impl FromStr for PythonVersion {
    type Err = PythonError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let invalid = || PythonError::InvalidVersion {
            version: text.to_owned(),
        };
        let trimmed = text.trim();
        let (numbers, free_threaded) = match trimmed.strip_suffix('t') {
            Some(rest) => (rest, true),
            None => (trimmed, false),
        };
        let mut parts = numbers.split('.');
        let number = |part: Option<&str>| -> Option<u16> {
            let part = part?;
            (!part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()))
                .then(|| part.parse().ok())
                .flatten()
        };
        let major = number(parts.next()).ok_or_else(invalid)?;
        let minor = number(parts.next()).ok_or_else(invalid)?;
        let patch = match parts.next() {
            None => None,
            Some(part) => Some(number(Some(part)).ok_or_else(invalid)?),
        };
        if parts.next().is_some() {
            return Err(invalid());
        }
        let major = u8::try_from(major).map_err(|_| invalid())?;
        let minor = u8::try_from(minor).map_err(|_| invalid())?;
        // Free-threaded builds exist from 3.13 on.
        if free_threaded && (major, minor) < (3, 13) {
            return Err(invalid());
        }
        Ok(Self {
            major,
            minor,
            patch,
            free_threaded,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints() {
        for text in ["3.12", "3.12.4", "3.13t", "3.14.1t", "2.7"] {
            let v: PythonVersion = text.parse().unwrap();
            assert_eq!(v.to_string(), text);
        }
        let v: PythonVersion = " 3.9 ".parse().unwrap();
        assert_eq!(
            (v.short(), v.full(), v.nodot()),
            ("3.9".into(), "3.9.0".into(), "39".into())
        );
    }

    #[test]
    fn rejects_what_is_not_a_version() {
        for bad in [
            "", "3", "3.", "3.x", "3.12.4.1", "three.1", "3.12t", "3.-1", "300.1",
        ] {
            let err = bad.parse::<PythonVersion>().unwrap_err();
            assert!(
                err.to_string().contains(&format!("`{bad}`")),
                "{bad}: {err}"
            );
        }
    }
}
