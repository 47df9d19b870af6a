//! What reading a project page gives: its files, the links that were skipped, and the bound on
//! how many links one page may list.

use url::Url;

use crate::model::PageFile;

/// The most links one page may list. The largest real pages (PyTorch's nightly index) list
/// tens of thousands of files; parsing costs a few hundred bytes per link on top of the body,
/// so without this a hostile page of tiny links under the size ceiling would cost gigabytes.
pub const MAX_PAGE_LINKS: usize = 100_000;

/// The files of a project page, and the links that were skipped.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ParsedPage {
    /// The files, in page order, their URLs absolute and without fragment.
    pub files: Vec<PageFile<Url>>,
    /// Links that could not be read (the caller names the page).
    pub problems: Vec<SkippedLink>,
}

/// A link of a page that was skipped because it does not resolve to a URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkippedLink {
    /// A PEP 691 file entry.
    InvalidUrl {
        /// Its `filename`.
        filename: String,
        /// Its `url`, as written.
        url: String,
        /// Why it does not resolve.
        reason: String,
    },
    /// A PEP 503 anchor.
    InvalidHref {
        /// The anchor's text.
        text: String,
        /// Its `href`, unescaped.
        href: String,
        /// Why it does not resolve.
        reason: String,
    },
}

impl std::fmt::Display for SkippedLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::InvalidUrl {
                filename,
                url,
                reason,
            } => write!(f, "{filename}: invalid url `{url}`: {reason}"),
            Self::InvalidHref { text, href, reason } => {
                write!(f, "link `{text}`: invalid href `{href}`: {reason}")
            }
        }
    }
}
