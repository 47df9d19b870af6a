//! The two ways vari writes pages today, named so each difference is visible in one place.

use crate::encode::SegmentSet;

/// How a writer lays its pages out. Everything else (which fields, attributes, escaping, the
/// `api-version` of a project page) is decided by the renderers for every writer alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageStyle {
    /// JSON indented and ending in a newline (files on disk, read by people too), or compact
    /// (served).
    pub pretty_json: bool,
    /// Whether PEP 700's `versions` comes before `files` in a JSON project page.
    pub versions_first: bool,
    /// What ends each link line of an HTML page (`<br>` or `<br />`).
    pub line_break: &'static str,
    /// The `api-version` a project list declares.
    pub root_api_version: &'static str,
    /// What a file name in a link's path keeps unescaped.
    pub segments: SegmentSet,
}

impl PageStyle {
    /// The proxy's pages: compact JSON, XHTML-style line breaks, project lists at API 1.0,
    /// `+` of local versions kept in file links (the proxy routes them itself).
    pub const SERVED: Self = Self {
        pretty_json: false,
        versions_first: false,
        line_break: "<br />",
        root_api_version: "1.0",
        segments: SegmentSet::UnreservedAndPlus,
    };

    /// `index build`'s static site: indented JSON, HTML5 line breaks, API 1.1 throughout,
    /// `+` escaped in file links (static hosts and object stores may read `+` as a space).
    pub const STATIC_SITE: Self = Self {
        pretty_json: true,
        versions_first: true,
        line_break: "<br>",
        root_api_version: "1.1",
        segments: SegmentSet::Unreserved,
    };

    /// `filename` as one path segment of a link, in this style.
    pub fn file_segment(&self, filename: &str) -> String {
        crate::encode::encode_segment(filename, self.segments)
    }
}
