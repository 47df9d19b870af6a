//! What a front-end decides before the client starts: which indexes and find-links sources,
//! how several indexes combine, the cache, time limits, retries and credentials.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use url::Url;

use crate::auth::{split_credentials, Credentials, NetrcSource};
use crate::limits::Limits;
use crate::listings::Listings;

/// Everything an [`IndexClient`](crate::IndexClient) needs to know.
#[derive(Debug, Clone)]
pub struct ClientSettings {
    /// Simple-API indexes, most important first.
    pub indexes: Vec<IndexUrl>,
    /// Flat sources: directories of files and single HTML pages.
    pub find_links: Vec<FindLinks>,
    /// How the files of several indexes combine.
    pub strategy: IndexStrategy,
    /// Where HTTP responses are cached; `None` caches nothing.
    pub cache_dir: Option<PathBuf>,
    /// Whether the network or the cache answers.
    pub cache_mode: CacheMode,
    /// Time allowed to establish a connection.
    pub connect_timeout: Duration,
    /// Time allowed between two reads of a response (a server that stops sending fails after
    /// this long, however large the file).
    pub read_timeout: Duration,
    /// How many times a request is repeated after a server error (5xx) or a failed connection.
    pub retries: u32,
    /// The delay before the first retry; each further retry waits twice as long.
    pub retry_backoff: Duration,
    /// How many requests run at the same time.
    pub concurrency: usize,
    /// Where netrc credentials come from.
    pub netrc: NetrcSource,
    /// Size ceilings of response bodies and the deadline of a request (the `VARI_MAX_*` and
    /// `VARI_HTTP_DEADLINE` environment variables override them, see [`Limits`]).
    pub limits: Limits,
    /// Where project listings are kept for the run ([`Listings`]): with [`Listings::kept`],
    /// every client made from these settings (or a clone) reads each project once. None are
    /// kept by default.
    pub listings: Listings,
}

impl ClientSettings {
    /// Whether any source was named as local (a `file:` index, a find-links directory or
    /// `file:` page): only then may the client read `file:` URLs.
    pub fn has_local_source(&self) -> bool {
        self.indexes.iter().any(|i| i.url().scheme() == "file")
            || self.find_links.iter().any(|f| match f {
                FindLinks::Directory(_) => true,
                FindLinks::Page { url, .. } => url.scheme() == "file",
            })
    }
}

impl Default for ClientSettings {
    /// PyPI, first-index, the cache in `vari_fs::cache_dir()/http`, 10 s to connect, 30 s
    /// between reads, 3 retries from 250 ms, 16 requests at a time, `~/.netrc`.
    fn default() -> Self {
        Self {
            indexes: vec![IndexUrl::pypi()],
            find_links: Vec::new(),
            strategy: IndexStrategy::default(),
            cache_dir: vari_fs::cache_dir().map(|dir| dir.join(crate::http::HTTP_AREA_DIR)),
            cache_mode: CacheMode::default(),
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(30),
            retries: 3,
            retry_backoff: Duration::from_millis(250),
            concurrency: 16,
            netrc: NetrcSource::default(),
            limits: Limits::default(),
            listings: Listings::default(),
        }
    }
}

/// How the files of several indexes combine into one project.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum IndexStrategy {
    /// The first index (in the order given) that has the project supplies all of its files;
    /// later indexes are not asked. This is uv's `first-index`: a name registered on a public
    /// index cannot shadow a private one (dependency confusion).
    #[default]
    FirstIndex,
    /// Every index is asked and all files are merged, index order breaking ties (uv's and
    /// pip's `unsafe-best-match`).
    UnsafeBestMatch,
}

/// Whether responses come from the network or the cache.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum CacheMode {
    /// Fresh cached responses are used as they are; stale ones are revalidated.
    #[default]
    Normal,
    /// Nothing is sent: every response comes from the cache, fresh or not, and a missing one
    /// is an error naming the URL.
    Offline,
    /// Every cached response is revalidated with the server before use.
    Refresh,
}

/// A URL that is not usable as an index or find-links source.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid URL `{url}`: {message}")]
pub struct InvalidUrl {
    /// The URL as given, with any password replaced by `****`.
    pub url: String,
    /// What is wrong.
    pub message: String,
}

impl InvalidUrl {
    fn new(given: &str, message: impl Into<String>) -> Self {
        Self {
            url: redact_text(given),
            message: message.into(),
        }
    }
}

/// Hides the user info of a URL that may not even parse (the one rule, `vari_core::redact`).
fn redact_text(given: &str) -> String {
    vari_core::redact::redact_credentials(given).into_owned()
}

/// The URL of a simple-API index (PEP 503/691), such as `https://pypi.org/simple/`.
///
/// A user name and password in the URL are kept apart and sent only to that scheme, host and
/// port; `Display` and `Debug` show the URL without them.
///
/// ```
/// use vari_client::IndexUrl;
/// let index = IndexUrl::parse("https://user:secret@example.com/simple").unwrap();
/// assert_eq!(index.to_string(), "https://example.com/simple/");
/// assert!(!format!("{index:?}").contains("secret"));
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct IndexUrl {
    url: Url,
    credentials: Option<Credentials>,
}

impl IndexUrl {
    /// PyPI's simple index.
    pub fn pypi() -> Self {
        Self::parse("https://pypi.org/simple/").expect("a constant URL")
    }

    /// Parses an `http`, `https` or `file` URL; a trailing `/` is added when missing.
    pub fn parse(given: &str) -> Result<Self, InvalidUrl> {
        let url = Url::parse(given).map_err(|e| InvalidUrl::new(given, e.to_string()))?;
        Self::from_url(url, given)
    }

    fn from_url(url: Url, given: &str) -> Result<Self, InvalidUrl> {
        if !matches!(url.scheme(), "http" | "https" | "file") {
            return Err(InvalidUrl::new(
                given,
                format!(
                    "unsupported scheme `{}` (http, https or file)",
                    url.scheme()
                ),
            ));
        }
        let (mut url, credentials) = split_credentials(url);
        url.set_fragment(None);
        if !url.path().ends_with('/') {
            let path = format!("{}/", url.path());
            url.set_path(&path);
        }
        Ok(Self { url, credentials })
    }

    /// The URL without credentials.
    pub fn url(&self) -> &Url {
        &self.url
    }

    pub(crate) fn credentials(&self) -> Option<&Credentials> {
        self.credentials.as_ref()
    }
}

impl fmt::Display for IndexUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.url.as_str())
    }
}

impl fmt::Debug for IndexUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "IndexUrl({:?})", self.url.as_str())
    }
}

impl std::str::FromStr for IndexUrl {
    type Err = InvalidUrl;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

/// A flat source of files for any project (pip's and uv's `--find-links`).
#[derive(Clone, PartialEq, Eq)]
pub enum FindLinks {
    /// A local directory: its files (not its subdirectories) are the links.
    Directory(PathBuf),
    /// One HTML page (http, https or file URL) whose `<a href>` links are the files.
    Page {
        /// The page, without credentials.
        url: Url,
        /// Credentials that came with the URL.
        #[doc(hidden)]
        credentials: Option<CredentialsSlot>,
    },
}

/// Credentials carried by a [`FindLinks::Page`]; opaque, and printed as `****`.
#[derive(Clone, PartialEq, Eq)]
pub struct CredentialsSlot(pub(crate) Credentials);

impl fmt::Debug for CredentialsSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("****")
    }
}

impl FindLinks {
    /// An `http(s)` or `file` URL, or a local path: a directory is listed, a file is read as
    /// an HTML page.
    pub fn parse(given: &str) -> Result<Self, InvalidUrl> {
        let lower = given.to_ascii_lowercase();
        if lower.starts_with("http://") || lower.starts_with("https://") {
            let url = Url::parse(given).map_err(|e| InvalidUrl::new(given, e.to_string()))?;
            let (mut url, credentials) = split_credentials(url);
            url.set_fragment(None);
            return Ok(Self::Page {
                url,
                credentials: credentials.map(CredentialsSlot),
            });
        }
        let path = if lower.starts_with("file:") {
            let url = Url::parse(given).map_err(|e| InvalidUrl::new(given, e.to_string()))?;
            url.to_file_path()
                .map_err(|()| InvalidUrl::new(given, "not a local file path"))?
        } else {
            PathBuf::from(given)
        };
        if path.is_dir() {
            return Ok(Self::Directory(path));
        }
        let absolute =
            std::path::absolute(&path).map_err(|e| InvalidUrl::new(given, e.to_string()))?;
        let url = Url::from_file_path(&absolute)
            .map_err(|()| InvalidUrl::new(given, "not a local file path"))?;
        Ok(Self::Page {
            url,
            credentials: None,
        })
    }

    /// Where the links come from, for messages.
    pub fn location(&self) -> String {
        match self {
            Self::Directory(path) => path.display().to_string(),
            Self::Page { url, .. } => url.to_string(),
        }
    }
}

impl fmt::Debug for FindLinks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Directory(path) => f.debug_tuple("Directory").field(path).finish(),
            Self::Page { url, .. } => f.debug_tuple("Page").field(&url.as_str()).finish(),
        }
    }
}

impl fmt::Display for FindLinks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.location())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_urls_get_a_trailing_slash_and_lose_credentials() {
        let index = IndexUrl::parse("http://u:p@127.0.0.1:8080/simple").unwrap();
        assert_eq!(index.url().as_str(), "http://127.0.0.1:8080/simple/");
        assert_eq!(index.credentials().unwrap().username, "u");
        assert!(!format!("{index:?} {index}").contains(":p@"));
    }

    #[test]
    fn bad_urls_are_reported_without_passwords() {
        let err = IndexUrl::parse("ftp://u:hunter2@host/simple").unwrap_err();
        assert!(
            err.to_string().contains("unsupported scheme `ftp`"),
            "{err}"
        );
        assert!(!err.to_string().contains("hunter2"), "{err}");
        let err = IndexUrl::parse("https://u:hunter2@[bad/simple").unwrap_err();
        assert!(!err.to_string().contains("hunter2"), "{err}");
    }

    #[test]
    fn find_links_kinds() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().to_str().unwrap();
        assert_eq!(
            FindLinks::parse(path).unwrap(),
            FindLinks::Directory(dir.path().to_path_buf())
        );
        let page = dir.path().join("links.html");
        std::fs::write(&page, "<html></html>").unwrap();
        assert!(matches!(
            FindLinks::parse(page.to_str().unwrap()).unwrap(),
            FindLinks::Page { url, .. } if url.scheme() == "file"
        ));
        let remote = FindLinks::parse("https://a:b@example.com/jax_releases.html").unwrap();
        assert_eq!(remote.location(), "https://example.com/jax_releases.html");
        assert!(!format!("{remote:?}").contains(":b@"));
    }
}
