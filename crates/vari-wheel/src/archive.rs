//! The zip side of a wheel: the central directory, the `.dist-info` directory, and reading single
//! members with a size cap.
//!
//! Two ways in. [`Archive::open`] goes through the zip crate, which reads every archive it can
//! and hands out members by name: what validating and copying use. [`Archive::from_central`]
//! keeps the central directory as stored (`central.rs`) and reads the few members it is asked
//! for itself: for `inspect`, which lists the names and reads RECORD and `variant.json`, the
//! zip crate's parse of every entry into its own structures was a third of the time on a
//! 30,000-file wheel. An archive the listing does not take (names the zip crate decodes
//! differently) is opened through the zip crate. Both come after `layout.rs` checked the
//! central directory, which refuses what `central.rs` cannot read.

use std::collections::BTreeSet;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::str::FromStr;

use vari_core::filename::{normalize_name, WheelFilename};
use zip::ZipArchive;

use crate::central::{u16_at, u32_at, CentralDirectory, Entry, LOCAL_FIXED, LOCAL_SIGNATURE};
use crate::error::{WheelError, WheelErrorKind};
use crate::record::{Record, VerifyError};

/// An open wheel archive. Only the central directory is read up front.
pub(crate) struct Archive<R> {
    backend: Backend<R>,
    path: PathBuf,
}

enum Backend<R> {
    /// Through the zip crate.
    Zip(ZipArchive<R>),
    /// The stored central directory, every name valid UTF-8 (see the module docs).
    Listing { cd: CentralDirectory, reader: R },
}

impl<R: Read + Seek> Archive<R> {
    /// Reads the central directory through the zip crate.
    pub(crate) fn open(path: &Path, reader: R) -> Result<Self, WheelError> {
        let zip = ZipArchive::new(reader)
            .map_err(|source| WheelError::new(path, WheelErrorKind::NotAZip { source }))?;
        Ok(Self {
            backend: Backend::Zip(zip),
            path: path.to_owned(),
        })
    }

    /// Keeps `cd`, already read from `reader`, for listing when the listing takes it (see the
    /// module docs); otherwise opens `reader` through the zip crate.
    pub(crate) fn from_central(
        path: &Path,
        reader: R,
        cd: CentralDirectory,
    ) -> Result<Self, WheelError> {
        if listable(&cd) {
            return Ok(Self {
                backend: Backend::Listing { cd, reader },
                path: path.to_owned(),
            });
        }
        Self::open(path, reader)
    }

    /// The zip archive, for copying members: `None` when opened for listing.
    pub(crate) fn zip_mut(&mut self) -> Option<&mut ZipArchive<R>> {
        match &mut self.backend {
            Backend::Zip(zip) => Some(zip),
            Backend::Listing { .. } => None,
        }
    }

    /// Member names in central-directory order.
    pub(crate) fn names(&self) -> Box<dyn Iterator<Item = &str> + '_> {
        match &self.backend {
            Backend::Zip(zip) => Box::new(zip.file_names()),
            // Every name was checked when opened.
            Backend::Listing { cd, .. } => Box::new(
                cd.entries
                    .iter()
                    .map(|entry| cd.name_str(entry).unwrap_or_default()),
            ),
        }
    }

    /// Whether the archive has a member with exactly this name.
    pub(crate) fn contains(&self, member: &str) -> bool {
        match &self.backend {
            Backend::Zip(zip) => zip.index_for_name(member).is_some(),
            Backend::Listing { cd, .. } => listed(cd, member).is_some(),
        }
    }

    /// The wheel's `.dist-info` directory (see [`dist_info_of`]).
    pub(crate) fn dist_info(&self, filename: &WheelFilename) -> Result<String, WheelError> {
        dist_info_of(filename, self.names()).map_err(|kind| WheelError::new(&self.path, kind))
    }

    /// Streams one member through its RECORD row's hash, adding the bytes inflated to
    /// `inflated`. The outer error is a member that cannot be read (corrupt data, bad CRC, more
    /// bytes than its header declares); the inner one a mismatch with RECORD.
    pub(crate) fn verify_member(
        &mut self,
        member: &str,
        record: &Record,
        inflated: &mut u64,
    ) -> Result<Result<(), VerifyError>, WheelError> {
        let path = &self.path;
        let unreadable = |message: String| {
            WheelError::new(
                path,
                WheelErrorKind::Member {
                    member: member.to_owned(),
                    message,
                },
            )
        };
        match &mut self.backend {
            Backend::Zip(zip) => {
                let file = zip.by_name(member).map_err(|e| unreadable(e.to_string()))?;
                let mut capped = Declared {
                    declared: file.size(),
                    read: 0,
                    inner: file,
                };
                let verified = record
                    .verify_stream(member, &mut capped)
                    .map_err(|e| unreadable(e.to_string()));
                *inflated += capped.read;
                verified
            }
            Backend::Listing { cd, .. } => {
                let declared = listed(cd, member).map_or(0, |e| e.uncompressed_size);
                let bytes = self.read(member, declared)?;
                *inflated += bytes.len() as u64;
                Ok(record.verify(member, &bytes))
            }
        }
    }

    /// Reads one member, refusing more than `limit` bytes whatever its header claims (a zip
    /// bomb can declare a small size and inflate to gigabytes).
    pub(crate) fn read(&mut self, member: &str, limit: u64) -> Result<Vec<u8>, WheelError> {
        let path = &self.path;
        let zip = match &mut self.backend {
            Backend::Zip(zip) => zip,
            Backend::Listing { cd, reader } => return read_listed(path, cd, reader, member, limit),
        };
        let mut file = zip.by_name(member).map_err(|e| {
            WheelError::new(
                path,
                WheelErrorKind::Member {
                    member: member.to_owned(),
                    message: e.to_string(),
                },
            )
        })?;
        let too_large = |size| {
            WheelError::new(
                path,
                WheelErrorKind::MemberTooLarge {
                    member: member.to_owned(),
                    size,
                    limit,
                },
            )
        };
        if file.size() > limit {
            return Err(too_large(file.size()));
        }
        // The header's size is under the cap (checked above); growing from empty would copy
        // a large RECORD several times.
        let mut bytes =
            Vec::with_capacity(usize::try_from(file.size()).unwrap_or(0).saturating_add(1));
        // Read one byte past the cap to tell "exactly at the cap" from "over it".
        file.by_ref()
            .take(limit.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|e| {
                WheelError::new(
                    path,
                    WheelErrorKind::Member {
                        member: member.to_owned(),
                        message: e.to_string(),
                    },
                )
            })?;
        // usize → u64 never truncates on supported targets.
        let read = bytes.len() as u64;
        if read > limit {
            return Err(too_large(read));
        }
        Ok(bytes)
    }
}

/// A member's inflated bytes, which may not exceed what its header declares: a header cannot
/// understate a member's size to make it inflate more than the ceiling allowed for.
struct Declared<R> {
    inner: R,
    declared: u64,
    read: u64,
}

impl<R: Read> Read for Declared<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        // One byte past the declared size tells "exactly" from "more".
        let left = self.declared.saturating_sub(self.read).saturating_add(1);
        let max = usize::try_from(left).unwrap_or(usize::MAX).min(buf.len());
        let n = self.inner.read(&mut buf[..max])?;
        self.read += n as u64;
        if self.read > self.declared {
            return Err(std::io::Error::other(format!(
                "inflates to more than the {} bytes its header declares",
                self.declared
            )));
        }
        Ok(n)
    }
}

/// Whether every name reads the same through the zip crate and as stored, and every member
/// starts before the central directory (which the zip crate also checks when opening).
fn listable(cd: &CentralDirectory) -> bool {
    cd.entries
        .iter()
        .all(|e| cd.name_str(e).is_some() && e.local_offset < cd.offset)
}

/// The entry named `member`; the last one, as with the zip crate, if several are.
fn listed<'a>(cd: &'a CentralDirectory, member: &str) -> Option<&'a Entry> {
    cd.entries
        .iter()
        .rev()
        .find(|e| cd.name(e) == member.as_bytes())
}

/// Reads one member of a listed archive as [`Archive::read`] does: stored or deflated, at most
/// `limit` bytes, its size and CRC-32 checked against the central directory.
fn read_listed<R: Read + Seek>(
    path: &Path,
    cd: &CentralDirectory,
    reader: &mut R,
    member: &str,
    limit: u64,
) -> Result<Vec<u8>, WheelError> {
    let fail = |message: String| {
        WheelError::new(
            path,
            WheelErrorKind::Member {
                member: member.to_owned(),
                message,
            },
        )
    };
    let too_large = |size| {
        WheelError::new(
            path,
            WheelErrorKind::MemberTooLarge {
                member: member.to_owned(),
                size,
                limit,
            },
        )
    };
    let entry = listed(cd, member).ok_or_else(|| fail("not in the archive".to_owned()))?;
    let (flags, method, crc) = cd.flags_method_crc(entry);
    if flags & 1 != 0 {
        return Err(fail("is encrypted".to_owned()));
    }
    if entry.uncompressed_size > limit {
        return Err(too_large(entry.uncompressed_size));
    }
    let io = |e: std::io::Error| fail(e.to_string());
    let mut local = [0u8; LOCAL_FIXED];
    reader
        .seek(SeekFrom::Start(entry.local_offset))
        .map_err(io)?;
    reader.read_exact(&mut local).map_err(io)?;
    if u32_at(&local, 0) != LOCAL_SIGNATURE {
        return Err(fail("invalid local file header".to_owned()));
    }
    let skip = i64::from(u16_at(&local, 26)) + i64::from(u16_at(&local, 28));
    reader.seek(SeekFrom::Current(skip)).map_err(io)?;
    let data = reader.by_ref().take(entry.compressed_size);
    // Read one byte past the cap to tell "exactly at the cap" from "over it" (a zip bomb can
    // declare a small size and inflate to gigabytes).
    let cap = limit.saturating_add(1);
    let mut bytes = Vec::with_capacity(usize::try_from(entry.uncompressed_size).unwrap_or(0));
    match method {
        0 => data.take(cap).read_to_end(&mut bytes),
        8 => flate2::read::DeflateDecoder::new(data)
            .take(cap)
            .read_to_end(&mut bytes),
        other => return Err(fail(format!("compression method {other} is not supported"))),
    }
    .map_err(io)?;
    // usize → u64 never truncates on supported targets.
    let read = bytes.len() as u64;
    if read > limit {
        return Err(too_large(read));
    }
    if read != entry.uncompressed_size {
        return Err(fail(format!(
            "holds {read} bytes, the central directory says {}",
            entry.uncompressed_size
        )));
    }
    if crc32fast::hash(&bytes) != crc {
        return Err(fail("invalid checksum".to_owned()));
    }
    Ok(bytes)
}

/// The one rule for a wheel's `.dist-info` directory, for every reader (local wheels here,
/// remote ones through [`crate::check_listing`]): the archive has exactly one top-level
/// `*.dist-info` directory (as pip and uv require: with two, tools disagree on which
/// `METADATA` and `variant.json` are the wheel's), it holds `WHEEL` or `METADATA`, and its name
/// and version match the filename's (names compared after wheel-name normalisation, so case and
/// `-_.` runs do not matter; versions compared as PEP 440).
pub(crate) fn dist_info_of<'a>(
    filename: &WheelFilename,
    names: impl Iterator<Item = &'a str>,
) -> Result<String, WheelErrorKind> {
    let mut dirs: BTreeSet<&str> = BTreeSet::new();
    let mut with_core_file: BTreeSet<&str> = BTreeSet::new();
    for name in names {
        // A byte search: `split_once` with a `char` costs more on 30,000 names.
        let slash = name.bytes().position(|b| b == b'/');
        let top = slash.map_or(name, |at| &name[..at]);
        if !is_dist_info_name(top) {
            continue;
        }
        dirs.insert(top);
        if let Some(at) = slash {
            let rest = &name[at + 1..];
            if rest == "WHEEL" || rest == "METADATA" {
                with_core_file.insert(top);
            }
        }
    }
    let expected = || format!("{}-{}.dist-info", filename.name, filename.version);
    let found = |dirs: &BTreeSet<&str>| dirs.iter().map(|d| (*d).to_owned()).collect();
    if dirs.len() > 1 {
        return Err(WheelErrorKind::AmbiguousDistInfo { dirs: found(&dirs) });
    }
    match dirs.first() {
        Some(dir) if with_core_file.contains(dir) && matches_filename(dir, filename) => {
            Ok((*dir).to_owned())
        }
        _ => Err(WheelErrorKind::NoDistInfo {
            expected: expected(),
            found: found(&with_core_file),
        }),
    }
}

/// Whether a top-level name is a `.dist-info` directory's, in any case (a case-insensitive file
/// system merges `X.DIST-INFO` with the real one).
fn is_dist_info_name(top: &str) -> bool {
    const SUFFIX: &str = ".dist-info";
    top.len() > SUFFIX.len()
        && top
            .get(top.len() - SUFFIX.len()..)
            .is_some_and(|end| end.eq_ignore_ascii_case(SUFFIX))
}

/// Whether `dir` (`{name}-{version}.dist-info`) names the same distribution and version as the
/// wheel filename.
fn matches_filename(dir: &str, filename: &WheelFilename) -> bool {
    let Some(stem) = dir.get(..dir.len().saturating_sub(".dist-info".len())) else {
        return false;
    };
    if !is_dist_info_name(dir) {
        return false;
    }
    // Normalised versions never contain `-`, so the last `-` separates name from version even
    // when a tool wrote the name unescaped (`foo-bar-1.0.dist-info`).
    let Some((name, version)) = stem.rsplit_once('-') else {
        return false;
    };
    normalize_name(name) == filename.name
        && pep440_rs::Version::from_str(version).is_ok_and(|v| v == filename.version)
}

#[cfg(test)]
mod tests {
    use std::io::{Cursor, Write};

    use zip::write::SimpleFileOptions;
    use zip::CompressionMethod;

    use super::*;

    fn archive(members: &[(&str, &[u8], CompressionMethod)]) -> Vec<u8> {
        let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
        for (name, data, method) in members {
            let options = SimpleFileOptions::default().compression_method(*method);
            zip.start_file(*name, options).unwrap();
            zip.write_all(data).unwrap();
        }
        zip.finish().unwrap().into_inner()
    }

    fn listing(bytes: &[u8]) -> Archive<Cursor<&[u8]>> {
        let cd = CentralDirectory::read(&mut Cursor::new(bytes)).unwrap();
        Archive::from_central(Path::new("w.whl"), Cursor::new(bytes), cd).unwrap()
    }

    const SO: &[u8] = &[7u8; 5000];

    #[test]
    fn the_listing_reads_what_the_zip_crate_reads() {
        let text: Vec<u8> = (0..3000)
            .flat_map(|i| format!("row {i}\n").into_bytes())
            .collect();
        let bytes = archive(&[
            ("a.txt", &text, CompressionMethod::Deflated),
            ("lib.so", SO, CompressionMethod::Stored),
        ]);
        let mut listed = listing(&bytes);
        assert!(listed.zip_mut().is_none(), "opened for listing");
        let mut zipped = Archive::open(Path::new("w.whl"), Cursor::new(&bytes[..])).unwrap();
        assert_eq!(
            listed.names().collect::<BTreeSet<_>>(),
            zipped.names().collect::<BTreeSet<_>>()
        );
        for name in ["a.txt", "lib.so"] {
            assert!(listed.contains(name));
            assert_eq!(
                listed.read(name, 1 << 20).unwrap(),
                zipped.read(name, 1 << 20).unwrap(),
                "{name}"
            );
        }
        assert!(!listed.contains("missing"));
        let e = listed.read("a.txt", 100).unwrap_err();
        assert!(
            matches!(*e.kind, WheelErrorKind::MemberTooLarge { size, .. } if size == text.len() as u64)
        );
    }

    #[test]
    fn the_listing_checks_sizes_and_checksums() {
        let bytes = archive(&[("lib.so", SO, CompressionMethod::Stored)]);
        let cd = CentralDirectory::read(&mut Cursor::new(&bytes)).unwrap();
        // A flipped data byte: the CRC no longer matches.
        let mut corrupt = bytes.clone();
        let data =
            usize::try_from(cd.entries[0].local_offset).unwrap() + LOCAL_FIXED + "lib.so".len();
        corrupt[data + 10] ^= 1;
        let e = listing(&corrupt).read("lib.so", 1 << 20).unwrap_err();
        assert!(e.to_string().contains("invalid checksum"), "{e}");
        // A bomb: deflated data declared smaller than it inflates to.
        let big = vec![0u8; 100_000];
        let bytes = archive(&[("bomb", &big, CompressionMethod::Deflated)]);
        let mut lying = bytes.clone();
        let cd = CentralDirectory::read(&mut Cursor::new(&bytes)).unwrap();
        let header = usize::try_from(cd.offset).unwrap();
        lying[header + 24..header + 28].copy_from_slice(&10u32.to_le_bytes());
        let e = listing(&lying).read("bomb", 1000).unwrap_err();
        assert!(
            matches!(*e.kind, WheelErrorKind::MemberTooLarge { size: 1001, .. }),
            "{e}"
        );
    }

    #[test]
    fn names_the_zip_crate_decodes_differently_go_through_it() {
        // "é" in UTF-8 without the UTF-8 flag: the zip crate reads it as CP437.
        let mut bytes = archive(&[("caf\u{e9}", b"x", CompressionMethod::Stored)]);
        let cd = CentralDirectory::read(&mut Cursor::new(&bytes)).unwrap();
        for at in [6, usize::try_from(cd.offset).unwrap() + 8] {
            let flags = u16_at(&bytes, at) & !(1 << 11);
            bytes[at..at + 2].copy_from_slice(&flags.to_le_bytes());
        }
        let mut archive = listing(&bytes);
        assert!(archive.zip_mut().is_some(), "opened through the zip crate");
    }

    fn wheel(name: &str) -> WheelFilename {
        WheelFilename::parse(name).unwrap()
    }

    #[test]
    fn dist_info_names_match_after_normalisation() {
        let w = wheel("Foo.Bar-1.0-py3-none-any.whl");
        for dir in [
            "foo_bar-1.0.dist-info",
            "Foo.Bar-1.0.dist-info",
            "foo-bar-1.0.dist-info",
            "FOO_BAR-1.0.0.dist-info",
        ] {
            assert!(matches_filename(dir, &w), "{dir}");
        }
        for dir in [
            "foo_bar-1.1.dist-info",
            "foo_baz-1.0.dist-info",
            "foo_bar.dist-info",
            "foo_bar-1.0.data",
            "foo_bar-x.dist-info",
        ] {
            assert!(!matches_filename(dir, &w), "{dir}");
        }
    }
}
