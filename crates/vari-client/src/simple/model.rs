//! What an index says about one file, after parsing and classification.

use std::fmt;

use pep440_rs::{Version, VersionSpecifiers};
use url::Url;
use vari_core::filename::WheelFilename;
use vari_simple::{CoreMetadata, Hashes, Yanked};

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
pub(crate) type RawFile = vari_simple::PageFile<Url>;

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
