//! A site directory on this machine, as [`crate::build`] writes it.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use url::Url;
use vari_core::metadata::VariantMetadata;

use super::reader::{read_wheel_variant, FetchError, SiteReader};
use super::ValidateError;

/// Reads a site directory: `simple/index.json`, `simple/{project}/index.json`, and the files
/// they link by relative URL. Absolute `http(s)` links (a site built with a base URL) are
/// [`FetchError::NotReachable`].
#[derive(Debug, Clone)]
pub struct LocalSite {
    simple: Url,
}

impl LocalSite {
    /// The site at `dir`.
    pub fn new(dir: &Path) -> Result<Self, ValidateError> {
        let site_error = |source| ValidateError::Site {
            path: dir.to_owned(),
            source,
        };
        let absolute = std::fs::canonicalize(dir).map_err(site_error)?;
        let simple = Url::from_directory_path(absolute.join("simple"))
            .map_err(|()| site_error(std::io::Error::other("cannot be expressed as a file URL")))?;
        Ok(Self { simple })
    }

    fn path_of(&self, url: &Url) -> Result<PathBuf, FetchError> {
        if url.scheme() != "file" {
            return Err(FetchError::NotReachable {
                url: url.to_string(),
            });
        }
        url.to_file_path().map_err(|()| FetchError::Failed {
            url: url.to_string(),
            message: format!("{url}: not a local path"),
        })
    }

    fn page(&self, relative: &str) -> Result<(Url, Option<Vec<u8>>), FetchError> {
        let base = self.simple.join(relative).map_err(|e| FetchError::Failed {
            url: relative.to_owned(),
            message: format!("{relative}: {e}"),
        })?;
        let index = base.join("index.json").map_err(|e| FetchError::Failed {
            url: base.to_string(),
            message: e.to_string(),
        })?;
        Ok((base, self.fetch(&index)?))
    }
}

/// `None` for a missing file, the error otherwise.
fn not_found_is_none<T>(
    result: std::io::Result<T>,
    path: &Path,
    url: &Url,
) -> Result<Option<T>, FetchError> {
    match result {
        Ok(value) => Ok(Some(value)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(FetchError::Failed {
            url: url.to_string(),
            message: format!("{}: {e}", path.display()),
        }),
    }
}

impl SiteReader for LocalSite {
    fn root_page(&self) -> Result<Option<Vec<u8>>, FetchError> {
        Ok(self.page("")?.1)
    }

    fn project_page(&self, project: &str) -> Result<Option<(Url, Vec<u8>)>, FetchError> {
        let (base, bytes) = self.page(&format!("{project}/"))?;
        Ok(bytes.map(|bytes| (base, bytes)))
    }

    fn fetch(&self, url: &Url) -> Result<Option<Vec<u8>>, FetchError> {
        let path = self.path_of(url)?;
        not_found_is_none(std::fs::read(&path), &path, url)
    }

    fn file_sha256(&self, url: &Url) -> Result<Option<String>, FetchError> {
        let path = self.path_of(url)?;
        Ok(not_found_is_none(crate::dist::hash_file(&path), &path, url)?.map(|(hash, _)| hash))
    }

    fn wheel_variant(
        &self,
        url: &Url,
        filename: &str,
    ) -> Result<Option<VariantMetadata>, FetchError> {
        let path = self.path_of(url)?;
        match not_found_is_none(File::open(&path), &path, url)? {
            None => Ok(None),
            Some(file) => read_wheel_variant(BufReader::new(file), url, filename),
        }
    }
}
