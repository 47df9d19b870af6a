//! The needs of one binary in a wheel.

use crate::fatbin::CodeKind;
use crate::gpu::GpuCode;
use crate::x86::{X86Level, X86Usage};

/// What one ELF file in a wheel needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileScan {
    /// The member's path inside the wheel.
    pub path: String,
    /// The GPU code its CUDA fat binaries carry, sorted by architecture.
    pub gpu_code: Vec<GpuCode>,
    /// The PTX ISA versions of its PTX (the driver must know them to compile it), sorted.
    pub ptx_isa: Vec<(u16, u16)>,
    /// The CUDA runtime major it links (`DT_NEEDED libcudart.so.N`).
    pub cuda_runtime: Option<u32>,
    /// The CUDA libraries it links, in `DT_NEEDED` order (`libcudart.so.12`, `libcublas.so.12`).
    pub cuda_libraries: Vec<String>,
    /// What its x86-64 code uses; `None` for other architectures.
    pub x86_64: Option<X86Usage>,
    /// Why some of its GPU code cannot be read, when it cannot (a container no wrapper points
    /// at, a wrapper pointing at nothing readable): then [`Self::gpu_code`] is only what was
    /// read, and what the file runs on is unknown.
    pub unreadable_gpu_code: Option<String>,
}

impl FileScan {
    /// This scan with its GPU code read from `entries` instead: what a rewrite left in the
    /// file's fat-binary sections (every entry of every section, as [`crate::parse_fatbin`]
    /// returns them). The rest (CUDA libraries, x86-64 code) is the file's own and stays.
    pub fn with_fatbin_entries(&self, entries: &[crate::FatbinEntry]) -> Self {
        Self {
            gpu_code: crate::gpu::gpu_code(entries),
            ptx_isa: crate::gpu::ptx_isa_versions(entries),
            ..self.clone()
        }
    }

    /// The `nvidia :: sm_arch` values of its GPU code (`90_real`, `90_virtual`), in
    /// architecture order.
    pub fn sm_arch(&self) -> Vec<String> {
        let mut values: Vec<String> = Vec::new();
        for code in &self.gpu_code {
            let value = code.sm_arch_value();
            if !values.contains(&value) {
                values.push(value);
            }
        }
        values
    }

    /// The x86-64 level its code uses, if it is x86-64 code.
    pub fn x86_64_level(&self) -> Option<X86Level> {
        self.x86_64.as_ref().map(|x| x.level)
    }

    /// Whether it carries any GPU code (readable or not).
    pub fn has_gpu_code(&self) -> bool {
        !self.gpu_code.is_empty() || self.unreadable_gpu_code.is_some()
    }

    /// Whether all its GPU code was read: only then does [`Self::gpu_code`] say what it runs on.
    pub fn gpu_code_known(&self) -> bool {
        self.unreadable_gpu_code.is_none()
    }

    /// Its needs as short phrases, most important first: the CUDA libraries, GPU code that cannot
    /// be read, GPU code that runs
    /// on one compute capability only or outside the provider's range, the PTX ISA versions, the
    /// extension that sets the x86-64 level (and a CPU below it that runs the code, when it uses
    /// part of that level only), extensions beyond every level.
    pub fn needs(&self) -> Vec<String> {
        let mut needs = self.cuda_libraries.clone();
        if let Some(why) = &self.unreadable_gpu_code {
            needs.push(format!(
                "GPU code vari cannot read, so what it runs on is unknown: {why}"
            ));
        }
        for code in &self.gpu_code {
            if code.arch_specific {
                needs.push(format!(
                    "{code} SASS (runs only on compute capability {}.{})",
                    code.arch / 10,
                    code.arch % 10
                ));
            } else if !code.is_provider_value() {
                let what = match code.kind {
                    CodeKind::Sass => "SASS",
                    CodeKind::Ptx => "PTX",
                };
                needs.push(format!("{code} {what} (no nvidia :: sm_arch value)"));
            }
        }
        for (major, minor) in &self.ptx_isa {
            needs.push(format!("PTX ISA {major}.{minor}"));
        }
        if let Some(x86) = &self.x86_64 {
            if let Some(forced) = &x86.forced_by {
                needs.push(forced.to_string());
            }
            if let Some(cpu) = &x86.partial_level {
                needs.push(format!(
                    "part of {} only: {cpu}, runs it (no level fits)",
                    x86.level
                ));
            }
            needs.extend(x86.beyond_levels.iter().map(ToString::to_string));
        }
        needs
    }
}
