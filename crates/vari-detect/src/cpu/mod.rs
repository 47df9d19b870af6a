//! CPU providers: the `x86_64` and `aarch64` namespaces (`spec/providers.md`).
//!
//! Both classify the CPU with archspec's data and rules (`archspec`) from the first processor
//! block of `/proc/cpuinfo` ([`cpuinfo`]), read through the [`Sysroot`](crate::Sysroot), so a
//! snapshot taken on another machine is classified as that machine: an aarch64 snapshot read on
//! an x86 host gives aarch64. On a macOS host the facts come from `sysctl`; on other hosts
//! without `/proc/cpuinfo` detection says so and a profile must describe the CPU.
//!
//! Profiles can skip detection: [`x86_64::supported_from_microarch`], [`x86_64::from_level`]
//! and [`aarch64::supported_from_microarch`] derive the same lists from a name or a level.

pub mod aarch64;
pub(crate) mod archspec;
pub mod cpuinfo;
mod error;
pub mod x86_64;

use std::path::Path;
use std::time::Instant;

use vari_core::{FeatureName, FeatureSupport, FeatureValue};

use crate::context::DetectContext;
use crate::facts_section::{self, FactsError};
use crate::provider::Derived;
use crate::report::ProviderReport;
use archspec::{Catalog, TargetId};
use cpuinfo::{CpuArch, CpuInfo};
pub use error::CpuError;

/// How a CPU was classified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Classification {
    /// The matched archspec microarchitecture (`haswell`, `neoverse_v2`, `x86_64_v3`, …).
    pub microarchitecture: String,
    /// Its best generic ancestor (`x86_64_v3`, `armv9.0a`, `aarch64`, …).
    pub generic: String,
    /// The namespace's supported features, most preferred first; empty when the reference
    /// provider reports nothing for this CPU.
    pub supported: Vec<FeatureSupport>,
}

impl Classification {
    /// The classification as `id` of `catalog`, named by it and its generic ancestor.
    fn of(catalog: &Catalog, id: TargetId, supported: Vec<FeatureSupport>) -> Self {
        Self {
            microarchitecture: catalog.target(id).name.clone(),
            generic: catalog.target(catalog.generic(id)).name.clone(),
            supported,
        }
    }
}

/// What was observed about this CPU and where.
#[derive(Debug, Clone)]
pub(crate) struct Observation {
    /// The architecture the facts describe.
    pub arch: CpuArch,
    /// `/proc/cpuinfo` fields (synthesised from `sysctl` on macOS).
    pub info: CpuInfo,
    /// On macOS/Apple silicon, the model archspec derives from the brand string (`m1`, …).
    pub apple_model: Option<String>,
    /// Where the facts came from, e.g. `/proc/cpuinfo` or a snapshot path.
    pub source: String,
}

/// Reads the CPU facts of the context's machine.
pub(crate) fn observe(ctx: &DetectContext) -> Result<Observation, String> {
    #[cfg(target_os = "macos")]
    if ctx.sysroot.is_host() {
        return macos::observe();
    }
    if ctx.sysroot.is_host() && !cfg!(target_os = "linux") {
        let path = ctx.sysroot.path("/proc/cpuinfo");
        if !path.exists() {
            return Err(format!(
                "CPU detection is not supported on {}: describe the CPU in a facts profile \
                 ([x86_64] microarchitecture/level or [aarch64] microarchitecture)",
                std::env::consts::OS
            ));
        }
    }
    let path = ctx.sysroot.path("/proc/cpuinfo");
    let text = crate::system_file::read_system_file(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let info = CpuInfo::parse(&text);
    Ok(Observation {
        arch: info.arch(),
        info,
        apple_model: None,
        source: path.display().to_string(),
    })
}

/// A `name :: on` feature.
pub(crate) fn on(name: &str) -> FeatureSupport {
    FeatureSupport {
        // Feature names come from the fixed lists of this module, all valid identifiers (a unit
        // test checks every one).
        name: FeatureName::new(name).expect("fixed CPU feature names are valid"),
        values: vec![FeatureValue::new("on").expect("`on` is a valid value")],
        multi_value: false,
    }
}

/// A single-value feature with the given values, most preferred first.
pub(crate) fn single(name: &str, values: impl IntoIterator<Item = String>) -> FeatureSupport {
    FeatureSupport {
        // As in `on`: fixed names and values built from archspec names, checked by tests.
        name: FeatureName::new(name).expect("fixed CPU feature names are valid"),
        values: values
            .into_iter()
            .map(|v| FeatureValue::new(v).expect("derived CPU values are valid"))
            .collect(),
        multi_value: false,
    }
}

/// The machine's CPU when it is of `arch`; otherwise the report of an absent `namespace`
/// saying why (no CPU facts, or a CPU of another architecture).
pub(crate) fn observe_arch(
    ctx: &DetectContext,
    namespace: &'static str,
    arch: CpuArch,
    started: Instant,
) -> Result<Observation, ProviderReport> {
    let obs = observe(ctx).map_err(|note| {
        ProviderReport::builtin(namespace, None, String::new(), Some(note), started)
    })?;
    if obs.arch != arch {
        let note = format!(
            "CPU is {} (from {}): the {namespace} namespace does not apply",
            obs.arch.name(),
            obs.source
        );
        return Err(ProviderReport::builtin(
            namespace,
            None,
            obs.source,
            Some(note),
            started,
        ));
    }
    Ok(obs)
}

/// Exactly one of `keys` must be present in a CPU facts section.
pub(crate) fn one_of<'a>(
    t: &'a toml::Table,
    section: &str,
    keys: &[&'a str],
) -> Result<(&'a str, &'a toml::Value), FactsError> {
    let present: Vec<(&str, &toml::Value)> = keys
        .iter()
        .filter_map(|k| t.get(*k).map(|v| (*k, v)))
        .collect();
    match present[..] {
        [one] => Ok(one),
        [] => Err(facts_section::invalid(
            section,
            format!("give one of: {}", keys.join(", ")),
        )),
        _ => Err(facts_section::invalid(
            section,
            format!("give only one of: {}", keys.join(", ")),
        )),
    }
}

/// `microarchitecture = "NAME"` in the facts section of `namespace`: what that
/// microarchitecture supports (`supported`, the namespace's lookup).
pub(crate) fn microarchitecture_fact(
    namespace: &str,
    value: &toml::Value,
    supported: fn(&str) -> Result<Vec<FeatureSupport>, CpuError>,
) -> Result<Derived, FactsError> {
    let path = format!("{namespace}.microarchitecture");
    let name = facts_section::as_str(value, &path)?;
    let features = supported(name).map_err(|e| facts_section::invalid(&path, e.to_string()))?;
    Ok((features, format!("microarchitecture {name}")))
}

/// `cpuinfo = "FILE"` (relative to the facts file) in the facts section of `namespace`: the CPU
/// that file describes, which must be of `arch`, as `classify` sees it.
pub(crate) fn cpuinfo_fact(
    namespace: &str,
    value: &toml::Value,
    base_dir: &Path,
    arch: CpuArch,
    classify: fn(&CpuInfo) -> Classification,
) -> Result<Derived, FactsError> {
    let path = format!("{namespace}.cpuinfo");
    let rel = facts_section::as_str(value, &path)?;
    let file = base_dir.join(rel);
    let text = crate::system_file::read_system_file(&file).map_err(|e| {
        facts_section::invalid(&path, format!("cannot read {}: {e}", file.display()))
    })?;
    let info = CpuInfo::parse(&text);
    if info.arch() != arch {
        return Err(facts_section::invalid(
            path,
            format!(
                "{} describes a CPU of {}, not {}",
                file.display(),
                info.arch().name(),
                arch.name()
            ),
        ));
    }
    let c = classify(&info);
    Ok((
        c.supported,
        format!("{}: {}", file.display(), c.microarchitecture),
    ))
}

/// macOS: archspec reads `sysctl` instead of `/proc/cpuinfo`.
#[cfg_attr(not(target_os = "macos"), allow(dead_code))]
mod macos {
    use super::archspec::Catalog;

    /// archspec's Apple model from `machdep.cpu.brand_string`: the newest known `mN` named in
    /// it, `m1` for any other Apple chip, else `unknown`.
    pub(crate) fn apple_model(brand: &str, catalog: &Catalog) -> String {
        let brand = brand.to_lowercase();
        for n in (1..=9).rev() {
            let model = format!("m{n}");
            if catalog.id(&model).is_some() && brand.contains(&model) {
                return model;
            }
        }
        if brand.contains("apple") {
            "m1".to_owned()
        } else {
            "unknown".to_owned()
        }
    }

    /// archspec `adjust_raw_flags`: appends the Linux spelling of every Darwin flag found in the
    /// flag string (archspec tests with a substring match, kept for parity).
    pub(crate) fn linux_flags(flags: &str, catalog: &Catalog) -> String {
        let mut out = flags.to_owned();
        for (darwin, linux) in catalog.darwin_flags() {
            if flags.contains(darwin.as_str()) {
                out.push(' ');
                out.push_str(linux);
            }
        }
        out
    }

    #[cfg(target_os = "macos")]
    pub(crate) fn observe() -> Result<super::Observation, String> {
        use super::cpuinfo::{CpuArch, CpuInfo};
        use super::Observation;

        fn sysctl(name: &str) -> Result<String, String> {
            let out = std::process::Command::new("/usr/sbin/sysctl")
                .arg("-n")
                .arg(name)
                .output()
                .map_err(|e| format!("cannot run sysctl: {e}"))?;
            if !out.status.success() {
                return Err(format!("`sysctl -n {name}` failed"));
            }
            Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
        }

        let brand = sysctl("machdep.cpu.brand_string")?;
        if brand.contains("Apple") || std::env::consts::ARCH == "aarch64" {
            let model = apple_model(&brand, super::archspec::aarch64_catalog());
            let text = "Features\t: \nCPU implementer\t: Apple\n";
            return Ok(Observation {
                arch: CpuArch::Aarch64,
                info: CpuInfo::parse(text),
                apple_model: Some(model),
                source: format!("sysctl machdep.cpu.brand_string ({brand})"),
            });
        }
        let flags = format!(
            "{} {}",
            sysctl("machdep.cpu.features")?.to_lowercase(),
            sysctl("machdep.cpu.leaf7_features")
                .unwrap_or_default()
                .to_lowercase()
        );
        let flags = linux_flags(&flags, super::archspec::x86_catalog());
        let vendor = sysctl("machdep.cpu.vendor")?;
        let text = format!("vendor_id\t: {vendor}\nflags\t\t: {flags}\n");
        Ok(Observation {
            arch: CpuArch::X86_64,
            info: CpuInfo::parse(&text),
            apple_model: None,
            source: "sysctl machdep.cpu".to_owned(),
        })
    }

    #[cfg(test)]
    mod tests {
        use super::super::archspec::{aarch64_catalog, x86_catalog};
        use super::*;

        #[test]
        fn apple_models() {
            let c = aarch64_catalog();
            assert_eq!(apple_model("Apple M2 Pro", c), "m2");
            assert_eq!(apple_model("Apple M4 Max", c), "m4");
            assert_eq!(apple_model("Apple processor", c), "m1");
            assert_eq!(apple_model("Intel(R) Core(TM) i9", c), "unknown");
            // The older data file does not know m4.
            assert_eq!(apple_model("Apple M4", x86_catalog()), "m1");
        }

        #[test]
        fn darwin_flags_gain_linux_names() {
            let out = linux_flags("fpu sse4.2 avx1.0", x86_catalog());
            let words: Vec<&str> = out.split_whitespace().collect();
            assert!(words.contains(&"sse4_2"));
            assert!(words.contains(&"avx"));
            assert!(!words.contains(&"sse4_1"));
        }
    }
}

#[cfg(test)]
pub(crate) mod test_support {
    //! Fixture sysroots for provider tests.

    use std::path::Path;

    use crate::context::DetectContext;
    use crate::sysroot::Sysroot;

    /// A temporary sysroot whose `/proc/cpuinfo` is `text`.
    pub(crate) fn cpuinfo_root(text: &str) -> (tempfile::TempDir, DetectContext) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("proc")).unwrap();
        std::fs::write(dir.path().join("proc/cpuinfo"), text).unwrap();
        let mut ctx = DetectContext::from_process_env(Sysroot::new(dir.path()));
        ctx.env.clear();
        (dir, ctx)
    }

    /// The text of a cpuinfo fixture in `testdata/cpuinfo/`.
    pub(crate) fn fixture(name: &str) -> String {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/cpuinfo")
            .join(name);
        std::fs::read_to_string(path).unwrap()
    }

    /// A vector file in `testdata/vectors/`.
    pub(crate) fn vectors(name: &str) -> serde_json::Value {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/vectors")
            .join(name);
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    /// `[(name, [values…])]` of a supported list, for comparison with vector files.
    pub(crate) fn flatten(list: &[vari_core::FeatureSupport]) -> Vec<(String, Vec<String>)> {
        list.iter()
            .map(|f| {
                (
                    f.name.to_string(),
                    f.values.iter().map(|v| v.to_string()).collect(),
                )
            })
            .collect()
    }

    /// The same shape from a vector's `supported` array.
    pub(crate) fn expected(value: &serde_json::Value) -> Vec<(String, Vec<String>)> {
        value
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["name"].as_str().unwrap().to_owned(),
                    f["values"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|v| v.as_str().unwrap().to_owned())
                        .collect(),
                )
            })
            .collect()
    }
}
