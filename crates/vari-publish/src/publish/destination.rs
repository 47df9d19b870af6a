//! Where a site is published, as the user writes it after `-o`: a directory, or the URL of an
//! object store prefix.

use std::ffi::OsStr;
use std::fmt;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use url::Url;
use vari_core::redact::redact_credentials;

use super::{DirectoryStore, ObjectSite, SiteStore};
use crate::error::{BuildError, DestinationError};
use crate::place::FilePlacement;

/// The URL schemes of object stores, and which store each names.
const OBJECT_SCHEMES: [&str; 10] = [
    "s3", "s3a", "gs", "az", "adl", "azure", "abfs", "abfss", "http", "https",
];

/// The directory of the stores of object-store mirrors, under vari's cache (beside them, each
/// object-store destination's lock and publish journal).
pub const STORES_DIR: &str = "mirror";

/// How the name of a publish journal ends (after the store's key).
pub(crate) const JOURNAL_SUFFIX: &str = ".journal";

/// A site's destination.
///
/// ```
/// use vari_publish::Destination;
/// let dir = Destination::parse("site".as_ref()).unwrap();
/// assert!(matches!(dir, Destination::Directory(_)));
/// let s3 = Destination::parse("s3://bucket/prefix".as_ref()).unwrap();
/// assert_eq!(s3.to_string(), "s3://bucket/prefix");
/// assert!(Destination::parse("ftp://host/site".as_ref()).is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Destination {
    /// A local directory (created when missing).
    Directory(PathBuf),
    /// An object store prefix: `s3://BUCKET/PREFIX` (also `s3a://`), `gs://BUCKET/PREFIX`,
    /// `az://CONTAINER/PREFIX` (and the other Azure forms `object_store` reads), or an
    /// `http(s)://` WebDAV URL. Credentials come from the environment as each store's tools
    /// read them (`AWS_*`, `GOOGLE_*`, `AZURE_*`), and for S3 also from the AWS profile files.
    ObjectStore(Url),
}

impl Destination {
    /// Reads `-o DEST`: a `SCHEME://…` URL for an object store, a directory otherwise.
    pub fn parse(text: &OsStr) -> Result<Self, DestinationError> {
        let Some(scheme) = text.to_str().and_then(url_scheme) else {
            return Ok(Self::Directory(PathBuf::from(text)));
        };
        let text = text.to_str().unwrap_or_default();
        if scheme.eq_ignore_ascii_case("file") {
            let url = Url::parse(text).map_err(|e| DestinationError::BadUrl {
                url: redact_credentials(text).into_owned(),
                problem: e.to_string(),
            })?;
            return url.to_file_path().map(Self::Directory).map_err(|()| {
                DestinationError::BadUrl {
                    url: redact_credentials(text).into_owned(),
                    problem: "not a local path".to_owned(),
                }
            });
        }
        if !OBJECT_SCHEMES
            .iter()
            .any(|known| known.eq_ignore_ascii_case(scheme))
        {
            return Err(DestinationError::UnsupportedScheme(
                redact_credentials(text).into_owned(),
            ));
        }
        let url = Url::parse(text).map_err(|e| DestinationError::BadUrl {
            url: redact_credentials(text).into_owned(),
            problem: e.to_string(),
        })?;
        if url.host_str().is_none_or(str::is_empty) {
            return Err(DestinationError::BadUrl {
                url: redact_credentials(text).into_owned(),
                problem: "names no bucket (or host)".to_owned(),
            });
        }
        if url.query().is_some() || url.fragment().is_some() {
            return Err(DestinationError::BadUrl {
                url: redact_credentials(text).into_owned(),
                problem: "a destination has no query or fragment".to_owned(),
            });
        }
        Ok(Self::ObjectStore(url))
    }

    /// Opens the destination for publishing: a [`DirectoryStore`] placing distributions as
    /// `placement` says, or an [`ObjectSite`] (which connects and lists the prefix now, so that
    /// missing credentials or a missing bucket fail before anything is written).
    pub fn open(&self, placement: &FilePlacement) -> Result<Box<dyn SiteStore>, BuildError> {
        Ok(match self {
            Self::Directory(path) => Box::new(DirectoryStore::new(path, placement.clone())),
            Self::ObjectStore(url) => Box::new(ObjectSite::open(url)?),
        })
    }

    /// Where a publish to this destination journals what it has written
    /// ([`StampJournal`](super::StampJournal)), in vari's cache directory `cache`: for an
    /// object store, `{cache}/mirror/{key}.journal` (the key of
    /// the mirror's default store); `None` for a directory, whose
    /// files are checked where they lie.
    pub fn journal(&self, cache: &Path) -> Option<PathBuf> {
        match self {
            Self::Directory(_) => None,
            Self::ObjectStore(url) => Some(
                cache
                    .join(STORES_DIR)
                    .join(format!("{}{JOURNAL_SUFFIX}", store_key(url))),
            ),
        }
    }

    /// The directory, for a local destination.
    pub fn directory(&self) -> Option<&Path> {
        match self {
            Self::Directory(path) => Some(path),
            Self::ObjectStore(_) => None,
        }
    }
}

impl From<PathBuf> for Destination {
    fn from(path: PathBuf) -> Self {
        Self::Directory(path)
    }
}

impl From<&Path> for Destination {
    fn from(path: &Path) -> Self {
        Self::Directory(path.to_owned())
    }
}

impl fmt::Display for Destination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Directory(path) => write!(f, "{}", path.display()),
            // Never the user information: a WebDAV URL may carry a password.
            Self::ObjectStore(url) => write!(
                f,
                "{}",
                redact_credentials(url.as_str().trim_end_matches('/'))
            ),
        }
    }
}

/// `{scheme}-{host}-{16 hex digits of the SHA-256 of the URL}`, the host reduced to the
/// characters a file name can always hold (the hash alone tells stores apart).
pub(crate) fn store_key(url: &Url) -> String {
    // The URL as given (not as shown: `Display` hides credentials).
    let text = url.as_str().trim_end_matches('/');
    let readable: String = format!("{}-{}", url.scheme(), url.host_str().unwrap_or_default())
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_') {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    let digest = hex::encode(Sha256::digest(text.as_bytes()));
    format!("{readable}-{}", &digest[..16])
}

/// The scheme of `text` when it is written as a URL (`SCHEME://`).
fn url_scheme(text: &str) -> Option<&str> {
    let (scheme, _) = text.split_once("://")?;
    let mut chars = scheme.chars();
    let valid = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    valid.then_some(scheme)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Destination, DestinationError> {
        Destination::parse(text.as_ref())
    }

    #[test]
    fn urls_name_object_stores_and_the_rest_are_directories() {
        assert_eq!(
            parse("out/site").unwrap(),
            Destination::Directory("out/site".into())
        );
        assert_eq!(
            parse("./a://b").unwrap(),
            Destination::Directory("./a://b".into())
        );
        assert_eq!(
            parse("file:///srv/site").unwrap(),
            Destination::Directory("/srv/site".into())
        );
        for url in [
            "s3://bucket",
            "S3://bucket/a/b",
            "gs://b/p",
            "az://c/p",
            "https://dav.example/site",
        ] {
            assert!(
                matches!(parse(url), Ok(Destination::ObjectStore(_))),
                "{url}"
            );
        }
        assert!(matches!(
            parse("ftp://h/x"),
            Err(DestinationError::UnsupportedScheme(_))
        ));
        assert!(matches!(
            parse("s3:///prefix"),
            Err(DestinationError::BadUrl { .. })
        ));
        assert!(matches!(
            parse("s3://b/p?x=1"),
            Err(DestinationError::BadUrl { .. })
        ));
    }
}
