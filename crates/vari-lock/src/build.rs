//! Building a [`Lock`] from what `vari lock` found: the releases every target's resolution
//! pinned, each with the files kept for the targets and its `Requires-Dist` entries, and the
//! inputs (requirements, extras, dependency groups). Pure: no network, no files.
//!
//! What is decided here, once:
//! - which entries are dependencies reached through variant markers only
//!   ([`PackageInfo::through_variants`]): a walk from the roots over the ordinary
//!   `Requires-Dist` edges, then over the variant-marker edges;
//! - which entries are needed only with an extra or a dependency group, or only in some of
//!   the targets' environments (`packages.marker`: PEP 751's `'socks' in extras`,
//!   `'dev' in dependency_groups`, and the requirements' own markers, `python_full_version <
//!   '3.11'`, combined along the ways to the entry; see [`reach`]);
//! - with dependency groups, which entries each group needs on its own, the project's own
//!   requirements left out (`[packages.tool.vari] group-marker`, for `--only-group`: PEP 751's
//!   `marker` cannot say whether an entry the project needs is needed by a group too);
//! - `packages.dependencies` (the edges the walk took) and `variant-dependencies` (the entries
//!   that use variant markers);
//! - the order: packages by name, then version, so the same inputs give the same bytes.
//!
//! Why resolution is not here: `vari lock` drives `uv pip compile` (see the crate docs), and
//! this module only arranges what it pinned.

use std::collections::{BTreeMap, BTreeSet};

use pep440_rs::Version;
use sha2::{Digest, Sha256};
use vari_core::markers::{split_requirement, Marker, TargetEnvironment};
use vari_core::metadata::VariantMetadata;

use crate::model::{Artifact, DependencyRef, Lock, LockFamily, LockInfo, Package, PackageInfo};
use crate::LOCK_VERSION;

mod edge;
mod families;
mod reach;

pub use edge::BuildError;
use edge::{edge_condition, holds_somewhere, judged_in, parse_edge, Edge, Scope};
use reach::{Reach, Walk};

/// What the lock is built for: its top-level requirements by scope and the environments its
/// targets describe.
#[derive(Debug, Clone, Default)]
pub struct LockInputs {
    /// The requirements always installed (PEP 508 text).
    pub requirements: Vec<String>,
    /// Optional dependencies by extra name (`[project.optional-dependencies]`).
    pub extras: BTreeMap<String, Vec<String>>,
    /// Dependency groups by name (PEP 735), includes already expanded.
    pub groups: BTreeMap<String, Vec<String>>,
    /// The groups installed when none is asked for.
    pub default_groups: Vec<String>,
    /// `requires-python` of the lock (the project's).
    pub requires_python: Option<String>,
    /// The marker environments of the targets: a dependency counts when its marker holds in
    /// one of them. Empty: every marker that does not name an extra counts as true.
    pub environments: Vec<TargetEnvironment>,
    /// `[tool.vari]`.
    pub info: LockInfo,
    /// The build families the lock chose through, with the builds locked (empty: none).
    pub families: Vec<LockFamily>,
}

/// One release the resolution pinned, with the files kept for the targets.
#[derive(Debug, Clone)]
pub struct LockedRelease {
    /// The normalised name.
    pub name: String,
    /// The pinned version.
    pub version: Version,
    /// The simple-index URL the files came from.
    pub index: Option<String>,
    /// The wheels kept, in the order to write them.
    pub wheels: Vec<Artifact>,
    /// The source distribution, when some target has no wheel.
    pub sdist: Option<Artifact>,
    /// The release's variant metadata, narrowed to the kept labels.
    pub variants_json: Option<VariantMetadata>,
    /// The `Requires-Dist` entries of the kept wheels (each once, in the order read): plain
    /// ones and those with variant markers.
    pub requires_dist: Vec<String>,
    /// `requires-python` of the release, when its files say.
    pub requires_python: Option<String>,
    /// The targets whose resolution pinned it.
    pub targets: Vec<String>,
}

/// Builds the lock: `releases` arranged as PEP 751 entries, sorted by name then version.
pub fn build_lock(inputs: &LockInputs, releases: Vec<LockedRelease>) -> Result<Lock, BuildError> {
    let mut releases = releases;
    releases.sort_by(|a, b| a.name.cmp(&b.name).then_with(|| a.version.cmp(&b.version)));
    let mut edges: BTreeMap<&str, Vec<Edge>> = BTreeMap::new();
    for release in &releases {
        let parsed = release
            .requires_dist
            .iter()
            .map(|entry| parse_edge(entry, &release.name))
            .collect::<Result<Vec<_>, _>>()?;
        // Entries of one name (a family's builds, `torch` `+cpu` and `+cu128`): the walk
        // follows the edges of each.
        edges
            .entry(release.name.as_str())
            .or_default()
            .extend(parsed);
    }
    let environments = judged_in(&inputs.environments);
    let scopes: Vec<(Scope, Vec<String>)> = std::iter::once((Scope::Base, &inputs.requirements))
        .chain(
            inputs
                .extras
                .iter()
                .map(|(name, reqs)| (Scope::Extra(name.clone()), reqs)),
        )
        .chain(
            inputs
                .groups
                .iter()
                .map(|(name, reqs)| (Scope::Group(name.clone()), reqs)),
        )
        .map(|(scope, reqs)| Ok((scope, families::with_builds(reqs, &inputs.families)?)))
        .collect::<Result<_, BuildError>>()?;
    let roots: Vec<(Scope, &[String])> = scopes
        .iter()
        .map(|(scope, reqs)| (scope.clone(), &reqs[..]))
        .collect();
    let locked: BTreeMap<&str, Option<&VariantMetadata>> = releases
        .iter()
        .map(|r| (r.name.as_str(), r.variants_json.as_ref()))
        .collect();
    let walk = Walk::run(&roots, &locked, &edges, &environments)?;
    // With dependency groups, what each needs on its own too (for `--only-group`).
    let group_markers = !inputs.groups.is_empty();
    // Which family builds bring each entry in (none without families).
    let target_names: Vec<String> = inputs.info.targets.iter().map(|t| t.name.clone()).collect();
    let pinned: Vec<families::Pinned<'_>> = releases
        .iter()
        .map(|r| families::Pinned {
            name: &r.name,
            version: r.version.to_string(),
            targets: &r.targets,
            requires_dist: &r.requires_dist,
        })
        .collect();
    let attributed = families::attribute(&pinned, &inputs.families, &target_names)?;
    let packages = releases
        .into_iter()
        .zip(attributed)
        .map(|(release, builds)| {
            let reach = walk.reached.get(&release.name);
            let through_variants = reach.is_some_and(Reach::through_variants_only);
            let marker = reach.and_then(|r| r.marker(&environments));
            let group_marker = match group_markers {
                true => reach.and_then(|r| r.group_marker(&environments)),
                false => None,
            };
            let dependencies = walk
                .used
                .get(&release.name)
                .into_iter()
                .flatten()
                .map(|name| DependencyRef {
                    name: name.clone(),
                    version: None,
                })
                .collect();
            let variant_dependencies = release
                .requires_dist
                .iter()
                .filter(|entry| uses_variants(entry))
                .cloned()
                .collect();
            Package {
                name: release.name,
                version: Some(release.version),
                marker,
                requires_python: release.requires_python,
                dependencies,
                index: release.index,
                sdist: release.sdist,
                wheels: release.wheels,
                variants_json: release.variants_json,
                vari: Some(PackageInfo {
                    variant_dependencies,
                    through_variants,
                    targets: release.targets,
                    group_marker,
                    builds,
                }),
                other: BTreeMap::new(),
            }
        })
        .collect();
    Ok(Lock {
        lock_version: LOCK_VERSION.to_owned(),
        environments: Vec::new(),
        requires_python: inputs.requires_python.clone(),
        extras: inputs.extras.keys().cloned().collect(),
        dependency_groups: inputs.groups.keys().cloned().collect(),
        default_groups: inputs.default_groups.clone(),
        created_by: "vari".to_owned(),
        packages,
        vari: Some(LockInfo {
            group_markers,
            families: inputs.families.clone(),
            ..inputs.info.clone()
        }),
        other_tools: BTreeMap::new(),
    })
}

/// Whether a `Requires-Dist` entry's marker names a variant variable.
pub fn uses_variants(entry: &str) -> bool {
    match split_requirement(entry) {
        (_, Some(marker)) => Marker::parse(marker.trim()).is_ok_and(|m| m.uses_variants()),
        _ => false,
    }
}

/// The requirements (name and requirement text, marker dropped) that `release`'s kept variants
/// ask for through variant markers in one of `environments`: what a lock must also hold for
/// its wheels to be installable. An entry no kept variant's properties satisfy (the null
/// variant's CUDA runtime) is not one.
pub fn variant_requirements(
    release: &LockedRelease,
    environments: &[TargetEnvironment],
) -> Result<Vec<(String, String)>, BuildError> {
    let environments = judged_in(environments);
    let mut wanted = Vec::new();
    for entry in &release.requires_dist {
        let edge = parse_edge(entry, &release.name)?;
        let condition = edge_condition(&edge, &BTreeSet::new(), release.variants_json.as_ref());
        if !edge.variant || !holds_somewhere(&condition, &environments) {
            continue;
        }
        let requirement = split_requirement(entry).0.trim().to_owned();
        if !wanted.iter().any(|(_, r)| *r == requirement) {
            wanted.push((edge.name, requirement));
        }
    }
    Ok(wanted)
}

/// The inputs' hash for `vari lock --check`: SHA-256 over each part's key and value,
/// length-prefixed so that no two lists of parts give the same bytes.
#[derive(Debug, Clone, Default)]
pub struct InputsHash {
    hasher: Sha256,
}

impl InputsHash {
    /// An empty hash.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one part: what it is (`requirement`, `file:req.txt`, `target`…) and its value.
    pub fn add(&mut self, key: &str, value: &[u8]) {
        for part in [key.as_bytes(), value] {
            self.hasher.update((part.len() as u64).to_le_bytes());
            self.hasher.update(part);
        }
    }

    /// `sha256:<hex>`.
    pub fn finish(self) -> String {
        format!("sha256:{}", hex::encode(self.hasher.finalize()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vari_core::markers::LockSets;

    fn release(name: &str, requires: &[&str], variants: Option<&str>) -> LockedRelease {
        LockedRelease {
            name: name.into(),
            version: "1.0".parse().unwrap(),
            index: None,
            wheels: Vec::new(),
            sdist: None,
            variants_json: variants.map(|json| {
                vari_core::metadata::read_json(json, vari_core::metadata::SourceKind::IndexFile)
                    .unwrap()
            }),
            requires_dist: requires.iter().map(|r| r.to_string()).collect(),
            requires_python: None,
            targets: vec!["cpu".into()],
        }
    }

    const CUDA: &str = r#"{"default-priorities": {"namespace": ["nvidia"]},
        "variants": {"null": {}, "cu128": {"nvidia": {"cuda_version_lower_bound": ["12.8"]}}}}"#;

    #[test]
    fn through_variants_extras_and_groups() {
        let inputs = LockInputs {
            requirements: vec!["app".into()],
            extras: [("socks".to_string(), vec!["req[socks]".to_string()])].into(),
            groups: [("dev".to_string(), vec!["tool".to_string()])].into(),
            ..LockInputs::default()
        };
        let releases = vec![
            release("tool", &[], None),
            release("app", &["demo", "req"], None),
            release(
                "demo",
                &["runtime; \"nvidia\" in variant_namespaces", "shared"],
                Some(CUDA),
            ),
            release("runtime", &["shared", "rt-extra"], None),
            release("rt-extra", &[], None),
            release("shared", &[], None),
            release("req", &["idna", "socks>=1; extra == \"socks\""], None),
            release("idna", &[], None),
            release("socks", &[], None),
        ];
        let lock = build_lock(&inputs, releases).unwrap();
        let names: Vec<&str> = lock.packages.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(
            names,
            ["app", "demo", "idna", "req", "rt-extra", "runtime", "shared", "socks", "tool"]
        );
        let get = |name: &str| lock.packages.iter().find(|p| p.name == name).unwrap();
        let info = |name: &str| get(name).vari.clone().unwrap();
        assert!(info("runtime").through_variants);
        assert!(info("rt-extra").through_variants);
        // Reached both ways: installed always.
        assert!(!info("shared").through_variants);
        assert!(!info("demo").through_variants);
        assert_eq!(
            info("demo").variant_dependencies,
            ["runtime; \"nvidia\" in variant_namespaces"]
        );
        assert_eq!(get("socks").marker.as_deref(), Some("'socks' in extras"));
        assert_eq!(
            get("tool").marker.as_deref(),
            Some("'dev' in dependency_groups")
        );
        assert_eq!(get("req").marker, None);
        let deps: Vec<&str> = get("demo")
            .dependencies
            .iter()
            .map(|d| d.name.as_str())
            .collect();
        assert_eq!(deps, ["runtime", "shared"]);
        assert_eq!(lock.extras, ["socks"]);
        assert_eq!(lock.dependency_groups, ["dev"]);
        // The lock reads back, and writes the same bytes again.
        let text = crate::write_lock(&lock).unwrap();
        let again = crate::write_lock(&crate::read_lock(&text).unwrap()).unwrap();
        assert_eq!(again, text);
    }

    #[test]
    fn an_entry_only_some_environments_need_gets_their_marker() {
        let env = |version: &str| TargetEnvironment::from_platform(None, version).unwrap();
        let inputs = LockInputs {
            requirements: vec!["app".into()],
            extras: [("fast".to_string(), vec!["app[fast]".to_string()])].into(),
            environments: vec![env("3.10"), env("3.12")],
            ..LockInputs::default()
        };
        let releases = vec![
            release(
                "app",
                &[
                    "tomli; python_version < \"3.11\"",
                    "typing; python_version < \"3.13\"",
                    "speed; extra == \"fast\" and python_version >= \"3.12\"",
                    "either; python_version < \"3.11\"",
                ],
                None,
            ),
            release(
                "tomli",
                &["sub", "either; python_version >= \"3.11\""],
                None,
            ),
            release("sub", &[], None),
            release("typing", &["either; python_version >= \"3.11\""], None),
            release("either", &[], None),
            release("speed", &[], None),
        ];
        let lock = build_lock(&inputs, releases).unwrap();
        let marker = |name: &str| {
            let package = lock.packages.iter().find(|p| p.name == name).unwrap();
            package.marker.clone()
        };
        // Only 3.10 installs tomli, and what only tomli needs.
        assert_eq!(
            marker("tomli").as_deref(),
            Some("python_full_version < '3.11'")
        );
        assert_eq!(
            marker("sub").as_deref(),
            Some("python_full_version < '3.11'")
        );
        // Both targets install these: no marker (however different the ways to them).
        assert_eq!(marker("typing"), None);
        assert_eq!(marker("either"), None);
        assert_eq!(marker("app"), None);
        // An extra's entry only 3.12 installs: both tests.
        assert_eq!(
            marker("speed").as_deref(),
            Some("'fast' in extras and python_full_version >= '3.12'")
        );
        // Each marker parses as a lock marker and holds exactly where the entry is needed.
        let sets = LockSets {
            extras: &["fast".to_owned()],
            dependency_groups: &[],
        };
        for (name, on_310, on_312) in [("tomli", true, false), ("speed", false, true)] {
            let parsed = Marker::parse_lock(&marker(name).unwrap()).unwrap();
            assert_eq!(parsed.evaluate_lock(&env("3.10"), &sets), on_310, "{name}");
            assert_eq!(parsed.evaluate_lock(&env("3.12"), &sets), on_312, "{name}");
        }
        // Only 3.10's way to `either` is through tomli's parent: a 3.12 path through tomli
        // does not exist, so tomli's `>= 3.11` edge is not taken.
        let tomli = lock.packages.iter().find(|p| p.name == "tomli").unwrap();
        let deps: Vec<&str> = tomli.dependencies.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(deps, ["sub"]);
    }

    /// Each group's own needs, the project's left out: an entry the project needs everywhere
    /// has no `marker`, yet its `group-marker` says which group needs it too, and where.
    #[test]
    fn each_group_records_what_it_needs_on_its_own() {
        let env = |version: &str| TargetEnvironment::from_platform(None, version).unwrap();
        let inputs = LockInputs {
            requirements: vec!["app".into()],
            extras: [("fast".to_string(), vec!["speed".to_string()])].into(),
            groups: [
                ("dev".to_string(), vec!["tool".to_string()]),
                (
                    "docs".to_string(),
                    vec!["shared; python_version < \"3.11\"".to_string()],
                ),
            ]
            .into(),
            default_groups: vec!["dev".into()],
            environments: vec![env("3.10"), env("3.12")],
            ..LockInputs::default()
        };
        let releases = vec![
            release("app", &["shared"], None),
            release("shared", &[], None),
            release("tool", &["shared"], None),
            release("speed", &[], None),
        ];
        let lock = build_lock(&inputs, releases).unwrap();
        assert!(lock.vari.as_ref().unwrap().group_markers);
        let get = |name: &str| lock.packages.iter().find(|p| p.name == name).unwrap();
        let group_marker = |name: &str| get(name).vari.clone().unwrap().group_marker;
        // The project needs `shared` everywhere: PEP 751's marker says no more.
        assert_eq!(get("shared").marker, None);
        assert_eq!(
            group_marker("shared").as_deref(),
            Some("'dev' in dependency_groups or 'docs' in dependency_groups and python_full_version < '3.11'")
        );
        assert_eq!(
            group_marker("tool").as_deref(),
            Some("'dev' in dependency_groups")
        );
        // No group needs the project's own entry, nor an extra's.
        assert_eq!(group_marker("app"), None);
        assert_eq!(group_marker("speed"), None);
        // It reads back and writes the same bytes.
        let text = crate::write_lock(&lock).unwrap();
        assert!(text.contains("group-markers = true"), "{text}");
        let again = crate::read_lock(&text).unwrap();
        assert_eq!(again, lock);
        // Without groups, neither is written.
        let plain = build_lock(
            &LockInputs {
                requirements: vec!["app".into()],
                ..LockInputs::default()
            },
            vec![
                release("app", &["shared"], None),
                release("shared", &[], None),
            ],
        )
        .unwrap();
        assert!(!plain.vari.as_ref().unwrap().group_markers);
        assert!(plain
            .packages
            .iter()
            .all(|p| p.vari.as_ref().unwrap().group_marker.is_none()));
    }

    #[test]
    fn a_variant_edge_no_kept_variant_satisfies_is_not_taken() {
        let amd = r#"{"default-priorities": {"namespace": ["amd"]},
            "variants": {"rocm": {"amd": {"rocm_version_lower_bound": ["6.4"]}}}}"#;
        let inputs = LockInputs {
            requirements: vec!["demo".into()],
            ..LockInputs::default()
        };
        let releases = vec![
            release(
                "demo",
                &["runtime; \"nvidia\" in variant_namespaces"],
                Some(amd),
            ),
            release("runtime", &[], None),
        ];
        let lock = build_lock(&inputs, releases).unwrap();
        assert!(lock.packages[0].dependencies.is_empty());
    }

    #[test]
    fn variant_requirements_are_those_a_kept_variant_asks_for() {
        let entries = [
            "runtime==1; \"nvidia\" in variant_namespaces",
            "rocm-rt; \"amd\" in variant_namespaces",
            "plain-dep",
        ];
        let demo = release("demo", &entries, Some(CUDA));
        assert_eq!(
            variant_requirements(&demo, &[]).unwrap(),
            [("runtime".to_owned(), "runtime==1".to_owned())]
        );
        // Only the null variant kept: nothing.
        let mut null_only = demo.clone();
        null_only.variants_json = null_only
            .variants_json
            .map(|m| m.keep_labels(&["null".parse().unwrap()]));
        assert!(variant_requirements(&null_only, &[]).unwrap().is_empty());
    }

    #[test]
    fn bad_entries_are_named() {
        let inputs = LockInputs {
            requirements: vec!["demo".into()],
            ..LockInputs::default()
        };
        let err = build_lock(&inputs, vec![release("demo", &["x; os_name =="], None)]).unwrap_err();
        assert_eq!(err.package, "demo");
        assert!(err
            .to_string()
            .starts_with("demo: cannot read the requirement `x; os_name ==`"));
    }

    #[test]
    fn inputs_hash_separates_parts() {
        let hash = |parts: &[(&str, &str)]| {
            let mut h = InputsHash::new();
            for (k, v) in parts {
                h.add(k, v.as_bytes());
            }
            h.finish()
        };
        assert_ne!(hash(&[("a", "bc")]), hash(&[("ab", "c")]));
        assert_eq!(hash(&[("a", "b")]), hash(&[("a", "b")]));
        assert!(hash(&[]).starts_with("sha256:"));
    }
}
