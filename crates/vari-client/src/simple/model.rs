//! What an index says about one file, after parsing and classification.

use std::collections::BTreeMap;
use std::fmt;

use pep440_rs::{Version, VersionSpecifiers};
use url::Url;
use vari_core::filename::WheelFilename;

/// Hashes of a file as the index gives them: algorithm (lowercase) → hex digest (lowercase).
///
/// Kept as a short list sorted by algorithm, not a map: a file has one or two hashes, and a
/// `BTreeMap` allocates a node of eleven slots (over 500 bytes) for even one, which on a page
/// of 100,000 files is most of the memory the page costs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hashes(Vec<(String, String)>);

impl Hashes {
    /// The SHA-256 digest, if the index gave one.
    pub fn sha256(&self) -> Option<&str> {
        self.get("sha256")
    }

    /// The digest for `algorithm` (`sha256`, `sha384`, `sha512`, `md5`…).
    pub fn get(&self, algorithm: &str) -> Option<&str> {
        self.0
            .binary_search_by(|(known, _)| known.as_str().cmp(algorithm))
            .ok()
            .map(|at| self.0[at].1.as_str())
    }

    /// Whether no hash was given.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Every `(algorithm, digest)`, by algorithm.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(a, d)| (a.as_str(), d.as_str()))
    }

    /// The hashes as a map (for serialising).
    pub fn to_map(&self) -> BTreeMap<String, String> {
        self.0.iter().cloned().collect()
    }

    /// Adds a hash (lowercased); a later digest for the same algorithm replaces the earlier,
    /// as a map would. Empty algorithms or digests are ignored.
    pub(crate) fn insert(&mut self, algorithm: &str, digest: &str) {
        if algorithm.is_empty() || digest.is_empty() {
            return;
        }
        let algorithm = algorithm.to_ascii_lowercase();
        let digest = digest.to_ascii_lowercase();
        match self.0.binary_search_by(|(known, _)| known.cmp(&algorithm)) {
            Ok(at) => self.0[at].1 = digest,
            Err(at) => self.0.insert(at, (algorithm, digest)),
        }
    }
}

impl<A: AsRef<str>, D: AsRef<str>> FromIterator<(A, D)> for Hashes {
    /// Hashes from `(algorithm, digest)` pairs, lowercased, empty ones skipped.
    fn from_iter<I: IntoIterator<Item = (A, D)>>(pairs: I) -> Self {
        let mut hashes = Self::default();
        for (algorithm, digest) in pairs {
            hashes.insert(algorithm.as_ref(), digest.as_ref());
        }
        hashes
    }
}

/// A file withdrawn by its publisher (PEP 592): installers skip it unless pinned with `==`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Yanked {
    /// Why, when the index says.
    pub reason: Option<String>,
}

/// Whether the index serves the file's core metadata separately (PEP 658, PEP 714).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum CoreMetadata {
    /// Not served: read it from the file itself.
    #[default]
    Absent,
    /// Served at `{url}.metadata`, with these hashes of it (possibly none).
    Available(Hashes),
}

/// What kind of file a link is, from its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileKind {
    /// A wheel, variant or not.
    Wheel(WheelFilename),
    /// A source distribution (`.tar.gz`, `.zip`, …).
    Sdist {
        /// Its version.
        version: Version,
    },
    /// An index-level variant metadata file, `{name}-{version}-variants.json` (PEP 825).
    VariantsJson {
        /// The version it describes.
        version: Version,
    },
}

/// Where a file was listed.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FileSource {
    /// A simple-API index (its URL, without credentials).
    Index(Url),
    /// A find-links directory or page (as shown to the user).
    FindLinks(String),
}

impl fmt::Display for FileSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Index(url) => write!(f, "index {url}"),
            Self::FindLinks(location) => write!(f, "find-links {location}"),
        }
    }
}

/// One file of a project, as the index lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexFile {
    /// The file name (the last segment of the URL's path, percent-decoded).
    pub filename: String,
    /// What the name says it is.
    pub kind: FileKind,
    /// Where to fetch it (absolute, without fragment or credentials). `file:` for local files.
    pub url: Url,
    /// Hashes the index gives.
    pub hashes: Hashes,
    /// The Python versions it supports, when the index says (`data-requires-python`).
    pub requires_python: Option<VersionSpecifiers>,
    /// Set when the file is yanked.
    pub yanked: Option<Yanked>,
    /// Whether its core metadata is served separately.
    pub core_metadata: CoreMetadata,
    /// Its size in bytes, when the index says (PEP 700).
    pub size: Option<u64>,
    /// When it was uploaded (ISO 8601, as the index wrote it; PEP 700).
    pub upload_time: Option<String>,
    /// Which index or find-links source listed it.
    pub source: FileSource,
}

impl IndexFile {
    /// The version the file belongs to.
    pub fn version(&self) -> &Version {
        match &self.kind {
            FileKind::Wheel(wheel) => &wheel.version,
            FileKind::Sdist { version } | FileKind::VariantsJson { version } => version,
        }
    }

    /// The parsed wheel filename, for wheels.
    pub fn wheel(&self) -> Option<&WheelFilename> {
        match &self.kind {
            FileKind::Wheel(wheel) => Some(wheel),
            _ => None,
        }
    }
}

/// A link as a page gives it, before its name is classified.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RawFile {
    pub(crate) filename: String,
    pub(crate) url: Url,
    pub(crate) hashes: Hashes,
    pub(crate) requires_python: Option<String>,
    pub(crate) yanked: Option<Yanked>,
    pub(crate) core_metadata: CoreMetadata,
    pub(crate) size: Option<u64>,
    pub(crate) upload_time: Option<String>,
}

/// Something on a page that was skipped, with the page it was on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageWarning {
    /// The page or directory.
    pub location: String,
    /// What was skipped and why.
    pub message: String,
}

impl fmt::Display for PageWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.location, self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_behave_as_a_map_of_lowercase_names() {
        let hashes: Hashes = [("SHA512", "CC"), ("sha256", "aa"), ("", "x"), ("md5", "")]
            .into_iter()
            .collect();
        assert_eq!(hashes.sha256(), Some("aa"));
        assert_eq!(hashes.get("sha512"), Some("cc"));
        assert_eq!(hashes.get("md5"), None);
        let mut again = hashes.clone();
        again.insert("sha256", "BB");
        assert_eq!(again.sha256(), Some("bb"));
        assert_eq!(
            again.iter().collect::<Vec<_>>(),
            [("sha256", "bb"), ("sha512", "cc")]
        );
        assert_eq!(again.to_map().len(), 2);
        assert!(Hashes::default().is_empty());
    }
}
