//! The `intel` provider (`spec/providers.md`): `device_ip` (multi-value), the IP versions of the
//! Intel GPUs and their compatible base IPs, read through Level Zero in a child process.
//!
//! Variables: [`FORCE_DEVICE_IP_ENV`] (reference override), [`LEVEL_ZERO_LIBRARY_ENV`].

use std::time::Instant;

use vari_core::FeatureSupport;

use super::level_zero::{self, LevelZeroFacts};
use super::{feature, library_candidates};
use crate::child::{run_probe, ProbeRequest, ProbeResponse};
use crate::facts_section::{self, FactsError};
use crate::override_error::InvalidVariable;
use crate::provider::{
    Derived, Detected, EnvVar, Evidence, FactsInput, FactsSection, Provider, SnapshotFile, VarRole,
};
use crate::{DetectContext, ProviderReport};

/// The namespace name.
pub const NAMESPACE: &str = "intel";
/// Override: exactly this device IP (`arch.release.revision`), no compatible IP added.
pub const FORCE_DEVICE_IP_ENV: &str = "INTEL_VARIANT_PROVIDER_FORCE_DEVICE_IP";
/// Path or name of the Level Zero loader to load instead of the platform default.
pub const LEVEL_ZERO_LIBRARY_ENV: &str = "VARI_LEVEL_ZERO_LIBRARY";
/// Intel's PCI vendor ID.
pub const INTEL_VENDOR_ID: u32 = 0x8086;

/// Known device IPs and the base IP whose code runs on them, in all-values order (reference
/// `devices.py`, `hardware.md` §4).
const KNOWN_IPS: &[(&str, Option<&str>)] = &[
    ("35.11.0", None),
    ("35.10.4", None),
    ("30.5.4", Some("30.0.4")),
    ("30.4.4", Some("30.0.4")),
    ("30.3.1", Some("30.0.4")),
    ("30.1.0", Some("30.0.4")),
    ("30.0.4", None),
    ("20.4.4", Some("20.1.0")),
    ("20.2.0", Some("20.1.0")),
    ("20.1.0", None),
    ("12.74.4", None),
    ("12.71.4", Some("12.70.4")),
    ("12.70.4", None),
    ("12.60.7", None),
    ("12.57.0", Some("12.55.8")),
    ("12.56.5", Some("12.55.8")),
    ("12.55.8", None),
    ("12.10.0", None),
    ("12.4.0", None),
    ("12.3.0", None),
    ("12.2.0", None),
    ("12.1.0", None),
    ("12.0.0", None),
];

fn is_known(ip: &str) -> bool {
    KNOWN_IPS.iter().any(|(known, _)| *known == ip)
}

fn compatible_base(ip: &str) -> Option<&'static str> {
    KNOWN_IPS
        .iter()
        .find(|(known, _)| *known == ip)
        .and_then(|(_, base)| *base)
}

/// Decodes a Level Zero IP version (GMDID): `arch = v>>22`, `release = (v>>14)&0xFF`,
/// `revision = v&0x3F`, written `arch.release.revision`.
///
/// ```
/// let v = (20 << 22) | (1 << 14);
/// assert_eq!(vari_detect::gpu::intel::decode_ip_version(v), "20.1.0");
/// ```
pub fn decode_ip_version(v: u32) -> String {
    format!("{}.{}.{}", v >> 22, (v >> 14) & 0xFF, v & 0x3F)
}

/// The supported `device_ip` values for the devices' IPs: each IP then its compatible base IP,
/// de-duplicated in first-seen order, keeping only known IPs.
pub fn supported_from_facts(device_ips: &[String]) -> Vec<FeatureSupport> {
    let mut values: Vec<String> = Vec::new();
    for ip in device_ips {
        for candidate in std::iter::once(ip.as_str()).chain(compatible_base(ip)) {
            if is_known(candidate) && !values.iter().any(|v| v == candidate) {
                values.push(candidate.to_owned());
            }
        }
    }
    feature("device_ip", values, true).into_iter().collect()
}

/// Every valid value of every feature.
pub fn all_configs() -> Vec<FeatureSupport> {
    let values = KNOWN_IPS.iter().map(|(ip, _)| (*ip).to_owned()).collect();
    feature("device_ip", values, true).into_iter().collect()
}

/// Parses [`FORCE_DEVICE_IP_ENV`]: `arch.release.revision`, three decimal numbers within the
/// widths of a Level Zero IP version.
pub fn parse_device_ip_override(value: &str) -> Result<String, InvalidVariable> {
    parse_device_ip(value)
        .map_err(|expected| InvalidVariable::new(FORCE_DEVICE_IP_ENV, value, expected))
}

/// A user-given device IP (override or facts), normalised so `12.055.8` and `12.55.8` agree;
/// `Err` says what was expected.
pub(crate) fn parse_device_ip(value: &str) -> Result<String, String> {
    let numbers: Option<Vec<u32>> = value.trim().split('.').map(super::parse_decimal).collect();
    match numbers.as_deref() {
        Some(&[arch, release, revision]) => {
            crate::ranges::check_intel_ip((arch, release, revision))?;
            Ok(format!("{arch}.{release}.{revision}"))
        }
        _ => Err("expected a device IP arch.release.revision such as 20.1.0".to_owned()),
    }
}

/// Runs the provider.
pub fn detect(ctx: &DetectContext) -> ProviderReport {
    detect_outcome(ctx).0
}

/// Runs the provider; the flag marks a possibly transient failure (not cached).
pub(crate) fn detect_outcome(ctx: &DetectContext) -> (ProviderReport, bool) {
    let start = Instant::now();
    let (features, source, note, transient) = run(ctx);
    let report = ProviderReport::builtin(NAMESPACE, features, source, note, start);
    (report, transient)
}

type Found = (Option<Vec<FeatureSupport>>, String, Option<String>, bool);

fn run(ctx: &DetectContext) -> Found {
    if let Some(value) = ctx.var(FORCE_DEVICE_IP_ENV) {
        return match parse_device_ip_override(value) {
            Ok(ip) => {
                let note =
                    (!is_known(&ip)).then(|| format!("{ip} is not a device IP known to vari"));
                let features = feature("device_ip", vec![ip], true).map(|f| vec![f]);
                (
                    features,
                    format!("{FORCE_DEVICE_IP_ENV}={value}"),
                    note,
                    false,
                )
            }
            Err(e) => (None, "override".into(), Some(e.to_string()), false),
        };
    }
    if !ctx.sysroot.is_host() {
        return (
            None,
            "none".into(),
            Some("Level Zero is only queried on the live machine, not in a sysroot".into()),
            false,
        );
    }
    if !intel_gpu_evidence(ctx) {
        return (
            None,
            "none".into(),
            Some("no Intel GPU (no DRM device with vendor 0x8086)".into()),
            false,
        );
    }
    let request = ProbeRequest::LevelZero {
        libraries: library_candidates(
            ctx,
            LEVEL_ZERO_LIBRARY_ENV,
            &level_zero::default_libraries()
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
        ),
    };
    match run_probe(&request, ctx) {
        Ok(ProbeResponse::LevelZero(facts)) => from_facts(&facts),
        Ok(_) => (
            None,
            "Level Zero".into(),
            Some("unexpected probe answer".into()),
            true,
        ),
        Err(e) => (
            None,
            "Level Zero".into(),
            Some(format!("Level Zero: {e}")),
            e.is_transient(),
        ),
    }
}

fn from_facts(facts: &LevelZeroFacts) -> Found {
    let mut notes = Vec::new();
    let mut ips = Vec::new();
    for device in &facts.devices {
        if let Some(e) = &device.error {
            notes.push(e.clone());
            continue;
        }
        if device.vendor_id != INTEL_VENDOR_ID {
            continue;
        }
        match device.ip_version {
            Some(v) => ips.push(decode_ip_version(v)),
            None => notes.push(format!("{}: no IP version reported", device.name)),
        }
    }
    let unknown: Vec<&String> = ips.iter().filter(|ip| !is_known(ip)).collect();
    if !unknown.is_empty() {
        notes.push(format!(
            "device IP {} not known to vari (ignored)",
            unknown
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if ips.is_empty() {
        notes.push("no Intel GPU reported by Level Zero".into());
    }
    let features = supported_from_facts(&ips);
    let source = format!(
        "Level Zero ({}, {}): device IP {}",
        facts.library,
        facts.init,
        if ips.is_empty() {
            "none".to_owned()
        } else {
            ips.join(", ")
        }
    );
    let note = (!notes.is_empty()).then(|| notes.join("; "));
    (
        (!features.is_empty()).then_some(features),
        source,
        note,
        false,
    )
}

/// Whether a DRM device of Intel's vendor exists, so that loading Level Zero is worth a child
/// process. An explicit library path always counts; other systems than Linux always probe.
fn intel_gpu_evidence(ctx: &DetectContext) -> bool {
    if ctx.var(LEVEL_ZERO_LIBRARY_ENV).is_some() || !cfg!(target_os = "linux") {
        return true;
    }
    let Ok(entries) = std::fs::read_dir(ctx.sysroot.path("/sys/class/drm")) else {
        return false;
    };
    entries.flatten().any(|entry| {
        crate::system_file::read_system_file(&entry.path().join("device/vendor"))
            .is_ok_and(|v| v.trim().eq_ignore_ascii_case("0x8086"))
    })
}

/// The `intel` provider in the [registry](crate::registry).
pub(crate) struct Intel;

const VARIABLES: &[EnvVar] = &[
    EnvVar::new(
        FORCE_DEVICE_IP_ENV,
        VarRole::Override,
        "the GPU's device IP, such as `12.60.7` (reference override)",
    )
    .checked(|v| {
        parse_device_ip_override(v)
            .map(drop)
            .map_err(|e| e.expected)
    }),
    EnvVar::new(
        LEVEL_ZERO_LIBRARY_ENV,
        VarRole::Setting,
        "the Level Zero loader to load (name or path) instead of the default",
    ),
];

impl Provider for Intel {
    fn namespace(&self) -> &'static str {
        NAMESPACE
    }

    fn detection(&self) -> &'static str {
        "The Intel GPUs' IP versions and their compatible base IPs, read through Level Zero in a child process."
    }

    fn hardware(&self) -> Option<&'static str> {
        Some("Intel GPUs")
    }

    fn variables(&self) -> &'static [EnvVar] {
        VARIABLES
    }

    fn evidence(&self, ctx: &DetectContext, evidence: &mut Evidence) {
        evidence.insert(
            "dev_dri".into(),
            crate::system_file::listing(&ctx.sysroot.path("/dev/dri"), None),
        );
    }

    fn snapshot_files(&self, _ctx: &DetectContext) -> Vec<SnapshotFile> {
        vec![
            SnapshotFile::Copy("/sys/class/drm/*/device/vendor".into()),
            SnapshotFile::Copy("/sys/class/drm/*/device/device".into()),
            SnapshotFile::Marker("/dev/dri".into()),
        ]
    }

    fn records_answer(&self) -> bool {
        true
    }

    fn facts_section(&self) -> FactsSection {
        FactsSection::Table(&["device_ip"])
    }

    fn facts(
        &self,
        value: &toml::Value,
        _: &FactsInput<'_>,
    ) -> Result<Option<Derived>, FactsError> {
        let t = facts_section::as_table(value, NAMESPACE)?;
        let mut ips = Vec::new();
        if let Some(v) = t.get("device_ip") {
            for (path, s) in facts_section::string_list(v, "intel.device_ip")? {
                ips.push(
                    parse_device_ip(&s)
                        .map_err(|e| facts_section::invalid(&path, format!("{e}, found {s:?}")))?,
                );
            }
        }
        let features = supported_from_facts(&ips);
        if features.is_empty() && !ips.is_empty() {
            return Err(facts_section::invalid(
                "intel.device_ip",
                format!("no known device IP among {}", ips.join(", ")),
            ));
        }
        Ok(Some((features, format!("device IP {}", ips.join(" ")))))
    }

    fn all_features(&self) -> Vec<FeatureSupport> {
        all_configs()
    }

    fn detect(&self, ctx: &DetectContext) -> Detected {
        let (report, transient) = detect_outcome(ctx);
        Detected { report, transient }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(f: &[FeatureSupport]) -> Vec<&str> {
        f[0].values.iter().map(|v| v.as_str()).collect()
    }

    #[test]
    fn ips_decode() {
        let v = (12 << 22) | (55 << 14) | 8;
        assert_eq!(decode_ip_version(v), "12.55.8");
        // Bits 6-13 are reserved and ignored.
        assert_eq!(decode_ip_version(v | (0xFF << 6)), "12.55.8");
    }

    #[test]
    fn devices_bring_their_base_ip_deduplicated() {
        let f = supported_from_facts(&["12.56.5".into(), "12.57.0".into(), "12.55.8".into()]);
        assert_eq!(values(&f), ["12.56.5", "12.55.8", "12.57.0"]);
        assert!(f[0].multi_value);
        let f = supported_from_facts(&["20.4.4".into()]);
        assert_eq!(values(&f), ["20.4.4", "20.1.0"]);
    }

    #[test]
    fn unknown_ips_are_dropped() {
        assert!(supported_from_facts(&["99.1.0".into()]).is_empty());
        let f = supported_from_facts(&["99.1.0".into(), "12.0.0".into()]);
        assert_eq!(values(&f), ["12.0.0"]);
    }

    #[test]
    fn all_values_in_table_order() {
        let all = all_configs();
        assert_eq!(all[0].values.len(), 23);
        assert_eq!(all[0].values[0].as_str(), "35.11.0");
        assert_eq!(all[0].values[22].as_str(), "12.0.0");
    }

    #[test]
    fn override_validation() {
        assert_eq!(parse_device_ip_override("20.1.0").unwrap(), "20.1.0");
        assert_eq!(parse_device_ip_override(" 12.055.8 ").unwrap(), "12.55.8");
        for bad in ["20.1", "20.1.0.1", "bmg", "20.x.0"] {
            assert!(parse_device_ip_override(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn override_gives_exactly_that_ip() {
        let mut ctx = DetectContext::from_process_env(crate::Sysroot::new("/nonexistent"));
        ctx.env.clear();
        ctx.env.insert(FORCE_DEVICE_IP_ENV.into(), "20.2.0".into());
        let report = detect(&ctx);
        assert_eq!(values(report.features.as_ref().unwrap()), ["20.2.0"]);
        ctx.env.insert(FORCE_DEVICE_IP_ENV.into(), "20.2".into());
        let report = detect(&ctx);
        assert!(report.features.is_none());
        assert!(report.note.unwrap().contains(FORCE_DEVICE_IP_ENV));
    }

    #[test]
    fn facts_from_level_zero_keep_intel_devices() {
        let device = |vendor_id, ip_version| level_zero::LevelZeroDevice {
            vendor_id,
            device_id: 1,
            name: "gpu".into(),
            ip_version,
            error: None,
        };
        let facts = LevelZeroFacts {
            library: "libze_loader.so.1".into(),
            init: "zeInitDrivers".into(),
            devices: vec![
                device(0x10de, Some((12 << 22) | (60 << 14) | 7)),
                device(0x8086, Some((20 << 22) | (2 << 14))),
            ],
        };
        let (features, source, note, _) = from_facts(&facts);
        assert_eq!(values(&features.unwrap()), ["20.2.0", "20.1.0"]);
        assert!(source.contains("20.2.0"));
        assert!(note.is_none());
    }
}
