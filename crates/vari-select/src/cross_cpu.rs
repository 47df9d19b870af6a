//! The CPU facts of a target of another architecture (`--python-platform aarch64-manylinux_2_28`
//! on an x86_64 machine): this machine's CPU cannot describe it, so the target gets its
//! architecture's baseline instead.
//!
//! - `x86_64` targets (manylinux, musllinux, macOS, Windows `amd64`): `x86_64 :: level` `v2`
//!   and the features of `x86-64-v2` (every x86-64 CPU of the last fifteen years, the floor
//!   today's manylinux images and distributions build for);
//! - `aarch64` targets (`arm64` too): Armv8.0-A (`aarch64 :: version :: 8a` and the features of
//!   archspec's generic `aarch64`), as uv assumes;
//! - any other architecture: no CPU namespace.
//!
//! Only detected hardware (`HardwareSource::Host`) is replaced: a profile, a facts file or a
//! snapshot of the target machine says what its CPU really is, and wins.

use vari_core::{Namespace, NamespaceSupport};

use crate::hardware::{Hardware, HardwareSource};

/// The CPU namespaces, each named after the architecture it describes.
const CPU_NAMESPACES: [&str; 2] = ["x86_64", "aarch64"];

/// The architecture an `arch` of a platform name is, in the CPU namespaces' spelling.
fn normalise(arch: &str) -> &str {
    match arch {
        "amd64" | "AMD64" | "x86-64" => "x86_64",
        "arm64" | "ARM64" => "aarch64",
        other => other,
    }
}

/// The baseline of `arch`'s CPU namespace: its description and supported features.
fn baseline(arch: &str) -> Option<(&'static str, Vec<vari_core::FeatureSupport>)> {
    match arch {
        "x86_64" => vari_detect::cpu::x86_64::from_level(2)
            .ok()
            .map(|features| ("x86-64-v2", features)),
        "aarch64" => vari_detect::cpu::aarch64::supported_from_microarch("aarch64")
            .ok()
            .map(|features| ("Armv8.0-A", features)),
        _ => None,
    }
}

/// Replaces detected CPU facts by the baseline of `target_arch` when it is not this machine's
/// architecture (`host_arch`); returns the note saying so. `platform` is the target's name as
/// given, for the messages.
pub(crate) fn apply_target_baseline(
    hardware: &mut Hardware,
    platform: &str,
    target_arch: &str,
    host_arch: Option<&str>,
) -> Option<String> {
    if !matches!(hardware.source, HardwareSource::Host { .. }) {
        return None;
    }
    let target = normalise(target_arch);
    let host = host_arch.map(normalise);
    if host == Some(target) {
        return None;
    }
    let host_text = host.unwrap_or("of unknown architecture");
    hardware
        .profile
        .namespaces
        .retain(|n| !CPU_NAMESPACES.contains(&n.namespace.as_str()));
    let baseline = CPU_NAMESPACES
        .contains(&target)
        .then(|| baseline(target))
        .flatten();
    for name in CPU_NAMESPACES {
        let Ok(namespace) = Namespace::new(name) else {
            continue;
        };
        hardware.absent.remove(&namespace);
        match &baseline {
            Some((level, features)) if name == target && !features.is_empty() => {
                hardware.profile.namespaces.push(NamespaceSupport {
                    namespace,
                    source: Some(format!(
                        "{level}, the baseline of --python-platform {platform} (this machine is \
                         {host_text}; a profile gives the target's real CPU)"
                    )),
                    features: features.clone(),
                });
            }
            Some((level, _)) if name == target => {
                hardware.absent.insert(
                    namespace,
                    format!(
                        "{level}, the baseline of --python-platform {platform}, has no `{name}` \
                         values beyond it (a profile gives the target's real CPU)"
                    ),
                );
            }
            _ => {
                hardware.absent.insert(
                    namespace,
                    format!("the target ({platform}) is not an {name} machine"),
                );
            }
        }
    }
    let what = match &baseline {
        Some((level, _)) => format!("its architecture's baseline, {level}"),
        None => "no CPU facts".to_owned(),
    };
    Some(format!(
        "--python-platform {platform} is not this machine's architecture ({host_text}): its CPU \
         gets {what}, not this machine's (a profile gives the target's real CPU)"
    ))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use vari_core::Profile;

    use super::*;

    fn host_hardware() -> Hardware {
        let cpu = |name: &str| NamespaceSupport {
            namespace: Namespace::new(name).unwrap(),
            source: Some("/proc/cpuinfo".into()),
            features: vari_detect::cpu::x86_64::from_level(4).unwrap(),
        };
        Hardware {
            profile: Profile {
                namespaces: vec![cpu("x86_64"), cpu("nvidia")],
                ..Profile::default()
            },
            source: HardwareSource::Host {
                overrides: Vec::new(),
            },
            absent: BTreeMap::from([(
                Namespace::new("aarch64").unwrap(),
                "not an aarch64 CPU".to_owned(),
            )]),
            detection: None,
            sysroot: None,
            warnings: Vec::new(),
        }
    }

    fn names(hardware: &Hardware) -> Vec<&str> {
        hardware
            .profile
            .namespaces
            .iter()
            .map(|n| n.namespace.as_str())
            .collect()
    }

    #[test]
    fn an_aarch64_target_from_an_x86_64_machine_gets_armv8_0() {
        let mut hardware = host_hardware();
        let note = apply_target_baseline(
            &mut hardware,
            "aarch64-manylinux_2_28",
            "aarch64",
            Some("x86_64"),
        )
        .unwrap();
        assert!(note.contains("Armv8.0-A"), "{note}");
        // The GPU stays; this machine's x86-64-v4 does not.
        assert_eq!(names(&hardware), ["nvidia", "aarch64"]);
        let arm = &hardware.profile.namespaces[1];
        let versions: Vec<&str> = arm.features[0].values.iter().map(|v| v.as_str()).collect();
        assert_eq!(versions, ["8a"]);
        assert!(arm.source.as_deref().unwrap().contains("Armv8.0-A"));
        let absent = |name: &str| hardware.absent_reason(&Namespace::new(name).unwrap());
        assert!(absent("x86_64").unwrap().contains("not an x86_64 machine"));
        assert_eq!(absent("aarch64"), None);
    }

    #[test]
    fn an_x86_64_target_from_an_arm_machine_gets_v2() {
        let mut hardware = host_hardware();
        hardware.profile.namespaces.remove(0);
        let note = apply_target_baseline(
            &mut hardware,
            "x86_64-manylinux_2_28",
            "x86_64",
            Some("arm64"),
        )
        .unwrap();
        assert!(note.contains("x86-64-v2"), "{note}");
        let x86 = &hardware.profile.namespaces[1];
        assert_eq!(x86.namespace.as_str(), "x86_64");
        let levels: Vec<&str> = x86.features[0].values.iter().map(|v| v.as_str()).collect();
        assert_eq!(levels, ["v2", "v1"]);
        assert!(x86.source.as_deref().unwrap().contains("baseline"));
    }

    #[test]
    fn the_same_architecture_or_a_profile_keeps_the_facts() {
        let mut hardware = host_hardware();
        assert_eq!(
            apply_target_baseline(&mut hardware, "win_amd64", "amd64", Some("x86_64")),
            None
        );
        assert_eq!(names(&hardware), ["x86_64", "nvidia"]);
        hardware.source = HardwareSource::Profile("p.json".into());
        assert_eq!(
            apply_target_baseline(
                &mut hardware,
                "aarch64-manylinux_2_28",
                "aarch64",
                Some("x86_64")
            ),
            None
        );
        assert_eq!(names(&hardware), ["x86_64", "nvidia"]);
    }
}
