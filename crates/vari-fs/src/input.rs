//! The one way to open an input file the user named (a profile, a config, a `rank` input, a
//! `--sysroot` file, a state file): it must be a regular file, it is opened without blocking, and
//! it is read up to a ceiling.
//!
//! A FIFO opened for reading blocks until a writer comes, forever if none does; `/dev/zero`
//! never ends; a sparse file can claim gigabytes it does not hold. So: the file is opened with
//! `O_NONBLOCK` (an open that returns at once whatever the file is), checked with `fstat` on the
//! descriptor that was opened (no race with a rename), refused unless it is a regular file, and
//! read with a ceiling on the bytes actually read, not only on the size `fstat` reports (procfs
//! and sysfs files report 0).

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The variable that raises the ceiling of [`InputKind::Config`] and [`InputKind::Metadata`]
/// files, in bytes (it never lowers them).
pub const MAX_INPUT_BYTES_ENV: &str = "VARI_MAX_INPUT_BYTES";

/// A ceiling raised by the program for this process ([`raise_input_limit`]; 0 when not raised).
static RAISED: AtomicU64 = AtomicU64::new(0);

/// Raises the ceiling of [`InputKind::Config`] and [`InputKind::Metadata`] files to `bytes` for
/// the rest of this process (a front-end applies its configuration's `max-input-bytes` once at
/// start-up). Like [`MAX_INPUT_BYTES_ENV`], it never lowers a ceiling; with both, the larger
/// counts.
pub fn raise_input_limit(bytes: u64) {
    RAISED.store(bytes, Ordering::Relaxed);
}

/// What an input file is, which sets its default ceiling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// Profiles, configs, `rank` inputs, state files: 16 MiB (real ones are a few KiB).
    Config,
    /// Wheel metadata, `*-variants.json`, property lists: 256 MiB.
    Metadata,
    /// Files of `/proc` and `/sys` (or a `--sysroot` copy of them), such as `cpuinfo`: 4 MiB
    /// (a 1,024-CPU machine's `cpuinfo` is about 1.5 MiB). Not raised by the variable.
    System,
}

impl InputKind {
    /// The ceiling in bytes, taking [`MAX_INPUT_BYTES_ENV`] and [`raise_input_limit`] into
    /// account.
    pub fn limit(self) -> u64 {
        let default = self.default_limit();
        if self == InputKind::System {
            return default;
        }
        let from_env = std::env::var(MAX_INPUT_BYTES_ENV)
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or(0);
        default.max(from_env).max(RAISED.load(Ordering::Relaxed))
    }

    /// The ceiling in bytes when nothing raises it.
    pub const fn default_limit(self) -> u64 {
        match self {
            InputKind::Config => 16 << 20,
            InputKind::Metadata => 256 << 20,
            InputKind::System => 4 << 20,
        }
    }
}

/// Why an input file could not be read. The message names the file.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The file is a FIFO, a device, a socket or a directory.
    #[error("{}: is {what}, not a regular file", .path.display())]
    NotRegular {
        /// The file.
        path: PathBuf,
        /// What it is instead (`a FIFO`, `a character device`…).
        what: &'static str,
    },
    /// The file is larger than the ceiling.
    #[error("{}: is larger than the limit of {limit} bytes (raise it with `max-input-bytes` in vari.toml or {MAX_INPUT_BYTES_ENV})", .path.display())]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// The ceiling.
        limit: u64,
    },
    /// The file is not UTF-8 (for [`read_input_to_string`]).
    #[error("{}: is not UTF-8", .path.display())]
    NotUtf8 {
        /// The file.
        path: PathBuf,
    },
    /// The operating system's error.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The reason.
        source: io::Error,
    },
}

impl InputError {
    /// What is wrong, without the path (for error types that print the path themselves).
    pub fn problem(&self) -> String {
        match self {
            InputError::NotRegular { what, .. } => format!("is {what}, not a regular file"),
            InputError::TooLarge { limit, .. } => format!(
                "is larger than the limit of {limit} bytes (raise it with `max-input-bytes` in \
                 vari.toml or {MAX_INPUT_BYTES_ENV})"
            ),
            InputError::NotUtf8 { .. } => "is not UTF-8".to_owned(),
            InputError::Io { source, .. } => source.to_string(),
        }
    }

    /// The file at fault.
    pub fn path(&self) -> &Path {
        match self {
            InputError::NotRegular { path, .. }
            | InputError::TooLarge { path, .. }
            | InputError::NotUtf8 { path }
            | InputError::Io { path, .. } => path,
        }
    }
}

/// The operating system's error as it was (its kind kept: `NotFound` stays `NotFound`); the
/// others as `InvalidData` with the message of [`InputError::problem`].
impl From<InputError> for io::Error {
    fn from(error: InputError) -> Self {
        match error {
            InputError::Io { source, .. } => source,
            other => io::Error::new(io::ErrorKind::InvalidData, other.problem()),
        }
    }
}

/// Opens `path`, which must be a regular file (following symbolic links), without blocking;
/// the returned file is in blocking mode again. For readers that stream (zip archives): the
/// caller bounds what it reads.
pub fn open_input(path: &Path) -> Result<File, InputError> {
    let io_error = |source| InputError::Io {
        path: path.to_owned(),
        source,
    };
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // The bits are a small positive flag; the cast cannot change them.
        #[allow(clippy::cast_possible_wrap)]
        options.custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32);
    }
    let file = options.open(path).map_err(io_error)?;
    let meta = file.metadata().map_err(io_error)?;
    if !meta.is_file() {
        return Err(InputError::NotRegular {
            path: path.to_owned(),
            what: describe(&meta.file_type()),
        });
    }
    #[cfg(unix)]
    {
        let flags = rustix::fs::fcntl_getfl(&file).map_err(|e| io_error(e.into()))?;
        rustix::fs::fcntl_setfl(&file, flags - rustix::fs::OFlags::NONBLOCK)
            .map_err(|e| io_error(e.into()))?;
    }
    Ok(file)
}

/// Reads the regular file `path` whole, refusing more than `kind`'s ceiling (see the
/// [module documentation](self)).
///
/// ```
/// use vari_fs::{read_input, InputKind};
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("profile.json");
/// std::fs::write(&path, b"{}").unwrap();
/// assert_eq!(read_input(&path, InputKind::Config).unwrap(), b"{}");
/// assert!(read_input(dir.path(), InputKind::Config).is_err()); // a directory
/// ```
pub fn read_input(path: &Path, kind: InputKind) -> Result<Vec<u8>, InputError> {
    read_input_limited(path, kind.limit())
}

/// [`read_input`] with an explicit ceiling in bytes.
pub fn read_input_limited(path: &Path, limit: u64) -> Result<Vec<u8>, InputError> {
    let file = open_input(path)?;
    let too_large = || InputError::TooLarge {
        path: path.to_owned(),
        limit,
    };
    let declared = file.metadata().map(|m| m.len()).unwrap_or(0);
    if declared > limit {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(usize::try_from(declared).unwrap_or(0));
    read_bounded(file, limit, &mut bytes).map_err(|source| InputError::Io {
        path: path.to_owned(),
        source,
    })?;
    if bytes.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(bytes)
}

/// [`read_input`] as UTF-8 text.
pub fn read_input_to_string(path: &Path, kind: InputKind) -> Result<String, InputError> {
    String::from_utf8(read_input(path, kind)?).map_err(|_| InputError::NotUtf8 {
        path: path.to_owned(),
    })
}

/// Reads at most `limit + 1` bytes of `reader` into `out` (one more than allowed, so the caller
/// can tell "exactly at the limit" from "over it"). For standard input and other streams.
pub fn read_bounded(reader: impl Read, limit: u64, out: &mut Vec<u8>) -> io::Result<()> {
    reader.take(limit.saturating_add(1)).read_to_end(out)?;
    Ok(())
}

fn describe(kind: &std::fs::FileType) -> &'static str {
    if kind.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    "not a regular file"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("profile.json");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        // Without O_NONBLOCK this open would wait for a writer forever (no writer exists).
        let err = read_input(&fifo, InputKind::Config).unwrap_err();
        assert!(
            matches!(&err, InputError::NotRegular { what: "a FIFO", .. }),
            "{err}"
        );
        assert!(err.to_string().contains("profile.json"), "{err}");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn devices_and_directories_are_refused() {
        let err = read_input(Path::new("/dev/zero"), InputKind::Config).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("/dev/zero: is a character device"),
            "{err}"
        );
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            read_input(dir.path(), InputKind::Config),
            Err(InputError::NotRegular {
                what: "a directory",
                ..
            })
        ));
    }

    #[test]
    fn a_sparse_file_over_the_ceiling_is_refused_before_reading() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cpuinfo");
        let file = File::create(&path).unwrap();
        file.set_len(3 << 30).unwrap(); // 3 GiB of holes, no blocks
        let err = read_input(&path, InputKind::System).unwrap_err();
        assert!(
            matches!(err, InputError::TooLarge { limit, .. } if limit == 4 << 20),
            "{err}"
        );
        // At the ceiling exactly is fine; one byte more is not.
        let path = dir.path().join("exact");
        std::fs::write(&path, vec![b'x'; 100]).unwrap();
        assert_eq!(read_input_limited(&path, 100).unwrap().len(), 100);
        assert!(read_input_limited(&path, 99).is_err());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn procfs_files_reporting_size_zero_are_capped_by_bytes_read() {
        // /proc/self/maps reports size 0 but holds far more than 16 bytes.
        let meta = std::fs::metadata("/proc/self/maps").unwrap();
        assert_eq!(meta.len(), 0);
        assert!(matches!(
            read_input_limited(Path::new("/proc/self/maps"), 16),
            Err(InputError::TooLarge { .. })
        ));
        assert!(!read_input(Path::new("/proc/self/maps"), InputKind::System)
            .unwrap()
            .is_empty());
    }
}
