//! From a lock and its plan to the files to fetch: the lock file read (bounded, checked) and
//! each planned entry's chosen file with what the installer needs to know about it.

use std::path::{Path, PathBuf};

use vari_lock::{LockError, LockFile, OpenError, MAX_LOCK_BYTES};
use vari_select::locked::{Plan, PlannedFile};

use super::LockedFile;

/// Why a lock file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// It could not be read (missing, not a regular file, too large).
    #[error(transparent)]
    Input(#[from] vari_fs::InputError),
    /// It is larger than a lock may be. Not raised by `max-input-bytes`: what `vari lock`
    /// writes is bounded by the same ceiling ([`vari_lock::limits`]).
    #[error("{}: is larger than the {limit} bytes a lock may hold", .path.display())]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// [`MAX_LOCK_BYTES`].
        limit: u64,
    },
    /// It is not UTF-8.
    #[error("{}: is not UTF-8", .0.display())]
    NotUtf8(PathBuf),
    /// Its content is wrong at a key path.
    #[error("{}: {error}", .path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The key path and what is wrong.
        error: LockError,
    },
    /// Its directory cannot be resolved (the message names it).
    #[error("{0}")]
    Directory(String),
}

/// The text of the lock file at `path`: a regular file, at most [`MAX_LOCK_BYTES`], UTF-8.
/// Every command reads a lock file through here.
pub fn read_lock_text(path: &Path) -> Result<String, LoadError> {
    let bytes = vari_fs::read_input_limited(path, MAX_LOCK_BYTES).map_err(|e| match e {
        vari_fs::InputError::TooLarge { path, limit } => LoadError::TooLarge { path, limit },
        other => LoadError::Input(other),
    })?;
    String::from_utf8(bytes).map_err(|_| LoadError::NotUtf8(path.to_owned()))
}

/// Opens and checks the lock at `given` (a file, or a directory holding `pylock.toml`), read
/// by [`read_lock_text`]: the one way every command opens an existing lock.
pub fn open_lock(given: &Path) -> Result<LockFile, LoadError> {
    LockFile::open(given, read_lock_text).map_err(|e| match e {
        OpenError::Read(e) => e,
        OpenError::Invalid { path, error } => LoadError::Invalid { path, error },
        directory @ OpenError::Directory { .. } => LoadError::Directory(directory.to_string()),
    })
}

/// The chosen file of each planned entry, in the plan's order; `path` entries resolved under
/// `lock_dir` (the reader keeps them relative and free of `..`). An entry without a SHA-256 or
/// a name cannot be checked and is refused: the key path says which.
pub fn planned_files(plan: &Plan, lock_dir: &Path) -> Result<Vec<LockedFile>, LockError> {
    plan.install
        .iter()
        .map(|planned| {
            let key = match &planned.file {
                PlannedFile::Wheel { index, .. } => {
                    format!("packages[{}].wheels[{index}]", planned.package)
                }
                PlannedFile::Sdist => format!("packages[{}].sdist", planned.package),
            };
            let artifact = &planned.artifact;
            let sha256 = artifact
                .sha256()
                .ok_or_else(|| LockError::new(format!("{key}.hashes"), "has no sha256 to check"))?;
            let filename = artifact
                .file_name()
                .ok_or_else(|| LockError::new(format!("{key}.name"), "is missing"))?;
            let url = match &artifact.url {
                Some(text) => Some(
                    url::Url::parse(text)
                        .map_err(|e| LockError::new(format!("{key}.url"), e.to_string()))?,
                ),
                None => None,
            };
            Ok(LockedFile {
                project: planned.name.clone(),
                version: planned.version.as_ref().map(ToString::to_string),
                label: planned.label.as_ref().map(ToString::to_string),
                filename,
                url,
                path: artifact.path.as_ref().map(|p| lock_dir.join(p)),
                sha256: sha256.to_owned(),
                size: artifact.size,
                // A non-variant wheel's dependencies may use variant markers too (PEP 825:
                // they see the empty label), so every wheel's are evaluated.
                markers: matches!(planned.file, PlannedFile::Wheel { .. })
                    .then(|| planned.context.clone()),
                locked_variant: planned.properties.clone(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_over_the_ceiling_names_the_ceiling_and_no_setting_that_does_not_raise_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pylock.toml");
        let file = std::fs::File::create(&path).unwrap();
        file.set_len(MAX_LOCK_BYTES + 1).unwrap();
        let message = read_lock_text(&path).unwrap_err().to_string();
        assert_eq!(
            message,
            format!(
                "{}: is larger than the {MAX_LOCK_BYTES} bytes a lock may hold",
                path.display()
            )
        );
        assert!(!message.contains("max-input-bytes"), "{message}");
    }
}
