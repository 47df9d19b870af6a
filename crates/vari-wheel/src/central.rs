//! A zip archive's central directory read as raw bytes, for copying members verbatim
//! (`verbatim.rs`): every entry keeps its header bytes (extra fields, comment, attributes) and
//! only its local-header offset is rewritten.
//!
//! This reads just what a verbatim copy needs; anything it does not expect (a split archive,
//! entries out of order, a malformed header) is [`Unsupported`], and the caller copies through
//! the zip crate instead, which reads every archive it can and reports what it cannot.

use std::io::{Read, Seek, SeekFrom};
use std::ops::Range;

/// Why an archive is not copied verbatim (the reason is for tests and debugging).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Unsupported(pub(crate) &'static str);

const EOCD_SIGNATURE: u32 = 0x0605_4b50;
const ZIP64_LOCATOR_SIGNATURE: u32 = 0x0706_4b50;
const ZIP64_EOCD_SIGNATURE: u32 = 0x0606_4b50;
const CENTRAL_SIGNATURE: u32 = 0x0201_4b50;
pub(crate) const LOCAL_SIGNATURE: u32 = 0x0403_4b50;
/// The extra-field id of the zip64 extended information.
pub(crate) const ZIP64_EXTRA: u16 = 0x0001;
/// The Info-ZIP Unicode Path extra field, which overrides the stored name.
pub(crate) const UNICODE_PATH_EXTRA: u16 = 0x7075;
/// General-purpose flag: the name is UTF-8.
pub(crate) const UTF8_FLAG: u16 = 1 << 11;
/// The value of a 32-bit field whose real value is in the zip64 extra field.
pub(crate) const U32_IN_ZIP64: u32 = u32::MAX;
/// The fixed part of a central-directory header.
pub(crate) const CENTRAL_FIXED: usize = 46;
/// The fixed part of a local header.
pub(crate) const LOCAL_FIXED: usize = 30;
/// The end-of-central-directory record without its comment.
const EOCD_LEN: usize = 22;
const ZIP64_LOCATOR_LEN: usize = 20;
const ZIP64_EOCD_LEN: usize = 56;

/// The central directory of an archive.
#[derive(Debug)]
pub(crate) struct CentralDirectory {
    /// The central directory as stored.
    bytes: Vec<u8>,
    /// Its entries, in stored order.
    pub(crate) entries: Vec<Entry>,
    /// Where it starts in the archive: the end of the last member.
    pub(crate) offset: u64,
    /// The archive comment.
    pub(crate) comment: Vec<u8>,
}

/// One central-directory entry.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    /// The whole header (fixed part, name, extra field, comment) in the directory's bytes.
    range: Range<usize>,
    name_len: usize,
    extra_len: usize,
    /// The member's compressed size (from the zip64 extra field when the header says so).
    pub(crate) compressed_size: u64,
    /// Its size once decompressed (likewise).
    pub(crate) uncompressed_size: u64,
    /// Where the member's local header starts.
    pub(crate) local_offset: u64,
}

impl CentralDirectory {
    /// Reads the central directory of the archive `reader`.
    pub(crate) fn read<R: Read + Seek>(reader: &mut R) -> Result<Self, Unsupported> {
        let io = |_| Unsupported("the archive could not be read");
        let len = reader.seek(SeekFrom::End(0)).map_err(io)?;
        // The record is 22 bytes plus a comment of at most 65,535; the zip64 locator precedes it.
        let tail_len = len.min((EOCD_LEN + usize::from(u16::MAX) + ZIP64_LOCATOR_LEN) as u64);
        let tail_start = len - tail_len;
        let mut tail = vec![0; usize::try_from(tail_len).map_err(|_| Unsupported("tail"))?];
        reader.seek(SeekFrom::Start(tail_start)).map_err(io)?;
        reader.read_exact(&mut tail).map_err(io)?;
        if tail.len() < EOCD_LEN {
            return Err(Unsupported("no end-of-central-directory record"));
        }
        // The last signature whose comment ends exactly at the end of the file.
        let eocd = (0..=tail.len() - EOCD_LEN)
            .rev()
            .find(|&i| {
                u32_at(&tail, i) == EOCD_SIGNATURE
                    && i + EOCD_LEN + usize::from(u16_at(&tail, i + 20)) == tail.len()
            })
            .ok_or(Unsupported("no end-of-central-directory record"))?;
        let record = &tail[eocd..];
        if u16_at(record, 4) != 0 || u16_at(record, 6) != 0 {
            return Err(Unsupported("a split archive"));
        }
        let comment = record[EOCD_LEN..].to_vec();
        let mut count = u64::from(u16_at(record, 10));
        let mut size = u64::from(u32_at(record, 12));
        let mut offset = u64::from(u32_at(record, 16));
        if eocd >= ZIP64_LOCATOR_LEN
            && u32_at(&tail, eocd - ZIP64_LOCATOR_LEN) == ZIP64_LOCATOR_SIGNATURE
        {
            let locator = &tail[eocd - ZIP64_LOCATOR_LEN..eocd];
            let mut zip64 = [0u8; ZIP64_EOCD_LEN];
            reader
                .seek(SeekFrom::Start(u64_at(locator, 8)))
                .map_err(io)?;
            reader.read_exact(&mut zip64).map_err(io)?;
            if u32_at(&zip64, 0) != ZIP64_EOCD_SIGNATURE {
                return Err(Unsupported("a zip64 locator without its record"));
            }
            if u32_at(&zip64, 16) != 0 || u32_at(&zip64, 20) != 0 {
                return Err(Unsupported("a split archive"));
            }
            count = u64_at(&zip64, 32);
            size = u64_at(&zip64, 40);
            offset = u64_at(&zip64, 48);
        }
        if offset.checked_add(size).is_none_or(|end| end > len) {
            return Err(Unsupported("the central directory lies outside the file"));
        }
        let mut bytes = vec![0; usize::try_from(size).map_err(|_| Unsupported("size"))?];
        reader.seek(SeekFrom::Start(offset)).map_err(io)?;
        reader.read_exact(&mut bytes).map_err(io)?;
        let entries = parse_entries(&bytes, count)?;
        Ok(Self {
            bytes,
            entries,
            offset,
            comment,
        })
    }

    /// A central directory already read (by range requests, say): its bytes, which must be
    /// whole entries and nothing else, and where it starts in its archive.
    pub(crate) fn from_bytes(bytes: Vec<u8>, offset: u64) -> Result<Self, Unsupported> {
        // Every header takes at least 46 bytes: parse as many as the bytes can hold, then
        // require that they held exactly that many.
        let mut count = 0u64;
        let mut at = 0usize;
        while at < bytes.len() {
            let fixed = bytes
                .get(at..at + CENTRAL_FIXED)
                .ok_or(Unsupported("a malformed central-directory header"))?;
            let variable = usize::from(u16_at(fixed, 28))
                + usize::from(u16_at(fixed, 30))
                + usize::from(u16_at(fixed, 32));
            at += CENTRAL_FIXED + variable;
            count += 1;
        }
        let entries = parse_entries(&bytes, count)?;
        Ok(Self {
            bytes,
            entries,
            offset,
            comment: Vec::new(),
        })
    }

    /// The entry's name as stored.
    pub(crate) fn name(&self, entry: &Entry) -> &[u8] {
        let start = entry.range.start + CENTRAL_FIXED;
        &self.bytes[start..start + entry.name_len]
    }

    /// The entry's name as the zip crate reads it, when that is its stored bytes: UTF-8 that
    /// is ASCII or flagged as UTF-8, without a Unicode Path extra field overriding it. `None`
    /// for other names (the zip crate decodes those as CP437 or takes the extra field's).
    pub(crate) fn name_str(&self, entry: &Entry) -> Option<&str> {
        let flagged = u16_at(&self.bytes, entry.range.start + 8) & UTF8_FLAG != 0;
        let overridden = extra_blocks(self.extra(entry)).any(|(id, _, _)| id == UNICODE_PATH_EXTRA);
        match std::str::from_utf8(self.name(entry)) {
            Ok(name) if (flagged || name.is_ascii()) && !overridden => Some(name),
            _ => None,
        }
    }

    /// The entry's general-purpose flags, compression method and CRC-32.
    pub(crate) fn flags_method_crc(&self, entry: &Entry) -> (u16, u16, u32) {
        let at = entry.range.start;
        (
            u16_at(&self.bytes, at + 8),
            u16_at(&self.bytes, at + 10),
            u32_at(&self.bytes, at + 16),
        )
    }

    /// The entry's fixed header part.
    pub(crate) fn fixed(&self, entry: &Entry) -> [u8; CENTRAL_FIXED] {
        let mut fixed = [0; CENTRAL_FIXED];
        fixed.copy_from_slice(&self.bytes[entry.range.start..entry.range.start + CENTRAL_FIXED]);
        fixed
    }

    /// The entry's extra field.
    pub(crate) fn extra(&self, entry: &Entry) -> &[u8] {
        let start = entry.range.start + CENTRAL_FIXED + entry.name_len;
        &self.bytes[start..start + entry.extra_len]
    }

    /// The entry's comment.
    pub(crate) fn comment(&self, entry: &Entry) -> &[u8] {
        &self.bytes
            [entry.range.start + CENTRAL_FIXED + entry.name_len + entry.extra_len..entry.range.end]
    }
}

/// Splits the central directory into `count` entries.
fn parse_entries(bytes: &[u8], count: u64) -> Result<Vec<Entry>, Unsupported> {
    let bad = Unsupported("a malformed central-directory header");
    // Each header takes at least 46 bytes, which bounds a hostile count.
    let capacity = usize::try_from(count)
        .ok()
        .filter(|&c| c <= bytes.len() / CENTRAL_FIXED)
        .ok_or(bad)?;
    let mut entries = Vec::with_capacity(capacity);
    let mut at = 0;
    for _ in 0..count {
        let fixed = bytes.get(at..at + CENTRAL_FIXED).ok_or(bad)?;
        if u32_at(fixed, 0) != CENTRAL_SIGNATURE {
            return Err(bad);
        }
        if u16_at(fixed, 34) != 0 {
            return Err(Unsupported("a split archive"));
        }
        let name_len = usize::from(u16_at(fixed, 28));
        let extra_len = usize::from(u16_at(fixed, 30));
        let comment_len = usize::from(u16_at(fixed, 32));
        let end = at + CENTRAL_FIXED + name_len + extra_len + comment_len;
        if end > bytes.len() {
            return Err(bad);
        }
        let extra = &bytes[at + CENTRAL_FIXED + name_len..][..extra_len];
        let zip64 = Zip64Fields::of(fixed);
        let values = zip64_values(extra, zip64)?;
        entries.push(Entry {
            range: at..end,
            name_len,
            extra_len,
            compressed_size: values.compressed.unwrap_or(u64::from(u32_at(fixed, 20))),
            uncompressed_size: values.uncompressed.unwrap_or(u64::from(u32_at(fixed, 24))),
            local_offset: values.offset.unwrap_or(u64::from(u32_at(fixed, 42))),
        });
        at = end;
    }
    // A count that wrapped around 65,535 without zip64 records would leave entries unread.
    if at != bytes.len() {
        return Err(Unsupported("a central directory longer than its entries"));
    }
    Ok(entries)
}

/// Which 32-bit fields of a central header defer to the zip64 extra field.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Zip64Fields {
    uncompressed: bool,
    compressed: bool,
    pub(crate) offset: bool,
}

impl Zip64Fields {
    pub(crate) fn of(fixed: &[u8]) -> Self {
        Self {
            uncompressed: u32_at(fixed, 24) == U32_IN_ZIP64,
            compressed: u32_at(fixed, 20) == U32_IN_ZIP64,
            offset: u32_at(fixed, 42) == U32_IN_ZIP64,
        }
    }
}

/// The values a zip64 extra field gives, and where the offset is in it.
#[derive(Debug, Default)]
pub(crate) struct Zip64Values {
    pub(crate) uncompressed: Option<u64>,
    pub(crate) compressed: Option<u64>,
    pub(crate) offset: Option<u64>,
    /// Where the offset's 8 bytes start in the extra field.
    pub(crate) offset_at: Option<usize>,
}

/// Reads the zip64 extra field: in order, the uncompressed size, the compressed size and the
/// offset, each present only when its 32-bit field says so (then the disk number, which a
/// single-file archive never defers).
pub(crate) fn zip64_values(extra: &[u8], fields: Zip64Fields) -> Result<Zip64Values, Unsupported> {
    let mut values = Zip64Values::default();
    if !(fields.uncompressed || fields.compressed || fields.offset) {
        return Ok(values);
    }
    let missing = Unsupported("a zip64 field without its value");
    let (start, data) = extra_blocks(extra)
        .find(|&(id, _, _)| id == ZIP64_EXTRA)
        .map(|(_, start, data)| (start, data))
        .ok_or(missing)?;
    let mut at = 0;
    let mut next = || -> Result<(usize, u64), Unsupported> {
        let value = data.get(at..at + 8).ok_or(missing)?;
        let here = at;
        at += 8;
        Ok((start + here, u64_at(value, 0)))
    };
    if fields.uncompressed {
        values.uncompressed = Some(next()?.1);
    }
    if fields.compressed {
        values.compressed = Some(next()?.1);
    }
    if fields.offset {
        let (position, offset) = next()?;
        values.offset = Some(offset);
        values.offset_at = Some(position);
    }
    Ok(values)
}

/// The blocks of an extra field: `(id, where its data starts, its data)`. A truncated last
/// block ends the iteration.
pub(crate) fn extra_blocks(extra: &[u8]) -> impl Iterator<Item = (u16, usize, &[u8])> {
    let mut at = 0;
    std::iter::from_fn(move || {
        let header = extra.get(at..at + 4)?;
        let (id, len) = (u16_at(header, 0), usize::from(u16_at(header, 2)));
        let data = extra.get(at + 4..at + 4 + len)?;
        let start = at + 4;
        at += 4 + len;
        Some((id, start, data))
    })
}

pub(crate) fn u16_at(bytes: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([bytes[at], bytes[at + 1]])
}

pub(crate) fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

pub(crate) fn u64_at(bytes: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(b)
}

#[cfg(test)]
mod tests {
    use std::io::{Cursor, Write};

    use zip::write::SimpleFileOptions;

    use super::*;

    fn archive(comment: &str) -> Vec<u8> {
        let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
        for (name, data) in [("a.txt", &b"alpha"[..]), ("dir/b.bin", &[7u8; 300][..])] {
            writer
                .start_file(name, SimpleFileOptions::default())
                .unwrap();
            writer.write_all(data).unwrap();
        }
        writer.set_comment(comment);
        writer.finish().unwrap().into_inner()
    }

    #[test]
    fn reads_entries_offsets_and_the_comment() {
        let bytes = archive("a comment with PK\x05\x06 inside");
        let cd = CentralDirectory::read(&mut Cursor::new(&bytes)).unwrap();
        let names: Vec<&[u8]> = cd.entries.iter().map(|e| cd.name(e)).collect();
        assert_eq!(names, [&b"a.txt"[..], b"dir/b.bin"]);
        assert_eq!(cd.entries[0].local_offset, 0);
        assert_eq!(u32_at(&bytes, 0), LOCAL_SIGNATURE);
        let second = usize::try_from(cd.entries[1].local_offset).unwrap();
        assert_eq!(u32_at(&bytes, second), LOCAL_SIGNATURE);
        assert_eq!(cd.comment, b"a comment with PK\x05\x06 inside");
        assert!(cd.offset > cd.entries[1].local_offset);
    }

    #[test]
    fn zip64_values_follow_the_fields_that_defer_to_them() {
        let mut extra = vec![0x99, 0x99, 2, 0, 1, 2]; // another block first
        extra.extend_from_slice(&[1, 0, 16, 0]);
        extra.extend_from_slice(&5_000_000_000u64.to_le_bytes());
        extra.extend_from_slice(&6_000_000_000u64.to_le_bytes());
        let fields = Zip64Fields {
            uncompressed: false,
            compressed: true,
            offset: true,
        };
        let values = zip64_values(&extra, fields).unwrap();
        assert_eq!(values.compressed, Some(5_000_000_000));
        assert_eq!(values.offset, Some(6_000_000_000));
        assert_eq!(values.offset_at, Some(18));
        assert!(zip64_values(&extra[..20], fields).is_err());
    }

    #[test]
    fn not_an_archive_is_unsupported() {
        for bytes in [&b""[..], b"hello", &[0u8; 100], b"PK\x05\x06"] {
            assert!(CentralDirectory::read(&mut Cursor::new(bytes)).is_err());
        }
        // Every truncation of a real archive: unsupported or read, never a panic.
        let archive = archive("");
        for len in 0..archive.len() {
            let _ = CentralDirectory::read(&mut Cursor::new(&archive[..len]));
        }
    }
}
