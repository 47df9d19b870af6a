//! Which entries to install: the roots the lock's markers select, then what the chosen
//! wheels' variant markers call for, and nothing else.

use std::collections::{BTreeMap, VecDeque};
use std::str::FromStr;

use pep440_rs::{Version, VersionSpecifiers};
use pep508_rs::VersionOrUrl;
use vari_core::markers::{requirement_applies, split_requirement, LockSets, Marker};
use vari_core::metadata::parse_requirement;

use vari_lock::{Lock, Package};

use super::builds::take_builds;
use super::choose::choose_file;
use super::{NeededBy, Plan, PlanError, PlanRequest, Planned, SkipReason, Skipped};

/// Plans the install of `lock` for the request's target (see the [module docs](super)).
pub fn plan(lock: &Lock, request: &PlanRequest<'_>) -> Result<Plan, PlanError> {
    check_offered("extra", request.extras, &lock.extras)?;
    if let Some(groups) = request.groups {
        check_offered("dependency group", groups, &lock.dependency_groups)?;
    }
    if request.only_groups {
        if !request.extras.is_empty() {
            return Err(PlanError::Conflicting {
                option: "--only-group",
                with: "--extra",
            });
        }
        if !lock.vari.as_ref().is_some_and(|info| info.group_markers) {
            return Err(PlanError::NoGroupMarkers {
                created_by: lock.created_by.clone(),
            });
        }
    }
    check_python(lock, request)?;
    check_environments(lock, request)?;
    let builds = take_builds(lock, request)?;
    // Whether each entry comes in with the builds taken: no `builds` (any machine), or one
    // of them taken. The others are no candidates at all, for roots as for what a variant
    // asks for, so that torch `+cu128` is never installed beside torch `+cpu`.
    let in_taken_build: Vec<bool> = lock
        .packages
        .iter()
        .map(|package| {
            let refs = package
                .vari
                .as_ref()
                .map_or(&[][..], |v| v.builds.as_slice());
            refs.is_empty()
                || refs.iter().any(|r| {
                    builds
                        .iter()
                        .any(|t| t.family == r.family && t.build == r.build)
                })
        })
        .collect();
    let groups = request.groups.unwrap_or(&lock.default_groups);
    let sets = LockSets {
        extras: request.extras,
        dependency_groups: groups,
    };
    let env = &request.target.markers;
    // Whether each entry's own marker holds.
    let mut marker_holds = Vec::with_capacity(lock.packages.len());
    for (index, package) in lock.packages.iter().enumerate() {
        let holds = match &package.marker {
            None => true,
            Some(text) => Marker::parse_lock(text)
                .map_err(|error| PlanError::Marker {
                    path: format!("packages[{index}].marker"),
                    error,
                })?
                .evaluate_lock(env, &sets),
        };
        marker_holds.push(holds && in_taken_build[index]);
    }
    // Whether each entry is a root: its marker holds, or with only groups asked for, its
    // group marker (what the groups need on their own). The marker still decides which entry
    // a chosen variant's dependency names.
    let mut root = marker_holds.clone();
    if request.only_groups {
        for (index, package) in lock.packages.iter().enumerate() {
            let group_marker = package.vari.as_ref().and_then(|v| v.group_marker.as_ref());
            root[index] = match group_marker {
                _ if !in_taken_build[index] => false,
                None => false,
                Some(text) => Marker::parse_lock(text)
                    .map_err(|error| PlanError::Marker {
                        path: format!("packages[{index}].tool.vari.group-marker"),
                        error,
                    })?
                    .evaluate_lock(env, &sets),
            };
        }
    }
    let mut needed: BTreeMap<usize, NeededBy> = BTreeMap::new();
    let mut queue: VecDeque<usize> = VecDeque::new();
    for (index, package) in lock.packages.iter().enumerate() {
        if root[index] && !through_variants(package) {
            needed.insert(index, NeededBy::Lock);
            queue.push_back(index);
        }
    }
    let mut planned: BTreeMap<usize, Planned> = BTreeMap::new();
    while let Some(index) = queue.pop_front() {
        if planned.contains_key(&index) {
            continue;
        }
        let package = &lock.packages[index];
        let choice = choose_file(package, index, request)?;
        let mut called: Vec<(usize, NeededBy)> = Vec::new();
        let variant_dependencies = package
            .vari
            .as_ref()
            .map_or(&[][..], |v| v.variant_dependencies.as_slice());
        for (at, text) in variant_dependencies.iter().enumerate() {
            let path = format!("packages[{index}].tool.vari.variant-dependencies[{at}]");
            let invalid = |message: String| PlanError::Invalid {
                path: path.clone(),
                message: format!("`{text}` {message}"),
            };
            let applies = requirement_applies(text, env, &choice.context)
                .map_err(|e| invalid(e.to_string()))?;
            if !applies {
                continue;
            }
            let entry = entry_named(lock, text, &marker_holds).map_err(invalid)?;
            called.push((
                entry,
                NeededBy::Variant {
                    of: package.name.clone(),
                    requirement: text.clone(),
                },
            ));
        }
        // A through-variants entry brings in its own through-variants dependencies.
        if through_variants(package) {
            for dependency in &package.dependencies {
                let found = lock.packages.iter().enumerate().find(|(at, p)| {
                    p.name == dependency.name
                        && through_variants(p)
                        && marker_holds[*at]
                        && dependency.version.as_ref().is_none_or(|v| {
                            p.version.as_ref().map(ToString::to_string).as_ref() == Some(v)
                        })
                });
                if let Some((at, _)) = found {
                    called.push((
                        at,
                        NeededBy::Dependency {
                            of: package.name.clone(),
                        },
                    ));
                }
            }
        }
        for (entry, why) in called {
            if let std::collections::btree_map::Entry::Vacant(slot) = needed.entry(entry) {
                slot.insert(why);
                queue.push_back(entry);
            }
        }
        planned.insert(
            index,
            Planned {
                package: index,
                name: package.name.clone(),
                version: package.version.clone(),
                file: choice.file,
                artifact: choice.artifact,
                properties: choice
                    .label
                    .as_ref()
                    .and_then(|label| package.variants_json.as_ref()?.variants.get(label).cloned()),
                label: choice.label,
                context: choice.context,
                report: choice.report,
                needed_by: needed.get(&index).cloned().unwrap_or(NeededBy::Lock),
            },
        );
    }
    let skipped = lock
        .packages
        .iter()
        .enumerate()
        .filter(|(index, _)| !planned.contains_key(index))
        .map(|(index, package)| Skipped {
            package: index,
            name: package.name.clone(),
            why: match (&package.marker, marker_holds[index]) {
                _ if !in_taken_build[index] => {
                    let first = package.vari.as_ref().and_then(|v| v.builds.first());
                    SkipReason::OtherBuild {
                        family: first.map(|r| r.family.clone()).unwrap_or_default(),
                        build: first.map(|r| r.build.clone()).unwrap_or_default(),
                    }
                }
                (Some(marker), false) => SkipReason::Marker(marker.clone()),
                _ if request.only_groups && !through_variants(package) => SkipReason::OnlyGroups,
                _ => SkipReason::NoVariantAsks,
            },
        })
        .collect();
    Ok(Plan {
        builds,
        install: planned.into_values().collect(),
        skipped,
    })
}

fn through_variants(package: &Package) -> bool {
    package.vari.as_ref().is_some_and(|v| v.through_variants)
}

/// The entry a variant dependency names: the name, a version its specifiers accept, and a
/// marker that holds; the first such in the lock's order.
fn entry_named(lock: &Lock, text: &str, marker_holds: &[bool]) -> Result<usize, String> {
    let (requirement, _) = split_requirement(text);
    let parsed = parse_requirement(requirement.trim())?;
    let name = vari_core::project::normalize(parsed.name.as_ref());
    let specifiers: Option<VersionSpecifiers> = match &parsed.version_or_url {
        Some(VersionOrUrl::VersionSpecifier(specifiers)) => {
            VersionSpecifiers::from_str(&specifiers.to_string()).ok()
        }
        _ => None,
    };
    let accepts = |version: Option<&Version>| match (&specifiers, version) {
        (Some(specifiers), Some(version)) => specifiers.contains(version),
        _ => true,
    };
    lock.packages
        .iter()
        .enumerate()
        .find(|(at, p)| p.name == name && marker_holds[*at] && accepts(p.version.as_ref()))
        .map(|(at, _)| at)
        .ok_or_else(|| format!("names no entry of the lock that fits (no `{name}` it accepts)"))
}

/// Every name asked for must be one the lock offers.
pub(super) fn check_offered(
    kind: &'static str,
    asked: &[String],
    offered: &[String],
) -> Result<(), PlanError> {
    let normal = |n: &str| vari_core::project::normalize(n);
    for name in asked {
        if !offered.iter().any(|o| normal(o) == normal(name)) {
            return Err(PlanError::NotOffered {
                kind,
                name: name.clone(),
                offered: offered.to_vec(),
            });
        }
    }
    Ok(())
}

fn check_python(lock: &Lock, request: &PlanRequest<'_>) -> Result<(), PlanError> {
    let Some(requires) = &lock.requires_python else {
        return Ok(());
    };
    let specifiers = VersionSpecifiers::from_str(requires).map_err(|e| PlanError::Invalid {
        path: "requires-python".to_owned(),
        message: e.to_string(),
    })?;
    let python = request.target.python.version;
    let version = Version::new([
        u64::from(python.major),
        u64::from(python.minor),
        u64::from(python.patch.unwrap_or(0)),
    ]);
    match specifiers.contains(&version) {
        true => Ok(()),
        false => Err(PlanError::RequiresPython {
            requires: requires.clone(),
            python: version.to_string(),
        }),
    }
}

fn check_environments(lock: &Lock, request: &PlanRequest<'_>) -> Result<(), PlanError> {
    if lock.environments.is_empty() {
        return Ok(());
    }
    let mut any = false;
    for (at, text) in lock.environments.iter().enumerate() {
        let marker = Marker::parse_lock(text).map_err(|error| PlanError::Marker {
            path: format!("environments[{at}]"),
            error,
        })?;
        any |= marker.evaluate_lock(&request.target.markers, &LockSets::NONE);
    }
    match any {
        true => Ok(()),
        false => Err(PlanError::NotForEnvironment {
            markers: lock.environments.clone(),
        }),
    }
}
