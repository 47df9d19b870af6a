//! # vari-scan
//!
//! What the binaries in a wheel really need, read without extracting or loading them — so that a
//! maintainer can label a build from its code instead of by hand, and a wrong label (a build
//! declared `86_real` without code for 8.6, a `v3` build that uses AVX-512) is caught before a
//! user's crash.
//!
//! For every ELF file of a wheel (recognised by its magic, not its name) it reads:
//! - the **CUDA fat binaries** (`.nv_fatbin`, `__nv_relfatbin`, and every container a
//!   `.nvFatBinSegment` wrapper points at wherever it lies: [`fatbin_layout`]): SASS per real
//!   architecture → `nvidia :: sm_arch :: NN_real`, PTX → `NN_virtual`, compressed entries
//!   included ([`parse_fatbin`]); GPU code that cannot be read makes the file's `sm_arch`
//!   unknown ([`FileScan::unreadable_gpu_code`]) rather than a guess;
//! - the **CUDA libraries** it links (`DT_NEEDED`), the runtime major from `libcudart.so.N`;
//! - for x86-64 code, the **psABI level** its instructions use and the extension that forces it
//!   (see [`X86Usage`] for why that is what the code *uses*, not always what it *requires*).
//!
//! [`scan_wheel`] gives a [`WheelScan`]: per file a [`FileScan`], for the wheel the properties the
//! code justifies ([`WheelScan::properties`]) and the declared properties it contradicts
//! ([`WheelScan::check_declared`]).
//!
//! Left to others: reading `variant.json` (vari-wheel), printing (vari-cli), and deciding what to
//! declare — the inferred properties are a floor and a cross-check, documented per property in
//! [`WheelScan::properties`].
//!
//! ```no_run
//! let scan = vari_scan::scan_wheel("jax_cuda12_plugin-0.4.38-cp311-cp311-manylinux2014_x86_64.whl")?;
//! for file in &scan.files {
//!     println!("{}: {:?} {:?}", file.path, file.sm_arch(), file.needs());
//! }
//! # Ok::<(), vari_scan::ScanError>(())
//! ```

mod check;
mod elf;
mod error;
mod fatbin;
mod file;
mod gpu;
mod infer;
mod limits;
mod locate;
mod member;
mod wheel;
mod x86;

pub use check::ScanWarning;
pub use elf::scan_elf;
pub use error::{ScanError, ScanProblem};
pub use fatbin::{
    parse_fatbin, parse_fatbin_containers, CodeKind, Compression, FatbinContainer, FatbinEntry,
    FatbinError, CONTAINER_SIZE_OFFSET, FATBIN_MAGIC,
};
pub use file::FileScan;
pub use gpu::GpuCode;
pub use locate::{fatbin_layout, FatbinLayout, FatbinRegion, RegionKind, WRAPPER_MAGIC};
pub use wheel::{read_elf_members, scan_wheel, WheelScan};
pub use x86::{
    CpuBelowLevel, ExtensionUse, RuntimeDispatch, X86Level, X86Usage, CPUS_BELOW_LEVELS,
    CPU_FEATURE_SYMBOLS,
};
