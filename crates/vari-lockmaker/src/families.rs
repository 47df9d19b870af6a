//! Locking through the build-family catalog (issue 35): each machine class gets the builds the
//! catalog chooses for it (`torch` → `2.9.0+cu128` on a CUDA 12.8 class, `+cpu` on a CPU one;
//! `cupy` → `cupy-cuda13x` on a CUDA 13 class), and one lock records them all.
//!
//! How:
//! - per target, the requested families are chosen as `vari select` chooses them
//!   ([`vari_select::choose_families`]); a target for which a requested family has no fitting
//!   build stops the lock with one error naming the family, the target and each build's reason;
//! - targets whose choices are the same resolve together (the ordinary walk, which may resolve
//!   them at once); targets whose choices differ resolve apart, each group preferring the pins
//!   of the groups before it, so that what the builds do not decide agrees across classes;
//! - every target resolves through its own proxy running with the catalog, so that a
//!   dependency reached through a family (vllm → torch) takes the class's build too;
//! - what the proxy synthesises (a by-name family's selector wheel) never reaches the lock: the
//!   build it requires is pinned beside it, with its upstream files;
//! - the releases of the groups are merged (a release pinned alike by several keeps one entry,
//!   with all their targets), and the builds locked are handed to the lock builder, which
//!   says on each entry only some builds bring in which builds those are.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use vari_client::IndexClient;
use vari_family::{Catalog, Layout};

use crate::family_pins::build_source;
use vari_lock::{LockFamily, LockedBuild, LockedRelease};

use crate::locking::{resolve_releases, LockingError, LockingRequest, LockingTarget};

/// One build a target takes: the build, what it requires there, and for a build published
/// under its own name, that name (a requirement on the family is resolved as one on it).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Taken {
    build: String,
    requires: Vec<String>,
    by_name: Option<String>,
    /// For a build whose line is read per version from its requirements (onnxruntime-gpu:
    /// CUDA 12 up to 1.26, CUDA 13 after), the version chosen, which only that line's
    /// versions fit: `onnxruntime-gpu==1.23.2`.
    pinned: Option<String>,
}

/// Per target (by name), per family, the build it takes.
type Choices = BTreeMap<String, BTreeMap<String, Taken>>;

/// Resolves `request` through `catalog`: the requested families chosen per target, the
/// targets grouped by their choices, each group resolved (preferring the pins of those
/// before), the releases merged. Returns them with the families locked, for the lock builder.
pub(crate) async fn resolve_by_class(
    request: &LockingRequest<'_>,
    catalog: &Arc<Catalog>,
) -> Result<(Vec<LockedRelease>, Vec<LockFamily>), LockingError> {
    let choices = choose(request, catalog).await?;
    // The groups of targets taking the same builds, in the order of their first target.
    let mut groups: Vec<(&BTreeMap<String, Taken>, Vec<LockingTarget>)> = Vec::new();
    for target in request.targets {
        let taken = &choices[&target.lock.name];
        match groups.iter_mut().find(|(t, _)| *t == taken) {
            Some((_, group)) => group.push(target.clone()),
            None => groups.push((taken, vec![target.clone()])),
        }
    }
    let mut preferences = request.preferences.clone();
    let mut releases: Vec<LockedRelease> = Vec::new();
    for (taken, targets) in &groups {
        let requirements = by_name(request.requirements, taken);
        let sub = LockingRequest {
            targets,
            requirements: &requirements,
            preferences: &preferences,
            families: Some(catalog),
            ..*request
        };
        let found = resolve_releases(&sub).await?;
        for release in &found {
            preferences
                .entry(release.name.clone())
                .or_insert_with(|| release.version.to_string());
        }
        merge(&mut releases, found);
    }
    let order: Vec<&str> = request
        .targets
        .iter()
        .map(|t| t.lock.name.as_str())
        .collect();
    for release in &mut releases {
        release
            .targets
            .sort_by_key(|t| order.iter().position(|o| o == t));
    }
    let mut choices = choices;
    reached(catalog, &releases, &mut choices);
    every_target(&mut choices, &order);
    Ok((releases, locked_families(catalog, &choices, &order)))
}

/// `requirements` with each one on a family whose build is published under its own name made
/// one on that name (`cupy>=13` → `cupy-cuda13x>=13`), as `vari install` asks for it: the
/// build `vari select` chooses is the one locked. (Through the proxy alone, the family's page
/// would take the line every member of its group offers, asked for or not.)
fn by_name(requirements: &[String], taken: &BTreeMap<String, Taken>) -> Vec<String> {
    let pins = taken.values().filter_map(|t| t.pinned.clone());
    requirements
        .iter()
        .map(|text| {
            let trimmed = text.trim_start();
            let end = trimmed
                .find(|c: char| !(c.is_ascii_alphanumeric() || "._-".contains(c)))
                .unwrap_or(trimmed.len());
            let name = vari_core::project::normalize(&trimmed[..end]);
            match taken.get(&name).and_then(|t| t.by_name.as_ref()) {
                Some(distribution) => format!("{distribution}{}", &trimmed[end..]),
                None => text.clone(),
            }
        })
        .chain(pins)
        .collect()
}

/// Per target, the build each requested family takes; a family with no fitting build for a
/// target is an error naming both and each build's reason.
async fn choose(request: &LockingRequest<'_>, catalog: &Catalog) -> Result<Choices, LockingError> {
    let client =
        IndexClient::new(request.sources.clone()).map_err(|e| LockingError::Files(e.into()))?;
    let requests: Vec<vari_select::Request> = request
        .requirements
        .iter()
        .filter_map(|text| vari_select::Request::parse(text).ok())
        .collect();
    let options = vari_family::FamilyOptions {
        selection: request.selection.clone(),
        pre: request.pre,
        ..vari_family::FamilyOptions::default()
    };
    let mut choices = Choices::new();
    // One client per family source for every target: each build's page is read once.
    let sources = vari_select::SourceClients::new();
    for target in request.targets {
        let name = &target.lock.name;
        let found = vari_select::choose_families_with(
            &client,
            &sources,
            catalog,
            &requests,
            &target.files.target,
            &options,
        )
        .await
        .map_err(|e| LockingError::Families {
            target: name.clone(),
            message: e.to_string(),
        })?;
        for note in &found.notes {
            tracing::info!("target {name}: {note}");
        }
        let mut taken = BTreeMap::new();
        for pick in found.picks {
            let Some(chosen) = &pick.choice.chosen else {
                return Err(LockingError::NoBuild {
                    family: pick.choice.family.clone(),
                    target: name.clone(),
                    reasons: pick.choice.why_nothing(),
                });
            };
            let requires = pick
                .choice
                .builds
                .iter()
                .find(|b| b.build == chosen.build)
                .map(|b| b.requires.clone())
                .unwrap_or_default();
            let build = catalog
                .family(&pick.choice.family)
                .and_then(|f| f.build(&chosen.build))
                .filter(|b| b.layout() == Layout::Name && b.distribution != pick.choice.family);
            let by_name = build.map(|b| b.distribution.clone());
            let pinned = build
                .filter(|b| b.line_from_requirements)
                .map(|b| format!("{}=={}", b.distribution, chosen.version));
            taken.insert(
                pick.choice.family.clone(),
                Taken {
                    build: chosen.build.clone(),
                    requires,
                    by_name,
                    pinned,
                },
            );
        }
        choices.insert(name.clone(), taken);
    }
    Ok(choices)
}

/// Adds `found` to `releases`: a release of the same name and version is one entry with the
/// targets, files and requirements of both; another version of a name is an entry of its own.
fn merge(releases: &mut Vec<LockedRelease>, found: Vec<LockedRelease>) {
    for release in found {
        let same = releases
            .iter_mut()
            .find(|r| r.name == release.name && r.version == release.version);
        let Some(kept) = same else {
            releases.push(release);
            continue;
        };
        for target in release.targets {
            if !kept.targets.contains(&target) {
                kept.targets.push(target);
            }
        }
        for wheel in release.wheels {
            let key = |a: &vari_lock::Artifact| (a.url.clone(), a.path.clone(), a.name.clone());
            if !kept.wheels.iter().any(|w| key(w) == key(&wheel)) {
                kept.wheels.push(wheel);
            }
        }
        if kept.sdist.is_none() {
            kept.sdist = release.sdist;
        }
        for entry in release.requires_dist {
            if !kept.requires_dist.contains(&entry) {
                kept.requires_dist.push(entry);
            }
        }
        if kept.variants_json.is_none() {
            kept.variants_json = release.variants_json;
        }
    }
}

/// The builds of families no requirement named, read from what each target pinned: a build
/// published under its own name (`cupy-cuda12x`, required by `cudf-cu12`) or on its own index
/// with its local tag (`torch 2.9.0+cu128`, reached through vllm). A family by extra reached
/// only as a dependency is not told apart here (its pins are the project's own).
fn reached(catalog: &Catalog, releases: &[LockedRelease], choices: &mut Choices) {
    for release in releases {
        let Some(family) = catalog.family_of_distribution(&release.name) else {
            continue;
        };
        let version = release.version.to_string();
        let build = family.builds.iter().find(|b| {
            b.distribution == release.name
                && b.extra.is_none()
                && match (&b.source, &b.local) {
                    (Some(_), Some(_)) => build_source(catalog, &release.name, &version)
                        .is_some_and(|s| Some(&s) == b.source.as_ref()),
                    (Some(_), None) => false,
                    (None, _) => b.layout() == Layout::Name,
                }
        });
        let Some(build) = build else {
            continue;
        };
        for target in &release.targets {
            let taken = choices.entry(target.clone()).or_default();
            taken.entry(family.name.clone()).or_insert_with(|| Taken {
                build: build.name.clone(),
                requires: build.requires.iter().map(ToString::to_string).collect(),
                by_name: None,
                pinned: None,
            });
        }
    }
}

/// Keeps only the families every target took a build of. `vari sync` chooses a build of each
/// family the lock records on every machine, and a family some class took none of (JAX's CUDA
/// plugins, reached on the GPU classes only; a requirement whose marker leaves a class out)
/// would leave that class nothing to choose: its entries are told apart by their markers and
/// by the families every class took.
fn every_target(choices: &mut Choices, order: &[&str]) {
    let mut names: BTreeSet<String> = BTreeSet::new();
    for taken in choices.values() {
        names.extend(taken.keys().cloned());
    }
    for name in names {
        let everywhere = order.iter().all(|t| {
            choices
                .get(*t)
                .is_some_and(|taken| taken.contains_key(&name))
        });
        if !everywhere {
            for taken in choices.values_mut() {
                taken.remove(&name);
            }
        }
    }
}

/// The families locked: each family some target took a build of, sorted by name, with its
/// builds in the catalog's order (best first), each with the targets that took it.
fn locked_families(catalog: &Catalog, choices: &Choices, order: &[&str]) -> Vec<LockFamily> {
    let mut names: BTreeSet<&str> = BTreeSet::new();
    for taken in choices.values() {
        names.extend(taken.keys().map(String::as_str));
    }
    let mut families = Vec::new();
    for name in names {
        let Some(family) = catalog.family(name) else {
            continue;
        };
        let mut builds = Vec::new();
        for build in &family.builds {
            let took: Vec<(&str, &Taken)> = order
                .iter()
                .filter_map(|t| {
                    choices
                        .get(*t)
                        .and_then(|taken| taken.get(name))
                        .filter(|taken| taken.build == build.name)
                        .map(|taken| (*t, taken))
                })
                .collect();
            let Some((_, first)) = took.first() else {
                continue;
            };
            // As the choice read them (with a line read from the build's requirements); each
            // was a property's own text, so reads back.
            let requires = first
                .requires
                .iter()
                .filter_map(|p| p.parse::<vari_core::Property>().ok())
                .collect();
            builds.push(LockedBuild {
                name: build.name.clone(),
                distribution: build.distribution.clone(),
                extra: build.extra.clone(),
                requires,
                null: build.null,
                classes: took.iter().map(|(t, _)| (*t).to_owned()).collect(),
            });
        }
        families.push(LockFamily {
            name: family.name.clone(),
            group: catalog
                .groups_of(&family.name)
                .next()
                .map(|g| g.name.clone()),
            builds,
        });
    }
    families
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Two stand-in families (`kern` by name, `tor` by index) for the lock maker's unit tests.
    pub(crate) fn catalog() -> Catalog {
        vari_family::read_catalog(
            r#"schema = "vari-families/1"
[[family]]
name = "kern"
[[family.build]]
name = "cu12"
distribution = "kern-cu12"
requires = ["nvidia :: cuda_version_lower_bound :: 12.0"]
[[family.build]]
name = "cpu"
distribution = "kern-cpu"
null = true

[[family]]
name = "tor"
same-name = "build"
[[family.build]]
name = "cu128"
index = "https://example.org/whl/cu128"
local = "cu128"
requires = ["nvidia :: cuda_version_lower_bound :: 12.8"]
[[family.build]]
name = "cpu"
index = "https://example.org/whl/cpu"
local = "cpu"
null = true
"#,
            vari_family::Origin::File("test.toml".into()),
        )
        .unwrap()
    }

    fn release(name: &str, version: &str, targets: &[&str]) -> LockedRelease {
        LockedRelease {
            name: name.into(),
            version: version.parse().unwrap(),
            index: None,
            wheels: Vec::new(),
            sdist: None,
            variants_json: None,
            requires_dist: Vec::new(),
            requires_python: None,
            targets: targets.iter().map(|t| t.to_string()).collect(),
        }
    }

    #[test]
    fn a_requirement_on_a_by_name_family_asks_for_its_build() {
        let taken = BTreeMap::from([(
            "kern".to_owned(),
            Taken {
                build: "cu12".into(),
                requires: Vec::new(),
                by_name: Some("kern-cu12".into()),
                pinned: Some("kern-cu12==1.0".into()),
            },
        )]);
        let asked = [
            "Kern>=1 ; os_name == 'posix'".to_owned(),
            "kern-cpu".into(),
            "tor".into(),
        ];
        assert_eq!(
            by_name(&asked, &taken),
            [
                "kern-cu12>=1 ; os_name == 'posix'",
                "kern-cpu",
                "tor",
                "kern-cu12==1.0"
            ]
        );
    }

    #[test]
    fn groups_merge_alike_releases_and_keep_other_versions_apart() {
        let mut releases = vec![
            release("numpy", "2.0", &["cpu"]),
            release("tor", "2.9.0+cpu", &["cpu"]),
        ];
        merge(
            &mut releases,
            vec![
                release("numpy", "2.0", &["a100"]),
                release("tor", "2.9.0+cu128", &["a100"]),
            ],
        );
        let seen: Vec<(String, String, Vec<String>)> = releases
            .iter()
            .map(|r| (r.name.clone(), r.version.to_string(), r.targets.clone()))
            .collect();
        assert_eq!(
            seen,
            [
                (
                    "numpy".into(),
                    "2.0".into(),
                    vec!["cpu".into(), "a100".into()]
                ),
                ("tor".into(), "2.9.0+cpu".into(), vec!["cpu".into()]),
                ("tor".into(), "2.9.0+cu128".into(), vec!["a100".into()]),
            ]
        );
    }

    #[test]
    fn builds_reached_as_dependencies_are_read_from_the_pins() {
        let catalog = catalog();
        let releases = vec![
            release("kern-cu12", "1.0", &["a100"]),
            release("tor", "2.9.0+cpu", &["cpu"]),
            release("tor", "2.9.0+cu128", &["a100"]),
        ];
        let mut choices = Choices::new();
        reached(&catalog, &releases, &mut choices);
        let families = locked_families(&catalog, &choices, &["cpu", "a100"]);
        let mut everywhere = choices.clone();
        every_target(&mut everywhere, &["cpu", "a100"]);
        let kept: Vec<&String> = everywhere["a100"].keys().collect();
        // kern has no build on cpu: not recorded; tor is.
        assert_eq!(kept, ["tor"]);
        type Seen = (String, Vec<(String, Vec<String>)>);
        let seen: Vec<Seen> = families
            .iter()
            .map(|f| {
                (
                    f.name.clone(),
                    f.builds
                        .iter()
                        .map(|b| (b.name.clone(), b.classes.clone()))
                        .collect(),
                )
            })
            .collect();
        assert_eq!(
            seen,
            [
                ("kern".into(), vec![("cu12".into(), vec!["a100".into()])]),
                (
                    "tor".into(),
                    vec![
                        ("cu128".into(), vec!["a100".into()]),
                        ("cpu".into(), vec!["cpu".into()])
                    ]
                ),
            ]
        );
        assert!(families[1].builds[1].null);
        let requires: Vec<String> = families[1].builds[0]
            .requires
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(requires, ["nvidia :: cuda_version_lower_bound :: 12.8"]);
    }
}
