//! A site directory on this machine, as [`crate::build`] writes it.

use std::io::BufReader;
use std::path::{Path, PathBuf};

use url::Url;
use vari_core::metadata::VariantMetadata;

use super::reader::{read_wheel_variant, FetchError, HtmlPage, SiteReader};
use super::ValidateError;

/// Reads a site directory: `simple/index.json`, `simple/{project}/index.json`, and the files
/// they link by relative URL. Absolute `http(s)` links (a site built with a base URL) are
/// [`FetchError::NotReachable`].
#[derive(Debug, Clone)]
pub struct LocalSite {
    simple: Url,
    /// The directory `simple` names: the site's `simple/`, or a class's `t/{class}/simple/`.
    simple_dir: PathBuf,
    /// The site directory, canonical: no link on a page may lead a read outside it.
    root: PathBuf,
}

impl LocalSite {
    /// The site at `dir`.
    pub fn new(dir: &Path) -> Result<Self, ValidateError> {
        let site_error = |source| ValidateError::Site {
            path: dir.to_owned(),
            source,
        };
        let absolute = std::fs::canonicalize(dir).map_err(|source| match source.kind() {
            std::io::ErrorKind::NotFound => ValidateError::Missing {
                path: dir.to_owned(),
            },
            _ => site_error(source),
        })?;
        if !absolute.is_dir() {
            return Err(ValidateError::NotADirectory {
                path: dir.to_owned(),
            });
        }
        let simple_dir = absolute.join("simple");
        let simple = Url::from_directory_path(&simple_dir)
            .map_err(|()| site_error(std::io::Error::other("cannot be expressed as a file URL")))?;
        Ok(Self {
            simple,
            simple_dir,
            root: absolute,
        })
    }

    /// The classes of a mirror site (`vari mirror`): each directory `t/{class}/simple/`
    /// whose name is a valid class name, in name order. Anything else under `t/` is not an
    /// index a client is pointed at, so it is not one to check.
    pub fn classes(&self) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(self.root.join(crate::site::CLASSES_DIR)) else {
            return Vec::new();
        };
        let mut classes: Vec<String> = entries
            .filter_map(Result::ok)
            .filter_map(|entry| entry.file_name().into_string().ok())
            .filter(|name| vari_core::class::ClassName::new(name).is_ok())
            .filter(|name| self.class_dir(name).is_dir())
            .collect();
        classes.sort();
        classes
    }

    fn class_dir(&self, class: &str) -> PathBuf {
        self.root
            .join(crate::site::CLASSES_DIR)
            .join(class)
            .join("simple")
    }

    /// The index of `class` (one of [`LocalSite::classes`]): its pages under
    /// `t/{class}/simple/`, its links read within the whole site.
    pub fn class(&self, class: &str) -> Result<Self, ValidateError> {
        let simple_dir = self.class_dir(class);
        let simple = Url::from_directory_path(&simple_dir).map_err(|()| ValidateError::Site {
            path: simple_dir.clone(),
            source: std::io::Error::other("cannot be expressed as a file URL"),
        })?;
        Ok(Self {
            simple,
            simple_dir,
            root: self.root.clone(),
        })
    }

    fn path_of(&self, url: &Url) -> Result<PathBuf, FetchError> {
        if url.scheme() != "file" {
            return Err(FetchError::NotReachable {
                url: url.to_string(),
            });
        }
        let path = url.to_file_path().map_err(|()| FetchError::Failed {
            url: url.to_string(),
            message: format!("{url}: not a local path"),
        })?;
        // A page of the site is input like any other: its links may name only files of the
        // site (`..` is resolved by the URL join; a link inside the site resolved by the file
        // system).
        let real = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        if !path.starts_with(&self.root) || !real.starts_with(&self.root) {
            return Err(FetchError::Failed {
                url: url.to_string(),
                message: format!(
                    "{url}: links outside the site {}, which validation does not read",
                    self.root.display()
                ),
            });
        }
        Ok(path)
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
        // A regular file, opened without blocking, up to a ceiling (vari_fs::input).
        let read =
            vari_fs::read_input(&path, vari_fs::InputKind::Metadata).map_err(std::io::Error::from);
        not_found_is_none(read, &path, url)
    }

    fn html_page(&self, project: Option<&str>) -> Result<HtmlPage, FetchError> {
        let relative = project.map_or(String::new(), |p| format!("{p}/"));
        let base = self
            .simple
            .join(&relative)
            .map_err(|e| FetchError::Failed {
                url: relative.clone(),
                message: format!("{relative}: {e}"),
            })?;
        let index = base.join("index.html").map_err(|e| FetchError::Failed {
            url: base.to_string(),
            message: e.to_string(),
        })?;
        Ok(match self.fetch(&index)? {
            Some(bytes) => HtmlPage::Found(base, bytes),
            None => HtmlPage::Missing,
        })
    }

    fn unlisted_pages(&self, listed: &std::collections::BTreeSet<String>) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(&self.simple_dir) else {
            return Vec::new();
        };
        let mut unlisted: Vec<String> = entries
            .filter_map(Result::ok)
            .filter(|entry| entry.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|entry| entry.file_name().into_string().ok())
            .filter(|name| {
                let dir = self.simple_dir.join(name);
                !listed.contains(name)
                    && (dir.join("index.json").is_file() || dir.join("index.html").is_file())
            })
            .collect();
        unlisted.sort();
        unlisted
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
        let opened = vari_fs::open_input(&path).map_err(std::io::Error::from);
        match not_found_is_none(opened, &path, url)? {
            None => Ok(None),
            Some(file) => read_wheel_variant(BufReader::new(file), url, filename),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_site_or_a_file_is_named_with_what_to_give() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("no-site");
        let err = LocalSite::new(&missing).unwrap_err();
        assert!(matches!(err, ValidateError::Missing { .. }), "{err:?}");
        let text = err.to_string();
        assert!(
            text.starts_with(&format!("{}: no such site directory", missing.display())),
            "{text}"
        );
        assert!(!text.contains("os error"), "{text}");
        let file = dir.path().join("index.html");
        std::fs::write(&file, b"<html></html>").unwrap();
        let err = LocalSite::new(&file).unwrap_err();
        assert!(
            matches!(err, ValidateError::NotADirectory { .. }),
            "{err:?}"
        );
    }

    #[test]
    fn links_may_lead_only_to_files_of_the_site() {
        let dir = tempfile::tempdir().unwrap();
        let site_dir = dir.path().join("site");
        std::fs::create_dir_all(site_dir.join("files")).unwrap();
        std::fs::write(site_dir.join("files/a.whl"), b"wheel").unwrap();
        let secret = dir.path().join("secret");
        std::fs::write(&secret, b"secret").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(&secret, site_dir.join("files/link.whl")).unwrap();
        let site = LocalSite::new(&site_dir).unwrap();
        let page = site.simple.join("a/").unwrap();
        let inside = page.join("../../files/a.whl").unwrap();
        assert_eq!(site.fetch(&inside).unwrap().unwrap(), b"wheel");
        let mut outside = vec![
            page.join("../../../secret").unwrap(),
            Url::from_file_path(&secret).unwrap(),
        ];
        if cfg!(unix) {
            outside.push(page.join("../../files/link.whl").unwrap());
        }
        for url in outside {
            let err = site.fetch(&url).unwrap_err().to_string();
            assert!(err.contains("links outside the site"), "{url}: {err}");
            assert!(site.file_sha256(&url).is_err(), "{url}");
        }
    }
}
