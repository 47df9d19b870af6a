//! Slimming one ELF file held in memory: its `.nv_fatbin` sections rewritten in place
//! ([`crate::section`]), nothing else touched.
//!
//! Left whole, with the reason reported:
//! - `__nv_relfatbin` sections (relocatable device code, linked again at load time: dropping
//!   part of it is not proven safe);
//! - standalone cubins (an ELF file for a GPU, loaded by name by the library that ships it);
//! - files with GPU code outside the standard sections: a fat-binary container header or a CUDA
//!   ELF header anywhere else in the file (libraries that keep kernels in their own tables,
//!   loaded with `cuModuleLoadData`). Such a file is not changed at all: its own loader may
//!   expect every architecture it was built with.

use std::ops::Range;

use memchr::memmem;
use object::elf;
use object::read::elf::{FileHeader, SectionHeader};
use object::Endianness;
use vari_scan::{FatbinError, FATBIN_MAGIC};

use crate::keep::Keep;
use crate::section::{slim_section, EntryOutcome};

/// The section nvcc puts whole-program device code in.
const FATBIN_SECTION: &[u8] = b".nv_fatbin";
/// `e_machine` of a CUDA cubin, as stored.
const EM_CUDA: u16 = 190;
/// The section of relocatable device code (`-rdc`), left whole.
const RELOCATABLE_SECTION: &[u8] = b"__nv_relfatbin";

/// Why a file's GPU code was left whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeftWhole {
    /// A standalone CUDA cubin.
    Cubin,
    /// GPU code outside `.nv_fatbin` / `__nv_relfatbin` (a container or a cubin embedded
    /// elsewhere): the file is not changed.
    NonStandard,
    /// Relocatable device code (`__nv_relfatbin`), kept as it is; the file's `.nv_fatbin`
    /// sections, if any, are slimmed.
    Relocatable,
}

impl LeftWhole {
    /// One phrase for reports.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Cubin => "a standalone cubin",
            Self::NonStandard => "GPU code outside the standard fat-binary sections",
            Self::Relocatable => "relocatable device code (__nv_relfatbin) kept whole",
        }
    }
}

/// What slimming one ELF file did.
#[derive(Debug, Clone, Default)]
pub struct ElfOutcome {
    /// The entries of its `.nv_fatbin` sections, with whether each stayed.
    pub entries: Vec<EntryOutcome>,
    /// Why (part of) its GPU code was left whole, when it was.
    pub left_whole: Option<LeftWhole>,
    /// The entries of its `__nv_relfatbin` sections, all kept.
    pub relocatable: Vec<vari_scan::FatbinEntry>,
}

impl ElfOutcome {
    /// Whether the file's bytes changed.
    pub fn changed(&self) -> bool {
        self.entries.iter().any(|e| !e.kept)
    }
}

/// A file that is not a well-formed ELF file or fat binary.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ElfProblem {
    /// The ELF structure cannot be read.
    #[error("not a readable ELF file: {0}")]
    Elf(String),
    /// A fat-binary section is malformed.
    #[error("section {section}: {source}")]
    Fatbin {
        /// The section.
        section: String,
        /// What is wrong in it.
        source: FatbinError,
    },
}

/// Where the fat-binary sections are in the file.
#[derive(Debug, Default)]
struct Sections {
    fatbin: Vec<Range<usize>>,
    relocatable: Vec<Range<usize>>,
    cubin: bool,
}

fn sections(data: &[u8]) -> Result<Sections, ElfProblem> {
    match data.get(4) {
        Some(1) => sections_of::<elf::FileHeader32<Endianness>>(data),
        Some(2) => sections_of::<elf::FileHeader64<Endianness>>(data),
        _ => Err(ElfProblem::Elf("unknown ELF class".into())),
    }
}

fn sections_of<Elf: FileHeader<Endian = Endianness>>(data: &[u8]) -> Result<Sections, ElfProblem> {
    let elf_error = |e: object::read::Error| ElfProblem::Elf(e.to_string());
    let header = Elf::parse(data).map_err(elf_error)?;
    let endian = header.endian().map_err(elf_error)?;
    let mut found = Sections {
        cubin: header.e_machine(endian) == elf::EM_CUDA,
        ..Sections::default()
    };
    let table = header.sections(endian, data).map_err(elf_error)?;
    for section in table.iter() {
        let name = table.section_name(endian, section).map_err(elf_error)?;
        let list = if name == FATBIN_SECTION {
            &mut found.fatbin
        } else if name == RELOCATABLE_SECTION {
            &mut found.relocatable
        } else {
            continue;
        };
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
            return Err(ElfProblem::Elf(format!(
                "section {} runs past the end of the file",
                String::from_utf8_lossy(name)
            )));
        };
        list.push(range);
    }
    Ok(found)
}

/// Whether `data` holds GPU code outside `standard` (the byte ranges of its fat-binary
/// sections): a container header (magic, version 1, a 16-byte header) or a CUDA ELF header.
fn has_non_standard_gpu_code(data: &[u8], standard: &[Range<usize>]) -> bool {
    let outside = |at: usize| !standard.iter().any(|r| r.contains(&at));
    let container = |at: usize| data.get(at + 4..at + 8).is_some_and(|h| h == [1, 0, 16, 0]);
    let cubin = |at: usize| {
        at > 0
            && data
                .get(at + 18..at + 20)
                .is_some_and(|m| u16::from_le_bytes([m[0], m[1]]) == EM_CUDA)
    };
    memmem::find_iter(data, &FATBIN_MAGIC.to_le_bytes()).any(|at| outside(at) && container(at))
        || memmem::find_iter(data, b"\x7fELF").any(|at| outside(at) && cubin(at))
}

/// Slims the ELF file `data` in place (see the module docs for what is left whole). On error
/// `data` may be partly rewritten: the caller discards it.
pub fn slim_elf(data: &mut [u8], keep: &Keep) -> Result<ElfOutcome, ElfProblem> {
    let found = sections(data)?;
    if found.cubin {
        return Ok(ElfOutcome {
            left_whole: Some(LeftWhole::Cubin),
            ..ElfOutcome::default()
        });
    }
    let standard: Vec<Range<usize>> = found
        .fatbin
        .iter()
        .chain(&found.relocatable)
        .cloned()
        .collect();
    if has_non_standard_gpu_code(data, &standard) {
        return Ok(ElfOutcome {
            left_whole: Some(LeftWhole::NonStandard),
            ..ElfOutcome::default()
        });
    }
    let mut outcome = ElfOutcome {
        left_whole: (!found.relocatable.is_empty()).then_some(LeftWhole::Relocatable),
        ..ElfOutcome::default()
    };
    for range in found.relocatable {
        let entries =
            vari_scan::parse_fatbin(&data[range]).map_err(|source| ElfProblem::Fatbin {
                section: "__nv_relfatbin".to_owned(),
                source,
            })?;
        outcome.relocatable.extend(entries);
    }
    for range in found.fatbin {
        let entries =
            slim_section(&mut data[range], keep).map_err(|source| ElfProblem::Fatbin {
                section: ".nv_fatbin".to_owned(),
                source,
            })?;
        outcome.entries.extend(entries);
    }
    Ok(outcome)
}

#[cfg(test)]
mod tests;
