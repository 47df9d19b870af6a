//! Small generated wheels for the writing tests: real zip archives with a correct RECORD,
//! mixed compression, timestamps and permissions, so that raw copying can be checked.

use std::io::{Cursor, Read, Write};
use std::path::{Path, PathBuf};

use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, DateTime};

pub(crate) use vari_test_support::paths::testdata;
pub(crate) use vari_test_support::venv::test_venv as venv;
pub(crate) use vari_test_support::wheels::record_row;

/// A plain wheel `{dist}-{version}-{tags}.whl` in `dir` with a package, a data file, METADATA
/// (with `requires`), WHEEL and RECORD. Returns its path.
pub(crate) fn plain_wheel(
    dir: &Path,
    dist: &str,
    version: &str,
    tags: &str,
    requires: &[&str],
) -> PathBuf {
    let escaped = dist.replace('-', "_");
    let dist_info = format!("{escaped}-{version}.dist-info");
    let mut metadata = format!("Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n");
    for r in requires {
        metadata.push_str(&format!("Requires-Dist: {r}\n"));
    }
    metadata.push_str("\nA test package.\n");
    let package = escaped.split('_').next().unwrap_or("pkg").to_owned();
    let members: Vec<(String, Vec<u8>, CompressionMethod, u32)> = vec![
        (
            format!("{package}/__init__.py"),
            b"VALUE = 42\n".to_vec(),
            CompressionMethod::Deflated,
            0o644,
        ),
        (
            format!("{package}/_native.so"),
            (0..20_000u32).flat_map(|i| i.to_le_bytes()).collect(),
            CompressionMethod::Stored,
            0o755,
        ),
        (
            format!("{escaped}-{version}.data/scripts/tool"),
            b"#!/bin/sh\necho tool\n".to_vec(),
            CompressionMethod::Deflated,
            0o755,
        ),
        (
            format!("{dist_info}/METADATA"),
            metadata.into_bytes(),
            CompressionMethod::Deflated,
            0o644,
        ),
        (
            format!("{dist_info}/WHEEL"),
            format!(
                "Wheel-Version: 1.0\nGenerator: vari-tests\nRoot-Is-Purelib: false\nTag: {tags}\n"
            )
            .into_bytes(),
            CompressionMethod::Deflated,
            0o644,
        ),
    ];
    let mut record: String = members
        .iter()
        .map(|(n, b, _, _)| record_row(n, b))
        .collect();
    record.push_str(&format!("{dist_info}/RECORD,,\n"));
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for (i, (name, bytes, method, mode)) in members.iter().enumerate() {
        let time = DateTime::from_date_and_time(2024, 3, 1 + i as u8, 12, 30, 10).unwrap();
        let options = SimpleFileOptions::default()
            .compression_method(*method)
            .unix_permissions(*mode)
            .last_modified_time(time);
        zip.start_file(name.as_str(), options).unwrap();
        zip.write_all(bytes).unwrap();
    }
    let options = SimpleFileOptions::default()
        .compression_method(CompressionMethod::Deflated)
        .unix_permissions(0o644)
        .last_modified_time(DateTime::from_date_and_time(2024, 3, 9, 8, 0, 0).unwrap());
    zip.start_file(format!("{dist_info}/RECORD"), options)
        .unwrap();
    zip.write_all(record.as_bytes()).unwrap();
    let bytes = zip.finish().unwrap().into_inner();
    let path = dir.join(format!("{escaped}-{version}-{tags}.whl"));
    std::fs::write(&path, bytes).unwrap();
    path
}

/// One member as seen in an archive: name, contents, and the raw facts a copy must keep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Member {
    pub(crate) name: String,
    pub(crate) contents: Vec<u8>,
    pub(crate) compressed: Vec<u8>,
    pub(crate) method: CompressionMethod,
    pub(crate) modified: Option<DateTime>,
    pub(crate) mode: Option<u32>,
}

/// Every member of a wheel, in archive order.
pub(crate) fn members(path: &Path) -> Vec<Member> {
    let mut zip = zip::ZipArchive::new(std::fs::File::open(path).unwrap()).unwrap();
    let mut out = Vec::new();
    for i in 0..zip.len() {
        let mut compressed = Vec::new();
        {
            let file = zip.by_index_raw(i).unwrap();
            let mut raw = file;
            raw.read_to_end(&mut compressed).unwrap();
        }
        let mut file = zip.by_index(i).unwrap();
        let mut contents = Vec::new();
        file.read_to_end(&mut contents).unwrap();
        out.push(Member {
            name: file.name().to_owned(),
            contents,
            compressed,
            method: file.compression(),
            modified: file.last_modified(),
            mode: file.unix_mode(),
        });
    }
    out
}

/// A member's contents by name.
pub(crate) fn member<'a>(members: &'a [Member], name: &str) -> &'a Member {
    members
        .iter()
        .find(|m| m.name == name)
        .unwrap_or_else(|| panic!("no member {name}"))
}

/// One entry of a hand-made archive, written byte by byte so that tests can build what no zip
/// writer produces: duplicate names, hostile names, symbolic links, overlapping data, lying
/// sizes.
#[derive(Debug, Clone)]
pub(crate) struct RawEntry {
    /// The name, in the local header and the central directory.
    pub(crate) name: Vec<u8>,
    /// The stored bytes (already compressed when `method` is 8).
    pub(crate) data: Vec<u8>,
    /// 0 (stored) or 8 (deflated).
    pub(crate) method: u16,
    /// The CRC-32 of the uncompressed contents.
    pub(crate) crc: u32,
    /// The uncompressed size the headers declare.
    pub(crate) size: u64,
    /// The Unix mode, in the external attributes with "made by Unix".
    pub(crate) mode: u32,
    /// The compressed size the central directory declares, when not `data`'s length.
    pub(crate) claimed_compressed: Option<u64>,
    /// The name in the central directory, when not `name`.
    pub(crate) listed_as: Option<Vec<u8>>,
    /// The central directory's extra field.
    pub(crate) central_extra: Vec<u8>,
}

impl RawEntry {
    /// A stored regular file.
    pub(crate) fn stored(name: &str, contents: &[u8]) -> Self {
        Self {
            name: name.as_bytes().to_vec(),
            data: contents.to_vec(),
            method: 0,
            crc: crc32fast::hash(contents),
            size: contents.len() as u64,
            mode: 0o100_644,
            claimed_compressed: None,
            listed_as: None,
            central_extra: Vec::new(),
        }
    }

    /// A deflated regular file.
    pub(crate) fn deflated(name: &str, contents: &[u8]) -> Self {
        let mut encoder =
            flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
        encoder.write_all(contents).unwrap();
        Self {
            data: encoder.finish().unwrap(),
            method: 8,
            ..Self::stored(name, contents)
        }
    }
}

/// A zip archive of `entries` (local headers and data in order), whose central directory lists
/// each entry and then, for each `(name, i)` of `aliases`, another entry with that name and
/// entry `i`'s header values pointing at entry `i`'s local header.
pub(crate) fn raw_zip(entries: &[RawEntry], aliases: &[(Vec<u8>, usize)]) -> Vec<u8> {
    fn u16le(out: &mut Vec<u8>, v: u16) {
        out.extend_from_slice(&v.to_le_bytes());
    }
    fn u32le(out: &mut Vec<u8>, v: u32) {
        out.extend_from_slice(&v.to_le_bytes());
    }
    let mut out = Vec::new();
    let mut offsets = Vec::new();
    for e in entries {
        offsets.push(out.len() as u32);
        u32le(&mut out, 0x0403_4b50);
        u16le(&mut out, 20);
        u16le(&mut out, 1 << 11);
        u16le(&mut out, e.method);
        u32le(&mut out, 0); // time and date
        u32le(&mut out, e.crc);
        u32le(&mut out, e.data.len() as u32);
        u32le(&mut out, e.size as u32);
        u16le(&mut out, e.name.len() as u16);
        u16le(&mut out, 0);
        out.extend_from_slice(&e.name);
        out.extend_from_slice(&e.data);
    }
    let cd_start = out.len() as u32;
    let listed = entries
        .iter()
        .enumerate()
        .map(|(i, e)| (e.listed_as.clone().unwrap_or_else(|| e.name.clone()), i))
        .chain(aliases.iter().cloned());
    let mut count = 0u16;
    for (name, i) in listed {
        let e = &entries[i];
        u32le(&mut out, 0x0201_4b50);
        u16le(&mut out, 0x0314); // made by Unix, version 2.0
        u16le(&mut out, 20);
        u16le(&mut out, 1 << 11);
        u16le(&mut out, e.method);
        u32le(&mut out, 0);
        u32le(&mut out, e.crc);
        u32le(
            &mut out,
            e.claimed_compressed.unwrap_or(e.data.len() as u64) as u32,
        );
        u32le(&mut out, e.size.min(u64::from(u32::MAX - 1)) as u32);
        u16le(&mut out, name.len() as u16);
        u16le(&mut out, e.central_extra.len() as u16);
        u16le(&mut out, 0); // comment
        u16le(&mut out, 0); // disk
        u16le(&mut out, 0); // internal attributes
        u32le(&mut out, e.mode << 16);
        u32le(&mut out, offsets[i]);
        out.extend_from_slice(&name);
        out.extend_from_slice(&e.central_extra);
        count += 1;
    }
    let cd_size = out.len() as u32 - cd_start;
    u32le(&mut out, 0x0605_4b50);
    u16le(&mut out, 0);
    u16le(&mut out, 0);
    u16le(&mut out, count);
    u16le(&mut out, count);
    u32le(&mut out, cd_size);
    u32le(&mut out, cd_start);
    u16le(&mut out, 0);
    out
}

/// The members of a small valid wheel `demo-1.0` (a module, METADATA, WHEEL) followed by
/// `extra`, and RECORD listing them all with their true hashes (when stored; deflated
/// members are listed by the hash of `contents`, given separately).
pub(crate) fn demo_entries(extra: Vec<(RawEntry, Vec<u8>)>) -> Vec<RawEntry> {
    let dist_info = "demo-1.0.dist-info";
    let mut entries: Vec<(RawEntry, Vec<u8>)> = [
        ("demo/__init__.py", &b"VALUE = 1\n"[..]),
        (
            "demo-1.0.dist-info/METADATA",
            b"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n",
        ),
        (
            "demo-1.0.dist-info/WHEEL",
            b"Wheel-Version: 1.0\nGenerator: vari-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        ),
    ]
    .into_iter()
    .map(|(name, contents)| (RawEntry::stored(name, contents), contents.to_vec()))
    .collect();
    entries.extend(extra);
    let mut record = String::new();
    for (entry, contents) in &entries {
        let name = String::from_utf8_lossy(&entry.name);
        let name = if name.contains(',') || name.contains('"') || name.contains('\n') {
            format!("\"{}\"", name.replace('"', "\"\""))
        } else {
            name.into_owned()
        };
        record.push_str(&record_row(&name, contents));
    }
    record.push_str(&format!("{dist_info}/RECORD,,\n"));
    let mut out: Vec<RawEntry> = entries.into_iter().map(|(e, _)| e).collect();
    out.push(RawEntry::stored(
        &format!("{dist_info}/RECORD"),
        record.as_bytes(),
    ));
    out
}

/// Writes `bytes` as `demo-1.0-py3-none-any.whl` in `dir`.
pub(crate) fn write_demo(dir: &Path, bytes: &[u8]) -> PathBuf {
    let path = dir.join("demo-1.0-py3-none-any.whl");
    std::fs::write(&path, bytes).unwrap();
    path
}

/// Every file under `dir`, recursively, with its contents: to show that nothing changed.
pub(crate) use vari_test_support::paths::files_under as snapshot;
