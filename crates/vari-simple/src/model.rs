//! What a page says, independent of its format.

use crate::hashes::Hashes;

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

/// One file as a project page lists it. `L` is its link: the resolved `url::Url` of a page
/// read, or the `href` text (relative or absolute) of a page to write.
#[derive(Debug, Clone, PartialEq)]
pub struct PageFile<L = String> {
    /// The file name (PEP 691's `filename`; in HTML the last segment of the link's path,
    /// percent-decoded).
    pub filename: String,
    /// Where it is: without the hash fragment (hashes are in [`PageFile::hashes`]).
    pub url: L,
    /// Its hashes.
    pub hashes: Hashes,
    /// `requires-python`, as the page writes it.
    pub requires_python: Option<String>,
    /// Set when the file is yanked.
    pub yanked: Option<Yanked>,
    /// Whether its core metadata is served separately.
    pub core_metadata: CoreMetadata,
    /// Its size in bytes (PEP 700).
    pub size: Option<u64>,
    /// When it was uploaded (ISO 8601, as written; PEP 700).
    pub upload_time: Option<String>,
}

impl<L> PageFile<L> {
    /// A file known by name and link only: no hashes, `requires-python`, yank, core metadata,
    /// size or upload time (set the fields that are known).
    pub fn new(filename: impl Into<String>, url: L) -> Self {
        Self {
            filename: filename.into(),
            url,
            hashes: Hashes::default(),
            requires_python: None,
            yanked: None,
            core_metadata: CoreMetadata::Absent,
            size: None,
            upload_time: None,
        }
    }
}

/// A project page to write.
#[derive(Debug, Clone, Copy)]
pub struct ProjectPage<'a> {
    /// The project's name (PEP 503 normalised).
    pub name: &'a str,
    /// The files, in the order listed.
    pub files: &'a [PageFile],
    /// Every version with a file, ascending (PEP 700's `versions`).
    pub versions: &'a [String],
}

/// The PEP 691 `api-version` of a project page: 1.1 (PEP 700: `size` of every file, and
/// `versions`) when every size is known, else 1.0.
pub fn api_version(files: &[PageFile]) -> &'static str {
    match files.iter().all(|f| f.size.is_some()) {
        true => "1.1",
        false => "1.0",
    }
}
