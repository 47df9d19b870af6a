//! NVML (`libnvidia-ml.so.1`) probe: the driver's CUDA version and each GPU's compute capability,
//! following the reference flow (`hardware.md` §2.1). Runs inside the probe child.

use std::os::raw::{c_char, c_int, c_uint, c_void};

use serde::{Deserialize, Serialize};

use super::ffi::ProbeFailure;
use super::ffi::{c_buffer_to_string, load_first};
use super::DeviceCapability;

/// Default NVML library names for this platform, in the order tried.
pub fn default_libraries() -> Vec<String> {
    if cfg!(windows) {
        let windir = std::env::var("WINDIR").unwrap_or_else(|_| r"C:\Windows".into());
        let program_files =
            std::env::var("ProgramFiles").unwrap_or_else(|_| r"C:\Program Files".into());
        vec![
            format!(r"{windir}\System32\nvml.dll"),
            format!(r"{program_files}\NVIDIA Corporation\NVSMI\nvml.dll"),
        ]
    } else {
        vec!["libnvidia-ml.so.1".into()]
    }
}

/// What NVML reported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NvmlFacts {
    /// The library name or path that loaded.
    pub library: String,
    /// The kernel driver version (`nvmlSystemGetDriverVersion`), e.g. `570.86.15`.
    pub driver_version: Option<String>,
    /// The raw CUDA driver version (`1000*major + 10*minor`).
    pub cuda_driver_version: Option<i32>,
    /// The call that gave the CUDA version (`nvmlSystemGetCudaDriverVersion_v2` or the v1 call).
    pub cuda_call: Option<String>,
    /// Why the CUDA version could not be read.
    pub cuda_error: Option<String>,
    /// Every device NVML counted, readable or not.
    pub devices: Vec<DeviceCapability>,
    /// Why the devices could not be counted.
    pub count_error: Option<String>,
}

type NoArgs = unsafe extern "C" fn() -> c_int;
type GetInt = unsafe extern "C" fn(*mut c_int) -> c_int;
type GetUint = unsafe extern "C" fn(*mut c_uint) -> c_int;
type GetString = unsafe extern "C" fn(*mut c_char, c_uint) -> c_int;
type HandleByIndex = unsafe extern "C" fn(c_uint, *mut *mut c_void) -> c_int;
type ComputeCapability = unsafe extern "C" fn(*mut c_void, *mut c_int, *mut c_int) -> c_int;
type DeviceString = unsafe extern "C" fn(*mut c_void, *mut c_char, c_uint) -> c_int;
type DeviceUint = unsafe extern "C" fn(*mut c_void, *mut c_uint) -> c_int;
type MigHandleByIndex = unsafe extern "C" fn(*mut c_void, c_uint, *mut *mut c_void) -> c_int;

/// `NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE`.
const DRIVER_VERSION_BUFFER: usize = 80;
/// `NVML_DEVICE_UUID_V2_BUFFER_SIZE`.
const UUID_BUFFER: usize = 96;
/// No GPU has more MIG devices than this (seven on an A100 or H100); a library saying more is
/// not believed further.
const MAX_MIG_DEVICES: c_uint = 16;

/// Loads NVML from the first loadable candidate and queries it.
pub fn probe(candidates: &[String]) -> Result<NvmlFacts, ProbeFailure> {
    let lib = load_first(candidates)?;
    // SAFETY (all calls below): signatures follow nvml.h (hardware.md §2.1); every out-pointer
    // points at a live local of the declared type; handles come from NVML itself.
    unsafe {
        let init = lib.require::<NoArgs>("nvmlInit_v2")?;
        let code = init();
        if code != 0 {
            return Err(lib.call_failed("nvmlInit_v2", code.into(), error_name(code)));
        }
        let shutdown = lib.optional::<NoArgs>("nvmlShutdown");
        let facts = query(&lib);
        // Always shut down, whatever the queries returned (reference behaviour).
        if let Some(shutdown) = shutdown {
            shutdown();
        }
        Ok(facts)
    }
}

/// Everything after a successful `nvmlInit_v2`.
unsafe fn query(lib: &super::ffi::Loaded) -> NvmlFacts {
    let driver_version = lib
        .optional::<GetString>("nvmlSystemGetDriverVersion")
        .and_then(|f| {
            let mut buffer = [0 as c_char; DRIVER_VERSION_BUFFER];
            (f(buffer.as_mut_ptr(), DRIVER_VERSION_BUFFER as c_uint) == 0)
                .then(|| c_buffer_to_string(&buffer))
        })
        .filter(|s| !s.is_empty());

    let mut cuda_driver_version = None;
    let mut cuda_call = None;
    let mut errors = Vec::new();
    for call in [
        "nvmlSystemGetCudaDriverVersion_v2",
        "nvmlSystemGetCudaDriverVersion",
    ] {
        let Some(f) = lib.optional::<GetInt>(call) else {
            errors.push(format!("{call}: missing"));
            continue;
        };
        let mut version: c_int = 0;
        let code = f(&mut version);
        if code == 0 {
            cuda_driver_version = Some(version);
            cuda_call = Some(call.to_owned());
            break;
        }
        errors.push(format!("{call}: {}", error_name(code)));
    }
    let cuda_error = cuda_driver_version.is_none().then(|| errors.join("; "));

    let (devices, count_error) = devices(lib);
    NvmlFacts {
        library: lib.name.clone(),
        driver_version,
        cuda_driver_version,
        cuda_call,
        cuda_error,
        devices,
        count_error,
    }
}

unsafe fn devices(lib: &super::ffi::Loaded) -> (Vec<DeviceCapability>, Option<String>) {
    let Some(count_fn) = lib
        .optional::<GetUint>("nvmlDeviceGetCount_v2")
        .or_else(|| lib.optional::<GetUint>("nvmlDeviceGetCount"))
    else {
        return (Vec::new(), Some("nvmlDeviceGetCount_v2: missing".into()));
    };
    let mut count: c_uint = 0;
    let code = count_fn(&mut count);
    if code != 0 {
        return (
            Vec::new(),
            Some(format!("nvmlDeviceGetCount_v2: {}", error_name(code))),
        );
    }
    let handle_fn = lib.optional::<HandleByIndex>("nvmlDeviceGetHandleByIndex_v2");
    let cc_fn = lib.optional::<ComputeCapability>("nvmlDeviceGetCudaComputeCapability");
    let uuid_fn = lib.optional::<DeviceString>("nvmlDeviceGetUUID");
    let mig_count_fn = lib.optional::<DeviceUint>("nvmlDeviceGetMaxMigDeviceCount");
    let mig_fn = lib.optional::<MigHandleByIndex>("nvmlDeviceGetMigDeviceHandleByIndex");
    // A device's UUID, when the library tells it (for the visible-device variables).
    let uuid_of = |handle: *mut c_void| -> Option<String> {
        let f = uuid_fn.as_ref()?;
        let mut buffer = [0 as c_char; UUID_BUFFER];
        (f(handle, buffer.as_mut_ptr(), UUID_BUFFER as c_uint) == 0)
            .then(|| c_buffer_to_string(&buffer))
            .filter(|s| !s.is_empty())
    };
    // The UUIDs of a GPU's MIG devices (none when MIG is off: the calls fail).
    let mig_uuids_of = |handle: *mut c_void| -> Vec<String> {
        let (Some(count_fn), Some(mig_fn)) = (mig_count_fn.as_ref(), mig_fn.as_ref()) else {
            return Vec::new();
        };
        let mut count: c_uint = 0;
        if count_fn(handle, &mut count) != 0 {
            return Vec::new();
        }
        (0..count.min(MAX_MIG_DEVICES))
            .filter_map(|i| {
                let mut mig: *mut c_void = std::ptr::null_mut();
                (mig_fn(handle, i, &mut mig) == 0 && !mig.is_null())
                    .then(|| uuid_of(mig))
                    .flatten()
            })
            .collect()
    };
    let mut devices = Vec::new();
    for index in 0..count {
        let mut identity = (None, Vec::new());
        let mut read = || -> Result<(u32, u32), String> {
            let handle_fn = handle_fn
                .as_ref()
                .ok_or("nvmlDeviceGetHandleByIndex_v2: missing")?;
            let cc_fn = cc_fn
                .as_ref()
                .ok_or("nvmlDeviceGetCudaComputeCapability: missing")?;
            let mut handle: *mut c_void = std::ptr::null_mut();
            let code = handle_fn(index, &mut handle);
            if code != 0 {
                return Err(format!(
                    "nvmlDeviceGetHandleByIndex_v2: {}",
                    error_name(code)
                ));
            }
            identity = (uuid_of(handle), mig_uuids_of(handle));
            let (mut major, mut minor): (c_int, c_int) = (-1, -1);
            let code = cc_fn(handle, &mut major, &mut minor);
            if code != 0 {
                return Err(format!(
                    "nvmlDeviceGetCudaComputeCapability: {}",
                    error_name(code)
                ));
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
        let (uuid, mig_uuids) = identity;
        devices.push(DeviceCapability {
            index,
            compute_capability,
            error,
            uuid,
            mig_uuids,
        });
    }
    (devices, None)
}

/// The name of an `nvmlReturn_t` code.
pub fn error_name(code: c_int) -> &'static str {
    match code {
        0 => "NVML_SUCCESS",
        1 => "NVML_ERROR_UNINITIALIZED",
        2 => "NVML_ERROR_INVALID_ARGUMENT",
        3 => "NVML_ERROR_NOT_SUPPORTED",
        4 => "NVML_ERROR_NO_PERMISSION",
        5 => "NVML_ERROR_ALREADY_INITIALIZED",
        6 => "NVML_ERROR_NOT_FOUND",
        7 => "NVML_ERROR_INSUFFICIENT_SIZE",
        8 => "NVML_ERROR_INSUFFICIENT_POWER",
        9 => "NVML_ERROR_DRIVER_NOT_LOADED",
        10 => "NVML_ERROR_TIMEOUT",
        11 => "NVML_ERROR_IRQ_ISSUE",
        12 => "NVML_ERROR_LIBRARY_NOT_FOUND",
        13 => "NVML_ERROR_FUNCTION_NOT_FOUND",
        14 => "NVML_ERROR_CORRUPTED_INFOROM",
        15 => "NVML_ERROR_GPU_IS_LOST",
        16 => "NVML_ERROR_RESET_REQUIRED",
        17 => "NVML_ERROR_OPERATING_SYSTEM",
        18 => "NVML_ERROR_LIB_RM_VERSION_MISMATCH",
        19 => "NVML_ERROR_IN_USE",
        20 => "NVML_ERROR_MEMORY",
        21 => "NVML_ERROR_NO_DATA",
        22 => "NVML_ERROR_VGPU_ECC_NOT_SUPPORTED",
        23 => "NVML_ERROR_INSUFFICIENT_RESOURCES",
        24 => "NVML_ERROR_FREQ_NOT_SUPPORTED",
        25 => "NVML_ERROR_ARGUMENT_VERSION_MISMATCH",
        26 => "NVML_ERROR_DEPRECATED",
        27 => "NVML_ERROR_NOT_READY",
        28 => "NVML_ERROR_GPU_NOT_FOUND",
        29 => "NVML_ERROR_INVALID_STATE",
        30 => "NVML_ERROR_RESET_TYPE_NOT_SUPPORTED",
        _ => "NVML_ERROR_UNKNOWN",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_codes_have_names() {
        assert_eq!(error_name(9), "NVML_ERROR_DRIVER_NOT_LOADED");
        assert_eq!(error_name(999), "NVML_ERROR_UNKNOWN");
        assert_eq!(error_name(-5), "NVML_ERROR_UNKNOWN");
    }

    #[test]
    fn a_missing_library_is_reported_not_fatal() {
        let failure = probe(&["/nonexistent/libnvidia-ml.so.1".into()]).unwrap_err();
        assert!(matches!(failure, ProbeFailure::LibraryNotFound { .. }));
    }

    #[test]
    fn defaults_name_the_linux_soname() {
        if cfg!(target_os = "linux") {
            assert_eq!(default_libraries(), ["libnvidia-ml.so.1"]);
        }
    }
}
