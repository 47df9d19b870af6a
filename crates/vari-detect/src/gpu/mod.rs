//! GPU providers: `nvidia`, `amd` and `intel` (`spec/providers.md`), and the driver-library probes
//! they run in a child process ([`crate::child`]).
//!
//! Library paths can be overridden (tests load stub libraries this way):
//! `VARI_NVML_LIBRARY`, `VARI_CUDA_LIBRARY`, `VARI_LEVEL_ZERO_LIBRARY` (a file name or path; when
//! set, only that library is tried).

pub mod amd;
#[allow(unsafe_code)] // FFI: the CUDA driver API calls.
pub mod cuda;
mod driver_branches;
// Calls into driver libraries: the only place besides `platform`'s glibc call where unsafe code
// is allowed, because loading a C library and calling it cannot be done safely.
#[allow(unsafe_code)]
mod ffi;
pub mod intel;
#[allow(unsafe_code)] // FFI: the Level Zero calls.
pub mod level_zero;
pub mod nvidia;
#[allow(unsafe_code)] // FFI: the NVML calls.
pub mod nvml;
pub mod search;
pub mod visible;

use serde::{Deserialize, Serialize};
use vari_core::{FeatureName, FeatureSupport, FeatureValue};

use crate::DetectContext;

pub use ffi::ProbeFailure;

/// One GPU's compute capability as read from a driver library (`None` when the call failed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceCapability {
    /// The library's device index.
    pub index: u32,
    /// `(major, minor)`, when the library reported it.
    pub compute_capability: Option<(u32, u32)>,
    /// Why the device could not be read (it is then skipped).
    pub error: Option<String>,
    /// Its UUID (`GPU-…`), when the library reported one (NVML).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
    /// The UUIDs (`MIG-…`) of its MIG devices, when MIG is enabled (NVML).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mig_uuids: Vec<String>,
}

/// The candidate driver libraries: the override variable's value alone, else the defaults and
/// then their copies in the places [`search`] knows.
pub(crate) fn driver_library_candidates(
    ctx: &DetectContext,
    variable: &str,
    defaults: Vec<String>,
) -> Vec<String> {
    match ctx.var(variable) {
        Some(path) => vec![path.to_owned()],
        None => search::candidates(ctx, defaults),
    }
}

/// The candidate library names: the override variable's value alone, else the defaults.
pub(crate) fn library_candidates(
    ctx: &DetectContext,
    variable: &str,
    defaults: &[&str],
) -> Vec<String> {
    match ctx.var(variable) {
        Some(path) => vec![path.to_owned()],
        None => defaults.iter().map(|s| (*s).to_owned()).collect(),
    }
}

/// Parses `M.m` (both decimal integers).
pub(crate) fn parse_major_minor(text: &str) -> Option<(u32, u32)> {
    let (major, minor) = text.trim().split_once('.')?;
    Some((parse_decimal(major)?, parse_decimal(minor)?))
}

/// A non-empty run of ASCII digits.
pub(crate) fn parse_decimal(text: &str) -> Option<u32> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// A feature built from generated strings. Values produced by the providers are lowercase
/// alphanumerics, dots and underscores, which are always valid; anything else is dropped rather
/// than failing detection.
pub(crate) fn feature(
    name: &str,
    values: Vec<String>,
    multi_value: bool,
) -> Option<FeatureSupport> {
    let name = FeatureName::new(name).ok()?;
    let values: Vec<FeatureValue> = values
        .into_iter()
        .filter_map(|v| FeatureValue::new(v).ok())
        .collect();
    (!values.is_empty()).then_some(FeatureSupport {
        name,
        values,
        multi_value,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn major_minor_is_strict() {
        assert_eq!(parse_major_minor("8.6"), Some((8, 6)));
        assert_eq!(parse_major_minor(" 12.0 "), Some((12, 0)));
        assert_eq!(parse_major_minor("8"), None);
        assert_eq!(parse_major_minor("8.6.1"), None);
        assert_eq!(parse_major_minor("a.b"), None);
        assert_eq!(parse_major_minor("-1.0"), None);
        assert_eq!(parse_major_minor(".5"), None);
    }

    #[test]
    fn empty_features_are_omitted() {
        assert!(feature("sm_arch", vec![], true).is_none());
        let f = feature("sm_arch", vec!["86_real".into(), "Bad Value".into()], true).unwrap();
        assert_eq!(f.values.len(), 1);
        assert!(f.multi_value);
    }

    #[test]
    fn library_override_replaces_defaults() {
        let mut ctx = DetectContext::from_process_env(crate::Sysroot::new("/nonexistent"));
        ctx.env.clear();
        assert_eq!(library_candidates(&ctx, "X_LIB", &["a", "b"]), ["a", "b"]);
        ctx.env.insert("X_LIB".into(), "/stub/x.so".into());
        assert_eq!(
            library_candidates(&ctx, "X_LIB", &["a", "b"]),
            ["/stub/x.so"]
        );
    }
}
