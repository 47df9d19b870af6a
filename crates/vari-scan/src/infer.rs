//! The variant properties a wheel's binaries justify, and only those that are sound to infer.
//!
//! - `nvidia :: sm_arch`: every value of every file's GPU code that the provider knows
//!   (`50_real` … `129_real`, `…_virtual`). A variant matches a GPU when at least one of its
//!   values is supported, so the union is the set of GPUs some kernel of the wheel can run on
//!   ([`WheelScan::check_declared`] then tells which files lack code for one of them). When a
//!   file's GPU code cannot all be read ([`FileScan::unreadable_gpu_code`]: kernels in a table
//!   of the library's own, a wrapper pointing at nothing readable), no `sm_arch` value is
//!   inferred at all: "unknown", as for an x86-64 level, never the values of the part that was
//!   read (which would label a build for GPUs it may not serve).
//! - `nvidia :: cuda_version_lower_bound :: N.0` when every file that links the CUDA runtime links
//!   the same major `N`: a `libcudart.so.N` needs a driver for CUDA `N.0` or newer (minor-version
//!   compatibility, `hardware.md` §1.2). It is a lower bound, not the bound: a wheel built with
//!   12.8 that relies on PTX JIT or on newer runtime features needs a 12.8 driver, which the
//!   binary does not say. Not inferred: a statically linked runtime (no `DT_NEEDED`), the upper
//!   bound, and any bound when files disagree.
//! - `x86_64 :: level :: vN` for the highest level the files require
//!   ([`X86Usage::required_level`](crate::X86Usage::required_level)). Files with runtime-dispatch
//!   evidence require no known level and count for nothing: code that checks the CPU before using
//!   AVX-512 does not require AVX-512, so it must not exclude older CPUs. A file that uses only
//!   part of a level (AVX without the rest of `v3`) needs more than the level below it, so no
//!   level is inferred unless another file requires its level anyway: "unknown" rather than a
//!   level that shuts out CPUs the code runs on or admits CPUs it crashes on. `v1` is the
//!   baseline every x86-64 CPU has and is not written.

use vari_core::Property;

use crate::file::FileScan;
use crate::wheel::WheelScan;
use crate::x86::X86Level;

/// Builds a property from parts this module spells itself (valid names by construction).
fn property(namespace: &str, feature: &str, value: &str) -> Option<Property> {
    format!("{namespace} :: {feature} :: {value}").parse().ok()
}

impl WheelScan {
    /// The properties the binaries justify, sorted (see the module docs for what is inferred).
    ///
    /// ```no_run
    /// let scan = vari_scan::scan_wheel("cupy_cuda12x-13.6.0-cp312-cp312-manylinux2014_x86_64.whl")?;
    /// let properties: Vec<String> = scan.properties().iter().map(ToString::to_string).collect();
    /// // e.g. ["nvidia :: cuda_version_lower_bound :: 12.0", "nvidia :: sm_arch :: 80_real", …]
    /// # Ok::<(), vari_scan::ScanError>(())
    /// ```
    pub fn properties(&self) -> Vec<Property> {
        // A file whose GPU code cannot all be read may run on GPUs the rest does not name, or on
        // none of them: no value is sound then.
        let gpu_known = self.files.iter().all(FileScan::gpu_code_known);
        let mut properties: Vec<Property> = self
            .files
            .iter()
            .filter(|_| gpu_known)
            .flat_map(|f| &f.gpu_code)
            .filter(|code| code.is_provider_value())
            .filter_map(|code| property("nvidia", "sm_arch", &code.sm_arch_value()))
            .collect();
        if let Some(major) = self.cuda_runtime() {
            properties.extend(property(
                "nvidia",
                "cuda_version_lower_bound",
                &format!("{major}.0"),
            ));
        }
        if let Some(level) = self.required_x86_64_level().filter(|&l| l > X86Level::V1) {
            properties.extend(property("x86_64", "level", level.as_str()));
        }
        properties.sort_by(|a, b| property_order(a).cmp(&property_order(b)));
        properties.dedup();
        properties
    }

    /// The CUDA runtime major all files that link one agree on; `None` when none links one, or
    /// they disagree.
    pub fn cuda_runtime(&self) -> Option<u32> {
        let mut majors = self.files.iter().filter_map(|f| f.cuda_runtime);
        let first = majors.next()?;
        majors.all(|m| m == first).then_some(first)
    }

    /// The highest x86-64 level any file's code uses (dispatched code included).
    pub fn used_x86_64_level(&self) -> Option<X86Level> {
        self.files.iter().filter_map(|f| f.x86_64_level()).max()
    }

    /// The x86-64 level the wheel requires, as far as its binaries tell: the highest level a
    /// file requires, or `None` when a file that shows no sign of runtime dispatch uses part of
    /// a higher level (see the module docs).
    pub fn required_x86_64_level(&self) -> Option<X86Level> {
        let mut required = None;
        let mut partial = None;
        for usage in self.files.iter().filter_map(|f| f.x86_64.as_ref()) {
            if usage.runtime_dispatch.is_some() {
                continue;
            }
            match usage.required_level() {
                Some(level) => required = required.max(Some(level)),
                None => partial = partial.max(Some(usage.level)),
            }
        }
        match (required, partial) {
            (Some(r), Some(p)) if r >= p => Some(r),
            (_, Some(_)) => None,
            (r, None) => r,
        }
    }
}

/// The order properties are listed in: by namespace and feature, then values by their leading
/// number (`50_real` before `100_real`, as architectures go), then as text.
fn property_order(property: &Property) -> (&str, &str, Option<u64>, &str) {
    let value = property.value.as_str();
    let digits = value.len() - value.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    (
        property.namespace.as_str(),
        property.feature.as_str(),
        value[..digits].parse().ok(),
        value,
    )
}

#[cfg(test)]
mod order_tests {
    use super::*;

    #[test]
    fn architectures_are_listed_in_numeric_order() {
        let mut values: Vec<Property> =
            ["100_real", "50_real", "90_virtual", "90_real", "120_real"]
                .iter()
                .map(|v| format!("nvidia :: sm_arch :: {v}").parse().unwrap())
                .collect();
        values.push(
            "nvidia :: cuda_version_lower_bound :: 12.0"
                .parse()
                .unwrap(),
        );
        values.sort_by(|a, b| property_order(a).cmp(&property_order(b)));
        let text: Vec<String> = values.iter().map(ToString::to_string).collect();
        assert_eq!(
            text,
            [
                "nvidia :: cuda_version_lower_bound :: 12.0",
                "nvidia :: sm_arch :: 50_real",
                "nvidia :: sm_arch :: 90_real",
                "nvidia :: sm_arch :: 90_virtual",
                "nvidia :: sm_arch :: 100_real",
                "nvidia :: sm_arch :: 120_real",
            ]
        );
    }
}
