//! # vari-detect
//!
//! Native providers for the wheel-variant namespaces (`spec/providers.md`): each reports the same
//! features, values and order as the reference Python plugin for the same hardware facts, without
//! running Python or third-party code.
//!
//! [`detect()`] runs every provider ([`Detection`], in [`detect::NAMESPACE_ORDER`]) and can
//! reuse the on-disk [`cache`]. Driver libraries are loaded in a child process ([`child`]): a
//! binary using this crate calls [`child::run_probe_child_if_requested`] first thing in `main`.
//!
//! ## Environment variables
//!
//! | Variable | Effect |
//! |---|---|
//! | `NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION`, `NV_VARIANT_PROVIDER_FORCE_SM_ARCH` | nvidia overrides (reference) |
//! | `AMD_VARIANT_PROVIDER_FORCE_GFX_ARCH`, `AMD_VARIANT_PROVIDER_FORCE_ROCM_VERSION` | amd overrides (reference) |
//! | `INTEL_VARIANT_PROVIDER_FORCE_DEVICE_IP` | intel override (reference) |
//! | `VARIANT_ABI_DEPENDENCY` | abi_dependency override (reference) |
//! | `HSA_OVERRIDE_GFX_VERSION`, `ROCM_PATH` | honoured by amd as ROCm does |
//! | `VARI_NVIDIA_DEVICE` | which GPU counts: `highest` (default), `lowest`, or an index |
//! | `VARI_NVML_LIBRARY`, `VARI_CUDA_LIBRARY`, `VARI_LEVEL_ZERO_LIBRARY` | load this library (name or path) instead of the default |
//! | `VARI_CACHE_DIR` | directory of the detection cache |
//! | `VARI_PROBE_TIMEOUT` | seconds a driver library may take (default 10) |
//! | `VARI_PROBE` | internal: turns the process into a probe child |
//!
//! An empty value counts as unset.

pub mod cache;
pub mod child;
pub mod context;
pub mod detect;
pub mod gpu;
pub mod overrides;
pub mod report;
pub mod sysroot;

pub mod abi;
pub mod aot;
pub mod cpu;
pub mod facts;
pub mod snapshot;

pub use context::DetectContext;
pub use detect::{detect, DetectOptions, Detection};
pub use report::ProviderReport;
pub use sysroot::Sysroot;
