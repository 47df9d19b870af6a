//! One PEP 508 requirement as a selection from an index needs it: the project, the extras, the
//! version specifiers, the marker, and the two facts the version rules read from the
//! specifiers (pinned with `==`/`===`; names a pre-release).

use std::fmt;
use std::str::FromStr;

use pep440_rs::{Operator, VersionSpecifiers};
use pep508_rs::{MarkerTree, VersionOrUrl};
use vari_client::ProjectName;

use crate::target::Target;

/// A requirement that cannot be selected from an index.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid requirement `{requirement}`: {message}")]
pub struct RequestError {
    /// The requirement as given.
    pub requirement: String,
    /// What is wrong with it.
    pub message: String,
}

/// A parsed requirement (`torch[opt]>=2.9; sys_platform == "linux"`).
#[derive(Debug, Clone)]
pub struct Request {
    text: String,
    name: ProjectName,
    extras: Vec<String>,
    specifiers: VersionSpecifiers,
    marker: MarkerTree,
}

impl Request {
    /// Parses a PEP 508 requirement. A direct reference (`name @ URL`) is refused: it names a
    /// file rather than asking an index.
    ///
    /// ```
    /// use vari_select::Request;
    /// let request = Request::parse("Torch[opt] >=2.9, !=2.9.1 ; python_version >= '3.10'").unwrap();
    /// assert_eq!(request.name().as_str(), "torch");
    /// assert_eq!(request.extras(), ["opt"]);
    /// assert!(!request.is_pinned());
    /// assert!(Request::parse("torch==2.10.0").unwrap().is_pinned());
    /// assert!(Request::parse("torch @ https://example.com/torch.whl").is_err());
    /// ```
    pub fn parse(text: &str) -> Result<Self, RequestError> {
        let error = |message: String| RequestError {
            requirement: text.to_owned(),
            message,
        };
        // vari-core's parser refuses what pep508_rs panics on (names, extras and markers).
        let parsed = vari_core::metadata::parse_requirement(text).map_err(error)?;
        let name = ProjectName::new(parsed.name.as_ref()).map_err(|e| error(e.to_string()))?;
        let specifiers = match parsed.version_or_url {
            None => VersionSpecifiers::empty(),
            Some(VersionOrUrl::VersionSpecifier(specifiers)) => specifiers,
            Some(VersionOrUrl::Url(url)) => {
                return Err(error(format!(
                    "a direct reference ({url}) names a file, not a version on an index"
                )))
            }
        };
        Ok(Self {
            text: text.trim().to_owned(),
            name,
            extras: parsed.extras.iter().map(ToString::to_string).collect(),
            specifiers,
            marker: parsed.marker,
        })
    }

    /// The requirement as given.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The project, normalised.
    pub fn name(&self) -> &ProjectName {
        &self.name
    }

    /// The extras asked for.
    pub fn extras(&self) -> &[String] {
        &self.extras
    }

    /// The version specifiers (empty: any version).
    pub fn specifiers(&self) -> &VersionSpecifiers {
        &self.specifiers
    }

    /// The marker as written, when there is one.
    pub fn marker(&self) -> Option<String> {
        self.marker.contents().map(|m| m.to_string())
    }

    /// Whether the marker holds for the target (true without a marker). Extras are not in
    /// play: a requirement given by the user is nobody's extra.
    pub fn applies_to(&self, target: &Target) -> bool {
        self.marker
            .evaluate(target.markers.marker_environment(), &[])
    }

    /// Whether a specifier pins one exact version (`==1.2` without a wildcard, or `===`): only
    /// then may a yanked file be chosen (PEP 592).
    pub fn is_pinned(&self) -> bool {
        self.specifiers
            .iter()
            .any(|s| matches!(s.operator(), Operator::Equal | Operator::ExactEqual))
    }

    /// Whether a specifier names a pre-release (`>=2.0rc1`): pre-releases are then allowed, as
    /// pip and `packaging` allow them.
    pub fn names_prerelease(&self) -> bool {
        self.specifiers.iter().any(|s| s.any_prerelease())
    }
}

impl fmt::Display for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl FromStr for Request {
    type Err = RequestError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_and_prereleases_are_read_from_the_specifiers() {
        let pinned = Request::parse("a===1.0").unwrap();
        assert!(pinned.is_pinned());
        assert!(!Request::parse("a==1.*").unwrap().is_pinned());
        assert!(!Request::parse("a>=1,<2").unwrap().is_pinned());
        assert!(Request::parse("a>=2.0rc1").unwrap().names_prerelease());
        assert!(Request::parse("a>=2.0.dev0").unwrap().names_prerelease());
        assert!(!Request::parse("a>=2.0.post1").unwrap().names_prerelease());
    }

    #[test]
    fn markers_are_kept_as_written() {
        let request = Request::parse("a ; sys_platform == 'linux'").unwrap();
        assert_eq!(request.marker().as_deref(), Some("sys_platform == 'linux'"));
        assert_eq!(Request::parse("a").unwrap().marker(), None);
    }

    #[test]
    fn names_ending_in_separators_are_errors_not_panics() {
        for bad in ["a-[x]", "a[b_]", "a_;x", "a.", "", "[x]"] {
            assert!(Request::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn markers_pep508_rs_panics_on_are_errors() {
        // Both panicked inside pep508_rs 0.9.2 before the requirement went through vari-core.
        for bad in [
            "torch; 'x' ~= platform_machine",
            "torch; os_name == 'a'\u{feff}",
        ] {
            assert!(Request::parse(bad).is_err(), "{bad}");
        }
    }
}
