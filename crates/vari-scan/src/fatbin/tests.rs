//! The container parser on the real sections of `testdata/fatbin/`, cross-checked against the
//! raw entry headers read at offsets found by hand (a hex dump), and on broken sections.

use super::*;

fn section(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/../../testdata/fatbin/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

const CUDA12: &str = "jax_cuda12_plugin-0.4.38-_blas.so.nv_fatbin";
const CUDA13: &str = "jax_cuda13_plugin-0.8.0-_prng.so.nv_fatbin";

/// (entry offset, kind, architecture) read from `xxd` of the files: the kind is the u16 at the
/// entry's start, the architecture the u32 at +28.
const CUDA12_RAW: [(usize, u16, u32); 6] = [
    (0x10, 2, 90),
    (3008, 1, 90),
    (4280, 2, 60),
    (8104, 2, 80),
    (11032, 2, 50),
    (14720, 2, 70),
];
const CUDA13_RAW: [(usize, u16, u32); 6] = [
    (0x10, 2, 120),
    (2256, 1, 120),
    (3408, 2, 80),
    (5096, 2, 100),
    (7464, 2, 75),
    (9176, 2, 90),
];

fn kind_of(raw: u16) -> Option<CodeKind> {
    match raw {
        1 => Some(CodeKind::Ptx),
        2 => Some(CodeKind::Sass),
        _ => None,
    }
}

fn assert_matches_raw(bytes: &[u8], entries: &[FatbinEntry], raw: &[(usize, u16, u32)]) {
    assert_eq!(entries.len(), raw.len());
    for (entry, &(offset, kind, arch)) in entries.iter().zip(raw) {
        // The hand-found offsets really hold these headers…
        assert_eq!(u16::from_le_bytes([bytes[offset], bytes[offset + 1]]), kind);
        let raw_arch = &bytes[offset + 28..offset + 32];
        assert_eq!(
            u32::from_le_bytes(raw_arch.try_into().unwrap()),
            arch,
            "{offset}"
        );
        // …and the parser walked to each of them and read the same.
        assert_eq!(entry.offset, offset);
        assert_eq!(entry.kind, kind_of(kind));
        assert_eq!(entry.arch, arch);
        assert!(!entry.arch_specific, "no `a` target in these builds");
    }
}

#[test]
fn cuda12_section_has_lz4_sass_for_five_architectures_and_ptx_for_90() {
    let bytes = section(CUDA12);
    let entries = parse_fatbin(&bytes).unwrap();
    assert_matches_raw(&bytes, &entries, &CUDA12_RAW);
    assert!(entries.iter().all(|e| e.compression == Compression::Lz4));
    let ptx: Vec<_> = entries
        .iter()
        .filter(|e| e.kind == Some(CodeKind::Ptx))
        .collect();
    assert_eq!(ptx[0].version, (8, 3), "PTX ISA 8.3");
}

#[test]
fn cuda13_section_has_zstd_sass_for_five_architectures_and_ptx_for_120() {
    let bytes = section(CUDA13);
    let entries = parse_fatbin(&bytes).unwrap();
    assert_matches_raw(&bytes, &entries, &CUDA13_RAW);
    assert!(entries.iter().all(|e| e.compression == Compression::Zstd));
    let ptx = entries.iter().find(|e| e.kind == Some(CodeKind::Ptx));
    assert_eq!(ptx.unwrap().version, (9, 0), "PTX ISA 9.0");
}

#[test]
fn lz4_entries_decompress_to_cuda_cubins_of_the_declared_size() {
    let bytes = section(CUDA12);
    for &(offset, kind, arch) in &CUDA12_RAW {
        let h = &bytes[offset..];
        let stored = u32_at(h, 16) as usize;
        let decompressed = u64_at(h, 56) as usize;
        let payload = &h[u32_at(h, 4) as usize..][..stored];
        let out = lz4_flex::block::decompress(payload, decompressed).unwrap();
        assert_eq!(out.len(), decompressed);
        if kind == 2 {
            // An ELF64 of machine EM_CUDA (190), ABI version 7: the SM is e_flags' low byte.
            assert_eq!(&out[..4], b"\x7fELF");
            assert_eq!(u16_at(&out, 18), 190);
            assert_eq!(out[8], 7);
            assert_eq!(u32_at(&out, 48) & 0xff, arch);
        } else {
            assert!(String::from_utf8_lossy(&out).contains(".target sm_90"));
        }
    }
}

#[test]
fn zstd_prefix_matches_the_reference_decoder() {
    // e_flags of each cubin as `zstd -dc` decodes it (ELF ABI version 8: SM in bits 8–15).
    let expected = [
        (0x10, 0x0600_7802),
        (3408, 0x0600_5004),
        (5096, 0x0600_6402),
        (7464, 0x0600_4b04),
        (9176, 0x0600_5a04),
    ];
    let bytes = section(CUDA13);
    let mut scratch = Vec::new();
    for (offset, flags) in expected {
        let h = &bytes[offset..];
        let payload = &h[u32_at(h, 4) as usize..][..u32_at(h, 16) as usize];
        let head = payload_prefix(payload, Compression::Zstd, u64_at(h, 56), &mut scratch).unwrap();
        assert_eq!(head.len(), 64);
        assert_eq!(head[8], 8, "ABI version");
        assert_eq!(u32_at(head, 48), flags, "{offset}");
    }
}

#[test]
fn cubin_headers_in_both_flag_layouts() {
    let mut head = vec![0u8; 64];
    head[..4].copy_from_slice(b"\x7fELF");
    head[4] = 2;
    head[18..20].copy_from_slice(&190u16.to_le_bytes());
    // ABI 7, sm_90a: SM in the low byte, EF_CUDA_ACCELERATORS_V1 = 0x800.
    head[8] = 7;
    head[48..52].copy_from_slice(&(0x0500_0d5a_u32).to_le_bytes());
    let c = CubinHeader::read(&head).unwrap();
    assert_eq!((c.sm, c.arch_specific), (90, true));
    // ABI 8, sm_100a: SM in bits 8–15, EF_CUDA_ACCELERATORS = 0x8.
    head[8] = 8;
    head[48..52].copy_from_slice(&(0x0600_640a_u32).to_le_bytes());
    let c = CubinHeader::read(&head).unwrap();
    assert_eq!((c.sm, c.arch_specific), (100, true));
    // Not a cubin: another machine.
    head[18..20].copy_from_slice(&62u16.to_le_bytes());
    assert_eq!(CubinHeader::read(&head), None);
}

#[test]
fn several_containers_with_padding_between_them() {
    let mut bytes = section(CUDA12);
    bytes.extend_from_slice(&[0; 8]);
    bytes.extend_from_slice(&section(CUDA13));
    bytes.extend_from_slice(&[0; 3]);
    let entries = parse_fatbin(&bytes).unwrap();
    assert_eq!(entries.len(), 12);
    let second = section(CUDA12).len() + 8;
    assert_eq!(entries[6].offset, second + 0x10);
    assert_eq!(entries[6].arch, 120);
}

#[test]
fn an_empty_section_has_no_entries() {
    assert_eq!(parse_fatbin(&[]).unwrap(), []);
    assert_eq!(parse_fatbin(&[0; 16]).unwrap(), []);
}

fn problem(bytes: &[u8]) -> FatbinError {
    parse_fatbin(bytes).unwrap_err()
}

#[test]
fn broken_sections_say_where_and_what() {
    let good = section(CUDA12);

    let e = problem(&good[..10]);
    assert_eq!(e.offset, 0);
    assert!(e.problem.contains("truncated container header"), "{e}");

    let mut bad_magic = good.clone();
    bad_magic[0] = 0x51;
    assert!(problem(&bad_magic).problem.contains("magic"));

    let e = problem(&good[..good.len() - 1]);
    assert!(
        e.problem.contains("runs past the end of the section"),
        "{e}"
    );

    // The first entry claims a payload larger than its container.
    let mut long_entry = good.clone();
    long_entry[0x18..0x20].copy_from_slice(&u64::MAX.to_le_bytes());
    let e = problem(&long_entry);
    assert_eq!(e.offset, 0x10);
    assert!(e.problem.contains("runs past its container"), "{e}");

    let mut both = good.clone();
    both[0x10 + 41] |= 0x80; // set 0x8000 next to the LZ4 bit 0x2000
    assert!(problem(&both).problem.contains("two compressions"));

    // Corrupt LZ4 data in the sm_90 cubin: an offset pointing before the start of the output.
    let mut corrupt = good.clone();
    let payload = 0x10 + 64;
    corrupt[payload..payload + 16]
        .copy_from_slice(&[0x0f, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    let e = problem(&corrupt);
    assert_eq!(e.offset, 0x10);
    assert!(
        e.problem.contains("cannot decompress the sm_90 entry"),
        "{e}"
    );

    // Junk after a container.
    let mut junk = good.clone();
    junk.extend_from_slice(b"junk");
    let e = problem(&junk);
    assert_eq!(e.offset, good.len());
}

#[test]
fn truncated_entry_header() {
    let mut bytes = Vec::new();
    bytes.extend_from_slice(&FATBIN_MAGIC.to_le_bytes());
    bytes.extend_from_slice(&1u16.to_le_bytes());
    bytes.extend_from_slice(&16u16.to_le_bytes());
    bytes.extend_from_slice(&8u64.to_le_bytes());
    bytes.extend_from_slice(&[1; 8]);
    let e = problem(&bytes);
    assert_eq!(e.offset, 16);
    assert!(e.problem.contains("truncated entry header"), "{e}");
}

#[test]
fn lz4_prefix_matches_the_whole_block_decoder() {
    let bytes = section(CUDA12);
    let mut scratch = Vec::new();
    for &(offset, _, _) in &CUDA12_RAW {
        let h = &bytes[offset..];
        let payload = &h[u32_at(h, 4) as usize..][..u32_at(h, 16) as usize];
        let whole = lz4_flex::block::decompress(payload, u64_at(h, 56) as usize).unwrap();
        for want in [0, 1, 4, 64, 1000, whole.len(), whole.len() + 10] {
            lz4_block_prefix(payload, want, &mut scratch).unwrap();
            assert_eq!(
                scratch[..],
                whole[..want.min(whole.len())],
                "{offset} {want}"
            );
        }
    }
}

/// A one-container section holding one entry of `kind` with `flags`, `payload` and the declared
/// decompressed size `declared`.
fn one_entry(kind: u16, flags: u64, payload: &[u8], declared: u64) -> Vec<u8> {
    let mut entry = vec![0u8; 64];
    entry[0..2].copy_from_slice(&kind.to_le_bytes());
    entry[4..8].copy_from_slice(&64u32.to_le_bytes());
    entry[8..16].copy_from_slice(&(payload.len() as u64).to_le_bytes());
    entry[16..20].copy_from_slice(&(payload.len() as u32).to_le_bytes());
    entry[28..32].copy_from_slice(&90u32.to_le_bytes());
    entry[40..48].copy_from_slice(&flags.to_le_bytes());
    entry[56..64].copy_from_slice(&declared.to_le_bytes());
    entry.extend_from_slice(payload);
    let mut section = Vec::new();
    section.extend_from_slice(&FATBIN_MAGIC.to_le_bytes());
    section.extend_from_slice(&1u16.to_le_bytes());
    section.extend_from_slice(&16u16.to_le_bytes());
    section.extend_from_slice(&(entry.len() as u64).to_le_bytes());
    section.extend_from_slice(&entry);
    section
}

#[test]
fn declared_sizes_are_checked_before_anything_is_decompressed() {
    // The first cubin of the real section, LZ4-compressed, with lying sizes.
    let real = section(CUDA12);
    let h = &real[0x10..];
    let payload = &h[64..][..u32_at(h, 16) as usize];
    let too_much = format!("more than its {} compressed bytes can hold", payload.len());
    for (declared, expected) in [
        (4u64 << 30, too_much.as_str()),
        (payload.len() as u64 * LZ4_MAX_RATIO + 1, &too_much),
        (5 << 30, "above the limit of 4294967296 bytes"),
        (u64::MAX, "above the limit"),
    ] {
        let e = problem(&one_entry(KIND_ELF, FLAG_LZ4, payload, declared));
        assert!(e.problem.contains(expected), "{declared}: {e}");
        assert!(e.problem.contains("sm_90 entry"), "{e}");
    }
    // A declared size the data could hold is not trusted for allocation either: only the prefix
    // is decoded (4 GiB were allocated and zeroed here before).
    let declared = (payload.len() as u64) * LZ4_MAX_RATIO;
    let mut scratch = Vec::new();
    let head = payload_prefix(payload, Compression::Lz4, declared, &mut scratch).unwrap();
    assert_eq!(&head[..4], b"\x7fELF");
    assert!(scratch.capacity() < 4096, "{}", scratch.capacity());
    let entries = parse_fatbin(&one_entry(KIND_ELF, FLAG_LZ4, payload, declared)).unwrap();
    assert_eq!(entries[0].kind, Some(CodeKind::Sass));
}

#[test]
fn a_zstd_frame_declaring_more_than_its_bytes_can_hold_is_refused() {
    // A frame header (magic, single segment, 8-byte content size of 4 GiB) and one RLE block.
    let mut frame = vec![0x28, 0xb5, 0x2f, 0xfd, 0xe0];
    frame.extend_from_slice(&(4u64 << 30).to_le_bytes());
    frame.extend_from_slice(&[0x03, 0x00, 0x02, 0x7f]);
    let e = problem(&one_entry(KIND_ELF, FLAG_ZSTD, &frame, 4 << 30));
    assert!(
        e.problem
            .contains("declared decompressed size 4294967296 is more than its 17"),
        "{e}"
    );
}
