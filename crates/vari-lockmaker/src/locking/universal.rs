//! Targets on several Pythons or platforms resolved together: one `uv pip compile --universal`
//! through a proxy serving the union of every target's view ([`super::union`]'s resolution,
//! asked for every Python from the lowest target's up and every platform), instead of one
//! union per group of alike targets, or one run per target when the groups' newest versions
//! differ.
//!
//! uv is asked for one version of each package wherever one serves every Python
//! (`--fork-strategy fewest`): what the per-target path converges to when the targets agree
//! (each preferring the pins of those before it, the lowest Python first). uv writes each pin
//! with the marker under which some requirement needs it; here each marker is evaluated in
//! each target's environment ([`place`]), which gives per target its own pins (a pin that
//! holds for no target, say a Windows-only dependency, is left out of the lock). The
//! resolution is then verified per target as the union's is: its closure over the pins, and
//! here also that it can install a file of every release in it ([`usable`]: its Python is
//! allowed, a wheel fits its tags or there is a source distribution).
//!
//! When it cannot be trusted — uv pins a package at two versions (no one version serves
//! every Python), a marker vari cannot read, a target's closure misses what it asked for or
//! holds a release it cannot install — the groups and the per-target path run as before, said
//! at debug level.

use std::collections::BTreeMap;

use pep440_rs::{Version, VersionSpecifiers};
use vari_core::markers::{Marker, TargetEnvironment, VariantMarkerContext};
use vari_lock::LockedRelease;

use super::request::LockingTarget;
use super::steps::Pins;
use crate::compile::MarkedPin;

/// Per pin, per target (in the targets' order) whether uv's marker holds there; a pin not
/// listed holds everywhere.
pub(super) type Applies = BTreeMap<String, Vec<bool>>;

/// The lowest of the targets' Python versions (uv's lower bound for a universal resolution),
/// as the target names it; none when no target names one or one cannot be read as a version.
pub(super) fn lowest_python(targets: &[LockingTarget]) -> Option<String> {
    let mut lowest: Option<(Version, &String)> = None;
    for text in targets
        .iter()
        .filter_map(|t| t.lock.python_version.as_ref())
    {
        let version: Version = text.parse().ok()?;
        if lowest.as_ref().is_none_or(|(known, _)| version < *known) {
            lowest = Some((version, text));
        }
    }
    lowest.map(|(_, text)| text.clone())
}

/// The pins of a universal resolution, each with the targets whose environment its marker
/// holds in (`environments`, in the targets' order, named by `names`), and per pin where it
/// holds; pins that hold for no target are left out. `None` (said at debug level) when a
/// package is pinned at two versions or a marker cannot be read.
pub(super) fn place(
    marked: Vec<MarkedPin>,
    names: &[String],
    environments: &[TargetEnvironment],
) -> Option<(Pins, Applies)> {
    let context = VariantMarkerContext::non_variant();
    let mut applies = Applies::new();
    let mut versions: BTreeMap<String, String> = BTreeMap::new();
    for MarkedPin { pin, marker } in marked {
        let holds: Vec<bool> = match marker {
            None => vec![true; environments.len()],
            Some(text) => match Marker::parse(&text) {
                Ok(marker) => environments
                    .iter()
                    .map(|env| marker.evaluate(env, &context))
                    .collect(),
                Err(e) => {
                    tracing::debug!("uv's marker `{text}` on {}: {e}", pin.name);
                    return None;
                }
            },
        };
        match versions.get(&pin.name) {
            Some(known) if *known != pin.version => {
                tracing::debug!(
                    "the universal resolution pins {} at {known} and {}: no one version \
                     serves every target",
                    pin.name,
                    pin.version
                );
                return None;
            }
            Some(_) => {
                // The same version on two lines: it holds where either marker does.
                let known = applies.entry(pin.name).or_default();
                for (known, holds) in known.iter_mut().zip(holds) {
                    *known |= holds;
                }
            }
            None => {
                versions.insert(pin.name.clone(), pin.version);
                applies.insert(pin.name, holds);
            }
        }
    }
    let mut pins = Pins::new();
    applies.retain(|name, holds| {
        let targets: Vec<String> = names
            .iter()
            .zip(holds.iter())
            .filter(|(_, holds)| **holds)
            .map(|(name, _)| name.clone())
            .collect();
        if targets.is_empty() {
            tracing::debug!("{name}: pinned for none of the targets (left out)");
            return false;
        }
        if let Some(version) = versions.get(name) {
            pins.insert(name.clone(), (version.clone(), targets));
        }
        true
    });
    Some((pins, applies))
}

/// Whether `target` can install a file of `release`: the release's `Requires-Python` (when
/// it can be read) allows the target's Python, and a wheel fits the target's tags or the
/// release has a source distribution. (Which variant a target is shown is the union's
/// verification; this is what a resolution for the target's own Python and platform checks.)
pub(super) fn usable(release: &LockedRelease, target: &LockingTarget) -> bool {
    let python: Option<Version> = target
        .files
        .target
        .markers
        .get("python_full_version")
        .and_then(|v| v.parse().ok());
    let allowed = match (&release.requires_python, python) {
        (Some(text), Some(python)) => text
            .parse::<VersionSpecifiers>()
            .map_or(true, |specifiers| specifiers.contains(&python)),
        _ => true,
    };
    let tags = target.files.target.python.tags();
    let wheel = release.wheels.iter().any(|wheel| {
        wheel
            .wheel_filename()
            .is_some_and(|name| tags.wheel_priority(&name).is_some())
    });
    allowed && (wheel || release.sdist.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::Pin;

    fn marked(name: &str, version: &str, marker: Option<&str>) -> MarkedPin {
        MarkedPin {
            pin: Pin {
                name: name.into(),
                version: version.into(),
            },
            marker: marker.map(str::to_owned),
        }
    }

    fn environments() -> (Vec<String>, Vec<TargetEnvironment>) {
        let env = |version: &str| TargetEnvironment::from_platform(None, version).unwrap();
        (
            vec!["cpu-py3.10".into(), "cpu-py3.12".into()],
            vec![env("3.10"), env("3.12")],
        )
    }

    #[test]
    fn each_pin_goes_to_the_targets_its_marker_holds_for() {
        let (names, environments) = environments();
        let (pins, applies) = place(
            vec![
                marked("a", "1", None),
                marked("tomli", "2", Some("python_full_version < '3.11'")),
                marked("winlike", "1", Some("sys_platform == 'win32'")),
                marked("b", "3", Some("python_full_version >= '3.11'")),
                marked("b", "3", Some("python_full_version < '3.11'")),
            ],
            &names,
            &environments,
        )
        .unwrap();
        assert_eq!(pins["a"], ("1".to_owned(), names.clone()));
        assert_eq!(
            pins["tomli"],
            ("2".to_owned(), vec!["cpu-py3.10".to_owned()])
        );
        assert_eq!(pins["b"].1, names);
        assert!(!pins.contains_key("winlike") && !applies.contains_key("winlike"));
        assert_eq!(applies["tomli"], [true, false]);
    }

    /// A target on CPython `version`, Linux x86_64, without hardware.
    fn target(version: &str) -> LockingTarget {
        let mut settings = vari_select::TargetSettings::default();
        settings.python.version = Some(version.parse().unwrap());
        settings.python.platform = Some("x86_64-manylinux_2_28".parse().unwrap());
        let target = vari_select::Target::resolve(&settings).unwrap();
        LockingTarget {
            lock: vari_lock::LockTarget {
                name: format!("cpu-py{version}"),
                python_version: Some(version.into()),
                ..Default::default()
            },
            files: crate::lock_files::LockFilesTarget {
                name: format!("cpu-py{version}"),
                target,
                has_hardware: false,
            },
        }
    }

    #[test]
    fn uv_resolves_from_the_lowest_python_up() {
        let targets = [target("3.12"), target("3.9"), target("3.10")];
        assert_eq!(lowest_python(&targets).as_deref(), Some("3.9"));
        let mut unnamed = target("3.12");
        unnamed.lock.python_version = None;
        assert_eq!(lowest_python(&[unnamed]), None);
    }

    #[test]
    fn a_target_needs_its_python_allowed_and_a_wheel_for_its_tags_or_an_sdist() {
        let wheel = |name: &str| vari_lock::Artifact {
            name: Some(name.into()),
            url: None,
            path: None,
            size: None,
            upload_time: None,
            hashes: BTreeMap::new(),
        };
        let mut release = super::super::steps::test_release("numpylike", &[]);
        release.wheels = vec![wheel(
            "numpylike-1.0-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
        )];
        let (py310, py312) = (target("3.10"), target("3.12"));
        assert!(usable(&release, &py312));
        assert!(!usable(&release, &py310));
        release.sdist = Some(wheel("numpylike-1.0.tar.gz"));
        assert!(usable(&release, &py310));
        release.requires_python = Some(">=3.11".into());
        assert!(!usable(&release, &py310));
        assert!(usable(&release, &py312));
    }

    #[test]
    fn two_versions_of_a_package_or_an_unreadable_marker_are_not_trusted() {
        let (names, environments) = environments();
        let forked = vec![
            marked("numpy", "2.0.2", Some("python_full_version < '3.11'")),
            marked("numpy", "2.2.0", Some("python_full_version >= '3.11'")),
        ];
        assert!(place(forked, &names, &environments).is_none());
        let unreadable = vec![marked("a", "1", Some("python_full_version <<< 3"))];
        assert!(place(unreadable, &names, &environments).is_none());
    }
}
