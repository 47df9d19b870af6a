//! Where an ELF file's fat-binary containers are: the standard sections, and every container a
//! `.nvFatBinSegment` wrapper points at, wherever it lies.
//!
//! nvcc registers each object file's GPU code with the CUDA runtime through a wrapper record
//! (`__fatBinC_Wrapper_t`) in `.nvFatBinSegment`: magic `0x466243b1`, a version, a pointer to
//! the fat-binary container, and a pointer used by relocatable device code. The container is
//! usually in `.nv_fatbin`, but not always: libraries built with the large code model keep
//! theirs in `.ldata` / `.lrodata` (cuFFT, some of torch's `libtorch_cuda.so`). So the wrappers
//! are read, each pointer resolved to the section and file offset that hold its target (in a
//! position-independent library the pointer is a `RELATIVE` relocation whose addend is the
//! target; the linker writes the same value in place, which is what is read when no relocation
//! names the field), and a container found outside the standard sections is read from there.
//!
//! What cannot be read is said, not guessed: a wrapper whose pointer resolves to no bytes of
//! the file or to no container, or a container header or CUDA ELF header where no wrapper
//! points (libraries that keep kernels in their own tables and load them with
//! `cuModuleLoadData`), makes the file's GPU code **unreadable** ([`FatbinLayout::unreadable`]):
//! what was read of it is not all it carries, so nothing may be inferred from it.

use std::collections::HashMap;
use std::ops::Range;

use memchr::memmem;
use object::elf;
use object::read::elf::{FileHeader, Rela, SectionHeader};
use object::Endianness;

use crate::error::ScanProblem;
use crate::fatbin::FATBIN_MAGIC;

/// The section of whole-program device code.
const FATBIN_SECTION: &[u8] = b".nv_fatbin";
/// The section of relocatable device code (`-rdc`).
const RELOCATABLE_SECTION: &[u8] = b"__nv_relfatbin";
/// The section of the wrappers that register each container with the CUDA runtime.
const WRAPPER_SECTION: &[u8] = b".nvFatBinSegment";
/// The magic number that starts every wrapper record.
pub const WRAPPER_MAGIC: u32 = 0x4662_43b1;
/// A container header's version, header length (16) as stored after its magic.
const CONTAINER_VERSION_AND_HEADER: [u8; 4] = [1, 0, 16, 0];

/// What a region of fat binaries is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegionKind {
    /// A whole `.nv_fatbin` section: one or more containers, zeros between them.
    Section,
    /// A whole `__nv_relfatbin` section (relocatable device code).
    Relocatable,
    /// One container outside the standard sections, found through its wrapper.
    Container,
}

/// A byte range of the file that holds fat-binary containers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FatbinRegion {
    /// The section that holds it (`.nv_fatbin`, `.ldata`, …).
    pub section: String,
    /// Its bytes in the file.
    pub range: Range<usize>,
    /// What it is.
    pub kind: RegionKind,
}

/// Where an ELF file's fat binaries are ([`fatbin_layout`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FatbinLayout {
    /// The file is a standalone CUDA cubin (`e_machine` 190): it is GPU code itself.
    pub cubin: bool,
    /// The regions, in section order, then the containers outside the standard sections in
    /// the order of their wrappers.
    pub regions: Vec<FatbinRegion>,
    /// Why some of the file's GPU code cannot be read, when it cannot.
    pub unreadable: Option<String>,
}

/// Finds the fat binaries of the ELF file `data` (see the module docs). An error is a file
/// whose ELF structure cannot be read.
pub fn fatbin_layout(data: &[u8]) -> Result<FatbinLayout, ScanProblem> {
    match data.get(4) {
        Some(1) => layout::<elf::FileHeader32<Endianness>>(data),
        Some(2) => layout::<elf::FileHeader64<Endianness>>(data),
        _ => Err(ScanProblem::Elf("unknown ELF class".into())),
    }
}

fn elf_error(e: object::read::Error) -> ScanProblem {
    ScanProblem::Elf(e.to_string())
}

/// An allocated section with bytes in the file: where a pointer can lead.
struct Loaded {
    name: String,
    address: u64,
    file: Range<usize>,
}

/// The relocation types that add the load address to an addend (`RELATIVE`), per machine.
fn is_relative(machine: elf::Machine, r_type: elf::RelocationType) -> bool {
    [
        (elf::EM_X86_64, elf::R_X86_64_RELATIVE),
        (elf::EM_AARCH64, elf::R_AARCH64_RELATIVE),
        (elf::EM_PPC64, elf::R_PPC64_RELATIVE),
        (elf::EM_386, elf::R_386_RELATIVE),
    ]
    .contains(&(machine, r_type))
}

fn layout<Elf: FileHeader<Endian = Endianness>>(data: &[u8]) -> Result<FatbinLayout, ScanProblem> {
    let header = Elf::parse(data).map_err(elf_error)?;
    let endian = header.endian().map_err(elf_error)?;
    let machine = header.e_machine(endian);
    if machine == elf::EM_CUDA {
        return Ok(FatbinLayout {
            cubin: true,
            ..FatbinLayout::default()
        });
    }
    let is_64 = header.is_type_64();
    let table = header.sections(endian, data).map_err(elf_error)?;
    let mut found = FatbinLayout::default();
    let mut loaded = Vec::new();
    // (address, bytes) of each wrapper section.
    let mut wrappers: Vec<(u64, &[u8])> = Vec::new();
    for section in table.iter() {
        let name = table.section_name(endian, section).map_err(elf_error)?;
        // `file_range` is `None` for a section without bytes in the file (SHT_NOBITS).
        let Some((offset, size)) = section.file_range(endian) else {
            continue;
        };
        let range = usize::try_from(offset)
            .ok()
            .zip(usize::try_from(size).ok())
            .and_then(|(start, len)| Some(start..start.checked_add(len)?))
            .filter(|r| r.end <= data.len());
        let Some(range) = range else {
            return Err(ScanProblem::Elf(format!(
                "section {} runs past the end of the file",
                String::from_utf8_lossy(name)
            )));
        };
        let name_text = String::from_utf8_lossy(name).into_owned();
        let kind = match name {
            FATBIN_SECTION => Some(RegionKind::Section),
            RELOCATABLE_SECTION => Some(RegionKind::Relocatable),
            _ => None,
        };
        if let Some(kind) = kind {
            found.regions.push(FatbinRegion {
                section: name_text.clone(),
                range: range.clone(),
                kind,
            });
        }
        let address: u64 = section.sh_addr(endian).into();
        if name == WRAPPER_SECTION {
            wrappers.push((address, &data[range.clone()]));
        }
        if section.sh_flags(endian).0 & elf::SHF_ALLOC.0 != 0 {
            loaded.push(Loaded {
                name: name_text,
                address,
                file: range,
            });
        }
    }

    let record_len = if is_64 { 24 } else { 16 };
    let pointer_len = if is_64 { 8 } else { 4 };
    // The pointer fields of the wrappers, by address: only relocations of these are read.
    let mut fields: HashMap<u64, Option<u64>> = HashMap::new();
    let mut problems = Vec::new();
    for &(address, bytes) in &wrappers {
        if bytes.len() % record_len != 0 {
            problems.push(format!(
                "{} is {} bytes, not a whole number of {record_len}-byte wrappers",
                String::from_utf8_lossy(WRAPPER_SECTION),
                bytes.len()
            ));
        }
        for (i, record) in bytes.chunks_exact(record_len).enumerate() {
            let magic = read_word(endian, &record[..4]);
            if magic != u64::from(WRAPPER_MAGIC) {
                problems.push(format!(
                    "wrapper {i} of {} has magic {magic:#x}, not {WRAPPER_MAGIC:#x}",
                    String::from_utf8_lossy(WRAPPER_SECTION)
                ));
                continue;
            }
            let in_place = read_word(endian, &record[8..8 + pointer_len]);
            fields.insert(address + (i * record_len) as u64 + 8, Some(in_place));
        }
    }
    if !fields.is_empty() {
        for section in table.iter() {
            let Some((relocations, _)) = section.rela(endian, data).map_err(elf_error)? else {
                continue;
            };
            for r in relocations {
                let at: u64 = r.r_offset(endian).into();
                let Some(field) = fields.get_mut(&at) else {
                    continue;
                };
                let addend: i64 = r.r_addend(endian).into();
                *field = if is_relative(machine, r.r_type(endian, false)) {
                    u64::try_from(addend).ok()
                } else {
                    // Resolved against a symbol at load time: not read here.
                    None
                };
            }
        }
    }

    let mut targets: Vec<(u64, Option<u64>)> = fields.into_iter().collect();
    targets.sort_unstable();
    let mut outside: Vec<FatbinRegion> = Vec::new();
    for (field, pointer) in targets {
        let Some(pointer) = pointer.filter(|&p| p != 0) else {
            problems.push(format!(
                "the wrapper at {:#x} points at an address resolved only at load time",
                field - 8
            ));
            continue;
        };
        let holder = loaded.iter().find(|s| {
            pointer >= s.address && pointer - s.address < (s.file.end - s.file.start) as u64
        });
        let Some(holder) = holder else {
            problems.push(format!(
                "the wrapper at {:#x} points at {pointer:#x}, which no section of the file holds",
                field - 8
            ));
            continue;
        };
        let at = holder.file.start + (pointer - holder.address) as usize;
        if found.regions.iter().any(|r| r.range.contains(&at))
            || outside.iter().any(|r| r.range.start == at)
        {
            continue;
        }
        match container_at(data, at, holder.file.end) {
            Some(range) => outside.push(FatbinRegion {
                section: holder.name.clone(),
                range,
                kind: RegionKind::Container,
            }),
            None => problems.push(format!(
                "the wrapper at {:#x} points at {pointer:#x} in {}, where no fat-binary \
                 container starts",
                field - 8,
                holder.name
            )),
        }
    }
    found.regions.extend(outside);

    if let Some(at) = stray_gpu_code(data, &found.regions) {
        problems.push(format!(
            "GPU code at file offset {at:#x} is in no fat binary nvcc registers (a table of its \
             own, loaded by the library)"
        ));
    }
    found.unreadable = problems.into_iter().next();
    Ok(found)
}

/// A little-endian or big-endian unsigned number of 4 or 8 bytes.
fn read_word(endian: Endianness, bytes: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    match endian {
        Endianness::Little => {
            word[..bytes.len()].copy_from_slice(bytes);
            u64::from_le_bytes(word)
        }
        Endianness::Big => {
            word[8 - bytes.len()..].copy_from_slice(bytes);
            u64::from_be_bytes(word)
        }
    }
}

/// The bytes of the container whose header is at `at`, when one is there and ends by `limit`
/// (the end of its section).
fn container_at(data: &[u8], at: usize, limit: usize) -> Option<Range<usize>> {
    let header = data.get(at..at.checked_add(16)?)?;
    if header[..4] != FATBIN_MAGIC.to_le_bytes() || header[4..8] != CONTAINER_VERSION_AND_HEADER {
        return None;
    }
    let body = u64::from_le_bytes(header[8..16].try_into().ok()?);
    let end = at
        .checked_add(16)?
        .checked_add(usize::try_from(body).ok()?)?;
    (end <= limit).then_some(at..end)
}

/// The offset of the first container header or CUDA ELF header outside `regions`, if any.
fn stray_gpu_code(data: &[u8], regions: &[FatbinRegion]) -> Option<usize> {
    let outside = |at: &usize| !regions.iter().any(|r| r.range.contains(at));
    let container = |at: &usize| {
        data.get(at + 4..at + 8)
            .is_some_and(|h| h == CONTAINER_VERSION_AND_HEADER)
    };
    let cubin = |at: &usize| {
        *at > 0
            && data
                .get(at + 18..at + 20)
                .is_some_and(|m| u16::from_le_bytes([m[0], m[1]]) == elf::EM_CUDA.0)
    };
    let containers = memmem::find_iter(data, &FATBIN_MAGIC.to_le_bytes())
        .filter(outside)
        .find(container);
    let cubins = memmem::find_iter(data, b"\x7fELF")
        .filter(outside)
        .find(cubin);
    containers.into_iter().chain(cubins).min()
}

#[cfg(test)]
mod tests;
