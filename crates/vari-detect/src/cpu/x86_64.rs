//! The `x86_64` namespace (reference: provider-variant-x86-64 0.0.1.post2, archspec 1900fa78).
//!
//! The CPU is classified as an archspec microarchitecture; the namespace then reports
//! `level` (from the matched generic `x86_64_vN`: `vN … v1`) and the features **of that
//! microarchitecture's definition** in [`FEATURE_ORDER`], not the raw flags. A CPU that only
//! reaches plain `x86_64` gets nothing at all, as with the reference.

use std::time::Instant;

use vari_core::FeatureSupport;

use super::archspec::{x86_catalog, HostFacts, Rules, TargetId};
use super::cpuinfo::{CpuArch, CpuInfo};
use super::{on, single, Classification, CpuError};
use crate::context::DetectContext;
use crate::facts_section::{self, FactsError};
use crate::provider::{Derived, Detected, FactsInput, FactsSection, Provider, SnapshotFile};
use crate::report::ProviderReport;

/// The namespace name.
pub const NAMESPACE: &str = "x86_64";

/// The highest level the reference knows (`x86-64-v4`).
pub const MAX_LEVEL: u32 = 4;

/// Every feature the namespace can report, most preferred first (the reference's fixed order).
pub const FEATURE_ORDER: &[&str] = &[
    "avx_vnni",
    "cppc",
    "ibrs_enhanced",
    "tsc_adjust",
    "flush_l1d",
    "movdir64b",
    "movdiri",
    "avx512_bf16",
    "avx512_bitalg",
    "avx512_vbmi2",
    "avx512_vnni",
    "avx512_vp2intersect",
    "avx512_vpopcntdq",
    "avx512ifma",
    "avx512vbmi",
    "rdpid",
    "sha_ni",
    "vaes",
    "vpclmulqdq",
    "clwb",
    "clzero",
    "avx512bw",
    "avx512cd",
    "avx512dq",
    "avx512f",
    "avx512vl",
    "clflushopt",
    "gfni",
    "rdseed",
    "xsavec",
    "xsaveopt",
    "adx",
    "avx2",
    "avx",
    "bmi2",
    "bmi1",
    "abm",
    "f16c",
    "fma",
    "movbe",
    "xsave",
    "rdrand",
    "aes",
    "pclmulqdq",
    "sse4a",
    "fsgsbase",
    "sse4_2",
    "sse4_1",
    "ssse3",
    "sse3",
    "cx16",
    "lahf_lm",
    "popcnt",
    "sse2",
    "sse",
    "mmx",
];

fn feature_order() -> impl Iterator<Item = &'static str> {
    FEATURE_ORDER.iter().copied()
}

/// `vN … v1` for `n` capped at [`MAX_LEVEL`].
fn levels(n: u32) -> impl Iterator<Item = String> {
    (1..=n.min(MAX_LEVEL)).rev().map(|l| format!("v{l}"))
}

/// The supported list for archspec target `id`: empty unless its generic is `x86_64_vN`.
fn supported_for(id: TargetId) -> Vec<FeatureSupport> {
    let catalog = x86_catalog();
    let generic = &catalog.target(catalog.generic(id)).name;
    let Some(level) = generic
        .strip_prefix("x86_64_v")
        .and_then(|n| n.parse::<u32>().ok())
    else {
        return Vec::new();
    };
    let mut list = vec![single("level", levels(level))];
    list.extend(
        feature_order()
            .filter(|f| catalog.has_feature(id, f))
            .map(on),
    );
    list
}

fn classification(id: TargetId) -> Classification {
    Classification::of(x86_catalog(), id, supported_for(id))
}

/// Classifies an x86-64 `/proc/cpuinfo` (`vendor_id` and `flags` of the first processor).
///
/// ```
/// use vari_detect::cpu::{cpuinfo::CpuInfo, x86_64};
/// let info = CpuInfo::parse("vendor_id : AuthenticAMD\nflags : mmx sse sse2 ssse3 sse4_1 sse4_2 popcnt cx16 lahf_lm\n");
/// let c = x86_64::classify(&info);
/// assert_eq!(c.microarchitecture, "x86_64_v2");
/// assert_eq!(c.supported[0].values.len(), 2); // level v2, v1
/// ```
pub fn classify(info: &CpuInfo) -> Classification {
    let catalog = x86_catalog();
    let host = HostFacts {
        vendor: info.get("vendor_id").unwrap_or("generic").to_owned(),
        features: info.words("flags").map(str::to_owned).collect(),
        cpu_part: String::new(),
    };
    // The family root is in the embedded data (unit-tested).
    let root = catalog.id("x86_64").expect("archspec data defines x86_64");
    classification(catalog.classify(root, &host, Rules::X86_64))
}

/// The supported list for a named archspec microarchitecture (profiles: `microarchitecture =
/// "haswell"`). Empty for plain `x86_64`, as the reference reports nothing there.
pub fn supported_from_microarch(name: &str) -> Result<Vec<FeatureSupport>, CpuError> {
    lookup(name).map(supported_for)
}

/// The supported list for x86-64 level `level` (1–4): that of archspec's `x86_64_vN`
/// (`x86_64` for level 1, which reports nothing, as the reference does for such CPUs).
pub fn from_level(level: u32) -> Result<Vec<FeatureSupport>, CpuError> {
    match level {
        1 => supported_from_microarch("x86_64"),
        2..=MAX_LEVEL => supported_from_microarch(&format!("x86_64_v{level}")),
        _ => Err(CpuError::UnknownLevel(level)),
    }
}

/// Classification of a named microarchitecture (for `vari detect` style output from profiles).
pub fn classify_name(name: &str) -> Result<Classification, CpuError> {
    lookup(name).map(classification)
}

fn lookup(name: &str) -> Result<TargetId, CpuError> {
    x86_catalog().lookup(NAMESPACE, name)
}

/// Every valid value: `level` v4…v1, then each feature of [`FEATURE_ORDER`] with `on`.
pub fn all_configs() -> Vec<FeatureSupport> {
    let mut list = vec![single("level", levels(MAX_LEVEL))];
    list.extend(feature_order().map(on));
    list
}

/// Detects the `x86_64` namespace for the context's machine (or snapshot).
pub fn detect(ctx: &DetectContext) -> ProviderReport {
    let started = Instant::now();
    let obs = match super::observe_arch(ctx, NAMESPACE, CpuArch::X86_64, started) {
        Ok(obs) => obs,
        Err(absent) => return absent,
    };
    let c = classify(&obs.info);
    let source = format!("{}: {}", obs.source, c.microarchitecture);
    if c.supported.is_empty() {
        let note = format!(
            "CPU is {} (no x86-64-v2 features): the reference provider reports nothing",
            c.microarchitecture
        );
        return ProviderReport::builtin(NAMESPACE, None, source, Some(note), started);
    }
    ProviderReport::builtin(NAMESPACE, Some(c.supported), source, None, started)
}

/// The `x86_64` provider in the [registry](crate::registry).
pub(crate) struct X86_64;

impl Provider for X86_64 {
    fn namespace(&self) -> &'static str {
        NAMESPACE
    }

    fn detection(&self) -> &'static str {
        "The CPU is classified as an archspec microarchitecture from `/proc/cpuinfo`; `level` comes from the matched generic `x86_64_vN`, the features from that microarchitecture's definition. A CPU that only reaches plain `x86_64` supports nothing in this namespace."
    }

    fn hardware(&self) -> Option<&'static str> {
        Some("x86-64 CPUs")
    }

    fn snapshot_files(&self, _ctx: &DetectContext) -> Vec<SnapshotFile> {
        vec![SnapshotFile::Copy("/proc/cpuinfo".into())]
    }

    fn facts_section(&self) -> FactsSection {
        FactsSection::Table(&["microarchitecture", "level", "cpuinfo"])
    }

    fn facts(
        &self,
        value: &toml::Value,
        input: &FactsInput<'_>,
    ) -> Result<Option<Derived>, FactsError> {
        let t = facts_section::as_table(value, NAMESPACE)?;
        let derived = match super::one_of(t, NAMESPACE, &["microarchitecture", "level", "cpuinfo"])?
        {
            ("microarchitecture", v) => {
                super::microarchitecture_fact(NAMESPACE, v, supported_from_microarch)?
            }
            ("level", v) => {
                let level = v
                    .as_integer()
                    .and_then(|l| u32::try_from(l).ok())
                    .ok_or_else(|| {
                        facts_section::invalid("x86_64.level", "expected an integer 1 to 4")
                    })?;
                let f = from_level(level)
                    .map_err(|e| facts_section::invalid("x86_64.level", e.to_string()))?;
                (f, format!("x86-64-v{level}"))
            }
            (_, v) => super::cpuinfo_fact(NAMESPACE, v, input.base_dir, CpuArch::X86_64, classify)?,
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
    fn feature_order_is_complete_and_valid() {
        assert_eq!(feature_order().count(), 56);
        let mut names: Vec<&str> = feature_order().collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), 56, "no duplicates");
        for f in feature_order() {
            vari_core::FeatureName::new(f).unwrap();
        }
    }

    #[test]
    fn vectors_pass_through_a_fixture_sysroot() {
        let v = vectors("x86_64_cpuinfo.json");
        let cases = v["cases"].as_array().unwrap();
        assert!(cases.len() >= 7);
        for case in cases {
            let name = case["cpuinfo"].as_str().unwrap();
            let (_dir, ctx) = cpuinfo_root(&fixture(name));
            let report = detect(&ctx);
            let want = expected(&case["supported"]);
            let got = report.features.as_deref().map(flatten).unwrap_or_default();
            assert_eq!(got, want, "{name}");
            // An empty reference answer means the namespace is absent, with a reason.
            assert_eq!(report.features.is_none(), want.is_empty(), "{name}");
            assert_eq!(report.note.is_some(), want.is_empty(), "{name}");
            let host = case["host"].as_str().unwrap();
            assert!(
                report.source.ends_with(&format!("proc/cpuinfo: {host}")),
                "{name}: {}",
                report.source
            );
            assert_eq!(
                classify(&CpuInfo::parse(&fixture(name))).microarchitecture,
                host
            );
        }
    }

    #[test]
    fn plain_x86_64_is_absent_with_a_note() {
        let (_dir, ctx) = cpuinfo_root(&fixture("linux-scientific7-k10"));
        let report = detect(&ctx);
        assert!(report.features.is_none());
        assert!(report.note.unwrap().contains("reports nothing"));
    }

    #[test]
    fn aarch64_cpuinfo_is_not_x86() {
        let (_dir, ctx) = cpuinfo_root(&fixture("linux-amazon-neoverse_n1"));
        let report = detect(&ctx);
        assert!(report.features.is_none());
        assert!(report.note.unwrap().contains("aarch64"));
    }

    #[test]
    fn missing_cpuinfo_is_explained() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = DetectContext::from_process_env(crate::Sysroot::new(dir.path()));
        let report = detect(&ctx);
        assert!(report.features.is_none());
        assert!(report.note.unwrap().contains("cannot read"));
    }

    #[test]
    fn levels_and_names() {
        let v3 = flatten(&from_level(3).unwrap());
        assert_eq!(
            v3[0],
            (
                "level".to_owned(),
                vec!["v3".into(), "v2".into(), "v1".into()]
            )
        );
        assert!(v3.iter().any(|(n, _)| n == "avx2"));
        assert!(!v3.iter().any(|(n, _)| n == "avx512f"));
        assert_eq!(flatten(&from_level(4).unwrap())[0].1.len(), 4);
        assert!(from_level(1).unwrap().is_empty());
        assert_eq!(from_level(5), Err(CpuError::UnknownLevel(5)));
        assert_eq!(from_level(0), Err(CpuError::UnknownLevel(0)));
        // A named CPU reports its own definition, aliases included.
        let pd = flatten(&supported_from_microarch("piledriver").unwrap());
        assert!(pd.iter().any(|(n, _)| n == "sse3"));
        assert!(!pd.iter().any(|(n, _)| n == "popcnt"));
        // Level of an AVX-512 part is capped at v4 and starts the list.
        let sr = supported_from_microarch("sapphirerapids").unwrap();
        assert_eq!(sr[0].values[0].as_str(), "v4");
        let err = supported_from_microarch("neoverse_n1").unwrap_err();
        assert!(err.to_string().contains("haswell"), "{err}");
        assert!(supported_from_microarch("haswel").is_err());
        assert_eq!(classify_name("zen4").unwrap().generic, "x86_64_v4");
    }

    #[test]
    fn all_configs_lists_every_value() {
        let all = all_configs();
        assert_eq!(all.len(), 57);
        assert_eq!(all[0].values.len(), 4);
        assert_eq!(all[1].name.as_str(), "avx_vnni");
        assert_eq!(all[56].name.as_str(), "mmx");
        // Every supported list is a subset of it, in the same order.
        for name in x86_catalog().names_in_family(NAMESPACE) {
            let s = supported_from_microarch(name).unwrap();
            let positions: Vec<usize> = s
                .iter()
                .map(|f| all.iter().position(|a| a.name == f.name).unwrap())
                .collect();
            assert!(positions.windows(2).all(|w| w[0] < w[1]), "{name}");
        }
    }
}
