//! CUDA driver API (`libcuda.so.1`) probe, used when NVML is missing (*vari*): the driver's CUDA
//! version and each device's compute capability (attributes 75/76). Runs inside the probe child.

use std::os::raw::{c_int, c_uint};

use serde::{Deserialize, Serialize};

use super::ffi::load_first;
use super::ffi::ProbeFailure;
use super::DeviceCapability;

/// `CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR`.
const ATTRIBUTE_CC_MAJOR: c_int = 75;
/// `CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR`.
const ATTRIBUTE_CC_MINOR: c_int = 76;

/// Default CUDA driver library names for this platform.
pub fn default_libraries() -> Vec<String> {
    if cfg!(windows) {
        vec!["nvcuda.dll".into()]
    } else {
        vec!["libcuda.so.1".into()]
    }
}

/// What the CUDA driver API reported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CudaFacts {
    /// The library name or path that loaded.
    pub library: String,
    /// The raw `cuDriverGetVersion` value (`1000*major + 10*minor`).
    pub driver_version: Option<i32>,
    /// Why the version could not be read.
    pub version_error: Option<String>,
    /// Devices, when `cuInit` succeeded.
    pub devices: Vec<DeviceCapability>,
    /// Why devices could not be listed (`cuInit` or `cuDeviceGetCount` failed).
    pub device_error: Option<String>,
}

type Init = unsafe extern "C" fn(c_uint) -> c_int;
type GetInt = unsafe extern "C" fn(*mut c_int) -> c_int;
type DeviceGet = unsafe extern "C" fn(*mut c_int, c_int) -> c_int;
type GetAttribute = unsafe extern "C" fn(*mut c_int, c_int, c_int) -> c_int;

/// Loads libcuda from the first loadable candidate and queries it.
pub fn probe(candidates: &[String]) -> Result<CudaFacts, ProbeFailure> {
    let lib = load_first(candidates)?;
    // SAFETY (all calls below): signatures follow cuda.h (hardware.md §2.2), `CUdevice` is an
    // `int`; every out-pointer points at a live local.
    unsafe {
        // cuDriverGetVersion does not need cuInit, so the version survives a failing init.
        let get_version = lib.require::<GetInt>("cuDriverGetVersion")?;
        let mut raw: c_int = 0;
        let code = get_version(&mut raw);
        let (driver_version, version_error) = if code == 0 && raw > 0 {
            (Some(raw), None)
        } else if code == 0 {
            (None, Some("cuDriverGetVersion: no driver (0)".to_owned()))
        } else {
            (
                None,
                Some(format!("cuDriverGetVersion: {}", error_name(code))),
            )
        };

        // What is reported: the version, and the devices or why there are none.
        let facts = |devices: Vec<DeviceCapability>, device_error: Option<String>| CudaFacts {
            library: lib.name.clone(),
            driver_version,
            version_error,
            devices,
            device_error,
        };
        let init = lib.require::<Init>("cuInit")?;
        let code = init(0);
        if code != 0 {
            let error = format!("cuInit: {}", error_name(code));
            return Ok(facts(Vec::new(), Some(error)));
        }
        let count_fn = lib.require::<GetInt>("cuDeviceGetCount")?;
        let device_get = lib.require::<DeviceGet>("cuDeviceGet")?;
        let attribute = lib.require::<GetAttribute>("cuDeviceGetAttribute")?;
        let mut count: c_int = 0;
        let code = count_fn(&mut count);
        if code != 0 {
            let error = format!("cuDeviceGetCount: {}", error_name(code));
            return Ok(facts(Vec::new(), Some(error)));
        }
        let mut devices = Vec::new();
        for ordinal in 0..count.max(0) {
            let read = || -> Result<(u32, u32), String> {
                let mut device: c_int = 0;
                let code = device_get(&mut device, ordinal);
                if code != 0 {
                    return Err(format!("cuDeviceGet: {}", error_name(code)));
                }
                let (mut major, mut minor): (c_int, c_int) = (-1, -1);
                for (attr, out) in [
                    (ATTRIBUTE_CC_MAJOR, &mut major),
                    (ATTRIBUTE_CC_MINOR, &mut minor),
                ] {
                    let code = attribute(out, attr, device);
                    if code != 0 {
                        return Err(format!(
                            "cuDeviceGetAttribute({attr}): {}",
                            error_name(code)
                        ));
                    }
                }
                match (u32::try_from(major), u32::try_from(minor)) {
                    (Ok(major), Ok(minor)) => Ok((major, minor)),
                    _ => Err(format!("invalid compute capability {major}.{minor}")),
                }
            };
            let (compute_capability, error) = match read() {
                Ok(cc) => (Some(cc), None),
                Err(e) => (None, Some(e)),
            };
            devices.push(DeviceCapability {
                // Non-negative: the loop starts at 0.
                index: ordinal.unsigned_abs(),
                compute_capability,
                error,
                uuid: None,
                mig_uuids: Vec::new(),
            });
        }
        Ok(facts(devices, None))
    }
}

/// The name of a `CUresult` code.
pub fn error_name(code: c_int) -> String {
    let name = match code {
        0 => "CUDA_SUCCESS",
        1 => "CUDA_ERROR_INVALID_VALUE",
        2 => "CUDA_ERROR_OUT_OF_MEMORY",
        3 => "CUDA_ERROR_NOT_INITIALIZED",
        4 => "CUDA_ERROR_DEINITIALIZED",
        34 => "CUDA_ERROR_STUB_LIBRARY (the toolkit's stub libcuda was loaded, not the driver's)",
        35 => "CUDA_ERROR_INSUFFICIENT_DRIVER",
        36 => "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER",
        100 => "CUDA_ERROR_NO_DEVICE",
        101 => "CUDA_ERROR_INVALID_DEVICE",
        803 => "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
        804 => "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
        999 => "CUDA_ERROR_UNKNOWN",
        _ => return format!("CUresult {code}"),
    };
    name.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_codes_have_names() {
        assert_eq!(error_name(100), "CUDA_ERROR_NO_DEVICE");
        assert_eq!(error_name(4242), "CUresult 4242");
        assert!(error_name(34).contains("stub"));
    }

    #[test]
    fn a_missing_library_is_reported_not_fatal() {
        let failure = probe(&["/nonexistent/libcuda.so.1".into()]).unwrap_err();
        assert!(matches!(failure, ProbeFailure::LibraryNotFound { .. }));
    }
}
