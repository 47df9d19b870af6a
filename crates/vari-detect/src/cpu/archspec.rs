//! archspec's `microarchitectures.json` and the classification rules of archspec's `host()`.
//!
//! The reference providers classify the CPU with archspec (Python); to report the same names we
//! embed the exact data files they were checked against (`data/archspec/`, Apache-2.0 OR MIT, see
//! `data/archspec/COPYRIGHT`) and reimplement archspec's rules:
//!
//! - targets keep the JSON order (parents always come first there), which decides ties exactly as
//!   Python's `max()` does: the first of equal keys wins;
//! - `ancestors` is archspec's list: direct parents, then each parent's ancestors not yet listed;
//! - a feature is "in" a target when listed, or when a `feature_aliases` rule holds for it.
//!
//! Each data file is parsed once per process ([`x86_catalog`], [`aarch64_catalog`]).

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::OnceLock;

use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

use super::error::CpuError;

/// archspec data used for x86-64 (reference parity: provider-variant-x86-64, commit 1900fa78).
const X86_DATA: &str = include_str!("../../data/archspec/microarchitectures-1900fa78.json");
/// archspec data used for aarch64 (reference parity: provider-variant-aarch64, commit 4fcdb2f5).
const AARCH64_DATA: &str = include_str!("../../data/archspec/microarchitectures-4fcdb2f5.json");

/// The parsed x86-64 data (archspec commit 1900fa78), parsed on first use.
pub(crate) fn x86_catalog() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(|| {
        // The file is embedded at compile time and parsed by a unit test, so a failure here is a
        // build defect, not an input error.
        Catalog::parse(X86_DATA).expect("embedded archspec data 1900fa78 is valid")
    })
}

/// The parsed aarch64 data (archspec commit 4fcdb2f5), parsed on first use.
pub(crate) fn aarch64_catalog() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(|| {
        // Embedded and covered by a unit test, as above.
        Catalog::parse(AARCH64_DATA).expect("embedded archspec data 4fcdb2f5 is valid")
    })
}

/// Index of a target in its [`Catalog`].
pub(crate) type TargetId = usize;

/// One microarchitecture of the data file.
#[derive(Debug)]
pub(crate) struct Target {
    /// Name such as `haswell` or `armv8.2a`.
    pub name: String,
    /// `generic`, `GenuineIntel`, `ARM`, …
    pub vendor: String,
    /// Full feature set (archspec lists every feature, not a delta).
    pub features: HashSet<String>,
    /// The same set as bits over the catalog's feature numbering (fast subset tests).
    bits: Bits,
    /// Direct parents.
    parents: Vec<TargetId>,
    /// archspec's `ancestors` list, in archspec's order.
    pub ancestors: Vec<TargetId>,
    /// MIDR part number (`0xd0c`) for aarch64 cores.
    pub cpupart: Option<String>,
    /// The root of the family (`x86_64`, `aarch64`, …).
    family: TargetId,
}

impl Target {
    /// Whether this is one of the vendor-neutral levels (`x86_64_v3`, `armv8.2a`, `aarch64`).
    pub(crate) fn is_generic(&self) -> bool {
        self.vendor == "generic"
    }
}

/// A set of feature numbers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Bits(Vec<u64>);

impl Bits {
    fn insert(&mut self, n: usize) {
        if self.0.len() <= n / 64 {
            self.0.resize(n / 64 + 1, 0);
        }
        self.0[n / 64] |= 1 << (n % 64);
    }

    fn contains(&self, n: usize) -> bool {
        self.0.get(n / 64).is_some_and(|w| w & (1 << (n % 64)) != 0)
    }

    fn is_subset(&self, of: &Bits) -> bool {
        self.0
            .iter()
            .enumerate()
            .all(|(i, w)| w & !of.0.get(i).copied().unwrap_or(0) == 0)
    }
}

/// One `feature_aliases` predicate (archspec `alias.py`).
#[derive(Debug)]
enum AliasPredicate {
    /// Documentation only: always true.
    Reason,
    /// True when any listed feature is in the target (recursively, through aliases).
    AnyOf(Vec<String>),
    /// True when the target's family is listed.
    Families(Vec<String>),
}

/// The host facts that classification looks at.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct HostFacts {
    /// Vendor name after archspec's conversions (`GenuineIntel`, `ARM`, or a raw code).
    pub vendor: String,
    /// Feature flags as the kernel names them.
    pub features: HashSet<String>,
    /// aarch64 `CPU part` (empty when unknown).
    pub cpu_part: String,
}

/// Family-specific candidate rules (archspec's per-family `compatibility_check`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rules {
    /// Every target of the family with a matching vendor and a feature subset.
    X86_64,
    /// As x86-64, but generic levels other than `aarch64` itself are never candidates (archspec
    /// cannot tell versions apart from features), and a matching `cpupart` narrows the result.
    Aarch64,
}

/// A parsed `microarchitectures.json`.
#[derive(Debug)]
pub(crate) struct Catalog {
    targets: Vec<Target>,
    /// Every feature named by a target, numbered.
    feature_ids: HashMap<String, usize>,
    by_name: HashMap<String, TargetId>,
    aliases: HashMap<String, Vec<AliasPredicate>>,
    arm_vendors: HashMap<String, String>,
    darwin_flags: Vec<(String, String)>,
}

#[derive(Deserialize)]
struct RawFile {
    microarchitectures: Ordered<RawTarget>,
    feature_aliases: Ordered<Ordered<serde_json::Value>>,
    conversions: RawConversions,
}

#[derive(Deserialize)]
struct RawTarget {
    from: Vec<String>,
    vendor: String,
    features: Vec<String>,
    #[serde(default)]
    cpupart: Option<String>,
}

#[derive(Deserialize)]
struct RawConversions {
    #[serde(default)]
    arm_vendors: HashMap<String, String>,
    #[serde(default)]
    darwin_flags: Ordered<String>,
}

/// A JSON object read with its key order kept (the order decides ties, see the module docs).
struct Ordered<V>(Vec<(String, V)>);

impl<V> Default for Ordered<V> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for Ordered<V> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct OrderedVisitor<V>(std::marker::PhantomData<V>);
        impl<'de, V: Deserialize<'de>> Visitor<'de> for OrderedVisitor<V> {
            type Value = Ordered<V>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut entries = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, V>()? {
                    entries.push((k, v));
                }
                Ok(Ordered(entries))
            }
        }
        d.deserialize_map(OrderedVisitor(std::marker::PhantomData))
    }
}

impl Catalog {
    /// Parses a `microarchitectures.json` document.
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        let raw: RawFile = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let mut by_name = HashMap::new();
        for (i, (name, _)) in raw.microarchitectures.0.iter().enumerate() {
            by_name.insert(name.clone(), i);
        }
        let mut targets: Vec<Target> = Vec::with_capacity(by_name.len());
        let mut feature_ids: HashMap<String, usize> = HashMap::new();
        for (i, (name, t)) in raw.microarchitectures.0.into_iter().enumerate() {
            let mut parents = Vec::with_capacity(t.from.len());
            for p in &t.from {
                match by_name.get(p) {
                    // Parents precede children in archspec's file; insisting on it keeps the
                    // ancestor computation a single forward pass.
                    Some(&id) if id < i => parents.push(id),
                    _ => return Err(format!("{name}: parent {p:?} is not defined before it")),
                }
            }
            // archspec: `value = parents[:]; for parent in parents: value.extend(a for a in
            // parent.ancestors if a not in value)`.
            let mut ancestors = parents.clone();
            for &p in &parents {
                for &a in &targets[p].ancestors {
                    if !ancestors.contains(&a) {
                        ancestors.push(a);
                    }
                }
            }
            let roots: Vec<TargetId> = std::iter::once(i)
                .chain(ancestors.iter().copied())
                .filter(|&x| {
                    if x == i {
                        parents.is_empty()
                    } else {
                        targets[x].parents.is_empty()
                    }
                })
                .collect();
            let [family] = roots[..] else {
                return Err(format!("{name}: belongs to {} families", roots.len()));
            };
            let mut bits = Bits::default();
            for f in &t.features {
                let next = feature_ids.len();
                bits.insert(*feature_ids.entry(f.clone()).or_insert(next));
            }
            targets.push(Target {
                name,
                vendor: t.vendor,
                features: t.features.into_iter().collect(),
                bits,
                parents,
                ancestors,
                cpupart: t.cpupart,
                family,
            });
        }
        let mut aliases = HashMap::new();
        for (alias, rules) in raw.feature_aliases.0 {
            let mut predicates = Vec::new();
            for (kind, args) in rules.0 {
                let strings = || -> Result<Vec<String>, String> {
                    serde_json::from_value(args.clone())
                        .map_err(|e| format!("feature_aliases.{alias}.{kind}: {e}"))
                };
                predicates.push(match kind.as_str() {
                    "reason" => AliasPredicate::Reason,
                    "any_of" => AliasPredicate::AnyOf(strings()?),
                    "families" => AliasPredicate::Families(strings()?),
                    other => {
                        return Err(format!("feature_aliases.{alias}: unknown rule {other:?}"))
                    }
                });
            }
            aliases.insert(alias, predicates);
        }
        Ok(Self {
            targets,
            feature_ids,
            by_name,
            aliases,
            arm_vendors: raw.conversions.arm_vendors,
            darwin_flags: raw.conversions.darwin_flags.0,
        })
    }

    /// The target with this id.
    pub(crate) fn target(&self, id: TargetId) -> &Target {
        &self.targets[id]
    }

    /// Looks a target up by name.
    pub(crate) fn id(&self, name: &str) -> Option<TargetId> {
        self.by_name.get(name).copied()
    }

    /// The family root of a target (`x86_64`, `aarch64`, …).
    pub(crate) fn family(&self, id: TargetId) -> &Target {
        &self.targets[self.targets[id].family]
    }

    /// Names of every target in `family`, in data order (for error messages and listings).
    /// The microarchitecture called `name` in `family` (`x86_64`, `aarch64`), or an error that
    /// lists the known names.
    pub(crate) fn lookup(&self, family: &'static str, name: &str) -> Result<TargetId, CpuError> {
        self.id(name)
            .filter(|&id| self.family(id).name == family)
            .ok_or_else(|| CpuError::UnknownMicroarchitecture {
                family,
                name: name.to_owned(),
                known: self.names_in_family(family).join(", "),
            })
    }

    pub(crate) fn names_in_family(&self, family: &str) -> Vec<&str> {
        self.targets
            .iter()
            .filter(|t| self.targets[t.family].name == family)
            .map(|t| t.name.as_str())
            .collect()
    }

    /// archspec's vendor name for an aarch64 `CPU implementer` code; unknown codes stay as they
    /// are (archspec keeps them, so only generic targets can match).
    pub(crate) fn arm_vendor(&self, implementer: &str) -> String {
        self.arm_vendors
            .get(implementer)
            .cloned()
            .unwrap_or_else(|| implementer.to_owned())
    }

    /// archspec's macOS flag conversions (`sysctl` spelling → Linux spelling(s)), in file order.
    #[cfg_attr(not(target_os = "macos"), allow(dead_code))]
    pub(crate) fn darwin_flags(&self) -> &[(String, String)] {
        &self.darwin_flags
    }

    /// Whether `feature` is in target `id`: listed, or implied by a `feature_aliases` rule.
    pub(crate) fn has_feature(&self, id: TargetId, feature: &str) -> bool {
        let listed = self.feature_ids.get(feature);
        if listed.is_some_and(|&n| self.targets[id].bits.contains(n)) {
            return true;
        }
        let Some(predicates) = self.aliases.get(feature) else {
            return false;
        };
        predicates.iter().all(|p| match p {
            AliasPredicate::Reason => true,
            AliasPredicate::AnyOf(list) => list.iter().any(|f| self.has_feature(id, f)),
            AliasPredicate::Families(list) => {
                let family = &self.family(id).name;
                list.iter().any(|f| f == family)
            }
        })
    }

    /// archspec's `generic` property: the generic target among `id` and its ancestors with the
    /// most ancestors (first one on ties).
    pub(crate) fn generic(&self, id: TargetId) -> TargetId {
        let mut best = None::<TargetId>;
        for c in std::iter::once(id).chain(self.targets[id].ancestors.iter().copied()) {
            if !self.targets[c].is_generic() {
                continue;
            }
            let better = match best {
                None => true,
                Some(b) => self.targets[c].ancestors.len() > self.targets[b].ancestors.len(),
            };
            if better {
                best = Some(c);
            }
        }
        // Every chain ends at a family root, which is generic in archspec's data; fall back to the
        // target itself should a future file break that.
        best.unwrap_or(id)
    }

    /// archspec's sorting key: depth first, then number of features.
    fn key(&self, id: TargetId) -> (usize, usize) {
        let t = &self.targets[id];
        (t.ancestors.len(), t.features.len())
    }

    /// Python's `max(items, key=...)`: the first item with the greatest key.
    fn first_max(&self, items: impl IntoIterator<Item = TargetId>) -> Option<TargetId> {
        let mut best: Option<TargetId> = None;
        for c in items {
            if best.is_none_or(|b| self.key(c) > self.key(b)) {
                best = Some(c);
            }
        }
        best
    }

    /// Whether target `id` is `root` or descends from it.
    fn in_family(&self, id: TargetId, root: TargetId) -> bool {
        id == root || self.targets[id].ancestors.contains(&root)
    }

    /// archspec's `host()` for the facts of one CPU of family `family_root`.
    ///
    /// Candidates are the family's targets whose vendor is the host's or `generic` and whose
    /// features the host has. The best generic candidate is the one with the most ancestors (then
    /// most features); the result is the best candidate strictly descending from it, or the
    /// generic itself.
    pub(crate) fn classify(
        &self,
        family_root: TargetId,
        host: &HostFacts,
        rules: Rules,
    ) -> TargetId {
        // Host flags no target lists cannot matter for a subset test.
        let mut host_bits = Bits::default();
        for f in &host.features {
            if let Some(&n) = self.feature_ids.get(f) {
                host_bits.insert(n);
            }
        }
        let mut candidates: Vec<TargetId> = (0..self.targets.len())
            .filter(|&id| {
                let t = &self.targets[id];
                if rules == Rules::Aarch64 && t.is_generic() && id != family_root {
                    return false;
                }
                self.in_family(id, family_root)
                    && (t.vendor == host.vendor || t.is_generic())
                    && t.bits.is_subset(&host_bits)
            })
            .collect();
        let Some(best_generic) = self.first_max(
            candidates
                .iter()
                .copied()
                .filter(|&c| self.targets[c].is_generic()),
        ) else {
            // archspec falls back to the bare family when nothing matches.
            return family_root;
        };
        if rules == Rules::Aarch64 && !host.cpu_part.is_empty() {
            let part = host.cpu_part.to_ascii_lowercase();
            let matching: Vec<TargetId> = candidates
                .iter()
                .copied()
                .filter(|&c| {
                    self.targets[c]
                        .cpupart
                        .as_deref()
                        .is_some_and(|p| p.to_ascii_lowercase() == part)
                })
                .collect();
            if !matching.is_empty() {
                candidates = matching;
            }
        }
        self.first_max(
            candidates
                .into_iter()
                .filter(|&c| self.targets[c].ancestors.contains(&best_generic)),
        )
        .unwrap_or(best_generic)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(c: &Catalog, ids: &[TargetId]) -> Vec<String> {
        ids.iter().map(|&i| c.target(i).name.clone()).collect()
    }

    #[test]
    fn embedded_files_parse() {
        let x86 = x86_catalog();
        let arm = aarch64_catalog();
        assert!(x86.id("haswell").is_some());
        assert!(arm.id("neoverse_v2").is_some());
        // 4fcdb2f5 is the newer file: it knows Apple m3/m4, 1900fa78 does not.
        assert!(arm.id("m4").is_some());
        assert!(x86.id("m4").is_none());
    }

    #[test]
    fn ancestors_follow_archspec_order() {
        let c = x86_catalog();
        let icelake = c.id("icelake").unwrap();
        let anc = names(c, &c.target(icelake).ancestors);
        // Direct parents first, then the first parent's chain, then what the second adds.
        assert_eq!(&anc[..2], &["cascadelake", "cannonlake"]);
        assert!(anc.contains(&"x86_64_v4".to_owned()));
        let mut dedup = anc.clone();
        dedup.sort();
        dedup.dedup();
        assert_eq!(dedup.len(), anc.len(), "no duplicates");
        assert_eq!(c.family(icelake).name, "x86_64");
    }

    #[test]
    fn generic_is_the_deepest_generic_ancestor() {
        let c = x86_catalog();
        let g = |n: &str| c.target(c.generic(c.id(n).unwrap())).name.clone();
        assert_eq!(g("haswell"), "x86_64_v3");
        assert_eq!(g("piledriver"), "x86_64_v2");
        assert_eq!(g("k10"), "x86_64");
        assert_eq!(g("x86_64_v4"), "x86_64_v4");
        let a = aarch64_catalog();
        assert_eq!(
            a.target(a.generic(a.id("neoverse_n1").unwrap())).name,
            "armv8.2a"
        );
        assert_eq!(
            a.target(a.generic(a.id("cortex_a72").unwrap())).name,
            "aarch64"
        );
    }

    #[test]
    fn aliases_apply() {
        let c = x86_catalog();
        let piledriver = c.id("piledriver").unwrap();
        // piledriver lists ssse3 but not sse3: the alias `sse3 -> any_of ssse3` makes it present.
        assert!(!c.target(piledriver).features.contains("sse3"));
        assert!(c.has_feature(piledriver, "sse3"));
        assert!(c.has_feature(piledriver, "sse4.1"));
        assert!(!c.has_feature(piledriver, "avx2"));
        // `families` predicates: fma is implied on ppc64le only.
        let power9 = c.id("power9le").unwrap();
        assert!(c.has_feature(power9, "fma"));
        assert!(!c.has_feature(c.id("x86_64").unwrap(), "fma"));
        let a = aarch64_catalog();
        assert!(a.has_feature(a.id("cortex_a72").unwrap(), "neon"));
    }

    #[test]
    fn classification_rules() {
        let c = x86_catalog();
        let root = c.id("x86_64").unwrap();
        let mut host = HostFacts {
            vendor: "GenuineIntel".into(),
            features: c.target(c.id("haswell").unwrap()).features.clone(),
            cpu_part: String::new(),
        };
        // archspec's haswell omits some psABI v3 flags (lahf_lm, abm, xsave); real CPUs have them.
        host.features.extend(
            c.target(c.id("x86_64_v3").unwrap())
                .features
                .iter()
                .cloned(),
        );
        assert_eq!(
            c.target(c.classify(root, &host, Rules::X86_64)).name,
            "haswell"
        );
        // Another vendor's CPU with the same flags only reaches the generic level.
        host.vendor = "AuthenticAMD".into();
        assert_eq!(
            c.target(c.classify(root, &host, Rules::X86_64)).name,
            "x86_64_v3"
        );
        // No flags at all: the bare family.
        host.features.clear();
        assert_eq!(
            c.target(c.classify(root, &host, Rules::X86_64)).name,
            "x86_64"
        );
    }

    #[test]
    fn aarch64_cpupart_narrows_ties() {
        let c = aarch64_catalog();
        let root = c.id("aarch64").unwrap();
        // neoverse_v2 and neoverse_n2 have identical features; the part number decides.
        let v2 = c.id("neoverse_v2").unwrap();
        let mut host = HostFacts {
            vendor: "ARM".into(),
            features: c.target(v2).features.clone(),
            cpu_part: "0xd49".into(),
        };
        assert_eq!(
            c.target(c.classify(root, &host, Rules::Aarch64)).name,
            "neoverse_n2"
        );
        host.cpu_part = "0xD4F".into();
        assert_eq!(
            c.target(c.classify(root, &host, Rules::Aarch64)).name,
            "neoverse_v2"
        );
        // Unknown part: first of the equal candidates in data order.
        host.cpu_part = "0x999".into();
        assert_eq!(
            c.target(c.classify(root, &host, Rules::Aarch64)).name,
            "neoverse_v2"
        );
        // Generic armv8.x levels are never candidates.
        host.vendor = "0x99".into();
        assert_eq!(
            c.target(c.classify(root, &host, Rules::Aarch64)).name,
            "aarch64"
        );
    }

    #[test]
    fn malformed_data_is_rejected() {
        let bad_parent = r#"{"microarchitectures": {"a": {"from": ["b"], "vendor": "generic", "features": []}},
            "feature_aliases": {}, "conversions": {}}"#;
        assert!(Catalog::parse(bad_parent).unwrap_err().contains("parent"));
        let bad_rule = r#"{"microarchitectures": {}, "feature_aliases": {"x": {"none_of": []}},
            "conversions": {}}"#;
        assert!(Catalog::parse(bad_rule).unwrap_err().contains("none_of"));
    }
}
