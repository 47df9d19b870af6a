//! Reading one archive member into memory when it is an ELF file, at the least cost per byte.
//!
//! A scan decompresses every ELF member of a wheel whole: gigabytes for a large wheel. Through
//! the zip crate's reader that costs, per member, a pipeline fed 8 KiB at a time (buffered reader,
//! inflater, CRC reader, each allocated anew), miniz_oxide's inflate, and a `read_to_end` that
//! zero-fills every piece of a growing vector before reading into it. So a stored or deflated
//! member is read here from its raw bytes instead: the compressed bytes in large chunks, inflated
//! by zlib-rs (pure Rust, faster than miniz_oxide) straight into the member buffer, the CRC-32
//! checked as the zip crate checks it. The buffers belong to one worker and serve all its
//! members: the kernel zeroing fresh pages for every large member was a sixth of the scan's CPU
//! time.
//!
//! Encrypted members and other compression methods go through the zip crate, which reads or
//! rejects them. Either way the same checks hold, with the same error messages: the data must
//! have the size the archive declares and the CRC-32 it records. One difference on damaged
//! deflate data: zlib-rs rejects some streams miniz_oxide decodes to garbage (a distance reaching
//! before the start of the data), so such a member fails as "corrupt deflate stream" rather than
//! on its size or CRC-32; and it inflates no further than asked, so a damaged member whose first
//! bytes are not ELF is skipped, as one damaged further on always was.

use std::fs::File;
use std::io::{self, Read};

use zip::{CompressionMethod, ZipArchive};
use zlib_rs::{Inflate, InflateFlush, Status};

use crate::elf::ELF_MAGIC;
use crate::error::ScanProblem;
use crate::limits::inflate_limit;

/// A member that failed, with its name when it is known.
pub(crate) type MemberError = (Option<String>, ScanProblem);

/// Up to this much of the member buffer is allocated before reading, whatever size the archive
/// declares; beyond it the buffer grows as data actually arrives (a declared size is not trusted
/// for allocation: a member declaring 2^40 bytes allocated 1 GiB when this was 1 GiB).
const UP_FRONT: usize = 1 << 20;

/// How much compressed data is read from the file at a time: large enough that inflating runs
/// in its fast loop almost all the time, small enough to stay in the cache.
const CHUNK: usize = 256 << 10;

/// The first read of a member, enough for the start of its data: most members are not ELF and
/// need only their first four bytes.
const FIRST_CHUNK: usize = 8 << 10;

/// One worker's buffers, reused for every member it reads.
pub(crate) struct MemberReader {
    /// The member's bytes: its length is the most any member needed so far (zeroed when first
    /// needed, never cleared since: reading overwrites what it uses).
    data: Vec<u8>,
    /// Compressed bytes read from the file.
    input: Vec<u8>,
    /// The inflater, reset for each member.
    inflater: Inflate,
    /// The archive file's length: no member holds more compressed bytes than that, whatever it
    /// declares.
    archive_len: u64,
}

impl MemberReader {
    /// Buffers for reading the members of an archive file `archive_len` bytes long.
    pub(crate) fn new(archive_len: u64) -> Self {
        Self {
            data: Vec::new(),
            input: vec![0; CHUNK],
            inflater: Inflate::new(false, 15),
            archive_len,
        }
    }

    /// Reads member `index`: its name and bytes if it is a file that begins with the ELF magic.
    pub(crate) fn read_elf(
        &mut self,
        archive: &mut ZipArchive<File>,
        index: usize,
    ) -> Result<Option<(String, &[u8])>, MemberError> {
        match archive.by_index_raw(index) {
            Ok(mut raw) if readable_here(&raw) => {
                if !raw.is_file() {
                    return Ok(None);
                }
                let name = raw.name().to_owned();
                let declared = raw.size();
                let limit = inflate_limit(raw.compressed_size(), self.archive_len);
                let crc32 = raw.crc32();
                let stored = raw.compression() == CompressionMethod::Stored;
                let result = if stored {
                    read_if_elf(
                        &mut Checked::new(&mut raw, crc32),
                        declared,
                        limit,
                        &mut self.data,
                    )
                } else {
                    self.inflater.reset(false);
                    let mut inflated = Inflated {
                        raw: &mut raw,
                        input: &mut self.input,
                        start: 0,
                        end: 0,
                        started: false,
                        inflater: &mut self.inflater,
                    };
                    read_if_elf(
                        &mut Checked::new(&mut inflated, crc32),
                        declared,
                        limit,
                        &mut self.data,
                    )
                };
                return match result {
                    Ok(Some(len)) => Ok(Some((name, &self.data[..len]))),
                    Ok(None) => Ok(None),
                    Err(e) => Err((Some(name), e)),
                };
            }
            // The zip crate's reader decides (and names the error when it cannot read it).
            _ => {}
        }
        let mut member = archive
            .by_index(index)
            .map_err(|e| (None, ScanProblem::Archive(e.to_string())))?;
        if !member.is_file() {
            return Ok(None);
        }
        let name = member.name().to_owned();
        let declared = member.size();
        let limit = inflate_limit(member.compressed_size(), self.archive_len);
        match read_if_elf(&mut member, declared, limit, &mut self.data) {
            Ok(Some(len)) => Ok(Some((name, &self.data[..len]))),
            Ok(None) => Ok(None),
            Err(e) => Err((Some(name), e)),
        }
    }
}

/// Whether a member can be read from its raw bytes here: stored or deflated, not encrypted.
fn readable_here(raw: &zip::read::ZipFile<'_, File>) -> bool {
    !raw.encrypted()
        && matches!(
            raw.compression(),
            CompressionMethod::Stored | CompressionMethod::Deflated
        )
}

/// Reads a member's data from `source` into `data` if it begins with the ELF magic; returns its
/// length. The data must be exactly `declared` bytes long: one more read past them must find
/// the end (which is also where the CRC-32 is checked). A member declaring more than `limit`
/// is refused before its data is read; as the read stops at the declared size, no member
/// decompresses beyond the limit.
fn read_if_elf(
    source: &mut impl Read,
    declared: u64,
    limit: u64,
    data: &mut Vec<u8>,
) -> Result<Option<usize>, ScanProblem> {
    let mut magic = [0u8; 4];
    if read_up_to(source, &mut magic)? < magic.len() || magic != ELF_MAGIC {
        return Ok(None);
    }
    if declared > limit {
        return Err(ScanProblem::TooLarge { declared, limit });
    }
    let declared_len = usize::try_from(declared).unwrap_or(usize::MAX);
    ensure_len(data, declared_len.min(UP_FRONT).max(magic.len()));
    data[..magic.len()].copy_from_slice(&magic);
    let mut filled = magic.len();
    while filled < declared_len {
        if filled == data.len() {
            // Only past `UP_FRONT`: keep what was read, grow by doubling up to the declared size.
            data.resize(filled.saturating_mul(2).min(declared_len), 0);
        }
        let end = declared_len.min(data.len());
        match source.read(&mut data[filled..end]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    // One more read reaches the end of the member, where the CRC-32 is checked.
    let past_end = read_up_to(source, &mut [0u8; 1])?;
    if filled as u64 != declared || past_end != 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("the archive declares {declared} bytes, the data differs"),
        )
        .into());
    }
    Ok(Some(filled))
}

/// Makes `data` at least `len` bytes long, its contents no longer needed. Only bytes never used
/// before are written (zeroed): the first touch of fresh memory is what costs, so each byte of
/// the buffer is touched once. A buffer too small is replaced, not grown (growing would copy its
/// contents), by one with room rounded up to a power of two, so that a worker meeting slightly
/// larger members one after the other allocates once, not each time (room not yet used is
/// address space only).
fn ensure_len(data: &mut Vec<u8>, len: usize) {
    if data.capacity() < len {
        let room = if len <= UP_FRONT {
            len.next_power_of_two()
        } else {
            len
        };
        // Free the old buffer first: the allocator may reuse its memory.
        *data = Vec::new();
        data.reserve_exact(room);
    }
    if data.len() < len {
        data.resize(len, 0);
    }
}

/// Fills as much of `buf` as the reader has; returns how much that was.
fn read_up_to(reader: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// A reader that checks the CRC-32 of everything read through it each time it reaches the end,
/// as the zip crate's own reader does (same error).
struct Checked<R> {
    inner: R,
    hasher: crc32fast::Hasher,
    expected: u32,
}

impl<R> Checked<R> {
    fn new(inner: R, expected: u32) -> Self {
        Self {
            inner,
            hasher: crc32fast::Hasher::new(),
            expected,
        }
    }
}

impl<R: Read> Read for Checked<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n == 0 && !buf.is_empty() && self.hasher.clone().finalize() != self.expected {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "Invalid checksum",
            ));
        }
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
}

/// The inflated bytes of a deflated member, read from its raw bytes; it behaves as `flate2`'s
/// reader does (the one the zip crate uses), error messages included.
struct Inflated<'a, R> {
    raw: R,
    input: &'a mut [u8],
    /// The unconsumed compressed bytes are `input[start..end]`.
    start: usize,
    end: usize,
    /// Whether the raw bytes were read before (the first read is short).
    started: bool,
    inflater: &'a mut Inflate,
}

impl<R: Read> Read for Inflated<'_, R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        loop {
            if self.start == self.end {
                let chunk = if self.started {
                    self.input.len()
                } else {
                    FIRST_CHUNK
                };
                self.started = true;
                self.start = 0;
                self.end = read_once(&mut self.raw, &mut self.input[..chunk])?;
            }
            let at_end = self.start == self.end;
            let flush = if at_end {
                InflateFlush::Finish
            } else {
                InflateFlush::NoFlush
            };
            let (in_before, out_before) = (self.inflater.total_in(), self.inflater.total_out());
            let status = self
                .inflater
                .decompress(&self.input[self.start..self.end], out, flush);
            // Both are bounded by the slices given to `decompress`.
            let consumed = (self.inflater.total_in() - in_before) as usize;
            let produced = (self.inflater.total_out() - out_before) as usize;
            self.start += consumed;
            match status {
                Ok(Status::Ok | Status::BufError) if produced == 0 && !out.is_empty() => {
                    if at_end {
                        return Err(io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            "incomplete deflate stream",
                        ));
                    }
                }
                Ok(Status::Ok | Status::BufError | Status::StreamEnd) => return Ok(produced),
                Err(_) => {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        "corrupt deflate stream",
                    ))
                }
            }
        }
    }
}

/// One read, retried when interrupted.
fn read_once(reader: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        match reader.read(buf) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests;
