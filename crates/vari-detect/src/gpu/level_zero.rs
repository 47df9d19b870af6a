//! Level Zero (`libze_loader.so.1`) probe: each GPU's vendor and IP version (GMDID), read through
//! `zeDeviceGetProperties` with the IP-version extension (`hardware.md` §4). Runs inside the probe
//! child.

use std::os::raw::{c_char, c_void};

use serde::{Deserialize, Serialize};

use super::ffi::ProbeFailure;
use super::ffi::{c_buffer_to_string, load_first, Loaded};

/// `ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES`.
const STYPE_DEVICE_PROPERTIES: u32 = 0x3;
/// `ZE_STRUCTURE_TYPE_DEVICE_IP_VERSION_EXT`.
const STYPE_DEVICE_IP_VERSION_EXT: u32 = 0x1000f;
/// `ZE_STRUCTURE_TYPE_INIT_DRIVER_TYPE_DESC`.
const STYPE_INIT_DRIVER_TYPE_DESC: u32 = 0x0002_0021;
/// `ZE_INIT_DRIVER_TYPE_FLAG_GPU` / `ZE_INIT_FLAG_GPU_ONLY`.
const FLAG_GPU: u32 = 1;
/// `ZE_MAX_DEVICE_NAME`.
const MAX_DEVICE_NAME: usize = 256;

/// Default Level Zero loader names for this platform.
pub fn default_libraries() -> Vec<String> {
    if cfg!(windows) {
        vec!["ze_loader.dll".into()]
    } else {
        vec!["libze_loader.so.1".into()]
    }
}

/// One device as Level Zero describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LevelZeroDevice {
    /// PCI vendor ID (`0x8086` for Intel).
    pub vendor_id: u32,
    /// PCI device ID.
    pub device_id: u32,
    /// The device name.
    pub name: String,
    /// The raw IP version (GMDID), when the extension answered.
    pub ip_version: Option<u32>,
    /// Why the device could not be read.
    pub error: Option<String>,
}

/// What Level Zero reported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LevelZeroFacts {
    /// The library name or path that loaded.
    pub library: String,
    /// How drivers were enumerated (`zeInitDrivers` or `zeInit+zeDriverGet`).
    pub init: String,
    /// All devices of all GPU drivers.
    pub devices: Vec<LevelZeroDevice>,
}

/// `ze_init_driver_type_desc_t`.
#[repr(C)]
struct InitDriverTypeDesc {
    stype: u32,
    p_next: *const c_void,
    flags: u32,
}

/// `ze_device_ip_version_ext_t`.
#[repr(C)]
struct IpVersionExt {
    stype: u32,
    p_next: *const c_void,
    ip_version: u32,
}

/// `ze_device_properties_t` (Level Zero 1.x), with spare room at the end in case a newer loader
/// writes more than the struct this code was written against.
#[repr(C)]
struct DeviceProperties {
    stype: u32,
    p_next: *mut c_void,
    device_type: u32,
    vendor_id: u32,
    device_id: u32,
    flags: u32,
    subdevice_id: u32,
    core_clock_rate: u32,
    max_mem_alloc_size: u64,
    max_hardware_contexts: u32,
    max_command_queue_priority: u32,
    num_threads_per_eu: u32,
    physical_eu_simd_width: u32,
    num_eus_per_subslice: u32,
    num_subslices_per_slice: u32,
    num_slices: u32,
    timer_resolution: u64,
    timestamp_valid_bits: u32,
    kernel_timestamp_valid_bits: u32,
    uuid: [u8; 16],
    name: [c_char; MAX_DEVICE_NAME],
    spare: [u8; 256],
}

type Handle = *mut c_void;
type InitDrivers = unsafe extern "C" fn(*mut u32, *mut Handle, *mut InitDriverTypeDesc) -> u32;
type Init = unsafe extern "C" fn(u32) -> u32;
type DriverGet = unsafe extern "C" fn(*mut u32, *mut Handle) -> u32;
type DeviceGet = unsafe extern "C" fn(Handle, *mut u32, *mut Handle) -> u32;
type GetProperties = unsafe extern "C" fn(Handle, *mut DeviceProperties) -> u32;

/// Loads Level Zero from the first loadable candidate and lists GPU devices.
pub fn probe(candidates: &[String]) -> Result<LevelZeroFacts, ProbeFailure> {
    let lib = load_first(candidates)?;
    // SAFETY (all calls below): signatures and struct layouts follow ze_api.h 1.x
    // (hardware.md §4); buffers are sized by the counts the library returned.
    unsafe {
        let (drivers, init) = drivers(&lib)?;
        let device_get = lib.require::<DeviceGet>("zeDeviceGet")?;
        let get_properties = lib.require::<GetProperties>("zeDeviceGetProperties")?;
        let mut devices = Vec::new();
        for driver in drivers {
            let mut count = 0u32;
            let code = device_get(driver, &mut count, std::ptr::null_mut());
            if code != 0 {
                return Err(lib.call_failed("zeDeviceGet", code.into(), &result_name(code)));
            }
            let mut handles: Vec<Handle> = vec![std::ptr::null_mut(); count as usize];
            let code = device_get(driver, &mut count, handles.as_mut_ptr());
            if code != 0 {
                return Err(lib.call_failed("zeDeviceGet", code.into(), &result_name(code)));
            }
            handles.truncate(count as usize);
            for handle in handles {
                devices.push(read_device(&get_properties, handle));
            }
        }
        Ok(LevelZeroFacts {
            library: lib.name.clone(),
            init,
            devices,
        })
    }
}

unsafe fn read_device(get_properties: &GetProperties, handle: Handle) -> LevelZeroDevice {
    let mut ip = IpVersionExt {
        stype: STYPE_DEVICE_IP_VERSION_EXT,
        p_next: std::ptr::null(),
        ip_version: 0,
    };
    // All-zero is a valid bit pattern for this plain C struct.
    let mut props: DeviceProperties = std::mem::zeroed();
    props.stype = STYPE_DEVICE_PROPERTIES;
    props.p_next = (&mut ip as *mut IpVersionExt).cast();
    let code = get_properties(handle, &mut props);
    if code != 0 {
        return LevelZeroDevice {
            vendor_id: 0,
            device_id: 0,
            name: String::new(),
            ip_version: None,
            error: Some(format!("zeDeviceGetProperties: {}", result_name(code))),
        };
    }
    LevelZeroDevice {
        vendor_id: props.vendor_id,
        device_id: props.device_id,
        name: c_buffer_to_string(&props.name),
        // 0 means the extension was not filled in.
        ip_version: (ip.ip_version != 0).then_some(ip.ip_version),
        error: None,
    }
}

/// The GPU driver handles: `zeInitDrivers` (Level Zero ≥ 1.10), else `zeInit` + `zeDriverGet`.
unsafe fn drivers(lib: &Loaded) -> Result<(Vec<Handle>, String), ProbeFailure> {
    if let Some(init_drivers) = lib.optional::<InitDrivers>("zeInitDrivers") {
        let mut desc = InitDriverTypeDesc {
            stype: STYPE_INIT_DRIVER_TYPE_DESC,
            p_next: std::ptr::null(),
            flags: FLAG_GPU,
        };
        let mut count = 0u32;
        let code = init_drivers(&mut count, std::ptr::null_mut(), &mut desc);
        if code == 0 {
            let mut handles: Vec<Handle> = vec![std::ptr::null_mut(); count as usize];
            let code = init_drivers(&mut count, handles.as_mut_ptr(), &mut desc);
            if code != 0 {
                return Err(lib.call_failed("zeInitDrivers", code.into(), &result_name(code)));
            }
            handles.truncate(count as usize);
            return Ok((handles, "zeInitDrivers".into()));
        }
        // Fall through to the older API, which some loaders still answer.
    }
    let init = lib.require::<Init>("zeInit")?;
    let code = init(FLAG_GPU);
    if code != 0 {
        return Err(lib.call_failed("zeInit", code.into(), &result_name(code)));
    }
    let driver_get = lib.require::<DriverGet>("zeDriverGet")?;
    let mut count = 0u32;
    let code = driver_get(&mut count, std::ptr::null_mut());
    if code != 0 {
        return Err(lib.call_failed("zeDriverGet", code.into(), &result_name(code)));
    }
    let mut handles: Vec<Handle> = vec![std::ptr::null_mut(); count as usize];
    let code = driver_get(&mut count, handles.as_mut_ptr());
    if code != 0 {
        return Err(lib.call_failed("zeDriverGet", code.into(), &result_name(code)));
    }
    handles.truncate(count as usize);
    Ok((handles, "zeInit+zeDriverGet".into()))
}

/// The name of a `ze_result_t` code.
pub fn result_name(code: u32) -> String {
    let name = match code {
        0 => "ZE_RESULT_SUCCESS",
        1 => "ZE_RESULT_NOT_READY",
        0x7000_0001 => "ZE_RESULT_ERROR_DEVICE_LOST",
        0x7000_0002 => "ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY",
        0x7800_0001 => "ZE_RESULT_ERROR_UNINITIALIZED",
        0x7800_0002 => "ZE_RESULT_ERROR_UNSUPPORTED_VERSION",
        0x7800_0003 => "ZE_RESULT_ERROR_UNSUPPORTED_FEATURE",
        0x7800_0004 => "ZE_RESULT_ERROR_INVALID_ARGUMENT",
        0x7800_0005 => "ZE_RESULT_ERROR_INVALID_NULL_HANDLE",
        0x7800_0007 => "ZE_RESULT_ERROR_INVALID_NULL_POINTER",
        0x7fff_fffe => "ZE_RESULT_ERROR_UNKNOWN",
        _ => return format!("ze_result_t {code:#x}"),
    };
    name.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_pointer_width = "64")]
    #[test]
    fn property_struct_matches_the_c_layout() {
        // Offsets of ze_device_properties_t as a C compiler lays it out on LP64 (the stub
        // library in tests/stubs checks the same struct from the C side).
        assert_eq!(std::mem::offset_of!(DeviceProperties, vendor_id), 20);
        assert_eq!(
            std::mem::offset_of!(DeviceProperties, max_mem_alloc_size),
            40
        );
        assert_eq!(std::mem::offset_of!(DeviceProperties, timer_resolution), 80);
        assert_eq!(std::mem::offset_of!(DeviceProperties, uuid), 96);
        assert_eq!(std::mem::offset_of!(DeviceProperties, name), 112);
        assert_eq!(std::mem::offset_of!(IpVersionExt, ip_version), 16);
    }

    #[test]
    fn results_have_names() {
        assert_eq!(result_name(0x7800_0001), "ZE_RESULT_ERROR_UNINITIALIZED");
        assert_eq!(result_name(0x1234), "ze_result_t 0x1234");
    }

    #[test]
    fn a_missing_library_is_reported_not_fatal() {
        let failure = probe(&["/nonexistent/libze_loader.so.1".into()]).unwrap_err();
        assert!(matches!(failure, ProbeFailure::LibraryNotFound { .. }));
    }
}
