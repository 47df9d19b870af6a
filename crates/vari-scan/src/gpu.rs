//! What GPU code and CUDA libraries mean for the `nvidia` namespace (`spec/providers.md`).
//!
//! A GPU of compute capability `S.s` supports `sm_arch` values `S{s}_real … S0_real, S0_virtual`:
//! SASS built for `sm_NN` runs on every later minor version of the same major, PTX for
//! `compute_NN` is compiled by the driver for any GPU at or above `NN`. So SASS for `NN` is
//! `nvidia :: sm_arch :: NN_real` and PTX for `NN` is `NN_virtual`. Architecture-specific SASS
//! (`sm_90a`, `sm_100a`) runs only on exactly its compute capability; it is still `NN_real`
//! (the provider has no other spelling) and is noted separately.

use std::fmt;

use vari_core::sm_arch::{SmArch, SmKind};

use crate::fatbin::{CodeKind, FatbinEntry};

/// One piece of GPU code a binary carries: SASS for a real architecture or PTX for a virtual one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GpuCode {
    /// The architecture number, `10 × major + minor`.
    pub arch: u32,
    /// SASS or PTX.
    pub kind: CodeKind,
    /// Architecture-specific SASS (`sm_90a`): runs on exactly this compute capability only.
    pub arch_specific: bool,
}

impl GpuCode {
    /// The `nvidia :: sm_arch` value: `NN_real` for SASS, `NN_virtual` for PTX.
    pub fn sm_arch_value(&self) -> String {
        self.sm_arch().to_string()
    }

    /// Whether the nvidia provider has this value at all (compute capability 5.0 to 12.9).
    pub fn is_provider_value(&self) -> bool {
        self.sm_arch().is_provider_value()
    }

    /// The `sm_arch` value this code is (`vari_core::sm_arch` spells and bounds them).
    fn sm_arch(&self) -> SmArch {
        let kind = match self.kind {
            CodeKind::Sass => SmKind::Real,
            CodeKind::Ptx => SmKind::Virtual,
        };
        SmArch {
            arch: self.arch,
            kind,
        }
    }

    /// Whether this code can run on a GPU of architecture number `device` (`86` for 8.6).
    pub fn runs_on(&self, device: u32) -> bool {
        match self.kind {
            CodeKind::Sass if self.arch_specific => self.arch == device,
            CodeKind::Sass => self.arch / 10 == device / 10 && self.arch <= device,
            CodeKind::Ptx => self.arch <= device,
        }
    }
}

impl fmt::Display for GpuCode {
    /// `sm_90` / `sm_90a` for SASS, `compute_90` for PTX.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            CodeKind::Sass => {
                let a = if self.arch_specific { "a" } else { "" };
                write!(f, "sm_{}{a}", self.arch)
            }
            CodeKind::Ptx => write!(f, "compute_{}", self.arch),
        }
    }
}

/// The distinct pieces of GPU code among fat-binary entries, sorted by architecture (SASS before
/// PTX for the same number).
pub(crate) fn gpu_code(entries: &[FatbinEntry]) -> Vec<GpuCode> {
    let mut code: Vec<GpuCode> = entries
        .iter()
        .filter_map(|e| {
            Some(GpuCode {
                arch: e.arch,
                kind: e.kind?,
                arch_specific: e.arch_specific,
            })
        })
        .collect();
    code.sort();
    code.dedup();
    code
}

/// The distinct PTX ISA versions among fat-binary entries (the driver must know the ISA to
/// compile the PTX), sorted.
pub(crate) fn ptx_isa_versions(entries: &[FatbinEntry]) -> Vec<(u16, u16)> {
    let mut versions: Vec<(u16, u16)> = entries
        .iter()
        .filter(|e| e.kind == Some(CodeKind::Ptx))
        .map(|e| e.version)
        .collect();
    versions.sort();
    versions.dedup();
    versions
}

/// Libraries of the CUDA toolkit and driver, by the name before `.so`; `cudnn*` and `npp*` are
/// families matched by prefix.
const CUDA_LIBRARIES: &[&str] = &[
    "cuda",
    "cudart",
    "cublas",
    "cublasLt",
    "cufft",
    "cufftw",
    "cufile",
    "cufile_rdma",
    "cupti",
    "curand",
    "cusolver",
    "cusolverMg",
    "cusparse",
    "cusparseLt",
    "cutensor",
    "cutensorMg",
    "nccl",
    "nvblas",
    "nvfatbin",
    "nvidia-ml",
    "nvJitLink",
    "nvjpeg",
    "nvrtc",
    "nvrtc-builtins",
    "nvshmem_host",
    "nvToolsExt",
];

/// The part of a shared-library name between `lib` and `.so` (`libcudart.so.12` → `cudart`).
fn library_stem(needed: &str) -> Option<&str> {
    let rest = needed.strip_prefix("lib")?;
    let end = rest.find(".so")?;
    Some(&rest[..end])
}

/// Whether a `DT_NEEDED` entry names a CUDA library.
pub(crate) fn is_cuda_library(needed: &str) -> bool {
    library_stem(needed).is_some_and(|stem| {
        CUDA_LIBRARIES.contains(&stem) || stem.starts_with("cudnn") || stem.starts_with("npp")
    })
}

/// The CUDA runtime major of a `DT_NEEDED` entry: `libcudart.so.12` → 12 (older toolkits wrote
/// `libcudart.so.10.1`: the major is the first number).
pub(crate) fn cuda_runtime_major(needed: &str) -> Option<u32> {
    let version = needed.strip_prefix("libcudart.so.")?;
    version.split('.').next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sass(arch: u32) -> GpuCode {
        GpuCode {
            arch,
            kind: CodeKind::Sass,
            arch_specific: false,
        }
    }

    #[test]
    fn values_follow_the_provider_spelling() {
        assert_eq!(sass(86).sm_arch_value(), "86_real");
        let ptx = GpuCode {
            kind: CodeKind::Ptx,
            ..sass(120)
        };
        assert_eq!(ptx.sm_arch_value(), "120_virtual");
        assert_eq!(ptx.to_string(), "compute_120");
        assert!(!sass(35).is_provider_value());
        assert!(sass(50).is_provider_value() && sass(129).is_provider_value());
    }

    #[test]
    fn sass_runs_on_later_minors_of_its_major_only() {
        assert!(sass(80).runs_on(86));
        assert!(sass(86).runs_on(89));
        assert!(!sass(86).runs_on(80));
        assert!(!sass(80).runs_on(90), "SASS never crosses a major");
        let specific = GpuCode {
            arch_specific: true,
            ..sass(100)
        };
        assert_eq!(specific.to_string(), "sm_100a");
        assert!(specific.runs_on(100));
        assert!(!specific.runs_on(103));
    }

    #[test]
    fn ptx_runs_on_everything_at_or_above() {
        let ptx = GpuCode {
            kind: CodeKind::Ptx,
            ..sass(80)
        };
        assert!(ptx.runs_on(80) && ptx.runs_on(90) && ptx.runs_on(120));
        assert!(!ptx.runs_on(75));
    }

    #[test]
    fn cuda_libraries_by_name() {
        for lib in [
            "libcudart.so.12",
            "libcublasLt.so.13",
            "libcudnn.so.9",
            "libcudnn_ops.so.9",
            "libnppc.so.12",
            "libnvidia-ml.so.1",
            "libcuda.so.1",
        ] {
            assert!(is_cuda_library(lib), "{lib}");
        }
        for lib in [
            "libcurl.so.4",
            "libc.so.6",
            "libstdc++.so.6",
            "libnuma.so.1",
        ] {
            assert!(!is_cuda_library(lib), "{lib}");
        }
    }

    #[test]
    fn runtime_major_from_the_soname() {
        assert_eq!(cuda_runtime_major("libcudart.so.12"), Some(12));
        assert_eq!(cuda_runtime_major("libcudart.so.10.1"), Some(10));
        assert_eq!(cuda_runtime_major("libcudart.so"), None);
        assert_eq!(cuda_runtime_major("libcublas.so.12"), None);
    }
}
