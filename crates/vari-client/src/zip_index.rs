//! Just enough of the zip format to read one member of a remote wheel from a few byte ranges:
//! the end-of-central-directory record (and its zip64 form), the central directory, a local
//! header, and the member itself (stored or deflated, CRC-checked).
//!
//! Written here rather than through the `zip` crate because that crate reads from a complete
//! `Read + Seek` source, while here every byte range is a network request: the parser must say
//! which bytes it needs before it has them.

use std::io::Read;

const EOCD_SIGNATURE: u32 = 0x0605_4b50;
const EOCD_LEN: usize = 22;
const ZIP64_LOCATOR_SIGNATURE: u32 = 0x0706_4b50;
const ZIP64_LOCATOR_LEN: usize = 20;
const ZIP64_EOCD_SIGNATURE: u32 = 0x0606_4b50;
const CENTRAL_SIGNATURE: u32 = 0x0201_4b50;
const CENTRAL_LEN: usize = 46;
const LOCAL_SIGNATURE: u32 = 0x0403_4b50;
/// The fixed part of a local file header.
pub(crate) const LOCAL_LEN: u64 = 30;

/// Members larger than this are refused (a metadata file is a few kilobytes; this bounds
/// what a hostile archive can make us inflate).
pub(crate) const MAX_MEMBER: u64 = 64 * 1024 * 1024;

/// Where the central directory is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Directory {
    pub(crate) offset: u64,
    pub(crate) size: u64,
}

/// One central-directory entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Member {
    pub(crate) name: String,
    method: u16,
    crc32: u32,
    pub(crate) compressed_size: u64,
    uncompressed_size: u64,
    pub(crate) header_offset: u64,
    encrypted: bool,
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}
fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}
fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// Finds the central directory from the last bytes of an archive (`tail`, which starts at
/// offset `tail_start` of the file).
pub(crate) fn find_directory(tail: &[u8], tail_start: u64) -> Result<Directory, String> {
    let eocd = (0..=tail.len().saturating_sub(EOCD_LEN))
        .rev()
        .find(|&at| u32_at(tail, at) == Some(EOCD_SIGNATURE))
        .ok_or("not a zip archive: no end-of-central-directory record")?;
    let short = || "truncated end-of-central-directory record".to_owned();
    let size = u32_at(tail, eocd + 12).ok_or_else(short)?;
    let offset = u32_at(tail, eocd + 16).ok_or_else(short)?;
    let zip64_locator = eocd
        .checked_sub(ZIP64_LOCATOR_LEN)
        .filter(|&at| u32_at(tail, at) == Some(ZIP64_LOCATOR_SIGNATURE));
    let Some(locator) = zip64_locator else {
        return Ok(Directory {
            offset: u64::from(offset),
            size: u64::from(size),
        });
    };
    let record = u64_at(tail, locator + 8).ok_or("truncated zip64 locator")?;
    let at = record
        .checked_sub(tail_start)
        .and_then(|at| usize::try_from(at).ok())
        .filter(|&at| u32_at(tail, at) == Some(ZIP64_EOCD_SIGNATURE))
        .ok_or("the zip64 end-of-central-directory record is not where its locator says")?;
    Ok(Directory {
        size: u64_at(tail, at + 40).ok_or("truncated zip64 record")?,
        offset: u64_at(tail, at + 48).ok_or("truncated zip64 record")?,
    })
}

/// Reads every entry of a central directory.
pub(crate) fn read_directory(bytes: &[u8]) -> Result<Vec<Member>, String> {
    let mut members = Vec::new();
    let mut at = 0;
    while at + 4 <= bytes.len() && u32_at(bytes, at) == Some(CENTRAL_SIGNATURE) {
        let short = || format!("truncated central directory entry at byte {at}");
        let field16 = |o| u16_at(bytes, at + o).ok_or_else(short);
        let field32 = |o| u32_at(bytes, at + o).ok_or_else(short);
        let flags = field16(8)?;
        let method = field16(10)?;
        let crc32 = field32(16)?;
        let mut compressed_size = u64::from(field32(20)?);
        let mut uncompressed_size = u64::from(field32(24)?);
        let name_len = usize::from(field16(28)?);
        let extra_len = usize::from(field16(30)?);
        let comment_len = usize::from(field16(32)?);
        let mut header_offset = u64::from(field32(42)?);
        let name_start = at + CENTRAL_LEN;
        let name = bytes
            .get(name_start..name_start + name_len)
            .ok_or_else(short)?;
        let extra = bytes
            .get(name_start + name_len..name_start + name_len + extra_len)
            .ok_or_else(short)?;
        apply_zip64_extra(
            extra,
            &mut uncompressed_size,
            &mut compressed_size,
            &mut header_offset,
        );
        members.push(Member {
            name: String::from_utf8_lossy(name).into_owned(),
            method,
            crc32,
            compressed_size,
            uncompressed_size,
            header_offset,
            encrypted: flags & 1 != 0,
        });
        at = name_start + name_len + extra_len + comment_len;
    }
    if members.is_empty() {
        return Err("the central directory is empty or unreadable".into());
    }
    Ok(members)
}

/// The zip64 extended information field (id 1) holds, in order, those of the three values
/// whose 32-bit field is saturated.
fn apply_zip64_extra(extra: &[u8], uncompressed: &mut u64, compressed: &mut u64, offset: &mut u64) {
    let mut at = 0;
    while let (Some(id), Some(len)) = (u16_at(extra, at), u16_at(extra, at + 2)) {
        let data = &extra[(at + 4).min(extra.len())..(at + 4 + usize::from(len)).min(extra.len())];
        if id == 1 {
            let mut pos = 0;
            for value in [uncompressed, compressed, offset] {
                if *value == u64::from(u32::MAX) {
                    if let Some(v) = u64_at(data, pos) {
                        *value = v;
                        pos += 8;
                    }
                }
            }
            return;
        }
        at += 4 + usize::from(len);
    }
}

/// The offset of a member's data from the start of its local header.
pub(crate) fn data_offset(local_header: &[u8]) -> Result<u64, String> {
    if u32_at(local_header, 0) != Some(LOCAL_SIGNATURE) {
        return Err("no local file header where the central directory points".into());
    }
    let name_len = u16_at(local_header, 26).ok_or("truncated local file header")?;
    let extra_len = u16_at(local_header, 28).ok_or("truncated local file header")?;
    Ok(LOCAL_LEN + u64::from(name_len) + u64::from(extra_len))
}

/// Decompresses a member's data and checks its size and CRC-32.
pub(crate) fn extract(member: &Member, data: &[u8]) -> Result<Vec<u8>, String> {
    let name = &member.name;
    if member.encrypted {
        return Err(format!("{name} is encrypted"));
    }
    if member.uncompressed_size > MAX_MEMBER {
        return Err(format!(
            "{name} is {} bytes, more than the {MAX_MEMBER} read for metadata",
            member.uncompressed_size
        ));
    }
    let data = data
        .get(..usize::try_from(member.compressed_size).map_err(|e| e.to_string())?)
        .ok_or_else(|| format!("{name}: the archive ends inside the member"))?;
    let content = match member.method {
        0 => data.to_vec(),
        8 => {
            let mut out = Vec::new();
            flate2::read::DeflateDecoder::new(data)
                .take(MAX_MEMBER + 1)
                .read_to_end(&mut out)
                .map_err(|e| format!("{name}: cannot inflate: {e}"))?;
            out
        }
        other => return Err(format!("{name}: unsupported compression method {other}")),
    };
    if content.len() as u64 != member.uncompressed_size {
        return Err(format!(
            "{name}: {} bytes after decompression, the directory says {}",
            content.len(),
            member.uncompressed_size
        ));
    }
    let crc = crc32fast::hash(&content);
    if crc != member.crc32 {
        return Err(format!(
            "{name}: CRC-32 is {crc:08x}, the directory says {:08x}",
            member.crc32
        ));
    }
    Ok(content)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A zip with one stored member `a/x.txt` = "hello", built by hand.
    fn tiny_zip() -> Vec<u8> {
        let name = b"a/x.txt";
        let data = b"hello";
        let crc = crc32fast::hash(data);
        let mut z = Vec::new();
        z.extend(LOCAL_SIGNATURE.to_le_bytes());
        z.extend([20, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        z.extend(crc.to_le_bytes());
        z.extend((data.len() as u32).to_le_bytes());
        z.extend((data.len() as u32).to_le_bytes());
        z.extend((name.len() as u16).to_le_bytes());
        z.extend(0u16.to_le_bytes());
        z.extend(name);
        z.extend(data);
        let cd_start = z.len() as u32;
        z.extend(CENTRAL_SIGNATURE.to_le_bytes());
        z.extend([20, 0, 20, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        z.extend(crc.to_le_bytes());
        z.extend((data.len() as u32).to_le_bytes());
        z.extend((data.len() as u32).to_le_bytes());
        z.extend((name.len() as u16).to_le_bytes());
        z.extend([0; 12]);
        z.extend(0u32.to_le_bytes());
        z.extend(name);
        let cd_size = z.len() as u32 - cd_start;
        z.extend(EOCD_SIGNATURE.to_le_bytes());
        z.extend([0, 0, 0, 0, 1, 0, 1, 0]);
        z.extend(cd_size.to_le_bytes());
        z.extend(cd_start.to_le_bytes());
        z.extend(0u16.to_le_bytes());
        z
    }

    #[test]
    fn reads_a_member_from_its_parts() {
        let z = tiny_zip();
        let tail_start = z.len() - 40;
        let dir = find_directory(&z[tail_start..], tail_start as u64).unwrap();
        let cd = &z[dir.offset as usize..(dir.offset + dir.size) as usize];
        let members = read_directory(cd).unwrap();
        assert_eq!(members.len(), 1);
        let m = &members[0];
        assert_eq!(m.name, "a/x.txt");
        let local = &z[m.header_offset as usize..];
        let start = data_offset(local).unwrap() as usize;
        assert_eq!(extract(m, &local[start..]).unwrap(), b"hello");
    }

    #[test]
    fn corruption_is_reported() {
        let mut z = tiny_zip();
        assert!(find_directory(&z[..10], 0).is_err());
        // Flip a data byte: the CRC no longer matches.
        let at = z.iter().position(|&b| b == b'h').unwrap();
        z[at] = b'j';
        let dir = find_directory(&z, 0).unwrap();
        let m = &read_directory(&z[dir.offset as usize..]).unwrap()[0];
        let start = data_offset(&z).unwrap() as usize;
        assert!(extract(m, &z[start..]).unwrap_err().contains("CRC-32"));
        assert!(data_offset(b"nope").is_err());
    }
}
