//! The `nvidia` provider (`spec/providers.md`): `cuda_version_lower_bound`,
//! `cuda_version_upper_bound` and `sm_arch` from the driver's CUDA version and the compute
//! capability of one GPU.
//!
//! Facts come from, in order: the override variables; NVML; libcuda (*vari*, when NVML is
//! missing); the kernel driver version files (*vari*, a labelled estimate of the CUDA version
//! through `data/nvidia-driver-branches.toml`). Libraries are loaded in a child process
//! ([`crate::child`]) and only on the live machine, never for a `--sysroot` snapshot.
//!
//! Variables: [`FORCE_CUDA_ENV`], [`FORCE_SM_ENV`] (reference overrides), [`DEVICE_POLICY_ENV`]
//! (*vari*: which GPU's capability counts), [`NVML_LIBRARY_ENV`], [`CUDA_LIBRARY_ENV`].

use std::time::Instant;

use vari_core::sm_arch::{self, SmArch};
use vari_core::FeatureSupport;

use super::visible::{self, ContainerDevices};
use super::{cuda, nvml};
use super::{
    driver_branches, driver_library_candidates, feature, parse_major_minor, search,
    DeviceCapability,
};
use crate::child::{run_probe, ProbeError, ProbeRequest, ProbeResponse};
use crate::facts_section::{self, FactsError};
use crate::override_error::InvalidVariable;
use crate::override_error::OverrideError;
use crate::provider::{
    Derived, Detected, EnvVar, Evidence, FactsInput, FactsSection, Provider, SnapshotFile, VarRole,
};
use crate::{DetectContext, ProviderReport};

/// The namespace name.
pub const NAMESPACE: &str = "nvidia";
/// Override of the driver's CUDA version (a PEP 440 version; bypasses the range check).
pub const FORCE_CUDA_ENV: &str = "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION";
/// Override of the GPU compute capability (`M.m`).
pub const FORCE_SM_ENV: &str = "NV_VARIANT_PROVIDER_FORCE_SM_ARCH";
/// Which GPU's compute capability is used: `highest` (default, reference), `lowest`, or a device
/// index.
pub const DEVICE_POLICY_ENV: &str = "VARI_NVIDIA_DEVICE";
/// Path or name of the NVML library to load instead of the platform default.
pub const NVML_LIBRARY_ENV: &str = "VARI_NVML_LIBRARY";
/// Path or name of the CUDA driver library to load instead of the platform default.
pub const CUDA_LIBRARY_ENV: &str = "VARI_CUDA_LIBRARY";

/// Highest CUDA major the reference knows.
const MAX_MAJOR: u32 = 15;
/// Lowest CUDA major the reference knows.
const MIN_MAJOR: u32 = 11;
/// Highest CUDA minor the reference knows.
const MAX_MINOR: u32 = 20;

/// `M.m` or, with `minor == None`, the bare major `M`.
fn cuda_value(major: u32, minor: Option<u32>) -> String {
    match minor {
        Some(minor) => format!("{major}.{minor}"),
        None => major.to_string(),
    }
}

/// `k.20 … k.0, k` for one major.
fn full_major(major: u32, values: &mut Vec<String>) {
    values.extend((0..=MAX_MINOR).rev().map(|m| cuda_value(major, Some(m))));
    values.push(cuda_value(major, None));
}

/// `sm_arch` values as the profile spells them.
fn strings(values: Vec<SmArch>) -> Vec<String> {
    values.iter().map(ToString::to_string).collect()
}

/// The supported features for a driver CUDA version and the chosen GPU's compute capability,
/// exactly as the reference plugin derives them. No range check is applied (facts are taken as
/// given, like an override; see [`cuda_version_in_range`]); without a CUDA version nothing is
/// supported. Empty features are omitted.
///
/// ```
/// use vari_detect::gpu::nvidia::supported_from_facts;
/// let features = supported_from_facts(Some((12, 8)), Some((8, 6)));
/// assert_eq!(features[0].values.len(), 32);
/// assert_eq!(features[2].values.last().unwrap().as_str(), "80_virtual");
/// ```
pub fn supported_from_facts(
    cuda: Option<(u32, u32)>,
    compute_capability: Option<(u32, u32)>,
) -> Vec<FeatureSupport> {
    let Some((major, minor)) = cuda else {
        return Vec::new();
    };
    let mut lower = Vec::new();
    if major >= MIN_MAJOR {
        lower.extend((0..=minor).rev().map(|m| cuda_value(major, Some(m))));
        lower.push(cuda_value(major, None));
        for k in (MIN_MAJOR..major).rev() {
            full_major(k, &mut lower);
        }
    }
    let mut upper = Vec::new();
    for k in (major.saturating_add(1)..=MAX_MAJOR).rev() {
        full_major(k, &mut upper);
    }
    if major <= MAX_MAJOR {
        upper.extend(
            (minor.saturating_add(1)..=MAX_MINOR)
                .rev()
                .map(|m| cuda_value(major, Some(m))),
        );
    }
    let sm = compute_capability
        .map(|(sm_major, sm_minor)| strings(sm_arch::supported(sm_major, sm_minor)))
        .unwrap_or_default();
    [
        feature("cuda_version_lower_bound", lower, false),
        feature("cuda_version_upper_bound", upper, false),
        feature(sm_arch::FEATURE, sm, true),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// Every valid value of every feature (for validating metadata at build time).
pub fn all_configs() -> Vec<FeatureSupport> {
    let mut cuda = Vec::new();
    for k in (MIN_MAJOR..=MAX_MAJOR).rev() {
        full_major(k, &mut cuda);
    }
    let sm = strings(sm_arch::all());
    [
        feature("cuda_version_lower_bound", cuda.clone(), false),
        feature("cuda_version_upper_bound", cuda, false),
        feature(sm_arch::FEATURE, sm, true),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// Whether a detected CUDA version is in the reference's range 11.0–15.20 (outside it, and
/// without an override, the driver counts as absent).
pub fn cuda_version_in_range((major, minor): (u32, u32)) -> bool {
    (MIN_MAJOR..=MAX_MAJOR).contains(&major) && minor <= MAX_MINOR
}

/// Decodes NVML's or libcuda's `1000*major + 10*minor`.
pub fn decode_cuda_version(raw: i32) -> Option<(u32, u32)> {
    let raw = u32::try_from(raw).ok().filter(|&v| v > 0)?;
    Some((raw / 1000, (raw % 1000) / 10))
}

/// Parses [`FORCE_CUDA_ENV`]: a PEP 440 version whose first two release components are used
/// (`12` → 12.0, `12.7rc1` → 12.7, `v12.07` → 12.7), which must be a CUDA version that exists
/// (`data/hardware-ranges.toml`).
pub fn parse_cuda_version_override(value: &str) -> Result<(u32, u32), InvalidVariable> {
    parse_cuda_version(value)
        .map_err(|expected| InvalidVariable::new(FORCE_CUDA_ENV, value, expected))
}

/// A user-given CUDA version (override or facts); `Err` says what was expected.
pub(crate) fn parse_cuda_version(value: &str) -> Result<(u32, u32), String> {
    let invalid = || "expected a CUDA version such as 12.8 (a PEP 440 version)".to_owned();
    let version: pep440_rs::Version = value.trim().parse().map_err(|_| invalid())?;
    let release = version.release();
    let component = |i: usize| -> Result<u32, String> {
        release
            .get(i)
            .copied()
            .map_or(Ok(0), |c| u32::try_from(c).map_err(|_| invalid()))
    };
    let cuda = (component(0)?, component(1)?);
    crate::ranges::check_cuda(cuda)?;
    Ok(cuda)
}

/// Parses [`FORCE_SM_ENV`]: a compute capability `M.m` such as `8.6` that some NVIDIA GPU has
/// (`data/hardware-ranges.toml`).
pub fn parse_sm_arch_override(value: &str) -> Result<(u32, u32), InvalidVariable> {
    parse_compute_capability(value)
        .map_err(|expected| InvalidVariable::new(FORCE_SM_ENV, value, expected))
}

/// A user-given compute capability (override or facts); `Err` says what was expected.
pub(crate) fn parse_compute_capability(value: &str) -> Result<(u32, u32), String> {
    let cc = parse_major_minor(value)
        .ok_or_else(|| "expected a compute capability major.minor such as 8.6".to_owned())?;
    crate::ranges::check_compute_capability(cc)?;
    Ok(cc)
}

/// Which GPU's compute capability is used when several are present.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DevicePolicy {
    /// The highest capability (reference behaviour).
    #[default]
    Highest,
    /// The lowest capability (wheels that run on every GPU of the machine).
    Lowest,
    /// The device with this index (NVML index; CUDA ordinal for the libcuda fallback).
    Index(u32),
}

impl DevicePolicy {
    /// The chosen device among those that reported a capability.
    pub fn select<'a>(&self, devices: &'a [DeviceCapability]) -> Option<&'a DeviceCapability> {
        let readable = devices.iter().filter(|d| d.compute_capability.is_some());
        match self {
            // `max_by_key` keeps the last maximum; reversing keeps the first.
            DevicePolicy::Highest => readable.rev().max_by_key(|d| d.compute_capability),
            DevicePolicy::Lowest => readable.min_by_key(|d| d.compute_capability),
            DevicePolicy::Index(index) => readable.into_iter().find(|d| d.index == *index),
        }
    }
}

/// Parses [`DEVICE_POLICY_ENV`]: `highest`, `lowest` or a device index.
pub fn parse_device_policy(value: &str) -> Result<DevicePolicy, InvalidVariable> {
    match value.trim().to_ascii_lowercase().as_str() {
        "highest" => Ok(DevicePolicy::Highest),
        "lowest" => Ok(DevicePolicy::Lowest),
        other => super::parse_decimal(other)
            .map(DevicePolicy::Index)
            .ok_or_else(|| {
                InvalidVariable::new(
                    DEVICE_POLICY_ENV,
                    value,
                    "expected highest, lowest or a device index such as 0",
                )
            }),
    }
}

/// Runs the provider.
pub fn detect(ctx: &DetectContext) -> ProviderReport {
    detect_outcome(ctx).0
}

/// Runs the provider; the flag says whether the result may be transient (a timeout or crash) and
/// so must not be cached.
pub(crate) fn detect_outcome(ctx: &DetectContext) -> (ProviderReport, bool) {
    let start = Instant::now();
    let (features, source, note, transient) = match run(ctx) {
        Ok(found) => found,
        Err(invalid) => (
            None,
            "override".to_owned(),
            Some(invalid.to_string()),
            false,
        ),
    };
    let report = ProviderReport::builtin(NAMESPACE, features, source, note, start);
    (report, transient)
}

type Found = (Option<Vec<FeatureSupport>>, String, Option<String>, bool);

fn run(ctx: &DetectContext) -> Result<Found, InvalidVariable> {
    let forced_cuda = ctx
        .var(FORCE_CUDA_ENV)
        .map(parse_cuda_version_override)
        .transpose()?;
    let forced_sm = ctx
        .var(FORCE_SM_ENV)
        .map(parse_sm_arch_override)
        .transpose()?;
    let policy = ctx
        .var(DEVICE_POLICY_ENV)
        .map(parse_device_policy)
        .transpose()?
        .unwrap_or_default();

    let mut sources = Vec::new();
    let mut notes = Vec::new();
    let hardware = if forced_cuda.is_some() && forced_sm.is_some() {
        None
    } else {
        Some(gather(ctx))
    };
    let transient = hardware.as_ref().is_some_and(|h| h.transient);

    let cuda = match (forced_cuda, &hardware) {
        (Some(cuda), _) => {
            sources.push(format!(
                "{FORCE_CUDA_ENV}={}",
                ctx.var(FORCE_CUDA_ENV).unwrap_or("")
            ));
            Some(cuda)
        }
        (None, Some(h)) => {
            sources.extend(h.cuda_source.clone());
            notes.extend(h.notes.iter().cloned());
            match h.cuda {
                Some(v) if !cuda_version_in_range(v) => {
                    notes.push(format!(
                        "the driver's CUDA version {}.{} is outside 11.0–15.20 and counts as no \
                         driver (reference behaviour; set {FORCE_CUDA_ENV} to override)",
                        v.0, v.1
                    ));
                    None
                }
                other => other,
            }
        }
        (None, None) => None,
    };

    let compute_capability = match (forced_sm, &hardware) {
        (Some(cc), _) => {
            sources.push(format!(
                "{FORCE_SM_ENV}={}",
                ctx.var(FORCE_SM_ENV).unwrap_or("")
            ));
            Some(cc)
        }
        (None, Some(h)) => {
            if forced_cuda.is_some() {
                notes.extend(h.notes.iter().cloned());
            }
            let chosen = policy.select(&h.devices);
            match chosen {
                Some(device) => {
                    let (major, minor) = device.compute_capability.unwrap_or_default();
                    let readable = h
                        .devices
                        .iter()
                        .filter(|d| d.compute_capability.is_some())
                        .count();
                    let how = match policy {
                        DevicePolicy::Highest if readable > 1 => format!(", highest of {readable}"),
                        DevicePolicy::Lowest if readable > 1 => format!(", lowest of {readable}"),
                        _ => String::new(),
                    };
                    // "NVML (…): driver …; GPU 0 …" rather than naming the library twice.
                    let same_origin = h
                        .cuda_source
                        .as_deref()
                        .is_some_and(|s| s.starts_with(&h.device_source))
                        && forced_cuda.is_none();
                    let origin = if same_origin {
                        String::new()
                    } else {
                        format!("{}: ", h.device_source)
                    };
                    let visibility = h
                        .visibility
                        .as_deref()
                        .map(|v| format!(" ({v})"))
                        .unwrap_or_default();
                    sources.push(format!(
                        "{origin}GPU {} compute capability {major}.{minor}{how}{visibility}",
                        device.index
                    ));
                }
                None if h.devices.is_empty() => {
                    if h.cuda.is_some() || forced_cuda.is_some() {
                        notes.push("no NVIDIA GPU found: sm_arch omitted".into());
                    }
                }
                None => notes.push(match policy {
                    DevicePolicy::Index(i) => match h.devices.iter().find(|d| d.index == i) {
                        None => {
                            format!("no GPU with index {i} ({DEVICE_POLICY_ENV}): sm_arch omitted")
                        }
                        Some(d) => format!(
                            "GPU {i} ({DEVICE_POLICY_ENV}) reported no compute capability ({}): \
                             sm_arch omitted",
                            d.error.as_deref().unwrap_or("unknown error")
                        ),
                    },
                    _ => {
                        let errors: Vec<String> = h
                            .devices
                            .iter()
                            .filter_map(|d| {
                                d.error.as_ref().map(|e| format!("GPU {}: {e}", d.index))
                            })
                            .collect();
                        format!(
                            "no GPU reported a compute capability ({}): sm_arch omitted (the \
                             reference plugin crashes here)",
                            errors.join("; ")
                        )
                    }
                }),
            }
            chosen.and_then(|d| d.compute_capability)
        }
        (None, None) => None,
    };
    if forced_sm.is_some() && cuda.is_none() {
        notes.push(sm_without_cuda());
    }
    if let Some((major, minor)) = compute_capability.filter(|cc| cc.0 < sm_arch::MIN_MAJOR) {
        notes.push(format!(
            "compute capability {major}.{minor} is below 5.0: sm_arch omitted (reference behaviour)"
        ));
    }

    let features = supported_from_facts(cuda, compute_capability);
    let source = if sources.is_empty() {
        "none".to_owned()
    } else {
        sources.join("; ")
    };
    let note = (!notes.is_empty()).then(|| notes.join("; "));
    Ok((
        (!features.is_empty()).then_some(features),
        source,
        note,
        transient,
    ))
}

/// What the machine says, before overrides.
#[derive(Debug, Default)]
struct Hardware {
    cuda: Option<(u32, u32)>,
    cuda_source: Option<String>,
    devices: Vec<DeviceCapability>,
    device_source: String,
    /// What narrowed the devices (`CUDA_VISIBLE_DEVICES=1`), for the source line.
    visibility: Option<String>,
    notes: Vec<String>,
    transient: bool,
}

/// Whether a kernel driver or a device node suggests NVIDIA hardware, so that probing libraries
/// is worth a child process. An explicit library path always counts.
fn driver_evidence(ctx: &DetectContext) -> bool {
    if ctx.var(NVML_LIBRARY_ENV).is_some() || ctx.var(CUDA_LIBRARY_ENV).is_some() {
        return true;
    }
    if !cfg!(target_os = "linux") {
        return true;
    }
    [
        "/dev/nvidiactl",
        "/dev/dxg",
        "/sys/module/nvidia",
        "/proc/driver/nvidia",
    ]
    .iter()
    .any(|p| ctx.sysroot.path(p).exists())
        // A driver library where systems keep it (a container whose device nodes have other
        // names, a NixOS machine).
        || nvml::default_libraries()
            .iter()
            .chain(&cuda::default_libraries())
            .any(|soname| !search::found(ctx, soname).is_empty())
}

/// What the machine says, narrowed to what a CUDA application here would see ([`visible`]).
fn gather(ctx: &DetectContext) -> Hardware {
    let container = visible::container_devices(ctx.var(visible::NVIDIA_VISIBLE_DEVICES_ENV));
    if container == ContainerDevices::Void {
        let mut hw = Hardware::default();
        hw.notes.push(format!(
            "{}=void: the container runtime gives this environment no NVIDIA driver or GPU",
            visible::NVIDIA_VISIBLE_DEVICES_ENV
        ));
        return hw;
    }
    let mut hw = gather_hardware(ctx);
    restrict_to_visible(ctx, &container, &mut hw);
    hw
}

/// Applies `NVIDIA_VISIBLE_DEVICES` and, to NVML's devices, `CUDA_VISIBLE_DEVICES` (the CUDA
/// driver applies it to libcuda's itself).
fn restrict_to_visible(ctx: &DetectContext, container: &ContainerDevices, hw: &mut Hardware) {
    let from_nvml = hw.device_source.starts_with("NVML");
    let container_var = visible::NVIDIA_VISIBLE_DEVICES_ENV;
    let mut why = Vec::new();
    match container {
        ContainerDevices::None => {
            if !hw.devices.is_empty() {
                hw.notes.push(format!(
                    "{container_var}=none: the container runtime gives this environment the \
                     driver but no GPU"
                ));
            }
            hw.devices.clear();
        }
        ContainerDevices::Listed(entries) if from_nvml => {
            let (kept, unknown) = visible::container_filter(entries, &hw.devices);
            if !unknown.is_empty() {
                hw.notes.push(format!(
                    "{container_var} names {}, which NVML does not list",
                    unknown.join(", ")
                ));
            }
            if kept.len() != hw.devices.len() {
                why.push(format!("{container_var}={}", entries.join(",")));
            }
            hw.devices = kept;
        }
        _ => {}
    }
    let cuda_var = visible::CUDA_VISIBLE_DEVICES_ENV;
    // Set but empty shows no GPU, as in CUDA: the raw value, not `ctx.var`.
    if let (true, Some(value)) = (from_nvml, ctx.env.get(cuda_var)) {
        let (shown, stop) = visible::cuda_filter(value, &hw.devices);
        if let Some(entry) = stop {
            hw.notes.push(format!(
                "{cuda_var}={value}: `{entry}` names no GPU here, so the list ends before it, as \
                 in CUDA"
            ));
        }
        if shown.is_empty() && !hw.devices.is_empty() {
            hw.notes.push(format!("{cuda_var}={value} shows no GPU"));
        }
        why.push(format!("{cuda_var}={value}"));
        hw.devices = shown;
    }
    hw.visibility = (!why.is_empty()).then(|| why.join(", "));
}

fn gather_hardware(ctx: &DetectContext) -> Hardware {
    let mut hw = Hardware::default();
    if ctx.sysroot.is_host() && driver_evidence(ctx) {
        let nvml_request = ProbeRequest::Nvml {
            libraries: driver_library_candidates(ctx, NVML_LIBRARY_ENV, nvml::default_libraries()),
        };
        match run_probe(&nvml_request, ctx) {
            Ok(ProbeResponse::Nvml(facts)) => {
                from_nvml(&facts, &mut hw);
                return hw;
            }
            Ok(_) => hw.notes.push("NVML: unexpected probe answer".into()),
            Err(e) => {
                hw.transient |= e.is_transient();
                hw.notes.push(format!("NVML: {e}"));
                if matches!(e, ProbeError::TimedOut(_)) {
                    // A hung driver would hang libcuda too: go straight to the driver files.
                    hw.notes
                        .push("libcuda skipped after the NVML timeout".into());
                } else if from_libcuda(ctx, &mut hw) {
                    return hw;
                }
            }
        }
    } else if ctx.sysroot.is_host() {
        hw.notes
            .push("no NVIDIA driver (no /dev/nvidiactl, /sys/module/nvidia)".into());
        return hw;
    }
    from_driver_files(ctx, &mut hw);
    hw
}

fn from_nvml(facts: &nvml::NvmlFacts, hw: &mut Hardware) {
    let driver = facts
        .driver_version
        .as_deref()
        .map(|d| format!("driver {d}, "))
        .unwrap_or_default();
    hw.cuda = facts.cuda_driver_version.and_then(decode_cuda_version);
    match (hw.cuda, &facts.cuda_call) {
        (Some((major, minor)), Some(call)) => {
            let via = if call.ends_with("_v2") {
                ""
            } else {
                " via the v1 call"
            };
            hw.cuda_source = Some(format!(
                "NVML ({}): {driver}CUDA {major}.{minor}{via}",
                facts.library
            ));
        }
        _ => {
            let why = facts
                .cuda_error
                .clone()
                .unwrap_or_else(|| "invalid value".into());
            hw.notes.push(format!("NVML: no CUDA version ({why})"));
            // The kernel driver version still gives a labelled estimate.
            if let Some(driver_version) = &facts.driver_version {
                estimate_from_driver(driver_version, "NVML", hw);
            }
        }
    }
    if let Some(e) = &facts.count_error {
        hw.notes.push(format!("NVML: {e}"));
    }
    hw.devices = facts.devices.clone();
    hw.device_source = format!("NVML ({})", facts.library);
}

/// Tries libcuda; true when it gave a CUDA version.
fn from_libcuda(ctx: &DetectContext, hw: &mut Hardware) -> bool {
    let request = ProbeRequest::Cuda {
        libraries: driver_library_candidates(ctx, CUDA_LIBRARY_ENV, cuda::default_libraries()),
    };
    match run_probe(&request, ctx) {
        Ok(ProbeResponse::Cuda(facts)) => {
            hw.cuda = facts.driver_version.and_then(decode_cuda_version);
            if let Some((major, minor)) = hw.cuda {
                hw.cuda_source = Some(format!("libcuda ({}): CUDA {major}.{minor}", facts.library));
            } else if let Some(e) = &facts.version_error {
                hw.notes.push(format!("libcuda: {e}"));
            }
            if let Some(e) = &facts.device_error {
                hw.notes.push(format!("libcuda: {e}"));
            }
            hw.devices = facts.devices;
            hw.device_source = format!("libcuda ({})", facts.library);
            hw.cuda.is_some()
        }
        Ok(_) => {
            hw.notes.push("libcuda: unexpected probe answer".into());
            false
        }
        Err(e) => {
            hw.transient |= e.is_transient();
            hw.notes.push(format!("libcuda: {e}"));
            false
        }
    }
}

/// The kernel driver version from `/sys/module/nvidia/version` or `/proc/driver/nvidia/version`.
pub fn kernel_driver_version(ctx: &DetectContext) -> Option<(String, &'static str)> {
    if let Ok(text) = ctx.sysroot.read_to_string("/sys/module/nvidia/version") {
        let version = text.trim();
        if !version.is_empty() {
            return Some((version.to_owned(), "/sys/module/nvidia/version"));
        }
    }
    let text = ctx
        .sysroot
        .read_to_string("/proc/driver/nvidia/version")
        .ok()?;
    parse_proc_driver_version(&text).map(|v| (v, "/proc/driver/nvidia/version"))
}

/// The version field of `/proc/driver/nvidia/version`'s first line (`NVRM version: NVIDIA UNIX
/// … Kernel Module  550.144.03  Release Build …`): the first field that looks like `N.N[.N]`.
fn parse_proc_driver_version(text: &str) -> Option<String> {
    let first = text.lines().next()?;
    first
        .split_whitespace()
        .find(|field| {
            let parts: Vec<&str> = field.split('.').collect();
            parts.len() >= 2 && parts.iter().all(|p| super::parse_decimal(p).is_some())
        })
        .map(str::to_owned)
}

fn from_driver_files(ctx: &DetectContext, hw: &mut Hardware) {
    match kernel_driver_version(ctx) {
        Some((version, file)) => {
            estimate_from_driver(&version, file, hw);
            hw.notes
                .push("no compute capability without a driver library: sm_arch omitted".into());
        }
        None => hw.notes.push("no NVIDIA kernel driver found".into()),
    }
}

fn estimate_from_driver(driver_version: &str, origin: &str, hw: &mut Hardware) {
    match driver_branches::estimate(driver_version) {
        Some(e) => {
            let (major, minor) = e.cuda;
            let bound = if e.exact { "" } else { "at least " };
            hw.cuda = Some(e.cuda);
            hw.cuda_source = Some(format!(
                "{origin}: kernel driver {driver_version}; CUDA {major}.{minor} is an ESTIMATE \
                 ({bound}{major}.{minor} for branch {} per {})",
                e.branch, e.source
            ));
            hw.notes.push(
                "the CUDA version is estimated from the kernel driver's branch, not read from a \
                 driver library"
                    .into(),
            );
        }
        None => hw.notes.push(format!(
            "{origin}: kernel driver {driver_version} is older than every branch known to vari"
        )),
    }
}

/// Why a forced compute capability alone gives nothing.
fn sm_without_cuda() -> String {
    format!(
        "{FORCE_SM_ENV} is set but {FORCE_CUDA_ENV} is not, and no driver reports a CUDA \
         version: every nvidia property needs the CUDA version, so set {FORCE_CUDA_ENV} too"
    )
}

/// The `nvidia` provider in the [registry](crate::registry).
pub(crate) struct Nvidia;

const VARIABLES: &[EnvVar] = &[
    EnvVar::new(
        FORCE_CUDA_ENV,
        VarRole::Override,
        "the driver's CUDA version, such as `12.8` (reference override)",
    )
    .checked(|v| {
        parse_cuda_version_override(v)
            .map(drop)
            .map_err(|e| e.expected)
    }),
    EnvVar::new(
        FORCE_SM_ENV,
        VarRole::Override,
        "the GPU's compute capability, such as `8.6` (reference override; needs the CUDA version \
         too when no driver reports one)",
    )
    .checked(|v| parse_sm_arch_override(v).map(drop).map_err(|e| e.expected)),
    EnvVar::new(
        DEVICE_POLICY_ENV,
        VarRole::Setting,
        "which GPU's compute capability counts: `highest` (default), `lowest`, or a device index",
    )
    .checked(|v| parse_device_policy(v).map(drop).map_err(|e| e.expected)),
    EnvVar::new(
        NVML_LIBRARY_ENV,
        VarRole::Setting,
        "the NVML library to load (name or path) instead of the default",
    ),
    EnvVar::new(
        CUDA_LIBRARY_ENV,
        VarRole::Setting,
        "the CUDA driver library to load (name or path) instead of the default",
    ),
    EnvVar::new(
        visible::CUDA_VISIBLE_DEVICES_ENV,
        VarRole::Location,
        "which GPUs a CUDA application sees, as CUDA reads it: indices, `GPU-` UUIDs or prefixes, \
         one `MIG-` device; the list ends at the first entry naming no GPU; empty: none",
    ),
    EnvVar::new(
        visible::NVIDIA_VISIBLE_DEVICES_ENV,
        VarRole::Location,
        "the NVIDIA container toolkit's choice: `void` (no driver), `none` (driver, no GPU), \
         `all`, or indices and UUIDs",
    ),
    EnvVar::new(
        search::CONDA_PREFIX_ENV,
        VarRole::Location,
        "a conda environment whose `lib` and `cuda-compat` hold driver libraries, searched after \
         the loader's own search",
    ),
];

/// The files that show an NVIDIA kernel driver without loading a library.
const DRIVER_MARKERS: &[&str] = &[
    "/dev/nvidiactl",
    "/dev/nvidia*",
    "/dev/dxg",
    "/sys/module/nvidia",
    "/proc/driver/nvidia",
];

impl Provider for Nvidia {
    fn namespace(&self) -> &'static str {
        NAMESPACE
    }

    fn detection(&self) -> &'static str {
        "The driver's CUDA version and one GPU's compute capability, from, in order: the override variables; NVML; libcuda when NVML is missing; the kernel driver's version files (a labelled estimate of the CUDA version from the driver branch). Libraries are loaded in a child process, on the live machine only (a snapshot records the answer)."
    }

    fn hardware(&self) -> Option<&'static str> {
        Some("NVIDIA GPUs")
    }

    fn variables(&self) -> &'static [EnvVar] {
        VARIABLES
    }

    fn check_combination(&self, ctx: &DetectContext) -> Result<(), OverrideError> {
        // Without a driver nothing can supply the CUDA version the compute capability needs.
        let sm_alone = ctx.var(FORCE_SM_ENV).is_some() && ctx.var(FORCE_CUDA_ENV).is_none();
        if sm_alone && !driver_evidence(ctx) {
            return Err(OverrideError::Missing {
                set: FORCE_SM_ENV,
                missing: FORCE_CUDA_ENV,
                why: "there is no NVIDIA driver to report the CUDA version, and every nvidia \
                      property needs it (set both, e.g. 12.8 and 8.6)"
                    .to_owned(),
            });
        }
        Ok(())
    }

    fn evidence(&self, ctx: &DetectContext, evidence: &mut Evidence) {
        let root = &ctx.sysroot;
        evidence.insert(
            "nvidia_driver".into(),
            root.read_to_string("/sys/module/nvidia/version")
                .map(|s| s.trim().to_owned())
                .unwrap_or_default(),
        );
        evidence.insert(
            "dev_nvidia".into(),
            crate::system_file::listing(&root.path("/dev"), Some("nvidia")),
        );
        evidence.insert("dev_dxg".into(), root.path("/dev/dxg").exists().to_string());
    }

    fn snapshot_files(&self, _ctx: &DetectContext) -> Vec<SnapshotFile> {
        let mut files = vec![
            SnapshotFile::Copy("/proc/driver/nvidia/version".into()),
            SnapshotFile::Copy("/sys/module/nvidia/version".into()),
        ];
        files.extend(
            DRIVER_MARKERS
                .iter()
                .map(|m| SnapshotFile::Marker((*m).into())),
        );
        files
    }

    fn records_answer(&self) -> bool {
        true
    }

    fn facts_section(&self) -> FactsSection {
        FactsSection::Table(&["cuda_version", "compute_capability", "gpu"])
    }

    fn facts(
        &self,
        value: &toml::Value,
        _: &FactsInput<'_>,
    ) -> Result<Option<Derived>, FactsError> {
        facts(facts_section::as_table(value, NAMESPACE)?).map(Some)
    }

    fn all_features(&self) -> Vec<FeatureSupport> {
        all_configs()
    }

    fn detect(&self, ctx: &DetectContext) -> Detected {
        let (report, transient) = detect_outcome(ctx);
        Detected { report, transient }
    }
}

/// The `[nvidia]` facts: the driver's CUDA version, the GPUs' compute capabilities and which
/// GPU counts.
fn facts(t: &toml::Table) -> Result<Derived, FactsError> {
    use toml::Value;
    let cuda = match t.get("cuda_version") {
        None => None,
        Some(v) => {
            let s = facts_section::as_str(v, "nvidia.cuda_version")?;
            let parsed = parse_cuda_version(s).map_err(|e| {
                facts_section::invalid("nvidia.cuda_version", format!("{s:?}: {e}"))
            })?;
            Some(parsed)
        }
    };
    let ccs: Vec<(u32, u32)> = match t.get("compute_capability") {
        None => Vec::new(),
        Some(v) => facts_section::string_list(v, "nvidia.compute_capability")?
            .iter()
            .map(|(p, s)| {
                parse_compute_capability(s).map_err(|e| {
                    let e = if parse_major_minor(s).is_none() {
                        format!("expected \"M.m\" such as \"8.6\", found {s:?}")
                    } else {
                        e
                    };
                    facts_section::invalid(p, e)
                })
            })
            .collect::<Result<_, _>>()?,
    };
    let chosen = match t.get("gpu") {
        None => ccs.iter().copied().max(),
        Some(Value::String(s)) if s == "highest" => ccs.iter().copied().max(),
        Some(Value::String(s)) if s == "lowest" => ccs.iter().copied().min(),
        Some(Value::Integer(i)) => {
            let index = usize::try_from(*i)
                .ok()
                .filter(|&i| i < ccs.len())
                .ok_or_else(|| {
                    facts_section::invalid(
                        "nvidia.gpu",
                        format!("index {i} is not in compute_capability (0..{})", ccs.len()),
                    )
                })?;
            Some(ccs[index])
        }
        Some(_) => {
            return Err(facts_section::invalid(
                "nvidia.gpu",
                "expected \"highest\", \"lowest\" or an index into compute_capability",
            ))
        }
    };
    let Some((m, n)) = cuda else {
        return Err(facts_section::invalid(
            "nvidia.cuda_version",
            "missing: without the driver's CUDA version the provider reports nothing",
        ));
    };
    let mut label = vec![format!("CUDA {m}.{n}")];
    if let Some((m, n)) = chosen {
        label.push(format!("compute capability {m}.{n}"));
    }
    Ok((supported_from_facts(cuda, chosen), label.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Sysroot;

    fn strings(f: &FeatureSupport) -> Vec<&str> {
        f.values.iter().map(|v| v.as_str()).collect()
    }

    #[test]
    fn lower_bound_counts_down_to_eleven() {
        let f = supported_from_facts(Some((12, 8)), None);
        let lower = strings(&f[0]);
        assert_eq!(lower.len(), 32);
        assert_eq!(&lower[..3], ["12.8", "12.7", "12.6"]);
        assert_eq!(&lower[8..12], ["12.0", "12", "11.20", "11.19"]);
        assert_eq!(lower.last(), Some(&"11"));
    }

    #[test]
    fn upper_bound_starts_at_fifteen_and_excludes_the_driver() {
        let f = supported_from_facts(Some((12, 8)), None);
        let upper = strings(&f[1]);
        assert_eq!(&upper[..2], ["15.20", "15.19"]);
        assert_eq!(&upper[upper.len() - 2..], ["12.10", "12.9"]);
        assert!(!upper.contains(&"12"));
        assert_eq!(f[1].name.as_str(), "cuda_version_upper_bound");
    }

    #[test]
    fn empty_features_are_omitted() {
        // 15.20: nothing above.
        let f = supported_from_facts(Some((15, 20)), None);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].name.as_str(), "cuda_version_lower_bound");
        // Below 11 (override): no lower bound, upper bound continues into the driver's major.
        let f = supported_from_facts(Some((10, 2)), None);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].name.as_str(), "cuda_version_upper_bound");
        assert_eq!(strings(&f[0]).last(), Some(&"10.3"));
        assert!(supported_from_facts(None, Some((8, 6))).is_empty());
    }

    #[test]
    fn sm_arch_lists_same_major_reals_then_the_virtual() {
        let f = supported_from_facts(Some((12, 8)), Some((12, 0)));
        assert_eq!(strings(&f[2]), ["120_real", "120_virtual"]);
        assert!(f[2].multi_value);
        let f = supported_from_facts(Some((12, 8)), Some((3, 7)));
        assert_eq!(f.len(), 2);
        let f = supported_from_facts(Some((12, 8)), Some((5, 0)));
        assert_eq!(strings(&f[2]), ["50_real", "50_virtual"]);
    }

    #[test]
    fn all_configs_sizes() {
        let all = all_configs();
        assert_eq!(all[0].values.len(), 110);
        assert_eq!(all[1].values, all[0].values);
        assert_eq!(all[2].values.len(), 160);
        assert_eq!(strings(&all[2])[..2], ["129_real", "128_real"]);
        assert_eq!(strings(&all[2])[80], "129_virtual");
    }

    #[test]
    fn range_check() {
        assert!(cuda_version_in_range((11, 0)));
        assert!(cuda_version_in_range((15, 20)));
        assert!(!cuda_version_in_range((10, 2)));
        assert!(!cuda_version_in_range((16, 0)));
        assert!(!cuda_version_in_range((12, 21)));
    }

    #[test]
    fn cuda_versions_decode() {
        assert_eq!(decode_cuda_version(12080), Some((12, 8)));
        assert_eq!(decode_cuda_version(9020), Some((9, 2)));
        assert_eq!(decode_cuda_version(13000), Some((13, 0)));
        assert_eq!(decode_cuda_version(0), None);
        assert_eq!(decode_cuda_version(-1), None);
    }

    #[test]
    fn overrides_parse_like_the_reference() {
        assert_eq!(parse_cuda_version_override("12"), Ok((12, 0)));
        assert_eq!(parse_cuda_version_override("12.7rc1"), Ok((12, 7)));
        assert_eq!(parse_cuda_version_override("v12.07"), Ok((12, 7)));
        assert_eq!(parse_cuda_version_override("12.8.1"), Ok((12, 8)));
        let e = parse_cuda_version_override("twelve").unwrap_err();
        assert!(e.to_string().contains(FORCE_CUDA_ENV), "{e}");
        assert_eq!(parse_sm_arch_override("8.6"), Ok((8, 6)));
        assert!(parse_sm_arch_override("86").is_err());
        assert!(parse_sm_arch_override("sm_86").is_err());
    }

    #[test]
    fn device_policies() {
        let devices = [
            DeviceCapability {
                index: 0,
                compute_capability: Some((7, 5)),
                error: None,
                uuid: None,
                mig_uuids: Vec::new(),
            },
            DeviceCapability {
                index: 1,
                compute_capability: None,
                error: Some("x".into()),
                uuid: None,
                mig_uuids: Vec::new(),
            },
            DeviceCapability {
                index: 2,
                compute_capability: Some((8, 6)),
                error: None,
                uuid: None,
                mig_uuids: Vec::new(),
            },
            DeviceCapability {
                index: 3,
                compute_capability: Some((8, 6)),
                error: None,
                uuid: None,
                mig_uuids: Vec::new(),
            },
        ];
        assert_eq!(DevicePolicy::Highest.select(&devices).unwrap().index, 2);
        assert_eq!(DevicePolicy::Lowest.select(&devices).unwrap().index, 0);
        assert_eq!(DevicePolicy::Index(3).select(&devices).unwrap().index, 3);
        assert!(DevicePolicy::Index(1).select(&devices).is_none());
        assert_eq!(parse_device_policy("LOWEST"), Ok(DevicePolicy::Lowest));
        assert_eq!(parse_device_policy("2"), Ok(DevicePolicy::Index(2)));
        assert!(parse_device_policy("best").is_err());
    }

    #[test]
    fn proc_driver_version_lines() {
        let open = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.144.03  Release Build  (dvs-builder@U16)  Mon Dec 30 2024\nGCC version: gcc 12.2";
        assert_eq!(
            parse_proc_driver_version(open).as_deref(),
            Some("550.144.03")
        );
        let old =
            "NVRM version: NVIDIA UNIX x86_64 Kernel Module  375.74  Wed Jun 14 01:39:39 PDT 2017";
        assert_eq!(parse_proc_driver_version(old).as_deref(), Some("375.74"));
        assert_eq!(parse_proc_driver_version("nothing here"), None);
    }

    fn ctx_at(root: &std::path::Path) -> DetectContext {
        let mut ctx = DetectContext::from_process_env(Sysroot::new(root));
        ctx.env.clear();
        ctx
    }

    #[test]
    fn a_sysroot_with_a_driver_file_gives_a_labelled_estimate() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("sys/module/nvidia")).unwrap();
        std::fs::write(dir.path().join("sys/module/nvidia/version"), "550.144.03\n").unwrap();
        let report = detect(&ctx_at(dir.path()));
        let features = report.features.unwrap();
        assert_eq!(features.len(), 2, "no sm_arch without a library");
        assert_eq!(features[0].values[0].as_str(), "12.4");
        assert!(report.source.contains("ESTIMATE"), "{}", report.source);
        assert!(report.source.contains("550.144.03"));
    }

    #[test]
    fn nothing_found_is_absent_with_a_reason() {
        let dir = tempfile::tempdir().unwrap();
        let report = detect(&ctx_at(dir.path()));
        assert!(report.features.is_none());
        assert!(report.note.unwrap().contains("no NVIDIA kernel driver"));
    }

    #[test]
    fn overrides_alone_need_no_hardware() {
        let dir = tempfile::tempdir().unwrap();
        let mut ctx = ctx_at(dir.path());
        ctx.env.insert(FORCE_CUDA_ENV.into(), "10.2".into());
        ctx.env.insert(FORCE_SM_ENV.into(), "8.0".into());
        let report = detect(&ctx);
        let features = report.features.unwrap();
        // The override bypasses the range check.
        assert_eq!(features[0].name.as_str(), "cuda_version_upper_bound");
        assert_eq!(features[1].values[0].as_str(), "80_real");
        assert!(report.source.contains(FORCE_CUDA_ENV));
    }

    #[test]
    fn malformed_overrides_fail_clearly() {
        let dir = tempfile::tempdir().unwrap();
        let mut ctx = ctx_at(dir.path());
        ctx.env.insert(FORCE_SM_ENV.into(), "eighty-six".into());
        let report = detect(&ctx);
        assert!(report.features.is_none());
        let note = report.note.unwrap();
        assert!(
            note.contains(FORCE_SM_ENV) && note.contains("eighty-six"),
            "{note}"
        );
    }

    #[test]
    fn a_compute_capability_alone_says_which_variable_is_missing() {
        let dir = tempfile::tempdir().unwrap();
        let mut ctx = ctx_at(dir.path());
        ctx.env.insert(FORCE_SM_ENV.into(), "8.6".into());
        let report = detect(&ctx);
        assert!(report.features.is_none());
        let note = report.note.unwrap();
        assert!(note.contains(FORCE_CUDA_ENV), "{note}");
        let err = Nvidia.check_combination(&ctx).unwrap_err().to_string();
        assert!(
            err.contains(FORCE_SM_ENV) && err.contains(FORCE_CUDA_ENV),
            "{err}"
        );
    }

    #[test]
    fn nonsense_overrides_are_refused_with_the_variable_named() {
        for (value, parse) in [
            (
                "12.999",
                parse_cuda_version_override as fn(&str) -> Result<_, _>,
            ),
            ("99.0", parse_cuda_version_override),
        ] {
            let e = parse(value).unwrap_err();
            assert_eq!(e.variable, FORCE_CUDA_ENV);
        }
        let e = parse_sm_arch_override("8.99").unwrap_err();
        assert_eq!(e.variable, FORCE_SM_ENV);
        assert!(e.to_string().contains("8.99"), "{e}");
        // In detection, a nonsense override leaves the namespace absent with the reason.
        let dir = tempfile::tempdir().unwrap();
        let mut ctx = ctx_at(dir.path());
        ctx.env.insert(FORCE_CUDA_ENV.into(), "12.999".into());
        ctx.env.insert(FORCE_SM_ENV.into(), "8.6".into());
        let report = detect(&ctx);
        assert!(report.features.is_none());
        assert!(report.note.unwrap().contains("12.999"));
    }
}
