//! `vari wheel scan` on hostile wheels: what an archive or a fat binary declares is checked
//! before anything is allocated, and decompression stops at a ratio and size ceiling. Each wheel
//! is small; the peak resident memory of the real binary is read with `getrusage`
//! (`RUSAGE_CHILDREN` of a Python process whose only child is `vari`).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{test_python, vari};

use crate::scan::support::{code, fatbin, wheel, Elf, CUDA12_FATBIN};

/// Peak memory allowed to a command on hostile input.
const CEILING_KIB: u64 = 256 << 10;

pub(crate) struct Measured {
    pub(crate) code: i32,
    pub(crate) stderr: String,
    pub(crate) peak_kib: u64,
}

/// Runs `vari ARGS WHEEL` and measures its peak resident memory (through a small Python parent:
/// a child forked from the test process would count the test's own memory).
pub(crate) fn measured(args: &[&str], wheel: &Path) -> Measured {
    const SCRIPT: &str = "import json, resource, subprocess, sys\n\
        r = subprocess.run(sys.argv[1:], capture_output=True)\n\
        print(json.dumps({'code': r.returncode, 'stderr': r.stderr.decode('utf-8', 'replace'),\n\
            'peak_kib': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))\n";
    let mut cmd = vari();
    cmd.args(args).arg(wheel);
    let mut python = Command::new(test_python());
    python
        .arg("-c")
        .arg(SCRIPT)
        .arg(cmd.get_program())
        .args(cmd.get_args());
    for (key, value) in cmd.get_envs() {
        match value {
            Some(value) => python.env(key, value),
            None => python.env_remove(key),
        };
    }
    let output = python.output().unwrap();
    assert!(output.status.success(), "{output:?}");
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    Measured {
        code: json["code"].as_i64().unwrap() as i32,
        stderr: json["stderr"].as_str().unwrap().to_owned(),
        peak_kib: json["peak_kib"].as_u64().unwrap(),
    }
}

/// Asserts one `error:` line naming the wheel, the member and `problem`, under the ceiling.
fn assert_refused(run: &Measured, wheel: &Path, member: &str, problem: &str) {
    assert_eq!(run.code, 1, "{}", run.stderr);
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", run.stderr);
    let line = lines[0];
    assert!(line.starts_with("error: "), "{line}");
    let wheel_name = wheel.file_name().unwrap().to_str().unwrap();
    for fragment in [wheel_name, member, problem] {
        assert!(line.contains(fragment), "{fragment:?} not in {line}");
    }
    assert!(
        run.peak_kib < CEILING_KIB,
        "peak RSS {} KiB ({line})",
        run.peak_kib
    );
    eprintln!("peak RSS {} KiB: {line}", run.peak_kib);
}

/// The stored size of the first cubin of the real CUDA 12 section.
fn lz4_stored_len() -> u64 {
    let real = fatbin(CUDA12_FATBIN);
    u64::from(u32::from_le_bytes(
        real[0x10 + 16..0x10 + 20].try_into().unwrap(),
    ))
}

/// A fat-binary section of one LZ4 cubin entry (the first of the real CUDA 12 section) whose
/// header declares `declared` decompressed bytes.
fn lz4_section(declared: u64) -> Vec<u8> {
    let real = fatbin(CUDA12_FATBIN);
    let header = &real[0x10..0x10 + 64];
    let stored = u32::from_le_bytes(header[16..20].try_into().unwrap()) as usize;
    let mut entry = header.to_vec();
    entry[8..16].copy_from_slice(&(stored as u64).to_le_bytes());
    entry[56..64].copy_from_slice(&declared.to_le_bytes());
    entry.extend_from_slice(&real[0x10 + 64..][..stored]);
    let mut section = real[..16].to_vec();
    section[8..16].copy_from_slice(&(entry.len() as u64).to_le_bytes());
    section.extend_from_slice(&entry);
    section
}

fn lz4_wheel(dir: &Path, declared: u64) -> PathBuf {
    let section = lz4_section(declared);
    let gpu = Elf {
        fatbin: Some((".nv_fatbin", &section)),
        needed: &["libcudart.so.12"],
        ..Elf::x86_64_library(code::RET)
    };
    wheel(
        dir,
        "demo-1.0-cp312-cp312-manylinux_2_28_x86_64.whl",
        &[("demo/_gpu.so", gpu.build())],
    )
}

#[test]
fn an_lz4_entry_declaring_4_gib_is_refused_without_allocating_it() {
    let dir = tempfile::tempdir().unwrap();
    let wheel = lz4_wheel(dir.path(), 4 << 30);
    let run = measured(&["wheel", "scan"], &wheel);
    assert_refused(
        &run,
        &wheel,
        "demo/_gpu.so: section .nv_fatbin",
        &format!(
            "declared decompressed size 4294967296 is more than its {} compressed bytes can hold",
            lz4_stored_len()
        ),
    );
}

#[test]
fn an_lz4_entry_declaring_what_its_bytes_can_hold_is_read_from_its_first_bytes() {
    // 255 times the stored size (the most LZ4 can expand): plausible, so the entry is read,
    // decoding its first bytes only.
    let dir = tempfile::tempdir().unwrap();
    let wheel = lz4_wheel(dir.path(), lz4_stored_len() * 255);
    let run = measured(&["wheel", "scan"], &wheel);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.peak_kib < CEILING_KIB, "peak RSS {} KiB", run.peak_kib);
}

/// A minimal bit writer for a deflate stream (least significant bit first).
#[derive(Default)]
struct Bits {
    out: Vec<u8>,
    acc: u64,
    len: u32,
}

impl Bits {
    fn put(&mut self, value: u64, bits: u32) {
        self.acc |= value << self.len;
        self.len += bits;
        while self.len >= 8 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.len -= 8;
        }
    }

    /// A Huffman code, which deflate stores most significant bit first.
    fn code(&mut self, code: u32, bits: u32) {
        let reversed = code.reverse_bits() >> (32 - bits);
        self.put(u64::from(reversed), bits);
    }

    fn finish(mut self) -> Vec<u8> {
        if self.len > 0 {
            self.out.push(self.acc as u8);
        }
        self.out
    }
}

/// A deflate stream of the ELF magic followed by `258 × matches + 1` zeros, in one block with
/// the fixed codes: 13 bits per 258 bytes, 159 times smaller than its data.
fn zeros_after_elf_magic(matches: usize) -> (Vec<u8>, u64) {
    let mut bits = Bits::default();
    bits.put(1, 1); // the last block
    bits.put(1, 2); // fixed Huffman codes
    for literal in [0x7f, b'E', b'L', b'F', 0] {
        bits.code(0x30 + u32::from(literal), 8); // literals 0–143: 8-bit codes from 0x30
    }
    for _ in 0..matches {
        bits.code(0xc5, 8); // length 258 (code 285)
        bits.code(0, 5); // distance 1
    }
    bits.code(0, 7); // end of block
    (bits.finish(), 5 + 258 * matches as u64)
}

/// A zip archive of one member named `name` holding the raw bytes `data` (stored, or already
/// deflated), declaring `size` bytes once decompressed (in a Zip64 field when it needs one) and
/// a CRC-32 of zero (only reading to the end would check it).
fn raw_zip(path: &Path, name: &str, deflated: bool, data: &[u8], size: u64) {
    let zip64 = size >= u64::from(u32::MAX);
    let small_size = if zip64 { u32::MAX } else { size as u32 };
    let extra: Vec<u8> = if zip64 {
        [
            &1u16.to_le_bytes()[..],
            &8u16.to_le_bytes(),
            &size.to_le_bytes(),
        ]
        .concat()
    } else {
        Vec::new()
    };
    let method: u16 = if deflated { 8 } else { 0 };
    let version: u16 = if zip64 { 45 } else { 20 };
    let fields = |out: &mut Vec<u8>| {
        out.extend_from_slice(&version.to_le_bytes()); // version needed
        out.extend_from_slice(&0u16.to_le_bytes()); // flags
        out.extend_from_slice(&method.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes()); // time and date
        out.extend_from_slice(&0u32.to_le_bytes()); // CRC-32
        out.extend_from_slice(&(data.len() as u32).to_le_bytes());
        out.extend_from_slice(&small_size.to_le_bytes());
        out.extend_from_slice(&(name.len() as u16).to_le_bytes());
        out.extend_from_slice(&(extra.len() as u16).to_le_bytes());
    };
    let mut zip = 0x0403_4b50u32.to_le_bytes().to_vec();
    fields(&mut zip);
    zip.extend_from_slice(name.as_bytes());
    zip.extend_from_slice(&extra);
    zip.extend_from_slice(data);
    let central_at = zip.len();
    zip.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
    zip.extend_from_slice(&version.to_le_bytes()); // made by
    fields(&mut zip);
    zip.extend_from_slice(&[0; 6]); // comment length, disk, internal attributes
    zip.extend_from_slice(&0u32.to_le_bytes()); // external attributes
    zip.extend_from_slice(&0u32.to_le_bytes()); // local header offset
    zip.extend_from_slice(name.as_bytes());
    zip.extend_from_slice(&extra);
    let central_len = zip.len() - central_at;
    zip.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    zip.extend_from_slice(&[0; 4]); // disk numbers
    zip.extend_from_slice(&1u16.to_le_bytes());
    zip.extend_from_slice(&1u16.to_le_bytes());
    zip.extend_from_slice(&(central_len as u32).to_le_bytes());
    zip.extend_from_slice(&(central_at as u32).to_le_bytes());
    zip.extend_from_slice(&0u16.to_le_bytes());
    std::fs::write(path, zip).unwrap();
}

#[test]
fn an_elf_zip_bomb_is_refused_before_it_is_inflated() {
    // 3.3 MB of deflate data inflating to 512 MiB, honestly declared.
    let dir = tempfile::tempdir().unwrap();
    let wheel = dir.path().join("bomb-1.0-py3-none-any.whl");
    let (deflated, size) = zeros_after_elf_magic((512 << 20) / 258);
    raw_zip(&wheel, "bomb/_lib.so", true, &deflated, size);
    let run = measured(&["wheel", "scan"], &wheel);
    assert_refused(
        &run,
        &wheel,
        "bomb/_lib.so",
        &format!("the archive declares {size} bytes, more than the"),
    );
    // The same bomb declaring 5 MiB, which is under the floor: inflating stops there.
    raw_zip(&wheel, "bomb/_lib.so", true, &deflated, 5 << 20);
    let run = measured(&["wheel", "scan"], &wheel);
    assert_refused(
        &run,
        &wheel,
        "bomb/_lib.so",
        "the archive declares 5242880 bytes, the data differs",
    );
}

#[test]
fn an_elf_member_declaring_2_to_the_40_bytes_allocates_nothing_for_them() {
    let dir = tempfile::tempdir().unwrap();
    let lib = Elf::x86_64_library(code::RET).build();
    for (deflated, data) in [(false, lib.clone()), (true, zeros_after_elf_magic(10).0)] {
        let wheel = dir.path().join("big-1.0-py3-none-any.whl");
        raw_zip(&wheel, "big/_lib.so", deflated, &data, 1 << 40);
        let run = measured(&["wheel", "scan"], &wheel);
        // Refused by the rule every wheel reader applies (and `wheel validate` reports), the
        // wheel's declared total against the inflation ceiling, before any member is read.
        assert_refused(
            &run,
            &wheel,
            "",
            "its members declare 1099511627776 uncompressed bytes, more than the ceiling",
        );
    }
    // Within the ratio but still a lie (8 MiB declared, a few KiB there): read as the data
    // arrives, so the lie is found (by the CRC-32 at the end of the data, zero here) without
    // 8 MiB, let alone a gigabyte, being set aside first.
    let wheel = dir.path().join("lie-1.0-py3-none-any.whl");
    raw_zip(&wheel, "lie/_lib.so", false, &lib, 8 << 20);
    let run = measured(&["wheel", "scan"], &wheel);
    assert_refused(&run, &wheel, "lie/_lib.so", "Invalid checksum");
}
