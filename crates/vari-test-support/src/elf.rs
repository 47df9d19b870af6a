//! Builders for the scanning tests: small ELF files written with `object::write::elf` (known
//! machine code in `.text`, real fat-binary sections, `DT_NEEDED` entries, function symbols) and
//! wheels (zip archives, deflated) around them.

use std::io::Write;
use std::path::{Path, PathBuf};

use object::elf;
use object::write::elf::{FileHeader, SectionHeader, Sym, Writer};
use object::Endianness;

/// Where `.text` is loaded in the test libraries.
pub const TEXT_ADDRESS: u64 = 0x1000;

/// An ELF file to build.
pub struct Elf<'a> {
    /// ELF64 (else ELF32).
    pub is_64: bool,
    /// `e_machine`.
    pub machine: elf::Machine,
    /// `e_type`.
    pub file_type: elf::FileType,
    /// `EI_ABIVERSION`.
    pub abi_version: u8,
    /// `e_flags`.
    pub flags: u32,
    /// The machine code of `.text`.
    pub text: &'a [u8],
    /// (section name, bytes): `.nv_fatbin` or `__nv_relfatbin`.
    pub fatbin: Option<(&'a str, &'a [u8])>,
    /// `DT_NEEDED` entries.
    pub needed: &'a [&'a str],
    /// (name, offset in `.text`, size).
    pub functions: &'a [(&'a str, u64, u64)],
    /// Further allocated sections, after the fat-binary one: (name, type, address, bytes).
    /// With [`wrapper`] and [`relative_rela`], a library whose containers lie outside
    /// `.nv_fatbin` (`.ldata`) and are registered through `.nvFatBinSegment`.
    pub sections: &'a [(&'a str, elf::SectionType, u64, &'a [u8])],
}

/// A `.nvFatBinSegment` wrapper record (ELF64): magic, version 1, the container's address, no
/// relocatable-device-code list.
pub fn wrapper(container_address: u64) -> Vec<u8> {
    let mut record = 0x4662_43b1u32.to_le_bytes().to_vec();
    record.extend(1u32.to_le_bytes());
    record.extend(container_address.to_le_bytes());
    record.extend(0u64.to_le_bytes());
    record
}

/// One `R_X86_64_RELATIVE` relocation (an `Elf64_Rela`): at `offset`, the load address plus
/// `addend`.
pub fn relative_rela(offset: u64, addend: i64) -> Vec<u8> {
    let mut rela = offset.to_le_bytes().to_vec();
    rela.extend(u64::from(elf::R_X86_64_RELATIVE.0).to_le_bytes());
    rela.extend(addend.to_le_bytes());
    rela
}

impl<'a> Elf<'a> {
    /// An x86-64 shared object with this machine code.
    pub fn x86_64_library(text: &'a [u8]) -> Self {
        Self {
            is_64: true,
            machine: elf::EM_X86_64,
            file_type: elf::ET_DYN,
            abi_version: 0,
            flags: 0,
            text,
            fatbin: None,
            needed: &[],
            functions: &[],
            sections: &[],
        }
    }

    /// The ELF file's bytes.
    pub fn build(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let mut w = Writer::new(Endianness::Little, self.is_64, &mut out);

        // Names and indices.
        w.reserve_file_header();
        w.reserve_null_section_index();
        let text_name = w.add_section_name(b".text");
        let text_index = w.reserve_section_index();
        let fatbin = self.fatbin.map(|(name, bytes)| {
            let id = w.add_section_name(name.as_bytes());
            (id, w.reserve_section_index(), bytes)
        });
        let extra: Vec<_> = self
            .sections
            .iter()
            .map(|&(name, kind, address, bytes)| {
                let id = w.add_section_name(name.as_bytes());
                (id, w.reserve_section_index(), kind, address, bytes)
            })
            .collect();
        let needed: Vec<_> = self
            .needed
            .iter()
            .map(|n| w.add_dynamic_string(n.as_bytes()))
            .collect();
        if !needed.is_empty() {
            w.reserve_dynstr_section_index();
            w.reserve_dynamic_section_index();
        }
        let functions: Vec<_> = self
            .functions
            .iter()
            .map(|&(name, offset, size)| (w.add_string(name.as_bytes()), offset, size))
            .collect();
        if !functions.is_empty() {
            w.reserve_null_symbol_index();
            for _ in &functions {
                w.reserve_symbol_index(Some(text_index));
            }
            w.reserve_symtab_section_index();
            w.reserve_strtab_section_index();
        }
        w.reserve_shstrtab_section_index();

        // Layout.
        let text_offset = w.reserve(self.text.len() as u64, 16);
        let fatbin_offset = fatbin.map(|(_, _, bytes)| w.reserve(bytes.len() as u64, 8));
        let extra_offsets: Vec<u64> = extra
            .iter()
            .map(|e| w.reserve(e.4.len() as u64, 8))
            .collect();
        if !needed.is_empty() {
            w.reserve_dynstr().unwrap();
            w.reserve_dynamic(needed.len() + 1);
        }
        if !functions.is_empty() {
            w.reserve_symtab();
            w.reserve_strtab().unwrap();
        }
        w.reserve_shstrtab().unwrap();
        w.reserve_section_headers();

        // Contents.
        w.write_file_header(&FileHeader {
            os_abi: elf::ELFOSABI_NONE,
            abi_version: self.abi_version,
            e_type: self.file_type,
            e_machine: self.machine,
            e_entry: 0,
            e_flags: elf::FileFlags(self.flags),
        })
        .unwrap();
        w.write_align(16);
        w.write(self.text);
        if let Some((_, _, bytes)) = fatbin {
            w.write_align(8);
            w.write(bytes);
        }
        for e in &extra {
            w.write_align(8);
            w.write(e.4);
        }
        if !needed.is_empty() {
            w.write_dynstr();
            w.write_align_dynamic();
            for &id in &needed {
                w.write_dynamic_string(elf::DT_NEEDED, id).unwrap();
            }
            w.write_dynamic(elf::DT_NULL, 0).unwrap();
        }
        if !functions.is_empty() {
            w.write_null_symbol();
            for &(id, offset, size) in &functions {
                w.write_symbol(&Sym {
                    section: Some(text_index.0),
                    st_name: w.string_offset(Some(id)),
                    st_info: elf::SymbolInfo::new(elf::STB_GLOBAL, elf::STT_FUNC),
                    st_other: elf::SymbolOther(0),
                    st_shndx: elf::SymbolSection(0),
                    st_value: TEXT_ADDRESS + offset,
                    st_size: size,
                });
            }
        }
        if !functions.is_empty() {
            w.write_strtab();
        }
        w.write_shstrtab();

        // Section headers.
        w.write_null_section_header();
        w.write_section_header(&SectionHeader {
            sh_name: w.section_name_offset(Some(text_name)),
            sh_type: elf::SHT_PROGBITS,
            sh_flags: elf::SHF_ALLOC | elf::SHF_EXECINSTR,
            sh_addr: TEXT_ADDRESS,
            sh_offset: text_offset,
            sh_size: self.text.len() as u64,
            sh_link: 0,
            sh_info: 0,
            sh_addralign: 16,
            sh_entsize: 0,
        });
        if let (Some((name, _, bytes)), Some(offset)) = (fatbin, fatbin_offset) {
            w.write_section_header(&SectionHeader {
                sh_name: w.section_name_offset(Some(name)),
                sh_type: elf::SHT_PROGBITS,
                sh_flags: elf::SHF_ALLOC,
                sh_addr: 0x10_0000,
                sh_offset: offset,
                sh_size: bytes.len() as u64,
                sh_link: 0,
                sh_info: 0,
                sh_addralign: 8,
                sh_entsize: 0,
            });
        }
        for (e, &offset) in extra.iter().zip(&extra_offsets) {
            let rela = e.2 == elf::SHT_RELA;
            w.write_section_header(&SectionHeader {
                sh_name: w.section_name_offset(Some(e.0)),
                sh_type: e.2,
                sh_flags: elf::SHF_ALLOC,
                sh_addr: e.3,
                sh_offset: offset,
                sh_size: e.4.len() as u64,
                sh_link: 0,
                sh_info: 0,
                sh_addralign: 8,
                sh_entsize: if rela { 24 } else { 0 },
            });
        }
        if !needed.is_empty() {
            w.write_dynstr_section_header(0);
            w.write_dynamic_section_header(0);
        }
        if !functions.is_empty() {
            w.write_symtab_section_header(1);
            w.write_strtab_section_header();
        }
        w.write_shstrtab_section_header();
        out
    }
}

/// A real fat-binary section from `testdata/fatbin/`.
pub fn fatbin(name: &str) -> Vec<u8> {
    let path = crate::paths::testdata("fatbin").join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A CUDA 12 fat binary (jax's `_blas.so`): SASS for several architectures.
pub const CUDA12_FATBIN: &str = "jax_cuda12_plugin-0.4.38-_blas.so.nv_fatbin";
/// A CUDA 13 fat binary (jax's `_prng.so`).
pub const CUDA13_FATBIN: &str = "jax_cuda13_plugin-0.8.0-_prng.so.nv_fatbin";

/// Writes a wheel (deflated members, in this order) into `dir`.
pub fn wheel(dir: &Path, name: &str, members: &[(&str, Vec<u8>)]) -> PathBuf {
    let path = dir.join(name);
    let file = std::fs::File::create(&path).unwrap();
    let mut zip = zip::ZipWriter::new(file);
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (member, bytes) in members {
        zip.start_file(*member, options).unwrap();
        zip.write_all(bytes).unwrap();
    }
    zip.finish().unwrap();
    path
}

/// Machine code, each sequence one instruction (the unit tests check their decoding).
pub mod code {
    /// `addpd xmm0, xmm1` (SSE2).
    pub const ADDPD: &[u8] = b"\x66\x0f\x58\xc1"; // addpd xmm0, xmm1
    /// `popcnt rax, rax`.
    pub const POPCNT: &[u8] = b"\xf3\x48\x0f\xb8\xc0"; // popcnt rax, rax
    /// `vfmadd213pd xmm0, xmm0, xmm2` (FMA).
    pub const VFMADD: &[u8] = b"\xc4\xe2\xf9\xa8\xc2"; // vfmadd213pd xmm0, xmm0, xmm2
    /// `vpaddd zmm0, zmm0, zmm1` (AVX-512).
    pub const VPADDD_ZMM: &[u8] = b"\x62\xf1\x7d\x48\xfe\xc1"; // vpaddd zmm0, zmm0, zmm1
    /// `vpaddb zmm0, zmm0, zmm1` (AVX-512 BW).
    pub const VPADDB_ZMM: &[u8] = b"\x62\xf1\x7d\x48\xfc\xc1"; // vpaddb zmm0, zmm0, zmm1
    /// `pmulld xmm0, xmm1` (SSE4.1).
    pub const PMULLD: &[u8] = b"\x66\x0f\x38\x40\xc1"; // pmulld xmm0, xmm1
    /// `vpaddd ymm0, ymm0, ymm1` (AVX2).
    pub const VPADDD_YMM: &[u8] = b"\xc5\xfd\xfe\xc1"; // vpaddd ymm0, ymm0, ymm1
    /// `vxorps xmm0, xmm0, xmm0` (AVX).
    pub const VXORPS: &[u8] = b"\xc5\xf8\x57\xc0"; // vxorps xmm0, xmm0, xmm0
    /// `cpuid`.
    pub const CPUID: &[u8] = b"\x0f\xa2";
    /// `ret`.
    pub const RET: &[u8] = b"\xc3";
}
