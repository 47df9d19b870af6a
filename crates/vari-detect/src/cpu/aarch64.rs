//! The `aarch64` namespace (reference: provider-variant-aarch64, archspec data 4fcdb2f5).
//!
//! The CPU is classified as an archspec microarchitecture from `Features`, `CPU implementer`
//! (through archspec's vendor table) and `CPU part`. The namespace reports `version` — the
//! matched generic and its ancestors, `armvX.Ya` written `X.Ya` and `aarch64` written `8a`,
//! capped at [`MAX_VERSION`] — then the matched microarchitecture's features in
//! [`FEATURE_ORDER`].

use std::time::Instant;

use vari_core::FeatureSupport;

use super::archspec::{aarch64_catalog, Catalog, HostFacts, Rules, TargetId};
use super::cpuinfo::{CpuArch, CpuInfo};
use super::{on, single, Classification, CpuError};
use crate::context::DetectContext;
use crate::facts_section::{self, FactsError};
use crate::provider::{Derived, Detected, FactsInput, FactsSection, Provider, SnapshotFile};
use crate::report::ProviderReport;

/// The namespace name.
pub const NAMESPACE: &str = "aarch64";

/// The newest version the reference knows; newer generics are capped to it.
pub const MAX_VERSION: &str = "armv9.0a";

/// Every feature the namespace can report, most preferred first: the reference plugin's list,
/// verbatim. It contains two concatenated names, `btiecv` (bti, ecv) and `asimdrdmatomics`
/// (asimdrdm, atomics) — missing commas in the reference — which no CPU definition has, so
/// `bti`, `ecv`, `asimdrdm` and `atomics` are never reported; reporting them would break parity
/// (the reference vectors for neoverse_n1 and m1 omit them).
pub const FEATURE_ORDER: &[&str] = &[
    "sve2",
    "flagm2",
    "frint",
    "sb",
    "btiecv",
    "paca",
    "pacg",
    "ssbs",
    "asimdfhm",
    "bf16",
    "dcpodp",
    "dgh",
    "dit",
    "flagm",
    "i8mm",
    "ilrcpc",
    "jscvt",
    "rng",
    "sha3",
    "sha512",
    "svebf16",
    "svei8mm",
    "uscat",
    "asimddp",
    "lrcpc",
    "asimdhp",
    "dcpop",
    "fcma",
    "fphp",
    "sve",
    "asimdrdmatomics",
    "aes",
    "asimd",
    "cpuid",
    "crc32",
    "evtstrm",
    "fp",
    "pmull",
    "sha1",
    "sha2",
];

/// `armv8.2a` → `8.2a`, `aarch64` → `8a`; `None` for other names.
fn version_name(archspec: &str) -> Option<String> {
    if archspec == "aarch64" {
        return Some("8a".to_owned());
    }
    archspec
        .strip_prefix("armv")
        .filter(|v| v.ends_with('a') && v.len() > 1)
        .map(str::to_owned)
}

/// The `version` values for generic target `generic`: itself then its ancestors, capped at
/// [`MAX_VERSION`].
fn versions(catalog: &Catalog, generic: TargetId) -> Option<Vec<String>> {
    let mut generic = generic;
    if let Some(max) = catalog.id(MAX_VERSION) {
        if catalog.target(generic).ancestors.contains(&max) {
            generic = max;
        }
    }
    std::iter::once(generic)
        .chain(catalog.target(generic).ancestors.iter().copied())
        .map(|id| version_name(&catalog.target(id).name))
        .collect()
}

/// The supported list for archspec target `id`.
fn supported_for(id: TargetId) -> Vec<FeatureSupport> {
    let catalog = aarch64_catalog();
    if catalog.family(id).name != NAMESPACE {
        return Vec::new();
    }
    // Every generic of the aarch64 family is `aarch64` or `armvX.Ya`; the reference crashes on
    // anything else, vari reports nothing instead.
    let Some(versions) = versions(catalog, catalog.generic(id)) else {
        return Vec::new();
    };
    let mut list = vec![single("version", versions)];
    list.extend(
        FEATURE_ORDER
            .iter()
            .filter(|f| catalog.has_feature(id, f))
            .map(|f| on(f)),
    );
    list
}

fn classification(id: TargetId) -> Classification {
    Classification::of(aarch64_catalog(), id, supported_for(id))
}

fn root() -> TargetId {
    // The family root is in the embedded data (unit-tested).
    aarch64_catalog()
        .id(NAMESPACE)
        .expect("archspec data defines aarch64")
}

/// Classifies an aarch64 `/proc/cpuinfo` (`Features`, `CPU implementer`, `CPU part`).
///
/// ```
/// use vari_detect::cpu::{aarch64, cpuinfo::CpuInfo};
/// let info = CpuInfo::parse("Features : fp asimd evtstrm aes pmull sha1 sha2 crc32 cpuid\nCPU implementer : 0x41\nCPU part : 0xd08\n");
/// assert_eq!(aarch64::classify(&info).microarchitecture, "cortex_a72");
/// ```
pub fn classify(info: &CpuInfo) -> Classification {
    let catalog = aarch64_catalog();
    let vendor = match info.get("CPU implementer") {
        Some(code) => catalog.arm_vendor(code),
        None => "generic".to_owned(),
    };
    let host = HostFacts {
        vendor,
        features: info.words("Features").map(str::to_owned).collect(),
        cpu_part: info.get("CPU part").unwrap_or("").to_owned(),
    };
    classification(catalog.classify(root(), &host, Rules::Aarch64))
}

/// Classification of Apple silicon on macOS, where archspec trusts the model name: the model
/// itself when known, else plain `aarch64`.
fn classify_apple(model: &str) -> Classification {
    let catalog = aarch64_catalog();
    let id = catalog
        .id(model)
        .filter(|&id| catalog.family(id).name == NAMESPACE)
        .unwrap_or_else(root);
    classification(id)
}

/// The supported list for a named archspec microarchitecture (profiles: `microarchitecture =
/// "neoverse_v2"`); generic names such as `armv8.2a` are accepted too.
pub fn supported_from_microarch(name: &str) -> Result<Vec<FeatureSupport>, CpuError> {
    lookup(name).map(supported_for)
}

/// Classification of a named microarchitecture.
pub fn classify_name(name: &str) -> Result<Classification, CpuError> {
    lookup(name).map(classification)
}

fn lookup(name: &str) -> Result<TargetId, CpuError> {
    aarch64_catalog().lookup(NAMESPACE, name)
}

/// Every valid value: `version` 9.0a…8a, then each feature of [`FEATURE_ORDER`] with `on`.
pub fn all_configs() -> Vec<FeatureSupport> {
    let catalog = aarch64_catalog();
    // MAX_VERSION is in the embedded data (unit-tested); its chain is all armv*/aarch64 names.
    let max = catalog
        .id(MAX_VERSION)
        .expect("archspec data defines armv9.0a");
    let mut list = vec![single(
        "version",
        versions(catalog, max).unwrap_or_default(),
    )];
    list.extend(FEATURE_ORDER.iter().map(|f| on(f)));
    list
}

/// Detects the `aarch64` namespace for the context's machine (or snapshot).
pub fn detect(ctx: &DetectContext) -> ProviderReport {
    let started = Instant::now();
    let obs = match super::observe_arch(ctx, NAMESPACE, CpuArch::Aarch64, started) {
        Ok(obs) => obs,
        Err(absent) => return absent,
    };
    let c = match &obs.apple_model {
        Some(model) => classify_apple(model),
        None => classify(&obs.info),
    };
    let source = format!("{}: {}", obs.source, c.microarchitecture);
    if c.supported.is_empty() {
        let note = format!("CPU {} has no aarch64 version", c.microarchitecture);
        return ProviderReport::builtin(NAMESPACE, None, source, Some(note), started);
    }
    ProviderReport::builtin(NAMESPACE, Some(c.supported), source, None, started)
}

/// The `aarch64` provider in the [registry](crate::registry).
pub(crate) struct Aarch64;

impl Provider for Aarch64 {
    fn namespace(&self) -> &'static str {
        NAMESPACE
    }

    fn detection(&self) -> &'static str {
        "The CPU is classified as an archspec microarchitecture from `/proc/cpuinfo` (`Features`, `CPU implementer`, `CPU part`); `version` lists the matched generic and its ancestors, the features come from the microarchitecture's definition."
    }

    fn hardware(&self) -> Option<&'static str> {
        Some("Arm CPUs")
    }

    fn snapshot_files(&self, _ctx: &DetectContext) -> Vec<SnapshotFile> {
        vec![SnapshotFile::Copy("/proc/cpuinfo".into())]
    }

    fn facts_section(&self) -> FactsSection {
        FactsSection::Table(&["microarchitecture", "cpuinfo"])
    }

    fn facts(
        &self,
        value: &toml::Value,
        input: &FactsInput<'_>,
    ) -> Result<Option<Derived>, FactsError> {
        let t = facts_section::as_table(value, NAMESPACE)?;
        let derived = match super::one_of(t, NAMESPACE, &["microarchitecture", "cpuinfo"])? {
            ("microarchitecture", v) => {
                super::microarchitecture_fact(NAMESPACE, v, supported_from_microarch)?
            }
            (_, v) => {
                super::cpuinfo_fact(NAMESPACE, v, input.base_dir, CpuArch::Aarch64, classify)?
            }
        };
        Ok(Some(derived))
    }

    fn all_features(&self) -> Vec<FeatureSupport> {
        all_configs()
    }

    fn detect(&self, ctx: &DetectContext) -> Detected {
        detect(ctx).into()
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{cpuinfo_root, expected, fixture, flatten, vectors};
    use super::*;

    #[test]
    fn vectors_pass_through_a_fixture_sysroot() {
        let v = vectors("aarch64_cpuinfo.json");
        let cases = v["cases"].as_array().unwrap();
        assert!(cases.len() >= 4);
        for case in cases {
            let name = case["cpuinfo"].as_str().unwrap();
            let (_dir, ctx) = cpuinfo_root(&fixture(name));
            let report = detect(&ctx);
            let want = expected(&case["supported"]);
            let got = report.features.as_deref().map(flatten).unwrap_or_default();
            assert_eq!(got, want, "{name}");
            let host = case["host"].as_str().unwrap();
            assert!(
                report.source.ends_with(&format!(": {host}")),
                "{}",
                report.source
            );
        }
    }

    #[test]
    fn x86_cpuinfo_is_not_aarch64() {
        let (_dir, ctx) = cpuinfo_root(&fixture("linux-rhel7-haswell"));
        let report = detect(&ctx);
        assert!(report.features.is_none());
        assert!(report.note.unwrap().contains("x86_64"));
    }

    #[test]
    fn versions_are_capped_and_named() {
        assert_eq!(version_name("aarch64").as_deref(), Some("8a"));
        assert_eq!(version_name("armv8.2a").as_deref(), Some("8.2a"));
        assert_eq!(version_name("thunderx2"), None);
        let all = all_configs();
        let want: Vec<&str> = vec!["9.0a", "8.5a", "8.4a", "8.3a", "8.2a", "8.1a", "8a"];
        assert_eq!(
            all[0].values.iter().map(|v| v.as_str()).collect::<Vec<_>>(),
            want
        );
        assert_eq!(all.len(), 1 + FEATURE_ORDER.len());
        // neoverse_v2's generic is armv9.0a: the full chain.
        let v2 = supported_from_microarch("neoverse_v2").unwrap();
        assert_eq!(v2[0].values.len(), 7);
        // armv8.6a is not an ancestor of armv9.0a, and is not capped.
        let v86 = supported_from_microarch("armv8.6a").unwrap();
        assert_eq!(v86[0].values[0].as_str(), "8.6a");
    }

    #[test]
    fn a_generic_above_the_cap_is_capped() {
        // The embedded data stops at armv9.0a, so check the rule on a catalog that goes further.
        let text = r#"{"microarchitectures": {
            "aarch64": {"from": [], "vendor": "generic", "features": []},
            "armv8.1a": {"from": ["aarch64"], "vendor": "generic", "features": []},
            "armv9.0a": {"from": ["armv8.1a"], "vendor": "generic", "features": []},
            "armv9.2a": {"from": ["armv9.0a"], "vendor": "generic", "features": []}},
            "feature_aliases": {}, "conversions": {}}"#;
        let c = Catalog::parse(text).unwrap();
        assert_eq!(
            versions(&c, c.id("armv9.2a").unwrap()).unwrap(),
            ["9.0a", "8.1a", "8a"]
        );
        assert_eq!(
            versions(&c, c.id("armv9.0a").unwrap()).unwrap(),
            ["9.0a", "8.1a", "8a"]
        );
        assert_eq!(
            versions(&c, c.id("armv8.1a").unwrap()).unwrap(),
            ["8.1a", "8a"]
        );
        let m4 = aarch64_catalog().id("m4").unwrap();
        let a = aarch64_catalog();
        assert_eq!(versions(a, a.generic(m4)).unwrap()[0], "8.6a");
    }

    #[test]
    fn names_and_errors() {
        let err = supported_from_microarch("haswell").unwrap_err();
        assert!(matches!(
            err,
            CpuError::UnknownMicroarchitecture {
                family: "aarch64",
                ..
            }
        ));
        assert!(err.to_string().contains("neoverse_n1"));
        assert_eq!(classify_name("a64fx").unwrap().generic, "armv8.2a");
        let a72 = flatten(&supported_from_microarch("cortex_a72").unwrap());
        assert_eq!(a72[0].1, vec!["8a".to_owned()]);
        // Apple on macOS: the model decides.
        assert_eq!(classify_apple("m2").microarchitecture, "m2");
        assert_eq!(classify_apple("unknown").microarchitecture, "aarch64");
    }

    #[test]
    fn unknown_implementer_reaches_only_generic() {
        let info = CpuInfo::parse(&fixture("linux-amazon-neoverse_n1").replace("0x41", "0xee"));
        let c = classify(&info);
        assert_eq!(c.microarchitecture, "aarch64");
        assert_eq!(flatten(&c.supported)[0].1, vec!["8a".to_owned()]);
    }
}
