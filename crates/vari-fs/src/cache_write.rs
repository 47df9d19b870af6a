//! Writing and reading inside the cache without following symbolic links.
//!
//! [`crate::write_atomic`] follows links on purpose: a user who names `-o link.json` means the
//! file the link names. A cache entry is named by vari, not by the user, and a link planted in
//! the cache (`detect-v1.json -> ~/.bashrc`, `http -> /somewhere`) must not turn a cache write
//! into a write elsewhere. So, below the cache root (the root itself may be a link: that is the
//! user's choice of where the cache lives):
//!
//! - every directory between the root and the entry must be a real directory; a symbolic link
//!   found there is **replaced** by an empty real directory (removing a link never touches what
//!   it names, and the cache only loses entries it can rebuild); anything else that is not a
//!   directory is refused;
//! - the entry is written to a temporary file in that directory and renamed over its name; a
//!   rename replaces a link planted there by the entry, never writes through it;
//! - entries are read with `O_NOFOLLOW`, and only when they are regular files, up to a ceiling.
//!
//! (A process that can write in the cache can still race a check; these rules keep a planted
//! link from redirecting vari's own writes, which is the threat a shared or restored cache
//! directory poses.)

use std::io::{self, Write};
use std::path::{Component, Path};

use crate::atomic::{AtomicFile, WriteError, WriteErrorKind};

/// Makes `dir`, which must be `root` or below it, a chain of real directories (see the
/// [module documentation](self)), creating what is missing.
pub fn ensure_cache_dir(root: &Path, dir: &Path) -> io::Result<()> {
    std::fs::create_dir_all(root)?;
    let relative = dir.strip_prefix(root).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} is not inside the cache {}",
                dir.display(),
                root.display()
            ),
        )
    })?;
    let mut current = root.to_path_buf();
    for component in relative.components() {
        let Component::Normal(name) = component else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{}: not a plain path inside the cache", dir.display()),
            ));
        };
        current.push(name);
        match std::fs::symlink_metadata(&current) {
            Ok(meta) if meta.is_dir() => continue,
            Ok(meta) if meta.file_type().is_symlink() => std::fs::remove_file(&current)?,
            Ok(_) => {
                return Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    format!("{}: is not a directory", current.display()),
                ))
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        match std::fs::create_dir(&current) {
            Ok(()) => {}
            // Another process made it meanwhile; checked again on the next write.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && current.is_dir() => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

impl AtomicFile {
    /// Prepares to write the cache entry `path` under the cache root `root` without following
    /// symbolic links (see [`crate::cache_write`]): the directories on the way are made real,
    /// and [`AtomicFile::commit`] renames over the entry, replacing a link planted there.
    pub fn create_in_cache(root: &Path, path: &Path) -> Result<Self, WriteError> {
        let fail = |kind: WriteErrorKind| WriteError {
            path: path.to_path_buf(),
            kind,
        };
        let (Some(dir), Some(_)) = (path.parent(), path.file_name()) else {
            return Err(fail(WriteErrorKind::IsADirectory));
        };
        ensure_cache_dir(root, dir).map_err(|e| fail(WriteErrorKind::Io(e)))?;
        AtomicFile::replacing(path, path.to_path_buf())
    }
}

/// Writes the cache entry `path` under `root` atomically, never through a symbolic link (see
/// the [module documentation](self)).
///
/// ```
/// # #[cfg(unix)] {
/// let cache = tempfile::tempdir().unwrap();
/// let outside = tempfile::tempdir().unwrap();
/// let entry = cache.path().join("detect-v1.json");
/// std::os::unix::fs::symlink(outside.path().join("victim"), &entry).unwrap();
/// vari_fs::write_cache_file(cache.path(), &entry, b"{}").unwrap();
/// assert!(!outside.path().join("victim").exists()); // the link was replaced, not followed
/// assert_eq!(std::fs::read(&entry).unwrap(), b"{}");
/// # }
/// ```
pub fn write_cache_file(root: &Path, path: &Path, contents: &[u8]) -> Result<(), WriteError> {
    let mut file = AtomicFile::create_in_cache(root, path)?;
    file.write_all(contents).map_err(|e| WriteError {
        path: path.to_path_buf(),
        kind: WriteErrorKind::Io(e),
    })?;
    file.commit()
}

/// Opens the cache entry `path` for reading if it is a regular file: a symbolic link (never
/// followed: `O_NOFOLLOW`), FIFO or device is treated as absent (`None`). The caller bounds what
/// it reads.
pub fn open_cache_file(path: &Path) -> Option<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK;
        // The bits are small positive flags; the cast cannot change them.
        #[allow(clippy::cast_possible_wrap)]
        options.custom_flags(flags.bits() as i32);
    }
    #[cfg(not(unix))]
    if std::fs::symlink_metadata(path)
        .ok()?
        .file_type()
        .is_symlink()
    {
        return None;
    }
    let file = options.open(path).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    #[cfg(unix)]
    {
        let flags = rustix::fs::fcntl_getfl(&file).ok()?;
        rustix::fs::fcntl_setfl(&file, flags - rustix::fs::OFlags::NONBLOCK).ok()?;
    }
    Some(file)
}

/// Reads the cache entry `path` (see [`open_cache_file`]) if it holds at most `limit` bytes.
pub fn read_cache_file(path: &Path, limit: u64) -> Option<Vec<u8>> {
    let file = open_cache_file(path)?;
    if file.metadata().ok()?.len() > limit {
        return None;
    }
    let mut bytes = Vec::new();
    crate::input::read_bounded(file, limit, &mut bytes).ok()?;
    (bytes.len() as u64 <= limit).then_some(bytes)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn a_linked_directory_inside_the_cache_is_replaced_not_written_through() {
        let cache = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        symlink(outside.path(), cache.path().join("http")).unwrap();
        let entry = cache.path().join("http/ab/cd.entry");
        write_cache_file(cache.path(), &entry, b"page").unwrap();
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
        let http = std::fs::symlink_metadata(cache.path().join("http")).unwrap();
        assert!(http.is_dir());
        assert_eq!(read_cache_file(&entry, 100).unwrap(), b"page");
    }

    #[test]
    fn a_linked_entry_is_replaced_and_never_read_through() {
        let cache = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let victim = outside.path().join("victim");
        std::fs::write(&victim, b"secret").unwrap();
        let entry = cache.path().join("detect-v1.json");
        symlink(&victim, &entry).unwrap();
        assert_eq!(read_cache_file(&entry, 100), None);
        write_cache_file(cache.path(), &entry, b"{}").unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"secret");
        assert!(!std::fs::symlink_metadata(&entry)
            .unwrap()
            .file_type()
            .is_symlink());
        // Over the ceiling: absent.
        assert_eq!(read_cache_file(&entry, 1), None);
    }

    #[test]
    fn a_file_where_a_directory_belongs_is_refused() {
        let cache = tempfile::tempdir().unwrap();
        std::fs::write(cache.path().join("http"), b"x").unwrap();
        let err = write_cache_file(cache.path(), &cache.path().join("http/a.entry"), b"x");
        assert!(err.is_err());
        assert!(write_cache_file(cache.path(), Path::new("/elsewhere/x"), b"x").is_err());
    }
}
