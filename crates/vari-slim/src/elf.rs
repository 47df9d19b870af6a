//! Slimming one ELF file held in memory: every fat-binary container nvcc registers rewritten in
//! place ([`crate::section`]), nothing else touched. Where the containers are is vari-scan's
//! answer ([`vari_scan::fatbin_layout`]): the `.nv_fatbin` sections, and every container a
//! `.nvFatBinSegment` wrapper points at elsewhere (`.ldata`, `.lrodata` in libraries built with
//! the large code model), each rewritten within its own bytes.
//!
//! Left whole, with the reason reported:
//! - `__nv_relfatbin` sections (relocatable device code, linked again at load time: dropping
//!   part of it is not proven safe);
//! - standalone cubins (an ELF file for a GPU, loaded by name by the library that ships it);
//! - files with GPU code vari cannot read: a fat-binary container header or a CUDA ELF header
//!   where no wrapper points (libraries that keep kernels in their own tables, loaded with
//!   `cuModuleLoadData`), or a wrapper pointing at nothing readable. Such a file is not changed
//!   at all: its own loader may expect every architecture it was built with.

use vari_scan::{fatbin_layout, FatbinError, RegionKind, ScanProblem};

use crate::keep::Keep;
use crate::section::{slim_section, EntryOutcome};

/// Why a file's GPU code was left whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeftWhole {
    /// A standalone CUDA cubin.
    Cubin,
    /// GPU code vari cannot read (a container or a cubin where no wrapper points): the file is
    /// not changed.
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
            Self::NonStandard => "GPU code outside every fat binary vari can read",
            Self::Relocatable => "relocatable device code (__nv_relfatbin) kept whole",
        }
    }
}

/// What slimming one ELF file did.
#[derive(Debug, Clone, Default)]
pub struct ElfOutcome {
    /// The entries of its containers (`.nv_fatbin` sections and those found elsewhere through
    /// their wrappers), with whether each stayed.
    pub entries: Vec<EntryOutcome>,
    /// Why (part of) its GPU code was left whole, when it was.
    pub left_whole: Option<LeftWhole>,
    /// For [`LeftWhole::NonStandard`]: what could not be read, and where.
    pub unreadable: Option<String>,
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

/// Slims the ELF file `data` in place (see the module docs for what is left whole). On error
/// `data` may be partly rewritten: the caller discards it.
pub fn slim_elf(data: &mut [u8], keep: &Keep) -> Result<ElfOutcome, ElfProblem> {
    let layout = fatbin_layout(data).map_err(|e| match e {
        ScanProblem::Elf(message) => ElfProblem::Elf(message),
        other => ElfProblem::Elf(other.to_string()),
    })?;
    if layout.cubin {
        return Ok(ElfOutcome {
            left_whole: Some(LeftWhole::Cubin),
            ..ElfOutcome::default()
        });
    }
    if let Some(why) = layout.unreadable {
        return Ok(ElfOutcome {
            left_whole: Some(LeftWhole::NonStandard),
            unreadable: Some(why),
            ..ElfOutcome::default()
        });
    }
    let relocatable = layout
        .regions
        .iter()
        .any(|r| r.kind == RegionKind::Relocatable);
    let mut outcome = ElfOutcome {
        left_whole: relocatable.then_some(LeftWhole::Relocatable),
        ..ElfOutcome::default()
    };
    // Every region is parsed before any is rewritten, so that an error leaves the file whole.
    for region in &layout.regions {
        let entries = vari_scan::parse_fatbin(&data[region.range.clone()]).map_err(|source| {
            ElfProblem::Fatbin {
                section: region.section.clone(),
                source,
            }
        })?;
        if region.kind == RegionKind::Relocatable {
            outcome.relocatable.extend(entries);
        }
    }
    for region in layout.regions {
        if region.kind == RegionKind::Relocatable {
            continue;
        }
        let entries =
            slim_section(&mut data[region.range], keep).map_err(|source| ElfProblem::Fatbin {
                section: region.section,
                source,
            })?;
        outcome.entries.extend(entries);
    }
    Ok(outcome)
}

#[cfg(test)]
mod tests;
