//! The one way to open a lock: [`LockFile`], a checked [`Lock`] with the directory its `path`
//! entries are relative to. `vari sync`, `vari install -r`, `vari export`, `vari mirror --lock`
//! and `vari lock` (the lock it makes again) find that directory by the same rule, so a
//! `path` entry names the same file for all of them.
//!
//! The bytes are read by the caller's bounded reader (`vari_install::sync::read_lock_text`:
//! a regular file opened without blocking, at most [`MAX_LOCK_BYTES`](crate::MAX_LOCK_BYTES)),
//! so that this crate keeps to the core and every lock is read under the same ceiling.

use std::path::{Path, PathBuf};

use url::Url;

use crate::model::{Artifact, Lock};
use crate::read::read_lock;
use crate::LockError;

/// The file name a lock has in a directory given instead of a file (PEP 751's plain name).
pub const LOCK_FILE_NAME: &str = "pylock.toml";

/// A checked lock and where it lies: the file it was read from (as the user named it, for
/// messages) and the absolute directory its `path` entries are relative to.
#[derive(Debug, Clone)]
pub struct LockFile {
    lock: Lock,
    path: PathBuf,
    dir: PathBuf,
    dir_url: Url,
}

/// Why a lock could not be opened. The message names the file.
#[derive(Debug, thiserror::Error)]
pub enum OpenError<E: std::error::Error + 'static> {
    /// The caller's reader refused or failed (missing, not a regular file, too large, not
    /// UTF-8); its error names the file.
    #[error(transparent)]
    Read(E),
    /// The content is wrong at a key path.
    #[error("{}: {error}", .path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The key path and what is wrong.
        error: LockError,
    },
    /// The lock's directory cannot be resolved to an absolute directory.
    #[error("{}: {message}", .dir.display())]
    Directory {
        /// The directory.
        dir: PathBuf,
        /// What failed.
        message: String,
    },
}

impl LockFile {
    /// Opens the lock at `given`: a lock file, or a directory holding [`LOCK_FILE_NAME`].
    /// `read` reads the file's text within the lock ceiling; the lock's directory is the
    /// file's, resolved (symbolic links too) once the file was read.
    pub fn open<E: std::error::Error + 'static>(
        given: &Path,
        read: impl FnOnce(&Path) -> Result<String, E>,
    ) -> Result<Self, OpenError<E>> {
        let path = match given.is_dir() {
            true => given.join(LOCK_FILE_NAME),
            false => given.to_owned(),
        };
        let text = read(&path).map_err(OpenError::Read)?;
        let lock = read_lock(&text).map_err(|error| OpenError::Invalid {
            path: path.clone(),
            error,
        })?;
        let parent = parent_dir(&path);
        let dir = std::fs::canonicalize(&parent).map_err(|e| OpenError::Directory {
            dir: parent.clone(),
            message: e.to_string(),
        })?;
        Self::in_dir(lock, path, dir)
    }

    /// A lock already parsed or built in memory (`vari mirror` from requirements), its `path`
    /// entries relative to `dir` and its messages naming `origin` (what it was made from).
    /// Nothing is read: only [`OpenError::Directory`] can be returned.
    pub fn from_lock(
        lock: Lock,
        origin: impl Into<PathBuf>,
        dir: &Path,
    ) -> Result<Self, OpenError<std::convert::Infallible>> {
        let dir = std::path::absolute(dir).map_err(|e| OpenError::Directory {
            dir: dir.to_owned(),
            message: e.to_string(),
        })?;
        Self::in_dir(lock, origin.into(), dir)
    }

    fn in_dir<E: std::error::Error + 'static>(
        lock: Lock,
        path: PathBuf,
        dir: PathBuf,
    ) -> Result<Self, OpenError<E>> {
        let dir_url = Url::from_directory_path(&dir).map_err(|()| OpenError::Directory {
            dir: dir.clone(),
            message: "not a usable absolute directory".to_owned(),
        })?;
        Ok(Self {
            lock,
            path,
            dir,
            dir_url,
        })
    }

    /// The lock.
    pub fn lock(&self) -> &Lock {
        &self.lock
    }

    /// The lock, taken out.
    pub fn into_lock(self) -> Lock {
        self.lock
    }

    /// The file it was read from, as named (or what an in-memory lock was made from).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The absolute directory its `path` entries are relative to.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// [`Self::dir`] as a `file:` URL ending in `/`.
    pub fn dir_url(&self) -> &Url {
        &self.dir_url
    }

    /// Where an artifact of the lock lies on disk: its `path` under the lock's directory (the
    /// reader keeps `path` relative and free of `..`); `None` for one named by URL only.
    pub fn local_path(&self, artifact: &Artifact) -> Option<PathBuf> {
        artifact.path.as_ref().map(|p| self.dir.join(p))
    }

    /// Where an artifact comes from as a URL: its `url`, else its `path` under the lock's
    /// directory as a `file:` URL; `None` when neither gives one.
    pub fn artifact_url(&self, artifact: &Artifact) -> Option<Url> {
        match (&artifact.url, &artifact.path) {
            (Some(url), _) => Url::parse(url).ok(),
            (None, Some(path)) => self.dir_url.join(path).ok(),
            (None, None) => None,
        }
    }
}

/// The directory the file at `path` lies in (`.` for a bare file name).
fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_owned(),
        _ => PathBuf::from("."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOCK: &str = "lock-version = \"1.0\"\ncreated-by = \"tests\"\npackages = []\n";

    fn read(path: &Path) -> Result<String, std::io::Error> {
        std::fs::read_to_string(path)
    }

    #[test]
    fn a_file_or_its_directory_opens_the_same_lock_in_the_same_directory() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(LOCK_FILE_NAME);
        std::fs::write(&file, LOCK).unwrap();
        let real = std::fs::canonicalize(dir.path()).unwrap();
        let by_file = LockFile::open(&file, read).unwrap();
        let by_dir = LockFile::open(dir.path(), read).unwrap();
        assert_eq!(by_file.path(), file);
        assert_eq!(by_dir.path(), file);
        assert_eq!(by_file.dir(), real);
        assert_eq!(by_dir.dir(), real);
        assert!(by_file.dir_url().as_str().ends_with('/'));
        assert_eq!(by_file.lock().created_by, "tests");
    }

    #[test]
    fn a_path_entry_lies_under_the_lock_directory() {
        let dir = tempfile::tempdir().unwrap();
        let lock = read_lock(LOCK).unwrap();
        let file = LockFile::from_lock(lock, "requirements", dir.path()).unwrap();
        let artifact = Artifact {
            name: Some("a-1.0-py3-none-any.whl".to_owned()),
            url: None,
            path: Some("wheels/a-1.0-py3-none-any.whl".to_owned()),
            size: None,
            upload_time: None,
            hashes: Default::default(),
        };
        assert_eq!(
            file.local_path(&artifact).unwrap(),
            dir.path().join("wheels/a-1.0-py3-none-any.whl")
        );
        let url = file.artifact_url(&artifact).unwrap();
        assert_eq!(url.scheme(), "file");
        assert!(url.path().ends_with("/wheels/a-1.0-py3-none-any.whl"));
        assert_eq!(file.path(), Path::new("requirements"));
    }

    #[test]
    fn what_the_reader_refuses_and_what_the_lock_gets_wrong_are_told_apart() {
        let dir = tempfile::tempdir().unwrap();
        let missing = LockFile::open(&dir.path().join("none.toml"), read).unwrap_err();
        assert!(matches!(missing, OpenError::Read(_)));
        let bad = dir.path().join("bad.toml");
        std::fs::write(&bad, "lock-version = 1\n").unwrap();
        let err = LockFile::open(&bad, read).unwrap_err();
        assert!(matches!(err, OpenError::Invalid { .. }), "{err}");
        assert!(err.to_string().starts_with(&bad.display().to_string()));
    }
}
