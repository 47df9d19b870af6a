//! Which GPUs a CUDA application started here would see: NVML lists every GPU of the machine,
//! but two variables narrow what CUDA shows, and the `sm_arch` to install for is that of a GPU
//! the application can use.
//!
//! **`NVIDIA_VISIBLE_DEVICES`** (the NVIDIA container toolkit's; it decides what a container
//! gets when it starts):
//! - `void`: the container gets no driver and no GPU — nothing is detected (an empty value counts
//!   as unset, as every variable does here);
//! - `none`: the driver but no GPU — the CUDA version without `sm_arch`;
//! - `all`, or unset: every GPU;
//! - a comma-separated list of indices, `GPU-` UUIDs, `MIG-` UUIDs and `GPU:MIG` index pairs: those
//!   GPUs (a MIG device counts as its GPU). Indices are the host's: inside a container the
//!   toolkit has already left only the GPUs listed, renumbered from 0, so indices are matched
//!   only when NVML sees more GPUs than the list names (the host's view); UUIDs always are.
//!
//! **`CUDA_VISIBLE_DEVICES`** (the CUDA driver's), applied to the GPUs left, as CUDA reads it: a
//! comma-separated sequence of indices into those GPUs, `GPU-` UUIDs or unique prefixes of them,
//! and MIG devices (`MIG-<UUID>`, or `MIG-GPU-<UUID>/<GI>/<CI>` before driver 470); the list ends
//! at the first entry that names no GPU (`0,2,-1,1` shows GPUs 0 and 2), and at the first MIG
//! device (CUDA enumerates a single MIG device); set but empty, it shows no GPU. CUDA numbers
//! devices fastest first unless `CUDA_DEVICE_ORDER=PCI_BUS_ID`; indices here are NVML's, the PCI
//! bus order, which is CUDA's whenever the GPUs are alike or that order is set.
//!
//! The CUDA driver applies `CUDA_VISIBLE_DEVICES` itself, so devices read through libcuda are
//! already the visible ones; only `void` and `none` apply to them.

use super::DeviceCapability;

/// The container toolkit's variable.
pub const NVIDIA_VISIBLE_DEVICES_ENV: &str = "NVIDIA_VISIBLE_DEVICES";
/// The CUDA driver's variable.
pub const CUDA_VISIBLE_DEVICES_ENV: &str = "CUDA_VISIBLE_DEVICES";

/// What `NVIDIA_VISIBLE_DEVICES` allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContainerDevices {
    /// `void`: no driver, no GPU.
    Void,
    /// `none`: the driver, no GPU.
    None,
    /// `all` or unset.
    All,
    /// The entries of a list.
    Listed(Vec<String>),
}

/// Reads `NVIDIA_VISIBLE_DEVICES` (`None` when unset or empty).
pub fn container_devices(value: Option<&str>) -> ContainerDevices {
    let Some(value) = value.map(str::trim).filter(|v| !v.is_empty()) else {
        return ContainerDevices::All;
    };
    match value {
        "void" => ContainerDevices::Void,
        "none" => ContainerDevices::None,
        "all" => ContainerDevices::All,
        list => ContainerDevices::Listed(
            list.split(',')
                .map(|e| e.trim().to_owned())
                .filter(|e| !e.is_empty())
                .collect(),
        ),
    }
}

/// The GPUs a list of `NVIDIA_VISIBLE_DEVICES` entries leaves, and the entries that named none.
pub fn container_filter(
    entries: &[String],
    devices: &[DeviceCapability],
) -> (Vec<DeviceCapability>, Vec<String>) {
    // The host's view: more GPUs than the list names (inside a container there are as many).
    let host_indices = devices.len() > entries.len();
    let mut unknown = Vec::new();
    let mut keep = vec![false; devices.len()];
    for entry in entries {
        let gpu_index = entry.split_once(':').map_or(entry.as_str(), |(gpu, _)| gpu);
        let found = if let Some(index) = super::parse_decimal(gpu_index) {
            if host_indices {
                devices.iter().position(|d| d.index == index)
            } else {
                // Already applied by the runtime: every GPU seen is one listed.
                keep.iter_mut().for_each(|k| *k = true);
                continue;
            }
        } else if entry.starts_with("MIG-") {
            devices
                .iter()
                .position(|d| d.mig_uuids.iter().any(|m| m == entry))
        } else {
            devices
                .iter()
                .position(|d| d.uuid.as_deref() == Some(entry.as_str()))
        };
        match found {
            Some(i) => keep[i] = true,
            None => unknown.push(entry.clone()),
        }
    }
    let kept = devices
        .iter()
        .zip(keep)
        .filter(|(_, k)| *k)
        .map(|(d, _)| d.clone())
        .collect();
    (kept, unknown)
}

/// The GPUs `CUDA_VISIBLE_DEVICES` (`value`, set) shows among `devices`, in its order, and the
/// entry that ended the list early, if one did.
pub fn cuda_filter(
    value: &str,
    devices: &[DeviceCapability],
) -> (Vec<DeviceCapability>, Option<String>) {
    let mut visible: Vec<DeviceCapability> = Vec::new();
    if value.trim().is_empty() {
        return (visible, None);
    }
    for entry in value.split(',').map(str::trim) {
        let found = if let Some(index) = parse_index(entry) {
            devices.get(index)
        } else if let Some(mig) = entry.strip_prefix("MIG-") {
            let parent = match mig.strip_prefix("GPU-") {
                // `MIG-GPU-<UUID>/<GI>/<CI>`: the GPU's UUID before the first slash.
                Some(_) => {
                    let gpu = mig.split('/').next().unwrap_or(mig);
                    devices.iter().find(|d| d.uuid.as_deref() == Some(gpu))
                }
                None => devices
                    .iter()
                    .find(|d| d.mig_uuids.iter().any(|m| m == entry)),
            };
            // CUDA enumerates one MIG device: the list ends here either way.
            if let Some(gpu) = parent {
                if !visible.iter().any(|v| v.index == gpu.index) {
                    visible.push(gpu.clone());
                }
                return (visible, None);
            }
            None
        } else if entry.starts_with("GPU-") {
            let mut matching = devices
                .iter()
                .filter(|d| d.uuid.as_deref().is_some_and(|u| u.starts_with(entry)));
            match (matching.next(), matching.next()) {
                (Some(gpu), None) => Some(gpu),
                // No GPU, or a prefix that more than one GPU shares.
                _ => None,
            }
        } else {
            None
        };
        match found {
            Some(gpu) => {
                if !visible.iter().any(|v| v.index == gpu.index) {
                    visible.push(gpu.clone());
                }
            }
            None => return (visible, Some(entry.to_owned())),
        }
    }
    (visible, None)
}

/// A device index as CUDA reads one: decimal digits.
fn parse_index(entry: &str) -> Option<usize> {
    super::parse_decimal(entry).and_then(|i| usize::try_from(i).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gpus() -> Vec<DeviceCapability> {
        let gpu = |index: u32, uuid: &str, migs: &[&str]| DeviceCapability {
            index,
            compute_capability: Some((8, index)),
            error: None,
            uuid: Some(uuid.to_owned()),
            mig_uuids: migs.iter().map(|m| (*m).to_owned()).collect(),
        };
        vec![
            gpu(0, "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6", &[]),
            gpu(1, "GPU-89aa0000-0000-0000-0000-000000000001", &[]),
            gpu(
                2,
                "GPU-5bd30000-0000-0000-0000-000000000002",
                &["MIG-41b3359c-e721-56e5-8009-12e5797ed514"],
            ),
        ]
    }

    fn indices(devices: &[DeviceCapability]) -> Vec<u32> {
        devices.iter().map(|d| d.index).collect()
    }

    #[test]
    fn cuda_lists_indices_in_order_and_stops_at_the_first_invalid_entry() {
        let all = gpus();
        let shown = |value: &str| {
            let (devices, stop) = cuda_filter(value, &all);
            (indices(&devices), stop)
        };
        assert_eq!(shown("2,1"), (vec![2, 1], None));
        assert_eq!(shown("0,2,-1,1"), (vec![0, 2], Some("-1".into())));
        assert_eq!(shown("3,0"), (vec![], Some("3".into())));
        assert_eq!(shown(""), (vec![], None));
        assert_eq!(shown("0, 1"), (vec![0, 1], None));
        assert_eq!(shown("1,1"), (vec![1], None));
        assert_eq!(shown("x"), (vec![], Some("x".into())));
    }

    #[test]
    fn cuda_takes_uuids_and_unique_prefixes() {
        let all = gpus();
        let shown = |value: &str| {
            let (devices, stop) = cuda_filter(value, &all);
            (indices(&devices), stop)
        };
        assert_eq!(
            shown("GPU-5bd30000-0000-0000-0000-000000000002,GPU-8932f937"),
            (vec![2, 0], None)
        );
        // `GPU-89` is both GPU 0's and GPU 1's prefix: it names neither.
        assert_eq!(shown("1,GPU-89,0"), (vec![1], Some("GPU-89".into())));
        assert_eq!(shown("GPU-ffff"), (vec![], Some("GPU-ffff".into())));
    }

    #[test]
    fn cuda_shows_one_mig_device_as_its_gpu() {
        let all = gpus();
        let shown = |value: &str| {
            let (devices, stop) = cuda_filter(value, &all);
            (indices(&devices), stop)
        };
        assert_eq!(
            shown("MIG-41b3359c-e721-56e5-8009-12e5797ed514,0"),
            (vec![2], None),
            "one MIG device, then nothing more"
        );
        assert_eq!(
            shown("MIG-GPU-5bd30000-0000-0000-0000-000000000002/1/0"),
            (vec![2], None)
        );
        assert_eq!(
            shown("0,MIG-00000000-0000-0000-0000-000000000000"),
            (
                vec![0],
                Some("MIG-00000000-0000-0000-0000-000000000000".into())
            )
        );
    }

    #[test]
    fn container_values() {
        assert_eq!(container_devices(None), ContainerDevices::All);
        assert_eq!(container_devices(Some(" ")), ContainerDevices::All);
        assert_eq!(container_devices(Some("all")), ContainerDevices::All);
        assert_eq!(container_devices(Some("void")), ContainerDevices::Void);
        assert_eq!(container_devices(Some("none")), ContainerDevices::None);
        assert_eq!(
            container_devices(Some("0, GPU-1,")),
            ContainerDevices::Listed(vec!["0".into(), "GPU-1".into()])
        );
    }

    #[test]
    fn container_lists_match_uuids_always_and_indices_on_the_host_only() {
        let all = gpus();
        let kept = |entries: &[&str], devices: &[DeviceCapability]| {
            let entries: Vec<String> = entries.iter().map(|e| (*e).to_owned()).collect();
            let (kept, unknown) = container_filter(&entries, devices);
            (indices(&kept), unknown)
        };
        // The host's view (3 GPUs, 1 named): index 1 only.
        assert_eq!(kept(&["1"], &all), (vec![1], vec![]));
        assert_eq!(kept(&["2:0"], &all), (vec![2], vec![]));
        assert_eq!(
            kept(
                &[
                    "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6",
                    "MIG-41b3359c-e721-56e5-8009-12e5797ed514"
                ],
                &all
            ),
            (vec![0, 2], vec![])
        );
        assert_eq!(
            kept(&["GPU-ffff"], &all),
            (vec![], vec!["GPU-ffff".to_owned()])
        );
        // Inside a container given GPU 2 of the host: it is NVML's GPU 0 there.
        assert_eq!(kept(&["2"], &all[..1]), (vec![0], vec![]));
    }
}
