//! The site's layout and what its pages say, independent of how they are rendered.
//!
//! ```text
//! SITE/
//!   simple/index.html, simple/index.json              the project list (PEP 503, PEP 691)
//!   simple/{project}/index.html, …/index.json         one page per project
//!   files/{file}                                      wheels and sdists (unless --base-url)
//!   files/{wheel}.metadata                            the wheel's METADATA (PEP 658 / 714)
//!   files/{name}-{version}-variants.json              per release with variant wheels (PEP 825)
//!   .vari-index-state.json                            the build state (not linked)
//! ```
//!
//! Project pages link files relatively (`../../files/…`), so the site works under any URL prefix.
//! File names in links are percent-encoded but for RFC 3986's unreserved characters: local
//! versions' `+` too, which some servers and object stores read as a space (as PyPI does).

use vari_simple::{PageFile, PageStyle};

/// The directory of the simple pages.
pub(crate) const SIMPLE_DIR: &str = "simple";
/// The directory of the files.
pub(crate) const FILES_DIR: &str = "files";
/// How the site's pages are laid out (see [`PageStyle::STATIC_SITE`]).
pub(crate) const STYLE: PageStyle = PageStyle::STATIC_SITE;

/// A project's page.
#[derive(Debug, Clone)]
pub(crate) struct ProjectPage {
    /// The PEP 503 normalised name.
    pub(crate) name: String,
    /// Every version with a file, in ascending PEP 440 order.
    pub(crate) versions: Vec<String>,
    /// The links, in a stable order (by version, then file name), each with its SHA-256 and
    /// size.
    pub(crate) files: Vec<PageFile>,
}

impl ProjectPage {
    /// The page as the renderers take it.
    pub(crate) fn view(&self) -> vari_simple::ProjectPage<'_> {
        vari_simple::ProjectPage {
            name: &self.name,
            files: &self.files,
            versions: &self.versions,
        }
    }
}

/// The path of a site file relative to the site root, `/`-separated.
pub(crate) fn files_path(filename: &str) -> String {
    format!("{FILES_DIR}/{filename}")
}

/// The URL, relative to a project page, of a file under `files/`.
pub(crate) fn relative_file_url(filename: &str) -> String {
    format!("../../{FILES_DIR}/{}", STYLE.file_segment(filename))
}

/// `{base}/{filename}`, for files hosted elsewhere.
pub(crate) fn external_file_url(base: &str, filename: &str) -> String {
    format!(
        "{}/{}",
        base.trim_end_matches('/'),
        STYLE.file_segment(filename)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_encode_what_is_not_unreserved() {
        assert_eq!(
            relative_file_url("torch-2.8.0+cu128-cp312-cp312-linux_x86_64.whl"),
            "../../files/torch-2.8.0%2Bcu128-cp312-cp312-linux_x86_64.whl"
        );
        assert_eq!(
            external_file_url("https://h/w/", "a b.whl"),
            "https://h/w/a%20b.whl"
        );
    }
}
