//! Where validation reads an index from: the seam between the checks and the transport.

use std::io::Read;

use sha2::{Digest, Sha256};
use url::Url;
use vari_core::metadata::VariantMetadata;

/// Why a page or file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// This reader cannot reach the URL (a local site linking files hosted elsewhere).
    #[error("{url}: not reachable from here")]
    NotReachable {
        /// The URL.
        url: String,
    },
    /// The read failed, or the file is broken (a wheel whose `variant.json` does not check out).
    #[error("{message}")]
    Failed {
        /// The URL or path.
        url: String,
        /// What went wrong, naming the URL or file.
        message: String,
    },
}

/// A PEP 503 HTML page, as a reader finds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HtmlPage {
    /// The page, and the URL its relative links resolve against.
    Found(Url, Vec<u8>),
    /// Nothing there: a client asking for HTML (pip, by default) gets nothing.
    Missing,
    /// This reader cannot tell (a server that answers a request for HTML with JSON).
    NotChecked,
}

/// Access to an index for [`crate::validate`]. [`crate::LocalSite`] reads a site directory; an
/// HTTP implementation requests the pages with `Accept: application/vnd.pypi.simple.v1+json`
/// and reads `variant.json` with range requests.
pub trait SiteReader: Sync {
    /// The PEP 691 JSON project list; `None` when there is none.
    fn root_page(&self) -> Result<Option<Vec<u8>>, FetchError>;

    /// The PEP 691 JSON page of `project` (PEP 503 normalised) and the URL its relative links
    /// resolve against; `None` when there is none.
    fn project_page(&self, project: &str) -> Result<Option<(Url, Vec<u8>)>, FetchError>;

    /// The bytes at `url`; `None` when there is nothing there.
    fn fetch(&self, url: &Url) -> Result<Option<Vec<u8>>, FetchError>;

    /// The PEP 503 HTML page of `project` (PEP 503 normalised), or of the project list for
    /// `None`. By default not checked.
    fn html_page(&self, project: Option<&str>) -> Result<HtmlPage, FetchError> {
        let _ = project;
        Ok(HtmlPage::NotChecked)
    }

    /// Projects whose pages the site holds although its project list does not name them: a
    /// client asking for them by name still gets them (a reader that cannot list the site
    /// returns none).
    fn unlisted_pages(&self, listed: &std::collections::BTreeSet<String>) -> Vec<String> {
        let _ = listed;
        Vec::new()
    }

    /// The lowercase hex SHA-256 of the file at `url`; `None` when there is nothing there.
    /// By default the file is fetched whole; a reader may stream it instead.
    fn file_sha256(&self, url: &Url) -> Result<Option<String>, FetchError> {
        Ok(self
            .fetch(url)?
            .map(|bytes| hex::encode(Sha256::digest(&bytes))))
    }

    /// The checked `variant.json` of the variant wheel `filename` at `url` (its label agrees
    /// with its file name); `None` when there is nothing at `url`.
    fn wheel_variant(
        &self,
        url: &Url,
        filename: &str,
    ) -> Result<Option<VariantMetadata>, FetchError> {
        let Some(bytes) = self.fetch(url)? else {
            return Ok(None);
        };
        read_wheel_variant(std::io::Cursor::new(bytes), url, filename)
    }
}

/// The `variant.json` of a wheel read from `reader` (shared by the readers).
pub(crate) fn read_wheel_variant<R: Read + std::io::Seek>(
    reader: R,
    url: &Url,
    filename: &str,
) -> Result<Option<VariantMetadata>, FetchError> {
    vari_wheel::inspect_reader(std::path::Path::new(filename), reader)
        .map(|info| info.metadata)
        .map_err(|e| FetchError::Failed {
            url: url.to_string(),
            message: e.to_string(),
        })
}
