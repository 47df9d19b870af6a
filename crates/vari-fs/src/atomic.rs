//! Atomic writes that respect what the destination already is.
//!
//! A plain "write a temporary file, rename it over the destination" has three traps, each of
//! which cost a user data before this module existed:
//!
//! - the rename replaces a symbolic link with a file, so `-o link.json` cut the link instead of
//!   updating the file it names: the chain of links is followed first;
//! - the rename replaces a device node with a regular file, so `-o /dev/full` as root destroyed
//!   the device: devices and FIFOs are written through, as a shell redirection would;
//! - temporary files are created `0600`, so a replaced `*-variants.json` that a web server used
//!   to read became unreadable to it: a replaced file keeps its permission bits (and, as root,
//!   its owner), a new file gets the mode the umask gives (`0666 & !umask`).
//!
//! Data is not `fsync`ed: the guarantee is that a failed or interrupted write never leaves a
//! partial file behind, which is what commands need; durability across power loss is the file
//! system's.

use std::fs::{File, OpenOptions};
use std::io::{self, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

/// How many symbolic links are followed before giving up (Linux's own limit).
const MAX_LINKS: usize = 40;

/// Why a file could not be written. Names the path the caller gave, never a temporary file.
#[derive(Debug, thiserror::Error)]
#[error("{}: {kind}", path.display())]
pub struct WriteError {
    /// The destination as the caller gave it.
    pub path: PathBuf,
    /// What went wrong.
    pub kind: WriteErrorKind,
}

/// What went wrong writing a file.
#[derive(Debug, thiserror::Error)]
pub enum WriteErrorKind {
    /// The destination is a directory.
    #[error("is a directory; give a file name")]
    IsADirectory,
    /// The destination ends in `/`, which names a directory.
    #[error("ends in `/`, which names a directory; give a file name")]
    EndsInSlash,
    /// The destination is a socket, which cannot hold a file.
    #[error("is a socket, not a file")]
    Socket,
    /// Too many symbolic links, or a loop.
    #[error("too many levels of symbolic links")]
    TooManyLinks,
    /// The destination's directory does not exist.
    #[error("the directory {} does not exist", .0.display())]
    NoDirectory(PathBuf),
    /// An I/O error from the operating system.
    #[error("{0}")]
    Io(#[from] io::Error),
}

impl WriteError {
    fn new(path: &Path, kind: impl Into<WriteErrorKind>) -> Self {
        Self {
            path: path.to_path_buf(),
            kind: kind.into(),
        }
    }
}

/// Writes `contents` to `path` atomically (see the [crate documentation](crate)).
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("out.json");
/// vari_fs::write_atomic(&path, b"one").unwrap();
/// vari_fs::write_atomic(&path, b"two").unwrap();
/// assert_eq!(std::fs::read(&path).unwrap(), b"two");
/// assert!(vari_fs::write_atomic(dir.path(), b"x").is_err()); // a directory is refused
/// ```
pub fn write_atomic(path: &Path, contents: &[u8]) -> Result<(), WriteError> {
    let mut file = AtomicFile::create(path)?;
    file.write_all(contents)
        .map_err(|e| WriteError::new(path, e))?;
    file.commit()
}

/// Where the bytes for a destination go.
#[derive(Debug)]
enum Destination {
    /// A regular file, existing or not, at its real path (links resolved).
    Replace {
        real: PathBuf,
        existing: Option<std::fs::Metadata>,
    },
    /// A device, a FIFO, or a descriptor under `/proc` or `/dev/fd`: opened and written.
    WriteThrough(PathBuf),
}

/// Decides what writing to `path` means, following symbolic links.
fn resolve(path: &Path) -> Result<Destination, WriteError> {
    if path.as_os_str().to_string_lossy().ends_with('/') {
        return Err(WriteError::new(path, WriteErrorKind::EndsInSlash));
    }
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        // `/dev/stdout` → `/proc/self/fd/1` → `pipe:[…]` or the shell's file: replacing what
        // the link names would detach the output from the descriptor the caller holds.
        if current.starts_with("/proc") || current.starts_with("/dev") {
            return match std::fs::metadata(&current) {
                Ok(meta) if meta.is_dir() => {
                    Err(WriteError::new(path, WriteErrorKind::IsADirectory))
                }
                _ => Ok(Destination::WriteThrough(current)),
            };
        }
        let meta = match std::fs::symlink_metadata(&current) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Ok(Destination::Replace {
                    real: current,
                    existing: None,
                })
            }
            Err(e) => return Err(WriteError::new(path, e)),
            Ok(meta) => meta,
        };
        let kind = meta.file_type();
        if kind.is_symlink() {
            let target = std::fs::read_link(&current).map_err(|e| WriteError::new(path, e))?;
            current = match current.parent() {
                Some(dir) if target.is_relative() => dir.join(target),
                _ => target,
            };
            continue;
        }
        if kind.is_file() {
            return Ok(Destination::Replace {
                real: current,
                existing: Some(meta),
            });
        }
        if kind.is_dir() {
            return Err(WriteError::new(path, WriteErrorKind::IsADirectory));
        }
        if is_socket(&kind) {
            return Err(WriteError::new(path, WriteErrorKind::Socket));
        }
        // Character and block devices, FIFOs.
        return Ok(Destination::WriteThrough(current));
    }
    Err(WriteError::new(path, WriteErrorKind::TooManyLinks))
}

#[cfg(unix)]
fn is_socket(kind: &std::fs::FileType) -> bool {
    use std::os::unix::fs::FileTypeExt;
    kind.is_socket()
}

#[cfg(not(unix))]
fn is_socket(_kind: &std::fs::FileType) -> bool {
    false
}

/// A file being written atomically: bytes go to a temporary file beside the destination until
/// [`AtomicFile::commit`] renames it into place. Dropping it uncommitted removes the temporary
/// file, so an error half-way leaves the destination as it was.
///
/// It implements [`Seek`] (zip writers need it) except when writing through to a device.
///
/// ```
/// use std::io::Write;
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("big.whl");
/// let mut file = vari_fs::AtomicFile::create(&path).unwrap();
/// file.write_all(b"PK...").unwrap();
/// assert!(!path.exists()); // nothing visible until commit
/// file.commit().unwrap();
/// assert!(path.exists());
/// ```
#[derive(Debug)]
pub struct AtomicFile {
    path: PathBuf,
    sink: Sink,
}

#[derive(Debug)]
enum Sink {
    Temporary {
        file: NamedTempFile,
        real: PathBuf,
        /// Removes the temporary file if the process is interrupted before it is renamed.
        _interrupt: crate::interrupt::Registration,
    },
    Through(File),
}

impl AtomicFile {
    /// Prepares to write `path`: checks what it is and creates the temporary file beside it.
    pub fn create(path: &Path) -> Result<Self, WriteError> {
        let sink = match resolve(path)? {
            Destination::WriteThrough(target) => {
                let file = OpenOptions::new()
                    .write(true)
                    .open(&target)
                    .map_err(|e| WriteError::new(path, e))?;
                Sink::Through(file)
            }
            Destination::Replace { real, existing } => {
                return Self::replacing_with(path, real, existing.as_ref());
            }
        };
        Ok(Self {
            path: path.to_path_buf(),
            sink,
        })
    }

    /// An atomic file that replaces `real` (the caller has decided it is the file to replace,
    /// links resolved or deliberately not) with a new file's mode.
    pub(crate) fn replacing(path: &Path, real: PathBuf) -> Result<Self, WriteError> {
        Self::replacing_with(path, real, None)
    }

    fn replacing_with(
        path: &Path,
        real: PathBuf,
        existing: Option<&std::fs::Metadata>,
    ) -> Result<Self, WriteError> {
        let file = temporary_beside(path, &real, existing)?;
        let interrupt = crate::interrupt::remove_on_interrupt(file.path().to_path_buf());
        Ok(Self {
            path: path.to_path_buf(),
            sink: Sink::Temporary {
                file,
                real,
                _interrupt: interrupt,
            },
        })
    }

    /// The destination as given to [`AtomicFile::create`].
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file the bytes go to (the temporary file, or the device written through), for
    /// copies the kernel can do file to file: `std::io::copy` from a `File` into it uses
    /// `copy_file_range` on Linux, as `cp` does. Writes through it land where this
    /// `AtomicFile`'s own writes do, and [`AtomicFile::commit`] still decides whether they
    /// become the destination.
    ///
    /// ```
    /// use std::io::Write;
    /// let dir = tempfile::tempdir().unwrap();
    /// let source = dir.path().join("in.bin");
    /// std::fs::write(&source, b"0123456789").unwrap();
    /// let path = dir.path().join("out.bin");
    /// let mut file = vari_fs::AtomicFile::create(&path).unwrap();
    /// file.write_all(b"head:").unwrap();
    /// let mut input = std::fs::File::open(&source).unwrap();
    /// std::io::copy(&mut input, &mut file.as_file()).unwrap();
    /// file.commit().unwrap();
    /// assert_eq!(std::fs::read(&path).unwrap(), b"head:0123456789");
    /// ```
    pub fn as_file(&self) -> &File {
        match &self.sink {
            Sink::Temporary { file, .. } => file.as_file(),
            Sink::Through(file) => file,
        }
    }

    /// Makes the written bytes the destination's content.
    pub fn commit(self) -> Result<(), WriteError> {
        let path = self.path;
        match self.sink {
            Sink::Through(mut file) => file.flush().map_err(|e| WriteError::new(&path, e)),
            Sink::Temporary { file, real, .. } => file
                .persist(&real)
                .map(drop)
                .map_err(|e| WriteError::new(&path, e.error)),
        }
    }

    fn writer(&mut self) -> &mut File {
        match &mut self.sink {
            Sink::Temporary { file, .. } => file.as_file_mut(),
            Sink::Through(file) => file,
        }
    }
}

/// The directory a destination's temporary file goes to (its parent; `.` for a bare name).
fn parent_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// The temporary file for a destination whose real path is `real`: same directory (so the
/// rename is atomic), the existing file's mode and owner, or the umask's mode for a new file.
fn temporary_beside(
    path: &Path,
    real: &Path,
    existing: Option<&std::fs::Metadata>,
) -> Result<NamedTempFile, WriteError> {
    let dir = parent_of(real);
    if !dir.is_dir() {
        return Err(WriteError::new(path, WriteErrorKind::NoDirectory(dir)));
    }
    // Left-overs of killed runs go when the next run writes here.
    crate::stale::sweep_partials_once(&dir);
    let mut builder = tempfile::Builder::new();
    builder
        .prefix(crate::stale::PARTIAL_PREFIX)
        .suffix(crate::stale::PARTIAL_SUFFIX);
    // The mode given here passes through the umask, exactly as a new file's would.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let file = builder
        .tempfile_in(&dir)
        .map_err(|e| WriteError::new(path, e))?;
    if let Some(meta) = existing {
        keep_mode_and_owner(file.path(), meta).map_err(|e| WriteError::new(path, e))?;
    }
    Ok(file)
}

#[cfg(unix)]
fn keep_mode_and_owner(temporary: &Path, meta: &std::fs::Metadata) -> io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    std::fs::set_permissions(temporary, meta.permissions())?;
    // Only root can give a file away; for anyone else the owner is already the same user, or
    // cannot be kept, which is what `cp` does too.
    let _ = std::os::unix::fs::chown(temporary, Some(meta.uid()), Some(meta.gid()));
    Ok(())
}

#[cfg(not(unix))]
fn keep_mode_and_owner(temporary: &Path, meta: &std::fs::Metadata) -> io::Result<()> {
    std::fs::set_permissions(temporary, meta.permissions())
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.writer().write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.writer().write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.writer().flush()
    }
}

impl Seek for AtomicFile {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.writer().seek(pos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn replaces_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("out.json");
        write_atomic(&dest, b"one").unwrap();
        write_atomic(&dest, b"two").unwrap();
        assert_eq!(std::fs::read(&dest).unwrap(), b"two");
        assert_eq!(entries(dir.path()), ["out.json"]);
    }

    #[test]
    fn an_uncommitted_file_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("out.json");
        std::fs::write(&dest, b"old").unwrap();
        let mut file = AtomicFile::create(&dest).unwrap();
        file.write_all(b"half").unwrap();
        drop(file);
        assert_eq!(std::fs::read(&dest).unwrap(), b"old");
        assert_eq!(entries(dir.path()), ["out.json"]);
    }

    #[test]
    fn a_missing_directory_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("missing").join("out.json");
        let err = write_atomic(&dest, b"x").unwrap_err();
        assert_eq!(err.path, dest);
        assert!(err.to_string().contains("does not exist"), "{err}");
        assert!(!err.to_string().contains(".vari-"), "{err}");
    }

    #[test]
    fn directories_and_trailing_slashes_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let err = write_atomic(dir.path(), b"x").unwrap_err();
        assert!(matches!(err.kind, WriteErrorKind::IsADirectory), "{err}");
        let slash = PathBuf::from(format!("{}/new/", dir.path().display()));
        let err = write_atomic(&slash, b"x").unwrap_err();
        assert!(matches!(err.kind, WriteErrorKind::EndsInSlash), "{err}");
        assert!(entries(dir.path()).is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn symbolic_links_are_followed_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.json");
        std::fs::write(&real, b"old").unwrap();
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink("real.json", &link).unwrap();
        let chain = dir.path().join("chain.json");
        std::os::unix::fs::symlink(&link, &chain).unwrap();
        write_atomic(&chain, b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert!(std::fs::symlink_metadata(&chain)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(&real).unwrap(), b"new");
        // A dangling link: the file it names is created.
        let dangling = dir.path().join("dangling.json");
        std::os::unix::fs::symlink("created.json", &dangling).unwrap();
        write_atomic(&dangling, b"x").unwrap();
        assert_eq!(
            std::fs::read(dir.path().join("created.json")).unwrap(),
            b"x"
        );
        // A loop.
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        std::os::unix::fs::symlink(&b, &a).unwrap();
        std::os::unix::fs::symlink(&a, &b).unwrap();
        let err = write_atomic(&a, b"x").unwrap_err();
        assert!(matches!(err.kind, WriteErrorKind::TooManyLinks), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn modes_follow_the_umask_or_the_replaced_file() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        // What the umask gives a new file, measured the ordinary way.
        let probe = dir.path().join("probe");
        File::create(&probe).unwrap();
        let umask_mode = std::fs::metadata(&probe).unwrap().permissions().mode() & 0o777;
        let new = dir.path().join("new.json");
        write_atomic(&new, b"x").unwrap();
        let mode = std::fs::metadata(&new).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, umask_mode);
        for kept in [0o644, 0o640, 0o755, 0o600] {
            std::fs::set_permissions(&new, std::fs::Permissions::from_mode(kept)).unwrap();
            write_atomic(&new, b"y").unwrap();
            let mode = std::fs::metadata(&new).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, kept, "{kept:o}");
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn devices_are_written_through_never_replaced() {
        use std::os::unix::fs::FileTypeExt;
        write_atomic(Path::new("/dev/null"), b"discarded").unwrap();
        assert!(std::fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device());
        // /dev/full refuses the bytes; as root the old code replaced it with a regular file.
        let err = write_atomic(Path::new("/dev/full"), b"x").unwrap_err();
        assert_eq!(err.path, Path::new("/dev/full"));
        assert!(std::fs::metadata("/dev/full")
            .unwrap()
            .file_type()
            .is_char_device());
        // A link to a device is a device too.
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("null-link");
        std::os::unix::fs::symlink("/dev/null", &link).unwrap();
        write_atomic(&link, b"x").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
    }

    #[cfg(unix)]
    #[test]
    fn sockets_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("s.sock");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let err = write_atomic(&socket, b"x").unwrap_err();
        assert!(matches!(err.kind, WriteErrorKind::Socket), "{err}");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn fifos_are_written_through() {
        use std::io::Read;
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                let mut text = String::new();
                File::open(&fifo)
                    .unwrap()
                    .read_to_string(&mut text)
                    .unwrap();
                text
            })
        };
        write_atomic(&fifo, b"through").unwrap();
        assert_eq!(reader.join().unwrap(), "through");
        assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    }
}
