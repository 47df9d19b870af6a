//! Build families in a lock being built: a requirement on a family's name reaches the builds
//! the lock holds for it (a by-name family's own name is no entry of the lock; a by-extra
//! build's dependencies come with its extra), and each entry that only some builds bring in is
//! told which builds those are.
//!
//! Attribution works from what each target's resolution pinned: an entry pinned by every
//! target is installed as any other (no builds). An entry pinned by some targets only is
//! attributed to a family whose builds tell those targets from the others: every one of them
//! took a build of the family, and no other target took one of those builds. Among such
//! families, the one the entry is a build of comes first (`torch 2.9.0+cu128`), then one whose
//! builds' entries require it (the CUDA 12 libraries of torch's cu128 build), then the first
//! by name. An entry no family tells apart keeps today's rule (its marker): the targets then
//! differ by Python or platform, not by build.

use std::collections::{BTreeMap, BTreeSet};

use super::edge::{parse_edge, BuildError};
use crate::model::{BuildRef, LockFamily, LockedBuild};

/// What attribution reads of one release the resolution pinned.
pub(super) struct Pinned<'a> {
    /// The normalised name.
    pub(super) name: &'a str,
    /// The version, as written.
    pub(super) version: String,
    /// The targets whose resolution pinned it.
    pub(super) targets: &'a [String],
    /// Its `Requires-Dist` entries.
    pub(super) requires_dist: &'a [String],
}

/// The requirement that installs `build` (`jax[cuda12]`, `cupy-cuda12x`).
fn build_requirement(build: &LockedBuild) -> String {
    match &build.extra {
        Some(extra) => format!("{}[{extra}]", build.distribution),
        None => build.distribution.clone(),
    }
}

/// `requirements` with, after each one on a family's name, the requirement of each of the
/// family's locked builds under the same marker: the walk then reaches each build's entries
/// (a by-name family's own name is no entry of the lock, and a by-extra build's dependencies
/// come with its extra).
pub(super) fn with_builds(
    requirements: &[String],
    families: &[LockFamily],
) -> Result<Vec<String>, BuildError> {
    let mut out = Vec::new();
    for requirement in requirements {
        out.push(requirement.clone());
        let edge = parse_edge(requirement, "requirements")?;
        let Some(family) = families.iter().find(|f| f.name == edge.name) else {
            continue;
        };
        let marker = vari_core::markers::split_requirement(requirement).1;
        for build in &family.builds {
            let text = match marker {
                Some(marker) => format!("{} ; {}", build_requirement(build), marker.trim()),
                None => build_requirement(build),
            };
            if !out.contains(&text) {
                out.push(text);
            }
        }
    }
    Ok(out)
}

/// Per release (in `releases`' order), the builds that bring it in: `(family, build)` in the
/// family's order; empty for an entry installed as any other. Two entries of one name must
/// come in with disjoint builds, or the lock could not say which to install.
pub(super) fn attribute(
    releases: &[Pinned<'_>],
    families: &[LockFamily],
    targets: &[String],
) -> Result<Vec<Vec<BuildRef>>, BuildError> {
    let all: BTreeSet<&str> = targets.iter().map(String::as_str).collect();
    let mut attributed = Vec::with_capacity(releases.len());
    for release in releases {
        let pinned: BTreeSet<&str> = release.targets.iter().map(String::as_str).collect();
        if families.is_empty() || pinned.is_empty() || all.is_subset(&pinned) {
            attributed.push(Vec::new());
            continue;
        }
        let candidates: Vec<(&LockFamily, Vec<&LockedBuild>)> = families
            .iter()
            .filter_map(|family| telling_apart(family, &pinned).map(|b| (family, b)))
            .collect();
        let own = candidates
            .iter()
            .find(|(f, _)| f.builds.iter().any(|b| b.distribution == release.name));
        let required = || {
            candidates.iter().find(|(_, builds)| {
                builds
                    .iter()
                    .any(|b| requires(releases, &b.distribution, release.name, &pinned))
            })
        };
        let chosen = own.or_else(required).or_else(|| candidates.first());
        attributed.push(match chosen {
            Some((family, builds)) => builds
                .iter()
                .map(|b| BuildRef {
                    family: family.name.clone(),
                    build: b.name.clone(),
                })
                .collect(),
            None => Vec::new(),
        });
    }
    check_disjoint(releases, &attributed)?;
    Ok(attributed)
}

/// The builds of `family` that the targets in `pinned` took, when they tell those targets from
/// the others: each target in `pinned` took one, and no other target took any of them.
fn telling_apart<'f>(
    family: &'f LockFamily,
    pinned: &BTreeSet<&str>,
) -> Option<Vec<&'f LockedBuild>> {
    let took = |build: &LockedBuild, target: &str| build.classes.iter().any(|c| c == target);
    let every = pinned
        .iter()
        .all(|t| family.builds.iter().any(|b| took(b, t)));
    let builds: Vec<&LockedBuild> = family
        .builds
        .iter()
        .filter(|b| pinned.iter().any(|t| took(b, t)))
        .collect();
    let only = builds
        .iter()
        .all(|b| b.classes.iter().all(|c| pinned.contains(c.as_str())));
    (every && only && !builds.is_empty()).then_some(builds)
}

/// Whether an entry of `from` pinned by one of `pinned` reaches `name` over `Requires-Dist`
/// names (markers aside), through entries pinned by one of `pinned`.
fn requires(releases: &[Pinned<'_>], from: &str, name: &str, pinned: &BTreeSet<&str>) -> bool {
    let shares = |r: &Pinned<'_>| r.targets.iter().any(|t| pinned.contains(t.as_str()));
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut queue: Vec<String> = vec![from.to_owned()];
    while let Some(at) = queue.pop() {
        if !seen.insert(at.clone()) {
            continue;
        }
        for release in releases.iter().filter(|r| r.name == at && shares(r)) {
            for entry in release.requires_dist {
                let Ok(edge) = parse_edge(entry, release.name) else {
                    continue;
                };
                if edge.name == name {
                    return true;
                }
                queue.push(edge.name);
            }
        }
    }
    false
}

/// Entries of one name must come in with disjoint builds, each with some.
fn check_disjoint(releases: &[Pinned<'_>], attributed: &[Vec<BuildRef>]) -> Result<(), BuildError> {
    let mut by_name: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, release) in releases.iter().enumerate() {
        by_name.entry(release.name).or_default().push(i);
    }
    for (name, at) in by_name.into_iter().filter(|(_, at)| at.len() > 1) {
        let mut seen: BTreeSet<&BuildRef> = BTreeSet::new();
        for &i in &at {
            let builds = &attributed[i];
            if builds.is_empty() || !builds.iter().all(|b| seen.insert(b)) {
                let versions: Vec<String> = at
                    .iter()
                    .map(|&i| releases[i].version.to_string())
                    .collect();
                return Err(BuildError {
                    package: name.to_owned(),
                    requirement: String::new(),
                    message: format!(
                        "the lock would hold {} with no family build telling them apart",
                        versions.join(", ")
                    ),
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A release's name, version, `Requires-Dist` and targets, owned (viewed by [`view`]).
    type Owned = (String, String, Vec<String>, Vec<String>);

    fn release(name: &str, version: &str, requires: &[&str], targets: &[&str]) -> Owned {
        let texts = |list: &[&str]| list.iter().map(|t| t.to_string()).collect();
        (name.into(), version.into(), texts(requires), texts(targets))
    }

    fn view(owned: &[Owned]) -> Vec<Pinned<'_>> {
        owned
            .iter()
            .map(|(name, version, requires, targets)| Pinned {
                name,
                version: version.clone(),
                targets,
                requires_dist: requires,
            })
            .collect()
    }

    fn build(name: &str, distribution: &str, classes: &[&str]) -> LockedBuild {
        LockedBuild {
            name: name.into(),
            distribution: distribution.into(),
            classes: classes.iter().map(|c| c.to_string()).collect(),
            ..LockedBuild::default()
        }
    }

    fn families() -> Vec<LockFamily> {
        vec![
            LockFamily {
                name: "cupy".into(),
                group: None,
                builds: vec![
                    build("cuda13x", "cupy-cuda13x", &["h100"]),
                    build("cuda12x", "cupy-cuda12x", &["a100"]),
                ],
            },
            LockFamily {
                name: "torch".into(),
                group: Some("pytorch".into()),
                builds: vec![
                    build("cu130", "torch", &["h100"]),
                    build("cu128", "torch", &["a100"]),
                    build("cpu", "torch", &["cpu"]),
                ],
            },
        ]
    }

    #[test]
    fn entries_only_some_builds_bring_in_name_those_builds() {
        let all = ["cpu", "a100", "h100"].map(String::from);
        let releases = vec![
            release("numpy", "2.0", &[], &["cpu", "a100", "h100"]),
            release("torch", "2.9.0+cpu", &["numpy"], &["cpu"]),
            release("torch", "2.9.0+cu128", &["nvidia-rt-cu12"], &["a100"]),
            release("torch", "2.9.0+cu130", &[], &["h100"]),
            release("nvidia-rt-cu12", "12.8", &[], &["a100"]),
            release("cupy-cuda12x", "14", &[], &["a100"]),
            release("tomli", "2", &[], &["cpu", "a100"]),
        ];
        let got = attribute(&view(&releases), &families(), &all).unwrap();
        let build_ref = |f: &str, b: &str| BuildRef {
            family: f.to_owned(),
            build: b.to_owned(),
        };
        let pair = |f: &str, b: &str| vec![build_ref(f, b)];
        assert_eq!(got[0], Vec::new());
        assert_eq!(got[1], pair("torch", "cpu"));
        assert_eq!(got[2], pair("torch", "cu128"));
        assert_eq!(got[3], pair("torch", "cu130"));
        // Both families tell a100 apart; torch's cu128 entry requires it.
        assert_eq!(got[4], pair("torch", "cu128"));
        assert_eq!(got[5], pair("cupy", "cuda12x"));
        // cpu and a100 take torch builds h100 did not, but cupy has none on cpu: torch tells.
        assert_eq!(
            got[6],
            [build_ref("torch", "cu128"), build_ref("torch", "cpu")]
        );
        // Without families nothing is attributed.
        assert!(attribute(&view(&releases[..1]), &[], &all).unwrap()[0].is_empty());
    }

    #[test]
    fn two_entries_of_one_name_need_disjoint_builds() {
        let all = ["py310", "py312"].map(String::from);
        let releases = vec![
            release("tomli", "1", &[], &["py310"]),
            release("tomli", "2", &[], &["py312"]),
        ];
        let err = attribute(&view(&releases), &families(), &all).unwrap_err();
        assert_eq!(
            err.to_string(),
            "tomli: the lock would hold 1, 2 with no family build telling them apart"
        );
    }

    #[test]
    fn a_requirement_on_a_family_reaches_its_builds_under_its_marker() {
        let got = with_builds(
            &["cupy>=13 ; sys_platform == 'linux'".into(), "numpy".into()],
            &families(),
        )
        .unwrap();
        assert_eq!(
            got,
            [
                "cupy>=13 ; sys_platform == 'linux'",
                "cupy-cuda13x ; sys_platform == 'linux'",
                "cupy-cuda12x ; sys_platform == 'linux'",
                "numpy"
            ]
        );
    }
}
