//! # vari-simple
//!
//! The simple-repository page model, in one place for everyone who reads or writes pages:
//! the index client (reading indexes and find-links pages), the proxy (serving pages) and
//! `vari-publish` (`index build` writes a static site, `index validate` reads one back).
//!
//! - [`PageFile`]: one file as a project page lists it, with [`Hashes`] keyed by a typed
//!   [`HashAlgorithm`], `requires-python`, [`Yanked`] (PEP 592), [`CoreMetadata`] (PEP 658 and
//!   PEP 714), size and upload time (PEP 700). The `{name}-{version}-variants.json` files of
//!   PEP 825 are plain files of the page, told apart by their name (the client classifies).
//! - Reading: [`parse_project`] (PEP 691 JSON or PEP 503 HTML, as [`PageFormat::detect`]
//!   says), [`parse_root`] for project lists; both bounded ([`MAX_PAGE_LINKS`]).
//! - Writing: [`render_project_json`], [`render_project_html`], [`render_root_json`],
//!   [`render_root_html`], in a [`PageStyle`]: the proxy and the index builder emit pages
//!   through the same renderers, and differ only where the style says so.
//! - URL path segments: [`encode_segment`] and [`decode_segment`] (the `percent-encoding`
//!   crate).
//!
//! Why a crate of its own, and not a module of `vari-core`: reading pages needs an HTML
//! parser (`tl`), HTML escaping and URL resolution (`url`), which the wheel-variant format and
//! everything else built on `vari-core` (detection, scanning) have no use for. It sits below
//! `vari-client`, `vari-proxy` and `vari-publish`, above nothing of vari's, and does no I/O:
//! bodies come in as text, pages go out as bytes.

mod encode;
mod hashes;
mod html;
mod json;
mod model;
mod parsed;
mod style;

pub use encode::{decode_segment, decode_segment_lossy, encode_segment, SegmentSet};
pub use hashes::{HashAlgorithm, Hashes};
pub use html::{render_project_html, render_root_html};
pub use json::{parse_root_json, render_project_json, render_root_json};
pub use model::{api_version, CoreMetadata, PageFile, ProjectPage, Yanked};
pub use parsed::{ParsedPage, SkippedLink, MAX_PAGE_LINKS};
pub use style::PageStyle;

use url::Url;

/// The two page formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageFormat {
    /// PEP 503 HTML.
    Html,
    /// PEP 691 JSON.
    Json,
}

impl PageFormat {
    /// The format a response's `Content-Type` announces; without one, the body decides.
    pub fn detect(content_type: Option<&str>, body: &str) -> Self {
        let content_type = content_type.unwrap_or_default().to_ascii_lowercase();
        if content_type.contains("json") {
            Self::Json
        } else if content_type.contains("html") {
            Self::Html
        } else if body.trim_start().starts_with('{') {
            Self::Json
        } else {
            Self::Html
        }
    }
}

/// Parses a project page served at `page_url` (after redirects: relative links resolve
/// against it, or against the HTML page's `<base href>`). A whole page that cannot be read is
/// the error, in words.
///
/// ```
/// let url = url::Url::parse("https://example.com/simple/foo/").unwrap();
/// let html = r#"<a href="foo-1.0-py3-none-any.whl#sha256=AA">x</a>"#;
/// let page = vari_simple::parse_project(&url, vari_simple::PageFormat::Html, html).unwrap();
/// assert_eq!(page.files[0].hashes.sha256(), Some("aa"));
/// assert_eq!(page.files[0].url.as_str(), "https://example.com/simple/foo/foo-1.0-py3-none-any.whl");
/// ```
pub fn parse_project(page_url: &Url, format: PageFormat, body: &str) -> Result<ParsedPage, String> {
    match format {
        PageFormat::Json => json::parse_project(body, page_url),
        PageFormat::Html => html::parse_project(body, page_url),
    }
}

/// The project names of a root page: the JSON `projects` list (none when there is no such
/// list), or each anchor's text (PEP 503 says it is the name), else the last segment of its
/// `href`.
pub fn parse_root(page_url: &Url, format: PageFormat, body: &str) -> Result<Vec<String>, String> {
    match format {
        PageFormat::Json => Ok(json::parse_root_json(body)?.unwrap_or_default()),
        PageFormat::Html => html::parse_root(body, page_url),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_lists_without_a_list_are_told_apart() {
        let url = Url::parse("https://example.com/simple/").unwrap();
        let bare = r#"{"meta": {"api-version": "1.0"}}"#;
        assert_eq!(parse_root_json(bare).unwrap(), None);
        assert!(parse_root(&url, PageFormat::Json, bare).unwrap().is_empty());
        let listed = r#"{"meta": {"api-version": "1.0"}, "projects": [{"name": "A"}]}"#;
        assert_eq!(parse_root_json(listed).unwrap(), Some(vec!["A".to_owned()]));
        let html = r#"<a href="/simple/b-c/"></a>"#;
        assert_eq!(parse_root(&url, PageFormat::Html, html).unwrap(), ["b-c"]);
    }

    #[test]
    fn pages_read_back_as_written_in_either_style() {
        let files = vec![
            PageFile {
                filename: "a-1.0+cu128-py3-none-any.whl".to_owned(),
                url: encode_segment("a-1.0+cu128-py3-none-any.whl", SegmentSet::Unreserved),
                hashes: Hashes::sha256_of("AB"),
                requires_python: Some(">=3.9,<4".to_owned()),
                yanked: Some(Yanked {
                    reason: Some("bad \"build\" & more".to_owned()),
                }),
                core_metadata: CoreMetadata::Available(Hashes::sha256_of("cd")),
                size: Some(7),
                upload_time: None,
            },
            PageFile {
                filename: "a-1.0-variants.json".to_owned(),
                url: "a-1.0-variants.json".to_owned(),
                hashes: Hashes::sha256_of("ef"),
                requires_python: None,
                yanked: None,
                core_metadata: CoreMetadata::Absent,
                size: Some(3),
                upload_time: None,
            },
        ];
        let versions = ["1.0".to_owned()];
        let page = ProjectPage {
            name: "a",
            files: &files,
            versions: &versions,
        };
        let url = Url::parse("https://example.com/simple/a/").unwrap();
        for style in [PageStyle::SERVED, PageStyle::STATIC_SITE] {
            let json = render_project_json(page, &style);
            let html = render_project_html(page, &style);
            for (format, body) in [(PageFormat::Json, json), (PageFormat::Html, html)] {
                let body = String::from_utf8(body).unwrap();
                let read = parse_project(&url, format, &body).unwrap();
                assert!(read.problems.is_empty(), "{format:?}: {:?}", read.problems);
                assert_eq!(read.files.len(), files.len(), "{format:?}");
                for (read, written) in read.files.iter().zip(&files) {
                    assert_eq!(read.filename, written.filename, "{format:?}");
                    assert_eq!(read.url, url.join(&written.url).unwrap(), "{format:?}");
                    assert_eq!(read.hashes, written.hashes, "{format:?}");
                    assert_eq!(read.requires_python, written.requires_python);
                    assert_eq!(read.yanked, written.yanked, "{format:?}");
                    assert_eq!(read.core_metadata, written.core_metadata, "{format:?}");
                    // Sizes are PEP 691's only.
                    let size = written.size.filter(|_| format == PageFormat::Json);
                    assert_eq!(read.size, size, "{format:?}");
                }
            }
            let names = ["A.b", "c"];
            let root = render_root_json(names.into_iter(), &style);
            let root = String::from_utf8(root).unwrap();
            assert_eq!(parse_root(&url, PageFormat::Json, &root).unwrap(), names);
            let root = render_root_html(names.into_iter().map(|n| (n, n)), &style);
            let root = String::from_utf8(root).unwrap();
            assert_eq!(parse_root(&url, PageFormat::Html, &root).unwrap(), names);
        }
    }
}
