//! A site in a local directory: every file written atomically (a temporary file renamed over
//! the old one), distributions hard-linked or copied ([`FilePlacement`]), unchanged files left
//! alone (so caches and CDNs revalidate cheaply), project (and class) directories removed once
//! empty.

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::{Body, Done, Put, SiteFile, SiteStore, Stamp, Stamps};
use crate::error::BuildError;
use crate::place::{place, FilePlacement};

/// A site directory (created when missing).
#[derive(Debug, Clone)]
pub struct DirectoryStore {
    site: PathBuf,
    placement: FilePlacement,
}

impl DirectoryStore {
    /// The site at `site`, with distribution files placed as `placement` says.
    pub fn new(site: impl Into<PathBuf>, placement: FilePlacement) -> Self {
        Self {
            site: site.into(),
            placement,
        }
    }

    /// The site directory.
    pub fn site(&self) -> &Path {
        &self.site
    }

    /// The path of `relative`, built from validated names and checked again here: the one
    /// place a site path is made.
    fn path(&self, relative: &str) -> Result<PathBuf, BuildError> {
        vari_fs::join_under(&self.site, relative).map_err(|source| BuildError::Unsafe {
            site: self.site.clone(),
            source,
        })
    }

    fn create_parent(&self, path: &Path) -> Result<(), BuildError> {
        match path.parent() {
            Some(parent) if !parent.is_dir() => {
                std::fs::create_dir_all(parent).map_err(|source| BuildError::Site {
                    path: parent.to_owned(),
                    source,
                })
            }
            _ => Ok(()),
        }
    }

    /// Writes one file unless it already holds that content; whether it wrote.
    fn put(&self, file: &SiteFile, previous: &Stamps) -> Result<bool, BuildError> {
        let dest = self.path(&file.path)?;
        match &file.body {
            Body::Kept => Ok(false),
            Body::File(src) => {
                self.create_parent(&dest)?;
                place(src, &dest, &self.placement)
            }
            Body::Bytes(bytes) => {
                // A file no earlier publish wrote is not worth reading first.
                if previous.contains_key(&file.path)
                    && std::fs::read(&dest).is_ok_and(|old| old == *bytes)
                {
                    return Ok(false);
                }
                self.create_parent(&dest)?;
                vari_fs::write_atomic(&dest, bytes)?;
                Ok(true)
            }
        }
    }

    fn remove(&self, relative: &str) -> Result<bool, BuildError> {
        // Every path removed was checked when the state naming it was loaded; the removal
        // checks again, and never passes through a linked directory.
        let removed = match vari_fs::remove_file_under(&self.site, relative) {
            Ok(removed) => removed,
            Err(vari_fs::RemoveError::Unsafe(source)) => {
                return Err(BuildError::Unsafe {
                    site: self.site.clone(),
                    source,
                })
            }
            Err(vari_fs::RemoveError::Io { path, source }) => {
                return Err(BuildError::Site { path, source })
            }
            Err(e @ vari_fs::RemoveError::NotARealDirectory(_)) => {
                return Err(BuildError::Site {
                    path: self.site.join(relative),
                    source: std::io::Error::other(e.to_string()),
                })
            }
        };
        for dir in crate::site::page_dirs(relative) {
            // Fails (and is meant to) while the directory still holds a page.
            let removed_dir = self
                .path(dir)
                .is_ok_and(|dir| std::fs::remove_dir(dir).is_ok());
            if !removed_dir {
                break;
            }
        }
        Ok(removed)
    }
}

impl SiteStore for DirectoryStore {
    fn locate(&self, path: &str) -> String {
        self.site.join(path).display().to_string()
    }

    /// An unreadable file counts as absent (the one file read is the build state, a cache); one
    /// that is not a regular file or is too large is an error.
    fn read(&self, path: &str, limit: u64) -> Result<Option<Vec<u8>>, BuildError> {
        let full = self.path(path)?;
        match vari_fs::read_input_limited(&full, limit) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(vari_fs::InputError::Io { .. }) => Ok(None),
            Err(e) => Err(BuildError::State {
                path: full,
                key: "(the file)".to_owned(),
                problem: e.to_string(),
            }),
        }
    }

    fn contains(&self, path: &str) -> bool {
        self.path(path).is_ok_and(|path| path.is_file())
    }

    fn put_all(
        &self,
        files: &[&SiteFile],
        previous: &Stamps,
        done: &Done<'_>,
    ) -> Result<Vec<Put>, BuildError> {
        let results: Vec<Result<Put, BuildError>> = files
            .par_iter()
            .map(|file| {
                let stamp = Stamp {
                    sha256: file.sha256.clone(),
                    size: file.size,
                    e_tag: None,
                };
                let put = if self.put(file, previous)? {
                    Put::Written(stamp)
                } else {
                    Put::Unchanged(stamp)
                };
                done(file, &put);
                Ok(put)
            })
            .collect();
        // In plan order, so the error reported is always the same one.
        results.into_iter().collect()
    }

    fn remove_all(&self, paths: &[&str]) -> Result<usize, BuildError> {
        let mut removed = 0;
        for path in paths {
            if self.remove(path)? {
                removed += 1;
            }
        }
        Ok(removed)
    }

    fn write_private(&self, path: &str, bytes: &[u8]) -> Result<(), BuildError> {
        let full = self.path(path)?;
        self.create_parent(&full)?;
        vari_fs::write_atomic(&full, bytes)?;
        Ok(())
    }
}
