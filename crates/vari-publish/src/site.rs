//! The site's layout and what its pages say, independent of how they are rendered.
//!
//! ```text
//! SITE/
//!   simple/index.html, simple/index.json              the project list (PEP 503, PEP 691)
//!   simple/{project}/index.html, …/index.json         one page per project
//!   files/{file}                                      wheels and sdists (unless --base-url)
//!   files/{wheel}.metadata                            the wheel's METADATA (PEP 658 / 714)
//!   files/{name}-{version}-variants.json              per release with variant wheels (PEP 825)
//!   t/{class}/simple/…                                a mirror's per-class index (its own pages
//!                                                     of the class's files, linking `files/`)
//!   .vari-index-state.json                            the build state (not linked)
//! ```
//!
//! Project pages link files relatively (`../../files/…`, `../../../../files/…` from a class's
//! pages), so the site works under any URL prefix and each file is stored once.
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

/// The directory of a mirror's per-class indexes (`t/{class}/simple/`, the shape of the
/// proxy's per-class URLs).
pub(crate) const CLASSES_DIR: &str = "t";

/// Whether `path` is a page of the site (`simple/…`, or a class's `t/…`), which links files.
pub(crate) fn is_page(path: &str) -> bool {
    [SIMPLE_DIR, CLASSES_DIR].iter().any(|top| {
        path.strip_prefix(top)
            .is_some_and(|rest| rest.starts_with('/'))
    })
}

/// The directories holding the page at `path` that go once it is their last file, deepest
/// first: `simple/{project}` for `simple/{project}/index.html`; `t/{class}/simple/{project}`,
/// `t/{class}/simple` and `t/{class}` for a class's page. Never `simple` or `t` themselves.
pub(crate) fn page_dirs(path: &str) -> Vec<&str> {
    if !is_page(path) {
        return Vec::new();
    }
    let mut dirs = Vec::new();
    let mut rest = path;
    while let Some((dir, _)) = rest.rsplit_once('/') {
        if !dir.contains('/') {
            break;
        }
        dirs.push(dir);
        rest = dir;
    }
    dirs
}

/// The URL, relative to a project page, of a file under `files/`.
pub(crate) fn relative_file_url(filename: &str) -> String {
    format!("../../{FILES_DIR}/{}", STYLE.file_segment(filename))
}

/// The URL, relative to a project page of a class's index (`t/{class}/simple/{project}/`), of
/// a file under the site's one `files/`.
pub(crate) fn class_file_url(filename: &str) -> String {
    format!("../../../../{FILES_DIR}/{}", STYLE.file_segment(filename))
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
    fn pages_and_the_directories_that_go_with_them() {
        assert!(is_page("simple/a/index.html") && is_page("t/cpu/simple/index.json"));
        assert!(!is_page("files/a-1.0.tar.gz") && !is_page("simplex/a") && !is_page("t"));
        assert_eq!(page_dirs("simple/a/index.html"), ["simple/a"]);
        assert!(page_dirs("simple/index.html").is_empty());
        assert_eq!(
            page_dirs("t/cpu/simple/a/index.json"),
            ["t/cpu/simple/a", "t/cpu/simple", "t/cpu"]
        );
        assert!(page_dirs("files/a.whl").is_empty());
    }

    #[test]
    fn urls_encode_what_is_not_unreserved() {
        assert_eq!(
            relative_file_url("torch-2.8.0+cu128-cp312-cp312-linux_x86_64.whl"),
            "../../files/torch-2.8.0%2Bcu128-cp312-cp312-linux_x86_64.whl"
        );
        assert_eq!(
            class_file_url("torch-2.8.0+cpu-cp312-cp312-linux_x86_64.whl"),
            "../../../../files/torch-2.8.0%2Bcpu-cp312-cp312-linux_x86_64.whl"
        );
        assert_eq!(
            external_file_url("https://h/w/", "a b.whl"),
            "https://h/w/a%20b.whl"
        );
    }
}
