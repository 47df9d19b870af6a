//! Which fat-binary entries a slim build keeps.
//!
//! # The keep rule
//!
//! The user names what the slim build must serve: compute capabilities (`8.6`), whole families
//! (`8.x`: every compute capability of major 8), and optionally PTX targets (`compute_90`). A
//! container (one per object file, the unit the CUDA driver loads and picks code from) then
//! keeps:
//!
//! 1. every **SASS** entry that runs on a kept compute capability: same major, minor not above
//!    it (`sm_80` runs on 8.0 and 8.6, never on 9.0); architecture-specific SASS (`sm_90a`,
//!    `sm_100a`) only when exactly its compute capability is kept;
//! 2. for each kept compute capability on which **no SASS of this container** runs, the **PTX**
//!    the driver would JIT there: the PTX of the highest architecture not above it (every entry
//!    of that architecture, whatever their PTX ISA versions). PTX is not kept where SASS serves
//!    the capability: the driver prefers SASS, so the PTX would never be read there;
//! 3. for each PTX target `compute_NN`, the PTX of the highest architecture not above `NN`
//!    (what a JIT on a GPU of `NN` or later would use: forward compatibility, on request);
//! 4. every entry of another kind (LTO IR, kinds newer than this reader): what needs them is
//!    unknown, so they stay.
//!
//! Everything else is dropped. A container may end up empty: it had no code for the kept
//! capabilities, and the fat build could not run those kernels there either.

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

use vari_scan::{CodeKind, FatbinEntry, GpuCode};

/// One `--keep` argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum KeepSpec {
    /// A compute capability, as its architecture number (`86` for 8.6): `8.6`, `86`, `sm_86`,
    /// `sm_86a`, `86_real`.
    Capability(u32),
    /// Every compute capability of a major: `8.x`, `8x`, `sm_8x`.
    Family(u32),
    /// The PTX a JIT needs on a GPU of this architecture or later: `compute_90`, `90_virtual`.
    Ptx(u32),
}

/// A `--keep` argument that names nothing this reader knows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{0}` is not a compute capability (`8.6`, `86`, `sm_86`, `86_real`), a family (`8.x`) \
     or a PTX target (`compute_90`, `90_virtual`)"
)]
pub struct KeepSpecError(pub String);

/// The highest architecture number accepted (compute capability 99.9).
const MAX_ARCH: u32 = 999;

fn arch_number(text: &str) -> Option<u32> {
    let n: u32 = match text.split_once('.') {
        Some((major, minor)) => {
            let (major, minor): (u32, u32) = (major.parse().ok()?, minor.parse().ok()?);
            if minor > 9 || major == 0 {
                return None;
            }
            major * 10 + minor
        }
        None => text.parse().ok()?,
    };
    // Only digits (no sign, no spaces), and a major of at least 1.
    (text.bytes().all(|b| b.is_ascii_digit() || b == b'.') && (10..=MAX_ARCH).contains(&n))
        .then_some(n)
}

fn family_number(text: &str) -> Option<u32> {
    let major = text.strip_suffix(".x").or_else(|| text.strip_suffix('x'))?;
    let n: u32 = major.parse().ok()?;
    (major.bytes().all(|b| b.is_ascii_digit()) && (1..=MAX_ARCH / 10).contains(&n)).then_some(n)
}

impl FromStr for KeepSpec {
    type Err = KeepSpecError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || KeepSpecError(s.to_owned());
        let text = s.trim();
        // The property form every other option takes: `nvidia :: sm_arch :: 80_real`.
        let text = match text
            .split("::")
            .map(str::trim)
            .collect::<Vec<_>>()
            .as_slice()
        {
            [namespace, feature, value] => {
                if *namespace != "nvidia" || *feature != "sm_arch" {
                    return Err(bad());
                }
                *value
            }
            [_] => text,
            _ => return Err(bad()),
        };
        if let Some(rest) = text.strip_prefix("compute_") {
            return arch_number(rest).map(Self::Ptx).ok_or_else(bad);
        }
        if let Some(rest) = text.strip_suffix("_virtual") {
            return arch_number(rest).map(Self::Ptx).ok_or_else(bad);
        }
        let text = text.strip_prefix("sm_").unwrap_or(text);
        if let Some(family) = family_number(text) {
            return Ok(Self::Family(family));
        }
        let text = text
            .strip_suffix("_real")
            .or_else(|| text.strip_suffix('a'))
            .unwrap_or(text);
        arch_number(text).map(Self::Capability).ok_or_else(bad)
    }
}

impl fmt::Display for KeepSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Capability(n) => write!(f, "{}.{}", n / 10, n % 10),
            Self::Family(major) => write!(f, "{major}.x"),
            Self::Ptx(n) => write!(f, "compute_{n}"),
        }
    }
}

/// The GPU families (compute capability majors) a target's profile declares: the majors of
/// its `nvidia :: sm_arch` values that name real code (`90_real` → 9, `120_real` → 12), the
/// families whose per-family wheels (as [`crate::split_wheel`] writes them) its GPUs run.
/// Empty when the profile declares no NVIDIA GPU.
pub fn profile_families(profile: &vari_core::Profile) -> BTreeSet<u32> {
    let Some(sm_arch) = profile
        .namespace("nvidia")
        .and_then(|ns| ns.feature("sm_arch"))
    else {
        return BTreeSet::new();
    };
    sm_arch
        .values
        .iter()
        .filter(|v| v.as_str().ends_with("_real"))
        .filter_map(|v| match v.as_str().parse::<KeepSpec>() {
            Ok(KeepSpec::Capability(n)) => Some(n / 10),
            _ => None,
        })
        .collect()
}

/// What a slim build keeps: the compute capabilities it serves and the PTX targets asked for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Keep {
    /// Architecture numbers of the kept compute capabilities.
    capabilities: BTreeSet<u32>,
    /// Architecture numbers of the PTX targets.
    ptx: BTreeSet<u32>,
}

impl Keep {
    /// The union of the specs.
    pub fn new(specs: impl IntoIterator<Item = KeepSpec>) -> Self {
        let mut keep = Self::default();
        for spec in specs {
            match spec {
                KeepSpec::Capability(n) => {
                    keep.capabilities.insert(n);
                }
                KeepSpec::Family(major) => keep.capabilities.extend(major * 10..major * 10 + 10),
                KeepSpec::Ptx(n) => {
                    keep.ptx.insert(n);
                }
            }
        }
        keep
    }

    /// Whether nothing is kept.
    pub fn is_empty(&self) -> bool {
        self.capabilities.is_empty() && self.ptx.is_empty()
    }

    /// Which entries of one container stay, by the rule in the module docs: one flag per entry,
    /// in order.
    pub fn select(&self, entries: &[FatbinEntry]) -> Vec<bool> {
        let code = |e: &FatbinEntry| {
            e.kind.map(|kind| GpuCode {
                arch: e.arch,
                kind,
                arch_specific: e.arch_specific,
            })
        };
        let sass: Vec<GpuCode> = entries
            .iter()
            .filter_map(code)
            .filter(|c| c.kind == CodeKind::Sass)
            .collect();
        let ptx_archs: BTreeSet<u32> = entries
            .iter()
            .filter(|e| e.kind == Some(CodeKind::Ptx))
            .map(|e| e.arch)
            .collect();
        let jit_pick = |device: u32| ptx_archs.range(..=device).next_back().copied();
        let mut ptx_kept: BTreeSet<u32> = self
            .capabilities
            .iter()
            .filter(|&&c| !sass.iter().any(|s| s.runs_on(c)))
            .filter_map(|&c| jit_pick(c))
            .collect();
        ptx_kept.extend(self.ptx.iter().filter_map(|&p| jit_pick(p)));
        entries
            .iter()
            .map(|e| match code(e) {
                Some(c) if c.kind == CodeKind::Sass => {
                    self.capabilities.iter().any(|&cap| c.runs_on(cap))
                }
                Some(c) => ptx_kept.contains(&c.arch),
                None => true,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vari_scan::Compression;

    #[test]
    fn a_profile_declares_the_families_of_its_real_sm_arch_values() {
        let profile = vari_core::Profile::from_json(
            r#"{"schema": "vari-profile/1", "namespaces": [{"namespace": "nvidia", "features": [
                {"name": "sm_arch", "values": ["90_real", "90_virtual", "120_real"], "multi_value": true}
            ]}]}"#,
        )
        .unwrap();
        assert_eq!(
            profile_families(&profile).into_iter().collect::<Vec<_>>(),
            [9, 12]
        );
        assert!(profile_families(&vari_core::Profile::default()).is_empty());
    }

    fn entry(kind: CodeKind, arch: u32, arch_specific: bool) -> FatbinEntry {
        FatbinEntry {
            offset: 0,
            kind: Some(kind),
            raw_kind: if kind == CodeKind::Ptx { 1 } else { 2 },
            arch,
            arch_specific,
            version: (0, 0),
            compression: Compression::None,
            len: 64,
        }
    }
    fn sass(arch: u32) -> FatbinEntry {
        entry(CodeKind::Sass, arch, false)
    }
    fn ptx(arch: u32) -> FatbinEntry {
        entry(CodeKind::Ptx, arch, false)
    }
    #[test]
    fn the_property_form_means_its_value() {
        for (property, value) in [
            ("nvidia :: sm_arch :: 80_real", "80_real"),
            ("nvidia::sm_arch::90_virtual", "90_virtual"),
        ] {
            assert_eq!(
                property.parse::<KeepSpec>().unwrap(),
                value.parse::<KeepSpec>().unwrap()
            );
        }
        for bad in [
            "x86_64 :: level :: v3",
            "nvidia :: cuda_version_lower_bound :: 12.0",
            "nvidia :: sm_arch",
            "a :: b :: c :: d",
        ] {
            assert!(bad.parse::<KeepSpec>().is_err(), "{bad}");
        }
    }

    fn keep(specs: &[&str]) -> Keep {
        Keep::new(specs.iter().map(|s| s.parse::<KeepSpec>().unwrap()))
    }
    fn kept(keep: &Keep, entries: &[FatbinEntry]) -> Vec<String> {
        entries
            .iter()
            .zip(keep.select(entries))
            .filter(|(_, k)| *k)
            .map(|(e, _)| {
                let kind = match e.kind {
                    Some(CodeKind::Sass) if e.arch_specific => "sm_a",
                    Some(CodeKind::Sass) => "sm",
                    Some(CodeKind::Ptx) => "compute",
                    None => "other",
                };
                format!("{kind}{}", e.arch)
            })
            .collect()
    }

    #[test]
    fn specs_in_every_spelling() {
        for (text, spec) in [
            ("8.6", KeepSpec::Capability(86)),
            ("86", KeepSpec::Capability(86)),
            ("sm_86", KeepSpec::Capability(86)),
            ("sm_90a", KeepSpec::Capability(90)),
            ("86_real", KeepSpec::Capability(86)),
            ("12.0", KeepSpec::Capability(120)),
            ("sm_120", KeepSpec::Capability(120)),
            ("8.x", KeepSpec::Family(8)),
            ("sm_8x", KeepSpec::Family(8)),
            ("12x", KeepSpec::Family(12)),
            ("compute_90", KeepSpec::Ptx(90)),
            ("90_virtual", KeepSpec::Ptx(90)),
        ] {
            assert_eq!(text.parse::<KeepSpec>(), Ok(spec), "{text}");
        }
        for bad in [
            "", "sm_", "8.10", "0.5", "-86", "+86", "8 6", "compute_", "sm_9000", "x", "8.6.1",
            "sm_86b", "1",
        ] {
            assert!(bad.parse::<KeepSpec>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn sass_for_the_kept_capabilities_and_no_ptx_where_sass_serves() {
        let entries = [sass(75), sass(80), sass(86), sass(89), sass(90), ptx(90)];
        assert_eq!(kept(&keep(&["8.6"]), &entries), ["sm80", "sm86"]);
        assert_eq!(kept(&keep(&["8.0"]), &entries), ["sm80"]);
        assert_eq!(kept(&keep(&["8.x"]), &entries), ["sm80", "sm86", "sm89"]);
        assert_eq!(kept(&keep(&["9.0"]), &entries), ["sm90"]);
        assert_eq!(kept(&keep(&["7.5", "9.0"]), &entries), ["sm75", "sm90"]);
    }

    #[test]
    fn ptx_where_no_sass_runs() {
        // 12.0 has no SASS here: the driver JITs the highest PTX not above it.
        let entries = [sass(80), sass(90), ptx(80), ptx(90)];
        assert_eq!(kept(&keep(&["12.0"]), &entries), ["compute90"]);
        // 7.5 has nothing at all: nothing runs there.
        assert!(kept(&keep(&["7.5"]), &entries).is_empty());
        // A family: 8.0 … 8.9 are all served by sm_80.
        assert_eq!(kept(&keep(&["8.x"]), &entries), ["sm80"]);
        // A container with only sm_86 serves 8.6+; 8.0 … 8.5 need the PTX.
        let entries = [sass(86), ptx(80)];
        assert_eq!(kept(&keep(&["8.x"]), &entries), ["sm86", "compute80"]);
        assert_eq!(kept(&keep(&["8.6"]), &entries), ["sm86"]);
    }

    #[test]
    fn ptx_targets_keep_the_jit_pick() {
        let entries = [sass(80), ptx(70), ptx(80), ptx(90)];
        assert_eq!(
            kept(&keep(&["8.0", "compute_89"]), &entries),
            ["sm80", "compute80"]
        );
        assert_eq!(kept(&keep(&["compute_120"]), &entries), ["compute90"]);
        assert!(kept(&keep(&["compute_60"]), &entries).is_empty());
    }

    #[test]
    fn architecture_specific_sass_only_on_exactly_its_capability() {
        let entries = [
            sass(90),
            entry(CodeKind::Sass, 90, true),
            entry(CodeKind::Sass, 100, true),
            sass(100),
        ];
        assert_eq!(kept(&keep(&["9.0"]), &entries), ["sm90", "sm_a90"]);
        assert_eq!(kept(&keep(&["10.3"]), &entries), ["sm100"]);
        assert_eq!(kept(&keep(&["10.x"]), &entries), ["sm_a100", "sm100"]);
    }

    #[test]
    fn entries_of_unknown_kinds_stay() {
        let mut other = sass(90);
        other.kind = None;
        other.raw_kind = 4;
        assert_eq!(kept(&keep(&["8.0"]), &[sass(90), other]), ["other90"]);
    }
}
