//! Declared properties against what the binaries need: the mismatches that crash users.
//!
//! - `nvidia :: sm_arch :: NN_real` (or `NN_virtual`) declared, and a file that carries GPU code
//!   has none that runs on compute capability `NN`: no SASS of the same major at or below `NN`
//!   (architecture-specific SASS only for exactly `NN`) and no PTX at or below `NN`. Such a
//!   wheel is installed on that GPU and fails at the first kernel launch.
//! - `x86_64 :: level :: vN` declared, and a file uses instructions of a higher level: SIGILL on a
//!   `vN` CPU, unless the code is reached only after a runtime CPU check (the warning says when
//!   the file shows signs of one).
//! - `nvidia :: cuda_version_lower_bound` declared below the CUDA runtime major a file links: a
//!   driver for the declared version cannot run that runtime.
//!
//! Warnings are data; the front-end decides how to show them.

use std::fmt;
use std::path::PathBuf;

use vari_core::sm_arch::SmArch;
use vari_core::Property;

use crate::file::FileScan;
use crate::wheel::WheelScan;
use crate::x86::X86Level;

/// A declared property that the wheel's binaries contradict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanWarning {
    /// The wheel.
    pub wheel: PathBuf,
    /// The member whose code contradicts the declaration; `None` when the wheel as a whole does.
    pub member: Option<String>,
    /// What disagrees, naming the property.
    pub message: String,
}

impl fmt::Display for ScanWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.wheel.display())?;
        if let Some(member) = &self.member {
            write!(f, "{member}: ")?;
        }
        f.write_str(&self.message)
    }
}

/// The architecture number of an `sm_arch` value: `86_real` / `80_virtual` → 86 / 80.
fn sm_arch_number(value: &str) -> Option<u32> {
    value.parse::<SmArch>().ok().map(|v| v.arch)
}

/// The major of a `cuda_version_lower_bound` value: `12.8` / `12` → 12.
fn cuda_major(value: &str) -> Option<u32> {
    value.split('.').next()?.parse().ok()
}

impl WheelScan {
    /// The warnings for `declared` (the wheel's own `variant.json` properties) against the scan.
    ///
    /// ```no_run
    /// use vari_core::Property;
    /// let scan = vari_scan::scan_wheel("pkg-1.0-cp312-cp312-manylinux_2_28_x86_64-cu12.whl")?;
    /// let declared: Vec<Property> = vec!["nvidia :: sm_arch :: 86_real".parse().unwrap()];
    /// for warning in scan.check_declared(&declared) {
    ///     eprintln!("warning: {warning}");
    /// }
    /// # Ok::<(), vari_scan::ScanError>(())
    /// ```
    pub fn check_declared<'a>(
        &self,
        declared: impl IntoIterator<Item = &'a Property>,
    ) -> Vec<ScanWarning> {
        let mut warnings = Vec::new();
        for property in declared {
            let (ns, feature, value) = (
                property.namespace.as_str(),
                property.feature.as_str(),
                property.value.as_str(),
            );
            match (ns, feature) {
                ("nvidia", "sm_arch") => {
                    if let Some(device) = sm_arch_number(value) {
                        self.check_sm_arch(property, device, &mut warnings);
                    }
                }
                ("x86_64", "level") => {
                    if let Some(level) = X86Level::parse(value) {
                        self.check_x86_64_level(property, level, &mut warnings);
                    }
                }
                ("nvidia", "cuda_version_lower_bound") => {
                    if let Some(major) = cuda_major(value) {
                        self.check_cuda_lower_bound(property, major, &mut warnings);
                    }
                }
                _ => {}
            }
        }
        warnings
    }

    fn warning(&self, file: Option<&FileScan>, message: String) -> ScanWarning {
        ScanWarning {
            wheel: self.wheel.clone(),
            member: file.map(|f| f.path.clone()),
            message,
        }
    }

    fn check_sm_arch(&self, property: &Property, device: u32, warnings: &mut Vec<ScanWarning>) {
        let gpu_files: Vec<&FileScan> = self.files.iter().filter(|f| f.has_gpu_code()).collect();
        if gpu_files.is_empty() {
            warnings.push(self.warning(
                None,
                format!(
                    "declares `{property}` but no binary in the wheel carries CUDA code \
                     (it may come from another wheel or be compiled at run time)"
                ),
            ));
            return;
        }
        for file in gpu_files {
            // What a file whose GPU code cannot be read runs on is unknown: nothing to contradict.
            if !file.gpu_code_known() || file.gpu_code.iter().any(|code| code.runs_on(device)) {
                continue;
            }
            let carried: Vec<String> = file.gpu_code.iter().map(ToString::to_string).collect();
            warnings.push(self.warning(
                Some(file),
                format!(
                    "declares `{property}` but has no code that runs on compute capability \
                     {}.{} (no SASS for {}.x at or below it, no PTX at or below it; it carries {})",
                    device / 10,
                    device % 10,
                    device / 10,
                    carried.join(" ")
                ),
            ));
        }
    }

    fn check_x86_64_level(
        &self,
        property: &Property,
        declared: X86Level,
        warnings: &mut Vec<ScanWarning>,
    ) {
        for file in &self.files {
            let Some(x86) = &file.x86_64 else { continue };
            if x86.level <= declared {
                continue;
            }
            let mut message = format!(
                "declares `{property}` but its code uses {} instructions",
                x86.level
            );
            if let Some(forced) = &x86.forced_by {
                message.push_str(&format!(": {forced}"));
            }
            match &x86.runtime_dispatch {
                Some(dispatch) => message.push_str(&format!(
                    "; it also checks the CPU at run time ({dispatch}), so these may run only \
                     on CPUs that have them"
                )),
                None => message.push_str(&format!(
                    "; no runtime CPU check was found in this file: a {declared} CPU may crash \
                     with SIGILL"
                )),
            }
            warnings.push(self.warning(Some(file), message));
        }
    }

    fn check_cuda_lower_bound(
        &self,
        property: &Property,
        declared: u32,
        warnings: &mut Vec<ScanWarning>,
    ) {
        for file in &self.files {
            let Some(runtime) = file.cuda_runtime else {
                continue;
            };
            if runtime > declared {
                warnings.push(self.warning(
                    Some(file),
                    format!(
                        "declares `{property}` but links libcudart.so.{runtime}, which needs a \
                         driver for CUDA {runtime}.0 or newer"
                    ),
                ));
            }
        }
    }
}
