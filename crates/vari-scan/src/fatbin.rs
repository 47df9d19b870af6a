//! CUDA fat binaries: the container nvcc stores in an ELF's `.nv_fatbin` section (and, for
//! relocatable device code, `__nv_relfatbin`), holding GPU code per architecture.
//!
//! NVIDIA does not publish the layout as a stable ABI; what is read here is what the toolkit's
//! `fatbinary_section.h` and the open-source readers agree on, checked against the real sections
//! in `testdata/fatbin/` (CUDA 12 with LZ4-compressed entries, CUDA 13 with Zstandard):
//!
//! - a section holds one or more **containers**, each a 16-byte header (magic `0xBA55ED50`,
//!   version `1`, header size, size of what follows) and then its entries; the linker may pad
//!   between containers with zeros;
//! - each **entry** is a header (64 bytes, longer for newer targets: its own length is in it) and
//!   a payload: kind (`1` PTX, `2` ELF cubin = SASS), code version (for PTX: the PTX ISA), the
//!   architecture number (`10 × major + minor`: `86` is compute capability 8.6), flags (bit
//!   `0x2000`: LZ4 block, bit `0x8000`: Zstandard frame), the stored and the decompressed size.
//!
//! For SASS the cubin's own ELF header is read too (decompressing only what is needed): its
//! `e_flags` say whether the code is *architecture-specific* (`sm_90a`, `sm_100a`), which runs
//! only on exactly that compute capability, where plain `sm_90` SASS runs on every later minor
//! version of the same major.

use std::io::Read;

/// The magic number that starts every fat-binary container.
pub const FATBIN_MAGIC: u32 = 0xBA55_ED50;

/// Length of a container header.
const CONTAINER_HEADER_LEN: usize = 16;
/// The fixed part of an entry header (newer toolkits append more; the entry says its length).
const ENTRY_HEADER_MIN_LEN: usize = 64;
/// Entry kinds.
const KIND_PTX: u16 = 1;
const KIND_ELF: u16 = 2;
/// Entry flags: how the payload is compressed.
const FLAG_LZ4: u64 = 0x2000;
const FLAG_ZSTD: u64 = 0x8000;
/// The ELF machine number of CUDA cubins.
const EM_CUDA: u16 = 190;
/// A declared decompressed size above this is treated as corrupt (the largest real cubins are
/// tens of megabytes). Nothing is allocated from a declared size: only an entry's first bytes are
/// ever decompressed.
const MAX_DECOMPRESSED: u64 = 4 << 30;
/// The most an LZ4 block can expand: each byte of a length extension adds 255 bytes of output.
const LZ4_MAX_RATIO: u64 = 255;
/// The most a Zstandard frame can expand: a 4-byte RLE block gives a 128 KiB block.
const ZSTD_MAX_RATIO: u64 = 128 << 10 >> 2;

/// What an entry carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CodeKind {
    /// Machine code (SASS) in an ELF cubin, for one real architecture.
    Sass,
    /// PTX, compiled by the driver at load time for the GPU it runs on.
    Ptx,
}

/// How an entry's payload is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// Stored as is.
    None,
    /// An LZ4 block (older toolkits, `-compress-all` and the default up to CUDA 12.x).
    Lz4,
    /// A Zstandard frame (CUDA 12.8+ `--compress-mode`, the CUDA 13 default).
    Zstd,
}

/// One entry of a fat binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FatbinEntry {
    /// Offset of the entry header from the start of the section.
    pub offset: usize,
    /// SASS, PTX, or `None` for an entry of another kind (kept so callers can count them).
    pub kind: Option<CodeKind>,
    /// The raw kind number from the entry header.
    pub raw_kind: u16,
    /// The architecture number, `10 × major + minor` (`90` for compute capability 9.0).
    pub arch: u32,
    /// Architecture-specific SASS (`sm_90a`): runs only on exactly this compute capability.
    pub arch_specific: bool,
    /// The entry's code version: for PTX the PTX ISA version (`(8, 3)`), for cubins the cubin
    /// format version.
    pub version: (u16, u16),
    /// How the payload is stored.
    pub compression: Compression,
    /// The entry's length in the section: its header and its payload.
    pub len: usize,
}

/// One container of a fat-binary section: where it is and its entries, in order.
///
/// A container is the unit the CUDA runtime registers (one per object file nvcc compiled), so
/// it is also the unit a loader chooses code in: from the entries of one container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FatbinContainer {
    /// Offset of the container header from the start of the section.
    pub offset: usize,
    /// The length of the container header (16 in every toolkit seen).
    pub header_len: usize,
    /// Offset just past the container: its header, then the entries the header's size covers.
    pub end: usize,
    /// Its entries, in the order they are stored.
    pub entries: Vec<FatbinEntry>,
}

/// Where a container header stores the size of what follows it (a little-endian `u64`).
pub const CONTAINER_SIZE_OFFSET: usize = 8;

/// A section that is not a well-formed fat binary.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("fat binary at offset {offset:#x}: {problem}")]
pub struct FatbinError {
    /// Where in the section the problem is.
    pub offset: usize,
    /// What is wrong there.
    pub problem: String,
}

fn fail<T>(offset: usize, problem: impl Into<String>) -> Result<T, FatbinError> {
    Err(FatbinError {
        offset,
        problem: problem.into(),
    })
}

/// Little-endian reads that cannot go out of bounds: the callers check lengths first, and a short
/// slice reads as zero rather than panicking.
fn u16_at(b: &[u8], at: usize) -> u16 {
    b.get(at..at + 2)
        .map_or(0, |s| u16::from_le_bytes([s[0], s[1]]))
}
fn u32_at(b: &[u8], at: usize) -> u32 {
    b.get(at..at + 4)
        .map_or(0, |s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}
fn u64_at(b: &[u8], at: usize) -> u64 {
    b.get(at..at + 8).map_or(0, |s| {
        u64::from_le_bytes([s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]])
    })
}

/// Reads every entry of every container in a `.nv_fatbin` / `__nv_relfatbin` section.
///
/// ```
/// # let section = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"),
/// #     "/../../testdata/fatbin/jax_cuda12_plugin-0.4.38-_blas.so.nv_fatbin")).unwrap();
/// use vari_scan::{parse_fatbin, CodeKind};
/// let entries = parse_fatbin(&section)?;
/// let ptx: Vec<u32> = entries.iter().filter(|e| e.kind == Some(CodeKind::Ptx)).map(|e| e.arch).collect();
/// assert_eq!(ptx, [90]);
/// # Ok::<(), vari_scan::FatbinError>(())
/// ```
pub fn parse_fatbin(section: &[u8]) -> Result<Vec<FatbinEntry>, FatbinError> {
    Ok(parse_fatbin_containers(section)?
        .into_iter()
        .flat_map(|c| c.entries)
        .collect())
}

/// Reads every container of a `.nv_fatbin` / `__nv_relfatbin` section, with the same checks as
/// [`parse_fatbin`]: what rewrites a section (keeping some entries of each container) needs.
pub fn parse_fatbin_containers(section: &[u8]) -> Result<Vec<FatbinContainer>, FatbinError> {
    let mut containers = Vec::new();
    let mut scratch = Vec::new();
    let mut pos = 0;
    while pos < section.len() {
        // Containers are aligned by the linker; the gap between them is zeros.
        if section[pos] == 0 {
            pos += 1;
            continue;
        }
        let container = parse_container(section, pos, &mut scratch)?;
        pos = container.end;
        containers.push(container);
    }
    Ok(containers)
}

/// Parses the container at `start`.
fn parse_container(
    section: &[u8],
    start: usize,
    scratch: &mut Vec<u8>,
) -> Result<FatbinContainer, FatbinError> {
    if section.len() - start < CONTAINER_HEADER_LEN {
        return fail(start, "truncated container header");
    }
    let magic = u32_at(section, start);
    if magic != FATBIN_MAGIC {
        return fail(
            start,
            format!("expected the fat-binary magic {FATBIN_MAGIC:#x}, found {magic:#x}"),
        );
    }
    let version = u16_at(section, start + 4);
    if version != 1 {
        return fail(start, format!("unknown container version {version}"));
    }
    let header_len = usize::from(u16_at(section, start + 6));
    let body_len = u64_at(section, start + 8);
    if header_len < CONTAINER_HEADER_LEN {
        return fail(start, format!("container header length {header_len} < 16"));
    }
    let end = usize::try_from(body_len)
        .ok()
        .and_then(|len| start.checked_add(header_len)?.checked_add(len))
        .filter(|&end| end <= section.len());
    let Some(end) = end else {
        return fail(
            start,
            format!(
                "container of {body_len} bytes runs past the end of the section ({} bytes)",
                section.len()
            ),
        );
    };
    let mut entries = Vec::new();
    let mut at = start + header_len;
    while at < end {
        at = parse_entry(section, at, end, &mut entries, scratch)?;
    }
    Ok(FatbinContainer {
        offset: start,
        header_len,
        end,
        entries,
    })
}

/// Parses the entry at `at` (inside a container ending at `end`); returns the next entry's offset.
fn parse_entry(
    section: &[u8],
    at: usize,
    end: usize,
    entries: &mut Vec<FatbinEntry>,
    scratch: &mut Vec<u8>,
) -> Result<usize, FatbinError> {
    if end - at < ENTRY_HEADER_MIN_LEN {
        return fail(at, "truncated entry header");
    }
    let h = &section[at..end];
    let raw_kind = u16_at(h, 0);
    let header_len = u32_at(h, 4) as usize;
    let payload_len = u64_at(h, 8);
    let stored_len = u64::from(u32_at(h, 16));
    let version = (u16_at(h, 26), u16_at(h, 24));
    let arch = u32_at(h, 28);
    let flags = u64_at(h, 40);
    let decompressed_len = u64_at(h, 56);

    if header_len < ENTRY_HEADER_MIN_LEN || header_len > h.len() {
        return fail(
            at,
            format!("entry header length {header_len} is out of range"),
        );
    }
    let payload = usize::try_from(payload_len)
        .ok()
        .and_then(|len| h.get(header_len..header_len.checked_add(len)?));
    let Some(payload) = payload else {
        return fail(
            at,
            format!("entry payload of {payload_len} bytes runs past its container"),
        );
    };
    let compression = match (flags & FLAG_LZ4 != 0, flags & FLAG_ZSTD != 0) {
        (false, false) => Compression::None,
        (true, false) => Compression::Lz4,
        (false, true) => Compression::Zstd,
        (true, true) => return fail(at, "entry flags name two compressions"),
    };
    let mut entry = FatbinEntry {
        offset: at,
        kind: None,
        raw_kind,
        arch,
        arch_specific: false,
        version,
        compression,
        len: header_len + payload.len(),
    };
    match raw_kind {
        KIND_PTX => entry.kind = Some(CodeKind::Ptx),
        // Cubins are ELF; other kinds (LTO IR and kinds newer than this reader) are identified by
        // content: only a CUDA ELF counts as SASS.
        _ => {
            let stored = match compression {
                Compression::None => payload,
                _ => match payload.get(..stored_len as usize) {
                    Some(s) => s,
                    None => return fail(at, "compressed size exceeds the entry payload"),
                },
            };
            let head = payload_prefix(stored, compression, decompressed_len, scratch).map_err(
                |problem| FatbinError {
                    offset: at,
                    problem: format!("cannot decompress the sm_{arch} entry: {problem}"),
                },
            )?;
            if let Some(cubin) = CubinHeader::read(head) {
                // The driver matches the cubin's own target; the two agree in every section
                // seen, and where they would not, the cubin is what runs.
                entry.arch = cubin.sm;
                entry.kind = Some(CodeKind::Sass);
                entry.arch_specific = cubin.arch_specific;
            } else if raw_kind == KIND_ELF {
                return fail(at, "ELF entry whose payload is not a CUDA cubin");
            }
        }
    }
    entries.push(entry);
    Ok(at + header_len + payload.len())
}

/// The first bytes of an entry's payload after decompression: enough for an ELF header.
///
/// The declared decompressed size is checked against [`MAX_DECOMPRESSED`] and against what the
/// stored bytes can possibly expand to, then only the first bytes are decoded, whatever size is
/// declared: memory is bounded by the prefix, not by the header.
fn payload_prefix<'a>(
    stored: &'a [u8],
    compression: Compression,
    decompressed_len: u64,
    scratch: &'a mut Vec<u8>,
) -> Result<&'a [u8], String> {
    const PREFIX: usize = 64;
    match compression {
        Compression::None => Ok(&stored[..stored.len().min(PREFIX)]),
        Compression::Lz4 => {
            check_declared(decompressed_len, stored.len(), LZ4_MAX_RATIO)?;
            lz4_block_prefix(stored, PREFIX, scratch)?;
            Ok(&scratch[..])
        }
        Compression::Zstd => {
            let (frame, _) = ruzstd::frame::read_frame_header(stored).map_err(|e| e.to_string())?;
            check_declared(
                frame.header.frame_content_size(),
                stored.len(),
                ZSTD_MAX_RATIO,
            )?;
            let mut decoder = ruzstd::StreamingDecoder::new(stored).map_err(|e| e.to_string())?;
            scratch.clear();
            (&mut decoder)
                .take(PREFIX as u64)
                .read_to_end(scratch)
                .map_err(|e| e.to_string())?;
            Ok(&scratch[..])
        }
    }
}

/// A declared decompressed size must be below the ceiling and within what `stored` bytes can
/// expand to at the format's largest ratio.
fn check_declared(declared: u64, stored: usize, max_ratio: u64) -> Result<(), String> {
    let possible = (stored as u64).saturating_mul(max_ratio);
    if declared > MAX_DECOMPRESSED {
        return Err(format!(
            "declared decompressed size {declared} is above the limit of {MAX_DECOMPRESSED} bytes"
        ));
    }
    if declared > possible {
        return Err(format!(
            "declared decompressed size {declared} is more than its {stored} compressed bytes \
             can hold"
        ));
    }
    Ok(())
}

/// Decodes the first `want` bytes of an LZ4 block (all of it when it is shorter) into `out`.
///
/// `lz4_flex` decodes only whole blocks, into a buffer of the whole decompressed size; the
/// format is simple enough to stop early here. A block is a run of sequences: a token (literal
/// count, match length), the literals, then a 2-byte back offset and the match, except in the
/// last sequence, which ends the block after its literals.
fn lz4_block_prefix(block: &[u8], want: usize, out: &mut Vec<u8>) -> Result<(), String> {
    out.clear();
    let mut at = 0;
    while out.len() < want && at < block.len() {
        let token = block[at];
        at += 1;
        let literals = lz4_length(block, &mut at, usize::from(token >> 4))?;
        let end = at
            .checked_add(literals)
            .filter(|&end| end <= block.len())
            .ok_or("LZ4 literals run past the end of the block")?;
        let take = literals.min(want - out.len());
        out.extend_from_slice(&block[at..at + take]);
        at = end;
        if at == block.len() || out.len() == want {
            break;
        }
        if block.len() - at < 2 {
            return Err("LZ4 match offset runs past the end of the block".to_owned());
        }
        let offset = usize::from(u16_at(block, at));
        at += 2;
        if offset == 0 || offset > out.len() {
            return Err(format!("LZ4 match offset {offset} points before the data"));
        }
        let len = lz4_length(block, &mut at, usize::from(token & 0xf))?.saturating_add(4);
        for _ in 0..len.min(want - out.len()) {
            out.push(out[out.len() - offset]);
        }
    }
    Ok(())
}

/// A sequence length: the token's nibble, and when it is 15, extension bytes up to the first
/// that is not 255.
fn lz4_length(block: &[u8], at: &mut usize, nibble: usize) -> Result<usize, String> {
    let mut len = nibble;
    if nibble == 15 {
        loop {
            let byte = *block
                .get(*at)
                .ok_or("LZ4 length runs past the end of the block")?;
            *at += 1;
            len = len.saturating_add(usize::from(byte));
            if byte != 255 {
                break;
            }
        }
    }
    Ok(len)
}

/// What a cubin's ELF header says about its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CubinHeader {
    /// The SASS architecture number.
    pub(crate) sm: u32,
    /// `sm_NNa`: code for exactly this compute capability.
    pub(crate) arch_specific: bool,
}

impl CubinHeader {
    /// Reads a CUDA ELF header (`e_machine` 190); `None` for anything else.
    ///
    /// Two `e_flags` layouts exist (LLVM's `EF_CUDA_*`): up to ELF ABI version 7 the SM number is
    /// the low byte and `0x800` marks `a` targets; from ABI version 8 (CUDA 12.8+ for Blackwell,
    /// all CUDA 13 cubins) the SM number is bits 8–15 and `0x8` marks `a` targets.
    pub(crate) fn read(head: &[u8]) -> Option<Self> {
        if head.len() < 52 || &head[..4] != b"\x7fELF" || u16_at(head, 18) != EM_CUDA {
            return None;
        }
        let flags = match head[4] {
            1 => u32_at(head, 36),
            2 => u32_at(head, 48),
            _ => return None,
        };
        let abi_version = head[8];
        Some(if abi_version >= 8 {
            Self {
                sm: (flags >> 8) & 0xff,
                arch_specific: flags & 0x8 != 0,
            }
        } else {
            Self {
                sm: flags & 0xff,
                arch_specific: flags & 0x800 != 0,
            }
        })
    }
}

#[cfg(test)]
mod tests;
