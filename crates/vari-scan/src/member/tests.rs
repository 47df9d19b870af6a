//! The direct reading of stored and deflated members against the zip crate's reader, which it
//! replaces: same bytes for good archives, same outcome (bytes or error) for damaged ones.

use std::io::Write;

use super::*;
use crate::limits::{INFLATE_FLOOR, MAX_MEMBER_SIZE};

/// Bytes that start with the ELF magic, then `len - 4` bytes mixing compressible runs and
/// pseudo-random noise (so deflate makes blocks of every kind).
fn elf_like(len: usize, seed: u64) -> Vec<u8> {
    let mut state = seed | 1;
    let mut bytes = ELF_MAGIC.to_vec();
    while bytes.len() < len {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        if state % 3 == 0 {
            let run = (state >> 8) as usize % 300;
            bytes.extend(std::iter::repeat_n((state >> 20) as u8, run));
        } else {
            bytes.extend_from_slice(&state.to_le_bytes());
        }
    }
    bytes.truncate(len);
    bytes
}

/// An archive of these members, in this order.
fn archive(members: &[(&str, &[u8], CompressionMethod)]) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(io::Cursor::new(Vec::new()));
    for (name, bytes, method) in members {
        let options = zip::write::SimpleFileOptions::default().compression_method(*method);
        zip.start_file(*name, options).unwrap();
        zip.write_all(bytes).unwrap();
    }
    zip.add_directory("dir/", zip::write::SimpleFileOptions::default())
        .unwrap();
    zip.finish().unwrap().into_inner()
}

fn open(dir: &tempfile::TempDir, bytes: &[u8]) -> ZipArchive<File> {
    let path = dir.path().join("a.whl");
    std::fs::write(&path, bytes).unwrap();
    ZipArchive::new(File::open(&path).unwrap()).unwrap()
}

/// What reading member `index` gives: its name and bytes, nothing, or the error's text.
type Outcome = Result<Option<(String, Vec<u8>)>, (Option<String>, String)>;

fn direct(reader: &mut MemberReader, archive: &mut ZipArchive<File>, index: usize) -> Outcome {
    reader
        .read_elf(archive, index)
        .map(|m| m.map(|(name, bytes)| (name, bytes.to_vec())))
        .map_err(|(name, problem)| (name, problem.to_string()))
}

/// The same through the zip crate's reader, as the scan read every member before.
fn through_zip(archive: &mut ZipArchive<File>, index: usize) -> Outcome {
    let mut member = archive
        .by_index(index)
        .map_err(|e| (None, ScanProblem::Archive(e.to_string()).to_string()))?;
    if !member.is_file() {
        return Ok(None);
    }
    let name = member.name().to_owned();
    let declared = member.size();
    let limit = inflate_limit(member.compressed_size(), u64::MAX);
    let mut data = Vec::new();
    match read_if_elf(&mut member, declared, limit, &mut data) {
        Ok(Some(len)) => Ok(Some((name, data[..len].to_vec()))),
        Ok(None) => Ok(None),
        Err(e) => Err((Some(name), e.to_string())),
    }
}

#[test]
fn stored_and_deflated_members_read_as_written() {
    let dir = tempfile::tempdir().unwrap();
    // Larger than one chunk of compressed input, and sizes around the first and later chunks.
    let big = elf_like(3 * CHUNK + 12_345, 1);
    let small = elf_like(FIRST_CHUNK + 1, 2);
    let tiny = elf_like(4, 3);
    let bytes = archive(&[
        ("big.so", &big, CompressionMethod::Deflated),
        ("small.so", &small, CompressionMethod::Deflated),
        ("stored.so", &big, CompressionMethod::Stored),
        ("tiny.so", &tiny, CompressionMethod::Deflated),
        ("text.py", b"print('hello')\n", CompressionMethod::Deflated),
        ("short", b"\x7fE", CompressionMethod::Stored),
        ("empty", b"", CompressionMethod::Deflated),
    ]);
    let mut archive = open(&dir, &bytes);
    let mut reader = MemberReader::new(u64::MAX);
    let expected: [Option<&[u8]>; 8] = [
        Some(&big),
        Some(&small),
        Some(&big),
        Some(&tiny),
        None,
        None,
        None,
        None, // the directory
    ];
    for (index, want) in expected.iter().enumerate() {
        let got = direct(&mut reader, &mut archive, index).unwrap();
        assert_eq!(
            got.as_ref().map(|(_, b)| b.as_slice()),
            *want,
            "member {index}"
        );
        assert_eq!(got, through_zip(&mut archive, index).unwrap());
    }
}

#[test]
fn the_buffer_is_allocated_for_elf_members_only_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let text = vec![b'x'; 100_000];
    let lib = elf_like(70_000, 4);
    let bytes = archive(&[
        ("data.txt", &text, CompressionMethod::Deflated),
        ("lib.so", &lib, CompressionMethod::Deflated),
        ("small.so", &lib[..1000], CompressionMethod::Deflated),
    ]);
    let mut archive = open(&dir, &bytes);
    let mut reader = MemberReader::new(u64::MAX);
    assert_eq!(direct(&mut reader, &mut archive, 0).unwrap(), None);
    assert!(reader.data.is_empty());
    direct(&mut reader, &mut archive, 1).unwrap().unwrap();
    assert_eq!(reader.data.len(), 70_000);
    assert_eq!(reader.data.capacity(), 70_000_usize.next_power_of_two());
    let at = reader.data.as_ptr();
    let (_, small) = direct(&mut reader, &mut archive, 2).unwrap().unwrap();
    assert_eq!(small, &lib[..1000]);
    assert_eq!(
        reader.data.as_ptr(),
        at,
        "a smaller member reuses the buffer"
    );
}

#[test]
fn ensure_len_zeroes_what_is_new_and_rounds_room_up() {
    let mut data = Vec::new();
    ensure_len(&mut data, 5);
    assert_eq!((data.len(), data.capacity()), (5, 8));
    data.fill(7);
    let at = data.as_ptr();
    ensure_len(&mut data, 8);
    assert_eq!(
        data,
        [7, 7, 7, 7, 7, 0, 0, 0],
        "grown within its room, new bytes zeroed"
    );
    assert_eq!(data.as_ptr(), at);
    ensure_len(&mut data, 3);
    assert_eq!(data.len(), 8, "never shrinks");
    ensure_len(&mut data, 1000);
    assert_eq!((data.len(), data.capacity()), (1000, 1024));
    assert!(data.iter().all(|&b| b == 0));
}

/// Offsets of the fields of the first central directory header.
fn central_header(bytes: &[u8]) -> usize {
    bytes.windows(4).position(|w| w == b"PK\x01\x02").unwrap()
}

/// Copies of a one-member archive of `lib`, each damaged once: every `step`th byte of the
/// member's data flipped (by each of `flips`).
fn damaged(lib: &[u8], method: CompressionMethod, flips: &[u8], step: usize) -> Vec<Vec<u8>> {
    let good = archive(&[("lib.so", lib, method)]);
    // After the local header (30 bytes), the name and the extra field, the compressed bytes.
    let field = |at: usize| usize::from(u16::from_le_bytes([good[at], good[at + 1]]));
    let data_start = 30 + field(26) + field(28);
    let central = central_header(&good);
    let compressed = u32::from_le_bytes(good[central + 20..central + 24].try_into().unwrap());
    let data_end = data_start + compressed as usize;
    let mut variants = Vec::new();
    for &flip in flips {
        for at in (data_start..data_end).step_by(step) {
            let mut bytes = good.clone();
            bytes[at] ^= flip;
            variants.push(bytes);
        }
    }
    variants
}

/// Copies of a one-member archive whose CRC-32 (central directory offset 16), compressed size
/// (20) or declared size (24) is off by one or three.
fn metadata_damage(good: &[u8]) -> Vec<Vec<u8>> {
    let central = central_header(good);
    let mut variants = Vec::new();
    for field in [16, 20, 24] {
        for delta in [1i64, -1, -3] {
            let mut bytes = good.to_vec();
            let at = central + field;
            let value = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
            let value = (i64::from(value) + delta) as u32;
            bytes[at..at + 4].copy_from_slice(&value.to_le_bytes());
            variants.push(bytes);
        }
    }
    variants
}

/// Reads member 0 of every variant both ways; returns the outcomes (direct, through zip).
fn outcomes(variants: &[Vec<u8>]) -> Vec<(Outcome, Outcome)> {
    let dir = tempfile::tempdir().unwrap();
    let mut reader = MemberReader::new(u64::MAX);
    variants
        .iter()
        .map(|bytes| {
            let mut archive = open(&dir, bytes);
            let want = through_zip(&mut archive, 0);
            (direct(&mut reader, &mut archive, 0), want)
        })
        .collect()
}

#[test]
fn damaged_stored_members_fail_as_through_zip() {
    let lib = elf_like(600, 5);
    let mut variants = damaged(&lib, CompressionMethod::Stored, &[0x5a, 0x01], 1);
    variants.extend(metadata_damage(&archive(&[(
        "lib.so",
        &lib,
        CompressionMethod::Stored,
    )])));
    let outcomes = outcomes(&variants);
    for (i, (got, want)) in outcomes.iter().enumerate() {
        assert_eq!(got, want, "variant {i}");
    }
    // The damage is seen (a flipped byte of the magic makes the member not ELF instead).
    let errors = outcomes.iter().filter(|(got, _)| got.is_err()).count();
    assert!(
        errors * 10 >= variants.len() * 9,
        "{errors} of {}",
        variants.len()
    );
}

#[test]
fn deflated_members_with_damaged_sizes_or_checksum_fail_as_through_zip() {
    for len in [300, 3000, 40_000] {
        let good = archive(&[("lib.so", &elf_like(len, 5), CompressionMethod::Deflated)]);
        let variants = metadata_damage(&good);
        let outcomes = outcomes(&variants);
        for (i, (got, want)) in outcomes.iter().enumerate() {
            assert_eq!(got, want, "{len} bytes, variant {i}");
        }
        // Only a compressed size one too large can go unnoticed (the deflate stream ends first).
        let errors = outcomes.iter().filter(|(got, _)| got.is_err()).count();
        assert!(
            errors >= variants.len() - 1,
            "{errors} of {}",
            variants.len()
        );
    }
}

/// Damaged deflate data is never taken for an ELF file. The error may differ from the zip
/// crate's: zlib-rs checks more than its miniz_oxide backend (a distance reaching before the
/// start of the data is "corrupt deflate stream" here, garbage that fails the size or CRC-32
/// check there), and reads no further ahead than asked (a member whose first four bytes are not
/// ELF is not read on, where miniz_oxide may have met the damage already).
#[test]
fn damaged_deflate_data_is_never_taken_for_an_elf_file() {
    let known = [
        "corrupt deflate stream",
        "incomplete deflate stream",
        "Invalid checksum",
        "the archive declares",
    ];
    for (len, flips, step) in [
        (300, &[0x5a, 0x01, 0x80][..], 1),
        (3000, &[0x5a, 0x01, 0x80], 1),
        // Long distances back, to the start of the data and before it.
        (40_000, &[0x5a], 7),
    ] {
        let lib = elf_like(len, 5);
        let variants = damaged(&lib, CompressionMethod::Deflated, flips, step);
        let outcomes = outcomes(&variants);
        let mut errors = 0;
        for (i, (got, want)) in outcomes.iter().enumerate() {
            match got {
                Ok(None) => assert!(!matches!(want, Ok(Some(_))), "{len} bytes, variant {i}"),
                // A flip in the unused bits after the end of the stream changes nothing.
                Ok(Some((_, bytes))) => {
                    assert_eq!(bytes, &lib, "{len} bytes, variant {i}");
                    assert_eq!(got, want, "{len} bytes, variant {i}");
                }
                Err((member, text)) => {
                    errors += 1;
                    assert_eq!(member.as_deref(), Some("lib.so"));
                    assert!(known.iter().any(|k| text.starts_with(k)), "{text}");
                }
            }
        }
        assert!(
            errors * 10 >= variants.len() * 9,
            "{errors} of {}",
            variants.len()
        );
    }
}

#[test]
fn other_methods_go_through_zip() {
    let dir = tempfile::tempdir().unwrap();
    let lib = elf_like(5000, 6);
    let mut bytes = archive(&[("lib.so", &lib, CompressionMethod::Deflated)]);
    // Method 12 (bzip2), which this build of the zip crate does not read: its error, unchanged.
    let central = central_header(&bytes);
    bytes[8..10].copy_from_slice(&12u16.to_le_bytes());
    bytes[central + 10..central + 12].copy_from_slice(&12u16.to_le_bytes());
    let mut archive = open(&dir, &bytes);
    let want = through_zip(&mut archive, 0);
    assert!(want.is_err(), "{want:?}");
    assert_eq!(
        direct(&mut MemberReader::new(u64::MAX), &mut archive, 0),
        want
    );
}

#[test]
fn the_limit_is_a_ratio_of_what_the_member_can_hold_with_a_floor_and_a_ceiling() {
    assert_eq!(inflate_limit(1000, u64::MAX), INFLATE_FLOOR);
    assert_eq!(inflate_limit(1 << 20, u64::MAX), 100 << 20);
    // A compressed size larger than the archive counts as the archive.
    assert_eq!(inflate_limit(1 << 40, 1 << 20), 100 << 20);
    assert_eq!(inflate_limit(u64::MAX, u64::MAX), MAX_MEMBER_SIZE);
}

#[test]
fn a_member_inflating_beyond_the_ratio_is_refused_before_it_is_read() {
    // 20 MiB of an ELF magic and zeros deflates about 1000 times: a zip bomb.
    let dir = tempfile::tempdir().unwrap();
    let mut bomb = ELF_MAGIC.to_vec();
    bomb.resize(20 << 20, 0);
    let bytes = archive(&[("bomb.so", &bomb, CompressionMethod::Deflated)]);
    let mut archive = open(&dir, &bytes);
    let mut reader = MemberReader::new(bytes.len() as u64);
    let (name, problem) = direct(&mut reader, &mut archive, 0).unwrap_err();
    assert_eq!(name.as_deref(), Some("bomb.so"));
    assert!(
        problem.starts_with("the archive declares 20971520 bytes, more than the 8388608"),
        "{problem}"
    );
    assert_eq!(reader.data.capacity(), 0, "nothing was allocated for it");
}

#[test]
fn a_declared_size_is_not_trusted_for_allocation() {
    // A stored member of 70,000 bytes declaring 8 MiB (within the limit): the buffer grows as
    // data arrives, to no more than one up-front allocation here, and the lie is found.
    let lib = elf_like(70_000, 7);
    let mut bytes = archive(&[("lib.so", &lib, CompressionMethod::Stored)]);
    let central = central_header(&bytes);
    for at in [22, central + 24] {
        bytes[at..at + 4].copy_from_slice(&(8u32 << 20).to_le_bytes());
    }
    let dir = tempfile::tempdir().unwrap();
    let mut archive = open(&dir, &bytes);
    let mut reader = MemberReader::new(bytes.len() as u64);
    let (_, problem) = direct(&mut reader, &mut archive, 0).unwrap_err();
    assert_eq!(
        problem,
        "the archive declares 8388608 bytes, the data differs"
    );
    assert!(
        reader.data.capacity() <= UP_FRONT,
        "{}",
        reader.data.capacity()
    );
}
