//! Which configured machine class a machine belongs to (`vari detect --class`), so that a
//! provisioning script can give a node its class's index URL.
//!
//! The rule: a class **fits** a machine when the platforms agree (the system and machine the
//! class names, if any) and, for every feature the class's profile declares, the machine
//! supports the class's most preferred value — the value its choices are made for (the CUDA
//! version its driver allows, its GPU architecture, its x86-64 level). Requiring every value
//! instead would refuse a node whose driver is newer than the class's facts: a CUDA 12.9
//! driver no longer allows an upper bound of 12.9, which a 12.8 driver does, yet the node runs
//! what the 12.8 class chooses. Among the fitting classes the machine **matches** the most
//! specific one: the one declaring the most properties (a CUDA 12.8 class over a CPU-only one
//! on a GPU node, and over a CUDA 12.6 class on a node whose driver allows both). Two fitting
//! classes equally specific are ambiguous: the machine matches neither, and the report says
//! which (two names for one profile, for instance).
//!
//! `abi_dependency` is left out: it describes the Python environment's installed packages,
//! not the machine, and a profile saved from one node's `vari detect --json` would otherwise fit
//! no other node.

use std::collections::BTreeSet;

use vari_core::{Namespace, Profile};

/// One class as compared: its name and its profile.
#[derive(Debug, Clone, Copy)]
pub struct ClassProfile<'a> {
    /// The class's name.
    pub name: &'a str,
    /// What the class's profile supports.
    pub profile: &'a Profile,
}

/// How one class compares with the machine.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ClassFit {
    /// The class's name.
    pub name: String,
    /// Whether the machine has everything the class declares.
    pub fits: bool,
    /// How many properties the class declares (its specificity).
    pub properties: usize,
    /// The class's preferred properties the machine lacks, one per feature
    /// (`nvidia :: sm_arch :: 80_real`).
    pub missing: Vec<String>,
    /// Where the platforms differ (`machine: the class says aarch64, this machine x86_64`).
    pub platform: Vec<String>,
}

/// The class the machine matches, if one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClassMatch {
    /// The most specific fitting class.
    Matched(String),
    /// No class fits.
    NoneFits,
    /// These classes fit and are equally specific.
    Ambiguous(Vec<String>),
}

/// The comparison of a machine with every class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassReport {
    /// The class matched, or why none is.
    pub matched: ClassMatch,
    /// Each class's comparison, in the order given.
    pub fits: Vec<ClassFit>,
}

/// Compares `machine` with each of `classes` (see the module's rule).
pub fn match_class(machine: &Profile, classes: &[ClassProfile<'_>]) -> ClassReport {
    let have = properties(machine);
    let fits: Vec<ClassFit> = classes
        .iter()
        .map(|class| {
            let missing: Vec<String> = preferred(class.profile)
                .filter(|p| !have.contains(p))
                .map(|(ns, feature, value)| format!("{ns} :: {feature} :: {value}"))
                .collect();
            let platform = platform_differences(class.profile, machine);
            ClassFit {
                name: class.name.to_owned(),
                fits: missing.is_empty() && platform.is_empty(),
                properties: properties(class.profile).len(),
                missing,
                platform,
            }
        })
        .collect();
    let most = fits.iter().filter(|f| f.fits).map(|f| f.properties).max();
    let matched = match most {
        None => ClassMatch::NoneFits,
        Some(most) => {
            let best: Vec<String> = fits
                .iter()
                .filter(|f| f.fits && f.properties == most)
                .map(|f| f.name.clone())
                .collect();
            match <[String; 1]>::try_from(best) {
                Ok([one]) => ClassMatch::Matched(one),
                Err(several) => ClassMatch::Ambiguous(several),
            }
        }
    };
    ClassReport { matched, fits }
}

/// A property: namespace, feature, value.
type Property = (String, String, String);

/// The namespaces compared: all but `abi_dependency`.
fn compared(profile: &Profile) -> impl Iterator<Item = &vari_core::NamespaceSupport> {
    profile
        .namespaces
        .iter()
        .filter(|ns| ns.namespace.as_str() != Namespace::ABI_DEPENDENCY)
}

/// The most preferred value of each feature a profile declares (every value of a multi-value
/// feature: a machine must have each of them).
fn preferred(profile: &Profile) -> impl Iterator<Item = Property> + '_ {
    compared(profile).flat_map(|ns| {
        ns.features.iter().flat_map(move |feature| {
            let take = match feature.multi_value {
                true => feature.values.len(),
                false => 1,
            };
            feature.values.iter().take(take).map(move |value| {
                (
                    ns.namespace.to_string(),
                    feature.name.to_string(),
                    value.to_string(),
                )
            })
        })
    })
}

/// Every property a profile supports, but `abi_dependency`'s.
fn properties(profile: &Profile) -> BTreeSet<Property> {
    compared(profile)
        .flat_map(|ns| {
            ns.features.iter().flat_map(move |feature| {
                feature.values.iter().map(move |value| {
                    (
                        ns.namespace.to_string(),
                        feature.name.to_string(),
                        value.to_string(),
                    )
                })
            })
        })
        .collect()
}

/// Where the class's platform names a system or machine the machine's does not have (a
/// machine whose platform is unknown differs from a class that names one).
fn platform_differences(class: &Profile, machine: &Profile) -> Vec<String> {
    let Some(wanted) = &class.platform else {
        return Vec::new();
    };
    let have = machine.platform.clone().unwrap_or_default();
    let mut differences = Vec::new();
    for (what, want, has) in [
        ("system", &wanted.system, &have.system),
        ("machine", &wanted.machine, &have.machine),
    ] {
        let Some(want) = want else { continue };
        if has.as_deref() != Some(want.as_str()) {
            differences.push(format!(
                "{what}: the class says {want}, this machine {}",
                has.as_deref().unwrap_or("unknown")
            ));
        }
    }
    differences
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(json: &str) -> Profile {
        Profile::from_json(json).unwrap()
    }

    fn cuda(versions: &[&str]) -> String {
        let values: Vec<String> = versions.iter().map(|v| format!("\"{v}\"")).collect();
        format!(
            r#"{{"namespace": "nvidia", "features": [
                {{"name": "cuda_version_lower_bound", "values": [{}]}}]}}"#,
            values.join(", ")
        )
    }

    fn doc(platform: &str, namespaces: &[String]) -> Profile {
        profile(&format!(
            r#"{{"schema": "vari-profile/1", "platform": {platform}, "namespaces": [{}]}}"#,
            namespaces.join(", ")
        ))
    }

    const LINUX_X86: &str = r#"{"system": "Linux", "machine": "x86_64"}"#;

    #[test]
    fn the_most_specific_fitting_class_matches() {
        let cpu = doc(LINUX_X86, &[]);
        let cu126 = doc(LINUX_X86, &[cuda(&["12.6", "12.0"])]);
        let cu128 = doc(LINUX_X86, &[cuda(&["12.8", "12.6", "12.0"])]);
        let classes = [
            ClassProfile {
                name: "cpu",
                profile: &cpu,
            },
            ClassProfile {
                name: "v100",
                profile: &cu126,
            },
            ClassProfile {
                name: "a100",
                profile: &cu128,
            },
        ];
        // A driver for CUDA 12.9: every class fits, the CUDA 12.8 one declares the most.
        let node = doc(LINUX_X86, &[cuda(&["12.9", "12.8", "12.6", "12.0"])]);
        let report = match_class(&node, &classes);
        assert_eq!(report.matched, ClassMatch::Matched("a100".into()));
        assert!(report.fits.iter().all(|f| f.fits));
        // A CUDA 12.6 driver: the CUDA 12.8 class lacks one property.
        let node = doc(LINUX_X86, &[cuda(&["12.6", "12.0"])]);
        let report = match_class(&node, &classes);
        assert_eq!(report.matched, ClassMatch::Matched("v100".into()));
        assert_eq!(
            report.fits[2].missing,
            ["nvidia :: cuda_version_lower_bound :: 12.8"]
        );
        // No GPU: the CPU class.
        let report = match_class(&doc(LINUX_X86, &[]), &classes);
        assert_eq!(report.matched, ClassMatch::Matched("cpu".into()));
    }

    /// A driver newer than the class's facts no longer allows the class's tightest upper
    /// bound, yet runs what the class chooses; another GPU architecture does not.
    #[test]
    fn a_newer_driver_fits_and_another_architecture_does_not() {
        let gpu = |lower: &[&str], upper: &[&str], arch: &str| {
            let quote = |values: &[&str]| {
                let quoted: Vec<String> = values.iter().map(|v| format!("\"{v}\"")).collect();
                quoted.join(", ")
            };
            doc(
                LINUX_X86,
                &[format!(
                    r#"{{"namespace": "nvidia", "features": [
                    {{"name": "cuda_version_lower_bound", "values": [{}]}},
                    {{"name": "cuda_version_upper_bound", "values": [{}]}},
                    {{"name": "sm_arch", "values": ["{arch}_real", "{arch}_virtual"],
                      "multi_value": true}}]}}"#,
                    quote(lower),
                    quote(upper)
                )],
            )
        };
        let a100 = gpu(&["12.8", "12.6"], &["13.0", "12.9"], "80");
        let v100 = gpu(&["12.6"], &["13.0", "12.9", "12.8", "12.7"], "70");
        let classes = [
            ClassProfile {
                name: "a100",
                profile: &a100,
            },
            ClassProfile {
                name: "v100",
                profile: &v100,
            },
        ];
        let node = gpu(&["12.9", "12.8", "12.6"], &["13.0"], "80");
        let report = match_class(&node, &classes);
        assert_eq!(report.matched, ClassMatch::Matched("a100".into()));
        assert_eq!(
            report.fits[1].missing,
            [
                "nvidia :: sm_arch :: 70_real",
                "nvidia :: sm_arch :: 70_virtual"
            ]
        );
    }

    #[test]
    fn platforms_must_agree_and_ties_are_ambiguous() {
        let cpu = doc(LINUX_X86, &[]);
        let arm = doc(r#"{"system": "Linux", "machine": "aarch64"}"#, &[]);
        let classes = [
            ClassProfile {
                name: "cpu",
                profile: &cpu,
            },
            ClassProfile {
                name: "arm",
                profile: &arm,
            },
        ];
        let report = match_class(&doc(LINUX_X86, &[]), &classes);
        assert_eq!(report.matched, ClassMatch::Matched("cpu".into()));
        assert_eq!(
            report.fits[1].platform,
            ["machine: the class says aarch64, this machine x86_64"]
        );
        let report = match_class(&doc(r#"{"system": "Darwin"}"#, &[]), &classes);
        assert_eq!(report.matched, ClassMatch::NoneFits);
        let twice = [
            classes[0],
            ClassProfile {
                name: "cpu2",
                ..classes[0]
            },
        ];
        let report = match_class(&doc(LINUX_X86, &[]), &twice);
        assert_eq!(
            report.matched,
            ClassMatch::Ambiguous(vec!["cpu".into(), "cpu2".into()])
        );
    }

    #[test]
    fn abi_dependency_is_not_the_machines() {
        let saved = doc(
            LINUX_X86,
            &[r#"{"namespace": "abi_dependency", "features": [
                {"name": "numpy", "values": ["2.1"]}]}"#
                .to_owned()],
        );
        let classes = [ClassProfile {
            name: "node",
            profile: &saved,
        }];
        let report = match_class(&doc(LINUX_X86, &[]), &classes);
        assert_eq!(report.matched, ClassMatch::Matched("node".into()));
        assert_eq!(report.fits[0].properties, 0);
    }
}
