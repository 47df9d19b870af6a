//! What slimming did, per wheel and per file: sizes before and after, GPU code per
//! architecture, and the files left whole.

use std::path::PathBuf;

use vari_core::metadata::VariantMetadata;
use vari_core::{Property, VariantLabel};
use vari_scan::{CodeKind, GpuCode};

use crate::elf::LeftWhole;

/// The bytes of one kind of GPU code (one architecture, SASS or PTX) in the fat build and in
/// the slim one: entry headers and payloads as stored (compressed entries count compressed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeSize {
    /// The architecture number.
    pub arch: u32,
    /// SASS or PTX; `None` for another kind (kept whatever is asked).
    pub kind: Option<CodeKind>,
    /// Architecture-specific SASS (`sm_90a`).
    pub arch_specific: bool,
    /// The entry kind as stored.
    pub raw_kind: u16,
    /// Bytes in the fat build.
    pub before: u64,
    /// Bytes in the slim build.
    pub after: u64,
}

impl CodeSize {
    /// The code, when it is SASS or PTX.
    pub fn code(&self) -> Option<GpuCode> {
        Some(GpuCode {
            arch: self.arch,
            kind: self.kind?,
            arch_specific: self.arch_specific,
        })
    }

    /// `sm_90`, `sm_90a`, `compute_90`, or `kind 4 (arch 90)` for another kind.
    pub fn name(&self) -> String {
        match self.code() {
            Some(code) => code.to_string(),
            None => format!("kind {} (arch {})", self.raw_kind, self.arch),
        }
    }
}

/// One ELF file of the wheel.
#[derive(Debug, Clone)]
pub struct FileReport {
    /// Its path in the wheel.
    pub path: String,
    /// Its `.nv_fatbin` code, per architecture and kind, in order.
    pub code: Vec<CodeSize>,
    /// Why (some of) its GPU code was left whole, when it was.
    pub left_whole: Option<LeftWhole>,
    /// Whether its bytes changed.
    pub changed: bool,
}

/// One slim wheel written.
#[derive(Debug, Clone)]
pub struct SlimReport {
    /// The fat wheel.
    pub wheel: PathBuf,
    /// Its size in bytes.
    pub wheel_size: u64,
    /// The slim wheel.
    pub output: PathBuf,
    /// Its size in bytes.
    pub output_size: u64,
    /// Its label.
    pub label: Option<VariantLabel>,
    /// Its `variant.json`.
    pub metadata: Option<VariantMetadata>,
    /// Its properties.
    pub properties: Vec<Property>,
    /// Every ELF file, in archive order.
    pub files: Vec<FileReport>,
    /// What the variant metadata's schema could not express, one sentence each.
    pub warnings: Vec<String>,
}

impl SlimReport {
    /// GPU code per architecture over all files, in order (architecture, then SASS before PTX).
    pub fn code(&self) -> Vec<CodeSize> {
        let mut total: Vec<CodeSize> = Vec::new();
        for c in self.files.iter().flat_map(|f| &f.code) {
            match total.iter_mut().find(|t| {
                (t.arch, t.kind, t.arch_specific, t.raw_kind)
                    == (c.arch, c.kind, c.arch_specific, c.raw_kind)
            }) {
                Some(t) => {
                    t.before += c.before;
                    t.after += c.after;
                }
                None => total.push(c.clone()),
            }
        }
        total.sort_by_key(|t| (t.arch, t.kind, t.arch_specific, t.raw_kind));
        total
    }

    /// The files whose GPU code was (partly) left whole, with why.
    pub fn left_whole(&self) -> impl Iterator<Item = (&str, LeftWhole)> {
        self.files
            .iter()
            .filter_map(|f| Some((f.path.as_str(), f.left_whole?)))
    }
}
