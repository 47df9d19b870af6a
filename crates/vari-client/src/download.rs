//! Streaming a file to disk through `vari_fs::AtomicFile`, hashing while it arrives.
//!
//! The destination appears only once every byte arrived and the digest matches the index's:
//! a broken transfer or a mismatch drops the temporary file and leaves the destination as it
//! was.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256, Sha384, Sha512};
use url::Url;

use crate::error::{ClientError, HashMismatch, SizeMismatch};
use crate::http::Http;
use crate::simple::IndexFile;

/// A completed download.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Downloaded {
    /// Where it was written.
    pub path: PathBuf,
    /// Its size in bytes.
    pub size: u64,
    /// Its SHA-256 digest (lowercase hex), computed while streaming.
    pub sha256: String,
    /// The algorithm of the index's hash that was checked (`sha256`, `sha384`, `sha512`);
    /// `None` when the index gave none of them.
    pub verified_with: Option<&'static str>,
}

/// Progress of one download: bytes received so far, and the total when known.
pub type Progress<'a> = &'a (dyn Fn(u64, Option<u64>) + Send + Sync);

/// The strongest hash the index gives that can be checked.
fn expected_hash(file: &IndexFile) -> Option<(&'static str, String)> {
    use vari_simple::HashAlgorithm::{Sha256, Sha384, Sha512};
    [Sha512, Sha384, Sha256].into_iter().find_map(|algorithm| {
        let digest = file.hashes.get(&algorithm)?.to_owned();
        Some((algorithm.known_name()?, digest))
    })
}

/// SHA-256 always (reported), plus the index's algorithm when it is another.
struct Hasher {
    sha256: Sha256,
    other: Option<OtherHash>,
}

enum OtherHash {
    Sha384(Sha384),
    Sha512(Sha512),
}

impl Hasher {
    fn new(algorithm: Option<&str>) -> Self {
        let other = match algorithm {
            Some("sha384") => Some(OtherHash::Sha384(Sha384::new())),
            Some("sha512") => Some(OtherHash::Sha512(Sha512::new())),
            _ => None,
        };
        Self {
            sha256: Sha256::new(),
            other,
        }
    }

    fn update(&mut self, bytes: &[u8]) {
        self.sha256.update(bytes);
        match &mut self.other {
            Some(OtherHash::Sha384(h)) => h.update(bytes),
            Some(OtherHash::Sha512(h)) => h.update(bytes),
            None => {}
        }
    }

    /// (SHA-256, the other digest or SHA-256 again), lowercase hex.
    fn finish(self) -> (String, String) {
        let sha256 = hex::encode(self.sha256.finalize());
        let other = match self.other {
            Some(OtherHash::Sha384(h)) => hex::encode(h.finalize()),
            Some(OtherHash::Sha512(h)) => hex::encode(h.finalize()),
            None => sha256.clone(),
        };
        (sha256, other)
    }
}

/// Checks `bytes` (a body fetched whole) against the strongest hash the index gives for
/// `file`; `Ok` when it gives none.
pub(crate) fn check_whole(file: &IndexFile, bytes: &[u8]) -> Result<(), Box<HashMismatch>> {
    let Some((algorithm, expected)) = expected_hash(file) else {
        return Ok(());
    };
    let mut hasher = Hasher::new(Some(algorithm));
    hasher.update(bytes);
    let (_, actual) = hasher.finish();
    if actual == expected {
        return Ok(());
    }
    Err(Box::new(HashMismatch {
        url: file.url.clone(),
        algorithm: algorithm.to_owned(),
        expected,
        actual,
    }))
}

/// A sink that hashes and counts what it writes to the atomic file, bounded by the size the
/// index declares (when it declares one).
struct Sink<'a> {
    file: vari_fs::AtomicFile,
    hasher: Hasher,
    written: u64,
    dest: &'a Path,
    /// The declared size: a byte more is refused at once, a byte less when the body ends.
    declared: Option<u64>,
    url: &'a Url,
    /// The file's name at the index (a wheel's carries its name and version).
    filename: &'a str,
}

impl<'a> Sink<'a> {
    fn new(file: &'a IndexFile, dest: &'a Path, hasher: Hasher) -> Result<Self, ClientError> {
        Ok(Sink {
            file: vari_fs::AtomicFile::create(dest)?,
            hasher,
            written: 0,
            dest,
            declared: file.size,
            url: &file.url,
            filename: &file.filename,
        })
    }

    // The file is written synchronously from the async task: each chunk is at most a few
    // kilobytes to the page cache, cheaper than a round trip to a blocking thread.
    fn write(&mut self, bytes: &[u8]) -> Result<(), ClientError> {
        let after = self.written + bytes.len() as u64;
        if let Some(declared) = self.declared.filter(|d| after > *d) {
            // Dropping `self.file` removes the temporary file.
            return Err(ClientError::SizeMismatch(Box::new(SizeMismatch {
                url: self.url.clone(),
                declared,
                received: format!("more than {declared}"),
            })));
        }
        self.file
            .write_all(bytes)
            .map_err(|source| ClientError::Io {
                path: self.dest.to_path_buf(),
                source,
            })?;
        self.hasher.update(bytes);
        self.written += bytes.len() as u64;
        Ok(())
    }

    fn finish(
        self,
        url: &Url,
        expected: Option<(&'static str, String)>,
    ) -> Result<Downloaded, ClientError> {
        let (sha256, digest) = self.hasher.finish();
        // Other bytes are named by their hash; the right bytes under a wrong size by the size.
        if let Some((algorithm, expected)) = &expected {
            if *expected != digest {
                // Dropping `self.file` removes the temporary file.
                return Err(ClientError::HashMismatch(Box::new(HashMismatch {
                    url: url.clone(),
                    algorithm: (*algorithm).to_owned(),
                    expected: expected.clone(),
                    actual: digest,
                })));
            }
        }
        if let Some(declared) = self.declared.filter(|d| *d != self.written) {
            return Err(ClientError::SizeMismatch(Box::new(SizeMismatch {
                url: url.clone(),
                declared,
                received: self.written.to_string(),
            })));
        }
        check_wheel(&self.file, self.filename, url)?;
        self.file.commit()?;
        Ok(Downloaded {
            path: self.dest.to_path_buf(),
            size: self.written,
            sha256,
            verified_with: expected.map(|(algorithm, _)| algorithm),
        })
    }
}

/// A wheel is read as every command reads one ([`vari_wheel::inspect_reader`]: safe
/// member names, one `.dist-info` directory matching its name, a well-formed RECORD, its
/// `variant.json` for its label) before it becomes the destination: a file that `rank`,
/// `select`, `wheel inspect` and installers refuse is not handed on as downloaded (by
/// `vari download`, the mirror, the proxy). Read back from the temporary file (central
/// directory, RECORD and `variant.json` only); a destination written through (a device) is
/// not read back.
fn check_wheel(file: &vari_fs::AtomicFile, filename: &str, url: &Url) -> Result<(), ClientError> {
    let named = Path::new(filename);
    let is_wheel = named
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("whl"));
    let written = file.as_file();
    if !is_wheel || !written.metadata().is_ok_and(|m| m.is_file()) {
        return Ok(());
    }
    let reader = std::io::BufReader::new(written);
    vari_wheel::inspect_reader(named, reader)
        .map(drop)
        .map_err(|e| ClientError::Archive {
            url: url.clone(),
            message: e.kind.to_string(),
        })
}

pub(crate) async fn download(
    http: &Http,
    file: &IndexFile,
    dest: &Path,
    progress: Progress<'_>,
) -> Result<Downloaded, ClientError> {
    let expected = expected_hash(file);
    let hasher = Hasher::new(expected.as_ref().map(|(a, _)| *a));
    http.check_reach(&file.url)?;
    if file.url.scheme() == "file" {
        return copy_local(file, dest, hasher, expected, progress);
    }
    let mut streaming = http.open(&file.url).await?;
    // Read before streaming: afterwards the body's size hint counts what is left.
    let announced = streaming.content_length();
    let total = announced.or(file.size);
    let mut sink = Sink::new(file, dest, hasher)?;
    progress(0, total);
    while let Some(chunk) = streaming.chunk().await? {
        sink.write(&chunk)?;
        progress(sink.written, total);
    }
    if let Some(total) = announced {
        if sink.written != total {
            return Err(ClientError::Transport {
                url: file.url.clone(),
                message: format!(
                    "the connection closed after {} of {total} bytes",
                    sink.written
                ),
            });
        }
    }
    sink.finish(&file.url, expected)
}

fn copy_local(
    file: &IndexFile,
    dest: &Path,
    hasher: Hasher,
    expected: Option<(&'static str, String)>,
    progress: Progress<'_>,
) -> Result<Downloaded, ClientError> {
    let source = file.url.to_file_path().map_err(|()| ClientError::Io {
        path: PathBuf::from(file.url.path()),
        source: std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a local path"),
    })?;
    let io = |source| ClientError::Io {
        path: source_path(&file.url),
        source,
    };
    // A regular file, opened without blocking: a FIFO or a device there is refused at once.
    let mut input = vari_fs::open_input(&source).map_err(|e| io(e.into()))?;
    let total = input.metadata().ok().map(|m| m.len());
    let mut sink = Sink::new(file, dest, hasher)?;
    let mut buffer = vec![0; 256 * 1024];
    loop {
        let n = input.read(&mut buffer).map_err(io)?;
        if n == 0 {
            break;
        }
        sink.write(&buffer[..n])?;
        progress(sink.written, total);
    }
    sink.finish(&file.url, expected)
}

fn source_path(url: &Url) -> PathBuf {
    url.to_file_path()
        .unwrap_or_else(|()| PathBuf::from(url.path()))
}
