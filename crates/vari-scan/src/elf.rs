//! Reading one ELF file from memory with the `object` crate: its fat binaries (wherever
//! `crate::locate` finds them), its `DT_NEEDED` libraries, its executable sections (x86-64
//! only) and its function symbols (to name where an instruction is). Nothing is loaded or
//! executed.

use object::elf;
use object::read::elf::{ElfFile, FileHeader, SectionHeader, Sym};
use object::Endianness;

use crate::error::ScanProblem;
use crate::fatbin::{parse_fatbin, CodeKind, CubinHeader};
use crate::file::FileScan;
use crate::gpu::{self, GpuCode};
use crate::locate::fatbin_layout;
use crate::x86::{X86Scanner, CPU_FEATURE_SYMBOLS};

/// The ELF magic bytes.
pub(crate) const ELF_MAGIC: [u8; 4] = *b"\x7fELF";

/// Scans an ELF file held in memory. `None` when it is ELF but nothing a wheel loads: relocatable
/// objects (`.o`) and core files are skipped; shared objects, executables and standalone CUDA
/// cubins are scanned. `path` only names the file in the result.
pub fn scan_elf(path: &str, data: &[u8]) -> Result<Option<FileScan>, ScanProblem> {
    match data.get(4) {
        Some(1) => scan::<elf::FileHeader32<Endianness>>(path, data),
        Some(2) => scan::<elf::FileHeader64<Endianness>>(path, data),
        _ => Err(ScanProblem::Elf("unknown ELF class".into())),
    }
}

fn elf_error(e: object::read::Error) -> ScanProblem {
    ScanProblem::Elf(e.to_string())
}

fn scan<Elf: FileHeader<Endian = Endianness>>(
    path: &str,
    data: &[u8],
) -> Result<Option<FileScan>, ScanProblem> {
    let file = ElfFile::<Elf>::parse(data).map_err(elf_error)?;
    let endian = file.endian();
    let header = file.elf_header();
    let machine = header.e_machine(endian);
    let mut scan = FileScan {
        path: path.to_owned(),
        gpu_code: Vec::new(),
        ptx_isa: Vec::new(),
        cuda_runtime: None,
        cuda_libraries: Vec::new(),
        x86_64: None,
        unreadable_gpu_code: None,
    };

    // A standalone cubin (some wheels ship `.cubin` files and load them with cuModuleLoad).
    if machine == elf::EM_CUDA {
        if let Some(cubin) = CubinHeader::read(data) {
            scan.gpu_code.push(GpuCode {
                arch: cubin.sm,
                kind: CodeKind::Sass,
                arch_specific: cubin.arch_specific,
            });
        }
        return Ok(Some(scan));
    }
    let file_type = header.e_type(endian);
    if file_type != elf::ET_DYN && file_type != elf::ET_EXEC {
        return Ok(None);
    }

    let sections = file.elf_section_table();
    let is_x86_64 = machine == elf::EM_X86_64;
    if let Some(mut x86) = is_x86_64.then(X86Scanner::new) {
        for section in sections.iter() {
            let executable = section.sh_flags(endian).0 & elf::SHF_EXECINSTR.0 != 0;
            if executable && section.sh_type(endian) != elf::SHT_NOBITS {
                let bytes = section.data(endian, data).map_err(elf_error)?;
                x86.scan(bytes, section.sh_addr(endian).into());
            }
        }
        let functions = Functions::read(&file);
        scan.x86_64 = Some(x86.finish(
            |a| functions.name_at(a),
            functions.ifuncs,
            functions.feature_record,
        ));
    }
    // Every container: the standard sections' and those the wrappers point at elsewhere.
    let layout = fatbin_layout(data)?;
    let mut entries = Vec::new();
    for region in &layout.regions {
        entries.extend(parse_fatbin(&data[region.range.clone()]).map_err(|source| {
            ScanProblem::Fatbin {
                section: region.section.clone(),
                source,
            }
        })?);
    }
    scan.gpu_code = gpu::gpu_code(&entries);
    scan.ptx_isa = gpu::ptx_isa_versions(&entries);
    scan.unreadable_gpu_code = layout.unreadable;

    let dynamic = sections.dynamic_table(endian, data).map_err(elf_error)?;
    for entry in dynamic.iter() {
        if entry.tag != elf::DT_NEEDED {
            continue;
        }
        let needed = dynamic.string(entry).map_err(elf_error)?;
        let needed = String::from_utf8_lossy(needed);
        if scan.cuda_runtime.is_none() {
            scan.cuda_runtime = gpu::cuda_runtime_major(&needed);
        }
        if gpu::is_cuda_library(&needed) {
            scan.cuda_libraries.push(needed.into_owned());
        }
    }

    Ok(Some(scan))
}

/// The function symbols of a file (static and dynamic tables), to name where an address is.
/// A large library has hundreds of thousands of them and the scan names a handful of addresses
/// (often none): names stay borrowed from the file, and nothing is sorted.
struct Functions<'data> {
    /// (start, end, name), in table order.
    ranges: Vec<(u64, u64, &'data [u8])>,
    /// How many symbols are IFUNCs (resolved at load time, usually by CPU features).
    ifuncs: usize,
    /// The first symbol of [`CPU_FEATURE_SYMBOLS`] the file defines or references.
    feature_record: Option<&'static str>,
}

/// How many of the ranges starting closest before an address are looked at to find one that
/// holds it (nested and overlapping functions are rare; an address outside every function must
/// not cost a walk through them all).
const NEAREST: usize = 8;

impl<'data> Functions<'data> {
    fn read<Elf: FileHeader<Endian = Endianness>>(file: &ElfFile<'data, Elf>) -> Self {
        let endian = file.endian();
        let mut ranges = Vec::new();
        // By address: the same IFUNC usually appears in both tables.
        let mut ifuncs = Vec::new();
        let mut feature_record = None;
        for (table, dynamic) in [
            (file.elf_symbol_table(), false),
            (file.elf_dynamic_symbol_table(), true),
        ] {
            for symbol in table.iter() {
                let kind = symbol.st_type();
                // Where the record lives decides nothing: an undefined reference (the record is
                // in libgcc_s.so.1) reads it as much as a definition does. Names are read for the
                // dynamic table and undefined symbols only: the static table of a large library
                // has hundreds of thousands of defined names, and a statically linked record
                // comes with its `cpuid` anyway.
                if feature_record.is_none() && (dynamic || symbol.is_undefined(endian)) {
                    if let Ok(name) = symbol.name(endian, table.strings()) {
                        feature_record = CPU_FEATURE_SYMBOLS
                            .iter()
                            .find(|&&known| known.as_bytes() == name)
                            .copied();
                    }
                }
                let start: u64 = symbol.st_value(endian).into();
                if kind == elf::STT_GNU_IFUNC {
                    ifuncs.push(start);
                }
                if kind != elf::STT_FUNC && kind != elf::STT_GNU_IFUNC {
                    continue;
                }
                let size: u64 = symbol.st_size(endian).into();
                if size == 0 {
                    continue;
                }
                // A symbol whose name cannot be read names nothing; it is not an error in the file
                // worth failing the scan for.
                if let Ok(name) = symbol.name(endian, table.strings()) {
                    ranges.push((start, start.saturating_add(size), name));
                }
            }
        }
        ifuncs.sort_unstable();
        ifuncs.dedup();
        Self {
            ranges,
            ifuncs: ifuncs.len(),
            feature_record,
        }
    }

    /// The function whose range holds `address`: among the [`NEAREST`] ranges last in the order
    /// of [`range_order`] that start at or before it, the last that holds it.
    fn name_at(&self, address: u64) -> Option<String> {
        // Kept in ascending order; an equal range replaces none (it names the same).
        let mut nearest: Vec<&(u64, u64, &[u8])> = Vec::with_capacity(NEAREST + 1);
        for range in self.ranges.iter().filter(|r| r.0 <= address) {
            if nearest.len() == NEAREST && range_order(range, nearest[0]).is_le() {
                continue;
            }
            let at = nearest.partition_point(|r| range_order(r, range).is_le());
            nearest.insert(at, range);
            if nearest.len() > NEAREST {
                nearest.remove(0);
            }
        }
        nearest
            .iter()
            .rev()
            .find(|r| address < r.1)
            .map(|r| String::from_utf8_lossy(r.2).into_owned())
    }
}

/// Ranges in order of start, end, then name as the text it is shown as (invalid UTF-8 replaced),
/// so that which of two symbols on the same range names it does not depend on bytes nobody
/// sees. Ranges that compare equal show the same name.
fn range_order(a: &(u64, u64, &[u8]), b: &(u64, u64, &[u8])) -> std::cmp::Ordering {
    (a.0, a.1).cmp(&(b.0, b.1)).then_with(|| {
        if a.2 == b.2 {
            std::cmp::Ordering::Equal
        } else {
            String::from_utf8_lossy(a.2).cmp(&String::from_utf8_lossy(b.2))
        }
    })
}

#[cfg(test)]
mod tests;
