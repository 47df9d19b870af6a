//! The fast way to write an edited copy of a wheel: every unchanged member is copied byte for
//! byte — local header, data, data descriptor — in large blocks, with no CRC, no decompression
//! and no per-member work beyond checking its local header; the new and changed members
//! (compressed beforehand, see `rewrite.rs`) are copied the same way from their small in-memory
//! archive; the central directory is the input's entries, byte for byte (extra fields such as
//! extended timestamps included), with the local-header offsets moved.
//!
//! Everything is planned before the first byte is written, so an archive this module does not
//! expect ([`Unsupported`]: a split archive, entries whose data is not in central-directory
//! order, names the zip crate would decode differently) leaves the output untouched and the
//! caller copies it through the zip crate instead. Zip64 archives are copied here: zip64
//! offsets are rewritten in place, an entry pushed past 4 GiB gets a zip64 offset, and the
//! zip64 end records are written when the sizes need them.
//!
//! Into a file ([`Plan::write_file`]), the unchanged members are copied by the kernel
//! (`copy_file_range` through `std::io::copy`, as `cp` copies), so their bytes never pass
//! through user space; into any other `Write` ([`Plan::write`], when the output is also hashed
//! on its way), blocks of [`COPY_BLOCK`] go through user space.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};

use crate::central::{
    extra_blocks, u16_at, u32_at, zip64_values, CentralDirectory, Entry, Unsupported, Zip64Fields,
    Zip64Values, LOCAL_FIXED, LOCAL_SIGNATURE, U32_IN_ZIP64, UNICODE_PATH_EXTRA, UTF8_FLAG,
    ZIP64_EXTRA,
};
use crate::reader::{SeekBufReader, INSPECT_BUFFER};
use crate::rewrite::{ArchiveEdit, RewriteError};

/// Bytes per read and write when copying members: large enough that system calls do not
/// show, small enough to stay in the CPU's cache between the `read` that fills the block and the
/// `write` that empties it. Measured on a 1 GB wheel: 128 KiB blocks cost the kernel as little
/// as `cp` (0.3 s), 1 MiB blocks twice that, 4 MiB blocks 2.5 times.
pub(crate) const COPY_BLOCK: usize = 128 * 1024;

/// "Version needed to extract" for zip64 fields.
const ZIP64_VERSION: u16 = 45;

/// What goes into the output, in order.
#[derive(Debug)]
enum Piece {
    /// Bytes of the input archive.
    Input { start: u64, len: u64 },
    /// Bytes of the archive of new members.
    Fresh { start: usize, len: usize },
    /// Bytes made here (a renamed member's local header).
    Made(Vec<u8>),
}

/// An edited copy, planned: the pieces of the members and the new central directory.
#[derive(Debug)]
pub(crate) struct Plan {
    pieces: Vec<Piece>,
    /// The new central directory's headers.
    central: Vec<u8>,
    entries: u64,
    /// The length of the pieces so far; in the end, where the central directory starts.
    written: u64,
    comment: Vec<u8>,
}

/// One member of an archive, located.
struct Member<'a> {
    cd: &'a CentralDirectory,
    entry: &'a Entry,
    /// Where the member (local header, data, descriptor) ends: the next member's start.
    end: u64,
}

/// Plans the copy of `input` with `edit` applied; `fresh` is the archive (a temporary file) holding the
/// replaced and inserted members under their final names.
pub(crate) fn plan(input: &File, fresh: &File, edit: &ArchiveEdit) -> Result<Plan, Unsupported> {
    let source = CentralDirectory::read(&mut &*input)?;
    let new = CentralDirectory::read(&mut &*fresh)?;
    let fresh_members = members(&new)?;
    let fresh_by_name: HashMap<&str, &Member<'_>> = fresh_members
        .iter()
        .map(|m| Ok((name_of(m)?, m)))
        .collect::<Result<_, Unsupported>>()?;
    let mut plan = Plan {
        pieces: Vec::new(),
        central: Vec::new(),
        entries: 0,
        written: 0,
        comment: source.comment.clone(),
    };
    // The buffered reader starts at offset 0; reading the directory moved the file.
    let mut input_at_start = input;
    input_at_start
        .seek(SeekFrom::Start(0))
        .map_err(|_| Unsupported("the archive could not be read"))?;
    let mut headers = SeekBufReader::with_capacity(INSPECT_BUFFER, input_at_start);
    let mut inserted = false;
    for member in members(&source)? {
        let name = name_of(&member)?;
        let local = read_local_header(&mut headers, &member)?;
        if !inserted && edit.insert_before.as_deref() == Some(name) {
            plan.insert_new(edit, &fresh_by_name)?;
            inserted = true;
        }
        if edit.remove.iter().any(|r| r == name) {
            continue;
        }
        let new_name = edit.rename.get(name).map(String::as_str);
        if edit.replaces(name) {
            let final_name = new_name.unwrap_or(name);
            plan.push_fresh(fresh_by_name.get(final_name).copied())?;
            continue;
        }
        match new_name {
            Some(renamed) if renamed != name => plan.push_renamed(&member, &local, renamed)?,
            _ => plan.push_input(&member)?,
        }
    }
    if !inserted {
        plan.insert_new(edit, &fresh_by_name)?;
    }
    Ok(plan)
}

impl Plan {
    fn insert_new(
        &mut self,
        edit: &ArchiveEdit,
        fresh: &HashMap<&str, &Member<'_>>,
    ) -> Result<(), Unsupported> {
        for (name, _) in &edit.insert {
            self.push_fresh(fresh.get(name.as_str()).copied())?;
        }
        Ok(())
    }

    fn push_fresh(&mut self, member: Option<&Member<'_>>) -> Result<(), Unsupported> {
        let member = member.ok_or(Unsupported("a new member missing from its archive"))?;
        let offset = self.written;
        let start = usize::try_from(member.entry.local_offset).map_err(|_| Unsupported("size"))?;
        let len = usize::try_from(member.end - member.entry.local_offset)
            .map_err(|_| Unsupported("size"))?;
        self.push_piece(Piece::Fresh { start, len });
        self.push_central(member, None, offset)
    }

    /// An unchanged member: its bytes as they are.
    fn push_input(&mut self, member: &Member<'_>) -> Result<(), Unsupported> {
        let offset = self.written;
        let start = member.entry.local_offset;
        self.push_piece(Piece::Input {
            start,
            len: member.end - start,
        });
        self.push_central(member, None, offset)
    }

    /// Appends a piece; consecutive input bytes become one block, so a wheel copies in a
    /// handful of large reads whatever its number of members.
    fn push_piece(&mut self, piece: Piece) {
        self.written += piece.len();
        if let (
            Some(Piece::Input { start, len }),
            Piece::Input {
                start: next,
                len: more,
            },
        ) = (self.pieces.last_mut(), &piece)
        {
            if *start + *len == *next {
                *len += *more;
                return;
            }
        }
        self.pieces.push(piece);
    }

    /// A renamed member: a new local header, then its data (and descriptor) as they are.
    fn push_renamed(
        &mut self,
        member: &Member<'_>,
        local: &LocalHeader,
        name: &str,
    ) -> Result<(), Unsupported> {
        let offset = self.written;
        let mut header = local.fixed.to_vec();
        let extra = without_unicode_path(&local.extra);
        set_name_fields(&mut header, 6, 26, 28, name, &extra)?;
        header.extend_from_slice(name.as_bytes());
        header.extend_from_slice(&extra);
        self.push_piece(Piece::Made(header));
        self.push_piece(Piece::Input {
            start: local.data_start,
            len: member.end - local.data_start,
        });
        self.push_central(member, Some(name), offset)
    }

    /// The member's central header, at its new offset (and under its new name).
    fn push_central(
        &mut self,
        member: &Member<'_>,
        name: Option<&str>,
        offset: u64,
    ) -> Result<(), Unsupported> {
        let cd = member.cd;
        let mut fixed = cd.fixed(member.entry).to_vec();
        let mut extra = cd.extra(member.entry).to_vec();
        let values = zip64_values(&extra, Zip64Fields::of(&fixed))?;
        match (values.offset_at, u32::try_from(offset)) {
            (Some(at), _) => extra[at..at + 8].copy_from_slice(&offset.to_le_bytes()),
            (None, Ok(small)) if small < U32_IN_ZIP64 => {
                fixed[42..46].copy_from_slice(&small.to_le_bytes());
            }
            (None, _) => extra = with_zip64_offset(&mut fixed, &extra, &values, offset)?,
        }
        let name = match name {
            Some(name) => {
                extra = without_unicode_path(&extra);
                name.as_bytes()
            }
            None => cd.name(member.entry),
        };
        let text = std::str::from_utf8(name).map_err(|_| Unsupported("name"))?;
        set_name_fields(&mut fixed, 8, 28, 30, text, &extra)?;
        self.central.extend_from_slice(&fixed);
        self.central.extend_from_slice(name);
        self.central.extend_from_slice(&extra);
        self.central.extend_from_slice(cd.comment(member.entry));
        self.entries += 1;
        Ok(())
    }

    /// Writes the planned copy of `input` (with `fresh`'s members) to `out` and returns it
    /// flushed.
    pub(crate) fn write<W: Write>(
        &self,
        input: &File,
        fresh: &File,
        out: W,
    ) -> Result<W, RewriteError> {
        let write = |e: std::io::Error| RewriteError::Write(e.to_string());
        // Headers and the central directory go through the buffer; member blocks, larger than
        // it, go straight to `out`.
        let mut out = BufWriter::with_capacity(COPY_BLOCK / 2, out);
        let mut block = vec![0u8; COPY_BLOCK];
        let mut input = input;
        for piece in &self.pieces {
            match piece {
                Piece::Input { start, len } => {
                    input.seek(SeekFrom::Start(*start)).map_err(|e| read(&e))?;
                    copy_exactly(&mut input, *len, &mut block, &mut out)?;
                }
                Piece::Fresh { start, len } => {
                    let mut fresh = fresh;
                    fresh
                        .seek(SeekFrom::Start(*start as u64))
                        .map_err(|e| read(&e))?;
                    copy_exactly(&mut fresh, *len as u64, &mut block, &mut out)?;
                }
                Piece::Made(bytes) => out.write_all(bytes).map_err(write)?,
            }
        }
        out.write_all(&self.central).map_err(write)?;
        out.write_all(&self.end_records()).map_err(write)?;
        out.into_inner().map_err(|e| write(e.into_error()))
    }

    /// Writes the planned copy of `input` (with `fresh`'s members) into the file `out`, from
    /// its current position, and returns the number of bytes written.
    ///
    /// Runs of unchanged members are copied file to file with `std::io::copy`, which on Linux
    /// has the kernel copy them (`copy_file_range`, or `sendfile`/`splice` when the
    /// destination is not a regular file): no read into and write out of a user-space buffer,
    /// which cost a 1 GB wheel a fifth of its time against `cp`. Elsewhere, and whenever the
    /// kernel declines, `std::io::copy` copies through a buffer itself.
    pub(crate) fn write_file(
        &self,
        input: &File,
        fresh: &File,
        out: &File,
    ) -> Result<u64, RewriteError> {
        let write = |e: std::io::Error| RewriteError::Write(e.to_string());
        // Headers and the central directory are gathered in the buffer; `std::io::copy`
        // flushes it before each member run it hands to the kernel.
        let mut out = BufWriter::with_capacity(COPY_BLOCK / 2, out);
        let mut input = input;
        for piece in &self.pieces {
            match piece {
                Piece::Input { start, len } => {
                    input.seek(SeekFrom::Start(*start)).map_err(|e| read(&e))?;
                    // An error here may be the reading or the writing side; a full disk is
                    // the one that happens (the input was just read to plan the copy).
                    let copied = std::io::copy(&mut input.take(*len), &mut out).map_err(write)?;
                    if copied != *len {
                        return Err(read(&std::io::Error::new(
                            std::io::ErrorKind::UnexpectedEof,
                            "the archive ended before its central directory",
                        )));
                    }
                }
                Piece::Fresh { start, len } => {
                    let mut fresh = fresh;
                    fresh
                        .seek(SeekFrom::Start(*start as u64))
                        .map_err(|e| read(&e))?;
                    let copied =
                        std::io::copy(&mut fresh.take(*len as u64), &mut out).map_err(write)?;
                    if copied != *len as u64 {
                        return Err(RewriteError::Write(
                            "the new members' archive ended early".to_owned(),
                        ));
                    }
                }
                Piece::Made(bytes) => out.write_all(bytes).map_err(write)?,
            }
        }
        let end = self.end_records();
        out.write_all(&self.central).map_err(write)?;
        out.write_all(&end).map_err(write)?;
        out.flush().map_err(write)?;
        Ok(self.written + self.central.len() as u64 + end.len() as u64)
    }

    /// The end-of-central-directory record, preceded by the zip64 record and locator when a
    /// count, size or offset does not fit its 16- or 32-bit field.
    fn end_records(&self) -> Vec<u8> {
        let size = self.central.len() as u64;
        let count16 = u16::try_from(self.entries).ok().filter(|&c| c < u16::MAX);
        let size32 = u32::try_from(size).ok().filter(|&s| s < U32_IN_ZIP64);
        let offset32 = u32::try_from(self.written)
            .ok()
            .filter(|&o| o < U32_IN_ZIP64);
        let mut end = Vec::new();
        if count16.is_none() || size32.is_none() || offset32.is_none() {
            let record_offset = self.written + size;
            end.extend_from_slice(&0x0606_4b50u32.to_le_bytes());
            end.extend_from_slice(&44u64.to_le_bytes()); // the rest of the record
            end.extend_from_slice(&ZIP64_VERSION.to_le_bytes()); // made by
            end.extend_from_slice(&ZIP64_VERSION.to_le_bytes()); // needed
            end.extend_from_slice(&[0; 8]); // this disk, the directory's disk
            end.extend_from_slice(&self.entries.to_le_bytes());
            end.extend_from_slice(&self.entries.to_le_bytes());
            end.extend_from_slice(&size.to_le_bytes());
            end.extend_from_slice(&self.written.to_le_bytes());
            end.extend_from_slice(&0x0706_4b50u32.to_le_bytes());
            end.extend_from_slice(&0u32.to_le_bytes());
            end.extend_from_slice(&record_offset.to_le_bytes());
            end.extend_from_slice(&1u32.to_le_bytes());
        }
        let count = count16.unwrap_or(u16::MAX).to_le_bytes();
        end.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
        end.extend_from_slice(&[0; 4]); // this disk, the directory's disk
        end.extend_from_slice(&count);
        end.extend_from_slice(&count);
        end.extend_from_slice(&size32.unwrap_or(U32_IN_ZIP64).to_le_bytes());
        end.extend_from_slice(&offset32.unwrap_or(U32_IN_ZIP64).to_le_bytes());
        // The comment came from a 16-bit length.
        let comment_len = u16::try_from(self.comment.len()).unwrap_or(u16::MAX);
        end.extend_from_slice(&comment_len.to_le_bytes());
        end.extend_from_slice(&self.comment[..usize::from(comment_len)]);
        end
    }
}

impl Piece {
    fn len(&self) -> u64 {
        match self {
            Self::Input { len, .. } => *len,
            // usize → u64 never truncates on supported targets.
            Self::Fresh { len, .. } => *len as u64,
            Self::Made(bytes) => bytes.len() as u64,
        }
    }
}

fn read(e: &std::io::Error) -> RewriteError {
    RewriteError::Read {
        member: "(archive)".to_owned(),
        message: e.to_string(),
    }
}

/// Copies exactly `len` bytes from `input` to `out` in blocks.
fn copy_exactly<W: Write>(
    input: &mut &File,
    mut len: u64,
    block: &mut [u8],
    out: &mut W,
) -> Result<(), RewriteError> {
    while len > 0 {
        let want = block.len().min(usize::try_from(len).unwrap_or(block.len()));
        let chunk = &mut block[..want];
        input.read_exact(chunk).map_err(|e| read(&e))?;
        out.write_all(chunk)
            .map_err(|e| RewriteError::Write(e.to_string()))?;
        len -= want as u64;
    }
    Ok(())
}

/// The archive's members in central-directory order, each ending where the next begins (the
/// last where the central directory begins). Data stored in another order is not copied here.
fn members(cd: &CentralDirectory) -> Result<Vec<Member<'_>>, Unsupported> {
    let mut members = Vec::with_capacity(cd.entries.len());
    for (i, entry) in cd.entries.iter().enumerate() {
        let end = cd
            .entries
            .get(i + 1)
            .map_or(cd.offset, |next| next.local_offset);
        if end <= entry.local_offset {
            return Err(Unsupported("members not in central-directory order"));
        }
        members.push(Member { cd, entry, end });
    }
    Ok(members)
}

/// The member's name, when the zip crate reads it as stored.
fn name_of<'a>(member: &Member<'a>) -> Result<&'a str, Unsupported> {
    member
        .cd
        .name_str(member.entry)
        .ok_or(Unsupported("a name the zip crate decodes differently"))
}

/// A member's local header.
struct LocalHeader {
    fixed: [u8; LOCAL_FIXED],
    extra: Vec<u8>,
    /// Where the member's data starts in the archive.
    data_start: u64,
}

/// Reads and checks the member's local header: its signature, its name (the central
/// directory's), and room for the data before the next member.
fn read_local_header(
    reader: &mut SeekBufReader<&File>,
    member: &Member<'_>,
) -> Result<LocalHeader, Unsupported> {
    let bad = Unsupported("a local header that disagrees with the central directory");
    let io = |_| Unsupported("the archive could not be read");
    let offset = member.entry.local_offset;
    reader.seek(SeekFrom::Start(offset)).map_err(io)?;
    let mut fixed = [0u8; LOCAL_FIXED];
    reader.read_exact(&mut fixed).map_err(io)?;
    if u32_at(&fixed, 0) != LOCAL_SIGNATURE {
        return Err(bad);
    }
    let name_len = usize::from(u16_at(&fixed, 26));
    let extra_len = usize::from(u16_at(&fixed, 28));
    let mut name = vec![0; name_len];
    reader.read_exact(&mut name).map_err(io)?;
    if name != member.cd.name(member.entry) {
        return Err(bad);
    }
    let mut extra = vec![0; extra_len];
    reader.read_exact(&mut extra).map_err(io)?;
    let data_start = offset + (LOCAL_FIXED + name_len + extra_len) as u64;
    if data_start
        .checked_add(member.entry.compressed_size)
        .is_none_or(|end| end > member.end)
    {
        return Err(bad);
    }
    Ok(LocalHeader {
        fixed,
        extra,
        data_start,
    })
}

/// Sets a header's name length, extra length and UTF-8 flag (at the given positions) for
/// `name` and `extra`.
fn set_name_fields(
    header: &mut [u8],
    flags_at: usize,
    name_len_at: usize,
    extra_len_at: usize,
    name: &str,
    extra: &[u8],
) -> Result<(), Unsupported> {
    let too_long = Unsupported("a name or extra field too long for its header");
    let name_len = u16::try_from(name.len()).map_err(|_| too_long)?;
    let extra_len = u16::try_from(extra.len()).map_err(|_| too_long)?;
    header[name_len_at..name_len_at + 2].copy_from_slice(&name_len.to_le_bytes());
    header[extra_len_at..extra_len_at + 2].copy_from_slice(&extra_len.to_le_bytes());
    if !name.is_ascii() {
        let flags = u16_at(header, flags_at) | UTF8_FLAG;
        header[flags_at..flags_at + 2].copy_from_slice(&flags.to_le_bytes());
    }
    Ok(())
}

/// The extra field without Unicode Path blocks (they repeat the old name).
fn without_unicode_path(extra: &[u8]) -> Vec<u8> {
    let mut kept = Vec::with_capacity(extra.len());
    let mut consumed = 0;
    for (id, start, data) in extra_blocks(extra) {
        if id != UNICODE_PATH_EXTRA {
            kept.extend_from_slice(&extra[start - 4..start + data.len()]);
        }
        consumed = start + data.len();
    }
    // Bytes after the last whole block (some writers pad) stay as they were.
    kept.extend_from_slice(&extra[consumed..]);
    kept
}

/// The extra field with a zip64 block giving `offset` (the header's offset field then says
/// "see zip64"): an entry that moves past 4 GiB, which its writer had no reason to mark.
fn with_zip64_offset(
    fixed: &mut [u8],
    extra: &[u8],
    values: &Zip64Values,
    offset: u64,
) -> Result<Vec<u8>, Unsupported> {
    let mut data = Vec::with_capacity(24);
    for value in [values.uncompressed, values.compressed]
        .into_iter()
        .flatten()
    {
        data.extend_from_slice(&value.to_le_bytes());
    }
    data.extend_from_slice(&offset.to_le_bytes());
    let mut out = Vec::with_capacity(extra.len() + 4 + data.len());
    out.extend_from_slice(&ZIP64_EXTRA.to_le_bytes());
    // At most 24 bytes.
    out.extend_from_slice(&u16::try_from(data.len()).unwrap_or(24).to_le_bytes());
    out.extend_from_slice(&data);
    let mut consumed = 0;
    for (id, start, block) in extra_blocks(extra) {
        if id != ZIP64_EXTRA {
            out.extend_from_slice(&extra[start - 4..start + block.len()]);
        }
        consumed = start + block.len();
    }
    out.extend_from_slice(&extra[consumed..]);
    fixed[42..46].copy_from_slice(&U32_IN_ZIP64.to_le_bytes());
    let needed = u16_at(fixed, 6).max(ZIP64_VERSION);
    fixed[6..8].copy_from_slice(&needed.to_le_bytes());
    if out.len() > usize::from(u16::MAX) {
        return Err(Unsupported("an extra field too long for its header"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use zip::write::{FullFileOptions, SimpleFileOptions};
    use zip::{CompressionMethod, ZipArchive, ZipWriter};

    use super::*;
    use crate::rewrite::compress_new_members;

    /// An extended-timestamp extra field (mtime only), as Info-ZIP writes it.
    const TIMESTAMP_EXTRA: [u8; 5] = [1, 0x10, 0x32, 0x54, 0x76];

    /// A small wheel with what a verbatim copy must keep: stored and deflated members, an
    /// extended-timestamp extra field, a member with a data descriptor (`streamed`), and zip64
    /// extra fields (`large`).
    fn wheel(streamed: bool, large: bool) -> Vec<u8> {
        let mut members: Vec<(&str, Vec<u8>, CompressionMethod)> = vec![
            (
                "pkg/__init__.py",
                b"VALUE = 1\n".to_vec(),
                CompressionMethod::Deflated,
            ),
            (
                "pkg/_native.so",
                (0..50_000u32).flat_map(|i| i.to_le_bytes()).collect(),
                CompressionMethod::Stored,
            ),
            (
                "pkg-1.0.dist-info/WHEEL",
                b"Wheel-Version: 1.0\n".to_vec(),
                CompressionMethod::Deflated,
            ),
        ];
        members.push((
            "pkg-1.0.dist-info/RECORD",
            b"pkg/__init__.py,,\n".to_vec(),
            CompressionMethod::Deflated,
        ));
        let options = || {
            FullFileOptions::default()
                .unix_permissions(0o755)
                .large_file(large)
        };
        let mut zip = ZipWriter::new(Cursor::new(Vec::new()));
        for (name, data, method) in &members {
            let mut o = options().compression_method(*method);
            o.add_extra_data(0x5455, TIMESTAMP_EXTRA.to_vec().into_boxed_slice(), true)
                .unwrap();
            zip.start_file(*name, o).unwrap();
            zip.write_all(data).unwrap();
        }
        let out = zip.finish().unwrap().into_inner();
        if streamed {
            with_data_descriptors(&out)
        } else {
            out
        }
    }

    /// `archive` as a streaming writer lays it out: each local header without CRC and sizes
    /// (flag bit 3), a data descriptor after the data. (The zip crate cannot write these.)
    fn with_data_descriptors(archive: &[u8]) -> Vec<u8> {
        let cd = CentralDirectory::read(&mut Cursor::new(archive)).unwrap();
        let mut out = Vec::new();
        let mut central = Vec::new();
        for (i, entry) in cd.entries.iter().enumerate() {
            let start = usize::try_from(entry.local_offset).unwrap();
            let end = cd
                .entries
                .get(i + 1)
                .map_or(usize::try_from(cd.offset).unwrap(), |e| {
                    usize::try_from(e.local_offset).unwrap()
                });
            let mut fixed = cd.fixed(entry);
            let offset = u32::try_from(out.len()).unwrap();
            let mut local = archive[start..end].to_vec();
            let flags = u16_at(&local, 6) | 0x8;
            local[6..8].copy_from_slice(&flags.to_le_bytes());
            local[14..26].fill(0);
            out.extend_from_slice(&local);
            out.extend_from_slice(&0x0807_4b50u32.to_le_bytes());
            out.extend_from_slice(&fixed[16..28]); // CRC, compressed and uncompressed sizes
            fixed[8..10].copy_from_slice(&flags.to_le_bytes());
            fixed[42..46].copy_from_slice(&offset.to_le_bytes());
            central.extend_from_slice(&fixed);
            central.extend_from_slice(cd.name(entry));
            central.extend_from_slice(cd.extra(entry));
            central.extend_from_slice(cd.comment(entry));
        }
        let plan = Plan {
            pieces: Vec::new(),
            central,
            entries: cd.entries.len() as u64,
            written: out.len() as u64,
            comment: Vec::new(),
        };
        out.extend_from_slice(&plan.central);
        out.extend_from_slice(&plan.end_records());
        out
    }

    fn edit() -> ArchiveEdit {
        ArchiveEdit {
            replace: [(
                "pkg-1.0.dist-info/RECORD".to_owned(),
                b"new record\n".to_vec(),
            )]
            .into_iter()
            .collect(),
            insert: vec![(
                "pkg-1.0.dist-info/variant.json".to_owned(),
                b"{\"variants\": {}}".to_vec(),
            )],
            insert_before: Some("pkg-1.0.dist-info/RECORD".to_owned()),
            rename: [(
                "pkg/_native.so".to_owned(),
                "pkg/_native_renamed.so".to_owned(),
            )]
            .into_iter()
            .collect(),
            ..ArchiveEdit::default()
        }
    }

    /// Copies `input` verbatim with `edit`; the output's bytes.
    fn copy(input: &[u8], edit: &ArchiveEdit) -> Result<Vec<u8>, Unsupported> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in.whl");
        std::fs::write(&path, input).unwrap();
        let file = File::open(&path).unwrap();
        let mut source = ZipArchive::new(Cursor::new(input)).unwrap();
        let fresh = compress_new_members(&mut source, edit, dir.path()).unwrap();
        let plan = plan(&file, &fresh, edit)?;
        let buffered = plan.write(&file, &fresh, Vec::new()).unwrap();
        // The kernel's copy into a file gives the same bytes, and says how many.
        let out_path = dir.path().join("out.whl");
        let out = File::create(&out_path).unwrap();
        let size = plan.write_file(&file, &fresh, &out).unwrap();
        drop(out);
        let copied = std::fs::read(&out_path).unwrap();
        assert_eq!(copied, buffered);
        assert_eq!(size, copied.len() as u64);
        Ok(buffered)
    }

    /// Name, raw (compressed) bytes, contents, central extra field, mode and time per member;
    /// reading the contents checks each CRC.
    type Facts = (
        String,
        Vec<u8>,
        Vec<u8>,
        Vec<u8>,
        Option<u32>,
        Option<zip::DateTime>,
    );

    fn facts(archive: &[u8]) -> Vec<Facts> {
        let mut zip = ZipArchive::new(Cursor::new(archive)).unwrap();
        (0..zip.len())
            .map(|i| {
                let mut raw = Vec::new();
                zip.by_index_raw(i).unwrap().read_to_end(&mut raw).unwrap();
                let mut file = zip.by_index(i).unwrap();
                let mut contents = Vec::new();
                file.read_to_end(&mut contents).unwrap();
                let extra = file.extra_data().unwrap_or_default().to_vec();
                (
                    file.name().to_owned(),
                    raw,
                    contents,
                    extra,
                    file.unix_mode(),
                    file.last_modified(),
                )
            })
            .collect()
    }

    fn check_copy(streamed: bool, large: bool) {
        let input = wheel(streamed, large);
        let output = copy(&input, &edit()).expect("copied verbatim");
        let before = facts(&input);
        let after = facts(&output);
        let names: Vec<&str> = after.iter().map(|f| f.0.as_str()).collect();
        assert_eq!(
            names,
            [
                "pkg/__init__.py",
                "pkg/_native_renamed.so",
                "pkg-1.0.dist-info/WHEEL",
                "pkg-1.0.dist-info/variant.json",
                "pkg-1.0.dist-info/RECORD"
            ]
        );
        // Unchanged members: the same raw bytes, contents, extra fields, mode and time; the
        // renamed one the same but for its name.
        for (b, a) in before.iter().zip(&after).take(3) {
            assert_eq!(
                (&b.1, &b.2, &b.3, b.4, b.5),
                (&a.1, &a.2, &a.3, a.4, a.5),
                "{}",
                b.0
            );
            assert!(
                a.3.windows(5).any(|w| w == TIMESTAMP_EXTRA),
                "{}: {:?}",
                a.0,
                a.3
            );
        }
        assert_eq!(after[4].2, b"new record\n");
        assert_eq!(after[3].2, b"{\"variants\": {}}");
        // Unchanged member bytes (local header, data, descriptor) appear in the output as they
        // are in the input.
        let first = &input[..usize::try_from(local_end(&input, 0)).unwrap()];
        assert_eq!(&output[..first.len()], first);
    }

    /// Where the first member ends in `archive` (the second one's offset).
    fn local_end(archive: &[u8], index: usize) -> u64 {
        let cd = CentralDirectory::read(&mut Cursor::new(archive)).unwrap();
        cd.entries[index + 1].local_offset
    }

    #[test]
    fn members_are_copied_byte_for_byte_with_their_extra_fields() {
        check_copy(false, false);
    }

    #[test]
    fn data_descriptors_are_copied_with_their_member() {
        let input = wheel(true, false);
        let cd = CentralDirectory::read(&mut Cursor::new(&input)).unwrap();
        let flags = u16_at(&cd.fixed(&cd.entries[0]), 8);
        assert_ne!(flags & 0x8, 0, "the test wheel has data descriptors");
        check_copy(true, false);
    }

    #[test]
    fn zip64_members_are_copied() {
        let input = wheel(false, true);
        let cd = CentralDirectory::read(&mut Cursor::new(&input)).unwrap();
        let local_extra_len = u16_at(&input, 28);
        assert!(
            local_extra_len >= 20,
            "the test wheel has zip64 local extra fields"
        );
        drop(cd);
        check_copy(false, true);
    }

    #[test]
    fn an_entry_moved_past_4_gib_gets_a_zip64_offset() {
        let input = wheel(false, false);
        let cd = CentralDirectory::read(&mut Cursor::new(&input)).unwrap();
        let member = Member {
            cd: &cd,
            entry: &cd.entries[1],
            end: cd.entries[2].local_offset,
        };
        let mut plan = Plan {
            pieces: Vec::new(),
            central: Vec::new(),
            entries: 0,
            written: 0,
            comment: Vec::new(),
        };
        let far = 5 * 1024 * 1024 * 1024u64;
        plan.push_central(&member, None, far).unwrap();
        plan.push_central(&member, None, 12).unwrap();
        plan.written = far + 100;
        let mut archive = plan.central.clone();
        archive.extend_from_slice(&plan.end_records());
        // Read back as the central directory of an archive whose members start at `far`.
        let parsed = parse_entries_for_test(&archive, &plan);
        assert_eq!(parsed[0].local_offset, far);
        assert_eq!(parsed[1].local_offset, 12);
        let extra = {
            let start = CENTRAL_FIXED_FOR_TEST + member.cd.name(member.entry).len();
            archive[start..start + 4].to_vec()
        };
        assert_eq!(u16_at(&extra, 0), ZIP64_EXTRA);
        assert!(plan
            .end_records()
            .windows(4)
            .any(|w| w == 0x0606_4b50u32.to_le_bytes()));
    }

    const CENTRAL_FIXED_FOR_TEST: usize = 46;

    /// Parses the central directory `plan` wrote, at the start of `archive`.
    fn parse_entries_for_test(archive: &[u8], plan: &Plan) -> Vec<Entry> {
        // A file whose central directory starts at 0 and whose end records follow it.
        let mut file = Vec::new();
        file.extend_from_slice(&plan.central);
        let mut end = Plan {
            pieces: Vec::new(),
            central: plan.central.clone(),
            entries: plan.entries,
            written: 0,
            comment: Vec::new(),
        }
        .end_records();
        file.append(&mut end);
        assert!(archive.starts_with(&plan.central));
        CentralDirectory::read(&mut Cursor::new(file))
            .unwrap()
            .entries
    }

    #[test]
    fn the_test_wheels_take_the_verbatim_path() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/wheels");
        let mut seen = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "whl") {
                continue;
            }
            let bytes = std::fs::read(&path).unwrap();
            let names: Vec<String> = ZipArchive::new(Cursor::new(&bytes))
                .unwrap()
                .file_names()
                .map(str::to_owned)
                .collect();
            let record = names
                .iter()
                .find(|n| n.ends_with(".dist-info/RECORD"))
                .unwrap();
            let edit = ArchiveEdit {
                replace: [(record.clone(), b"x".to_vec())].into_iter().collect(),
                ..ArchiveEdit::default()
            };
            let output =
                copy(&bytes, &edit).unwrap_or_else(|e| panic!("{}: {e:?}", path.display()));
            let copied: Vec<String> = facts(&output).into_iter().map(|f| f.0).collect();
            assert_eq!(copied, names);
            seen += 1;
        }
        assert!(seen >= 5);
        // And the wheels the integration tests build (the zip crate's default layout).
        check_copy(false, false);
    }

    #[test]
    fn members_out_of_order_are_left_to_the_zip_crate() {
        let mut zip = ZipWriter::new(Cursor::new(Vec::new()));
        for name in ["a", "b"] {
            zip.start_file(name, SimpleFileOptions::default()).unwrap();
            zip.write_all(name.as_bytes()).unwrap();
        }
        let mut bytes = zip.finish().unwrap().into_inner();
        // Swap the two central-directory entries (same length: one-letter names, no extras
        // beyond what both have).
        let cd = CentralDirectory::read(&mut Cursor::new(&bytes)).unwrap();
        let start = usize::try_from(cd.offset).unwrap();
        let len = (bytes.len() - start - 22) / 2;
        let (first, second) = (
            bytes[start..start + len].to_vec(),
            bytes[start + len..start + 2 * len].to_vec(),
        );
        bytes[start..start + len].copy_from_slice(&second);
        bytes[start + len..start + 2 * len].copy_from_slice(&first);
        assert_eq!(
            copy(&bytes, &ArchiveEdit::default()).unwrap_err(),
            Unsupported("members not in central-directory order")
        );
    }
}
