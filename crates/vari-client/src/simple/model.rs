//! What an index says about one file, after parsing and classification.

use std::collections::BTreeMap;
use std::fmt;

use pep440_rs::{Version, VersionSpecifiers};
use url::Url;
use vari_core::filename::WheelFilename;

/// Hashes of a file as the index gives them: algorithm (lowercase) → hex digest (lowercase).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hashes(pub BTreeMap<String, String>);

impl Hashes {
    /// The SHA-256 digest, if the index gave one.
    pub fn sha256(&self) -> Option<&str> {
        self.get("sha256")
    }

    /// The digest for `algorithm` (`sha256`, `sha384`, `sha512`, `md5`…).
    pub fn get(&self, algorithm: &str) -> Option<&str> {
        self.0.get(algorithm).map(String::as_str)
    }

    /// Whether no hash was given.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub(crate) fn insert(&mut self, algorithm: &str, digest: &str) {
        if !algorithm.is_empty() && !digest.is_empty() {
            self.0
                .insert(algorithm.to_ascii_lowercase(), digest.to_ascii_lowercase());
        }
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
