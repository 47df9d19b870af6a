//! What a mirror holds: from a lock and each target's chosen files, the distribution files to
//! mirror (each target's choice, with the null variant and the plain wheel of the same release
//! and tags as fallbacks), and what mirroring every file of the same releases would have taken.
//! Pure: no I/O.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use pep440_rs::Version;
use url::Url;
use vari_core::filename::WheelFilename;
use vari_core::metadata::VariantMetadata;
use vari_lock::{Artifact, Lock, Package};

use super::error::MirrorError;

/// The files one target installs from the lock, as the planner chose them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetFiles {
    /// The target's name (for messages).
    pub name: String,
    /// The machine class whose own index in the site (`t/{class}/simple/`) lists this target's
    /// files (the targets of one class on several Pythons or platforms share it); `None`: the
    /// target has none. Checked against the class-name grammar
    /// ([`vari_core::class::ClassName`]), since it becomes a path of the site.
    pub class: Option<String>,
    /// `(index into lock.packages, file name)` of each file chosen: a wheel or the sdist.
    pub files: Vec<(usize, String)>,
}

/// One distribution file to mirror.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MirrorFile {
    /// Its file name (checked to be a plain distribution name).
    pub filename: String,
    /// The PEP 503 normalised project name.
    pub project: String,
    /// The release's version.
    pub version: Version,
    /// Where it is downloaded from: http or https, or a `file:` URL under the lock's
    /// directory for an entry the lock names by `path`.
    pub url: Url,
    /// The lock's SHA-256, lowercase hex: what the download must hash to.
    pub sha256: String,
    /// The lock's size, when it gives one.
    pub size: Option<u64>,
}

/// One release with mirrored files: its name, version and the lock's variant metadata.
#[derive(Debug, Clone)]
pub(crate) struct Release {
    pub(crate) project: String,
    pub(crate) version: Version,
    /// The lock's `[packages.variants-json]`, narrowed later to the labels kept.
    pub(crate) variants_json: Option<VariantMetadata>,
}

/// Everything the mirror needs to know, decided before the first byte is fetched.
#[derive(Debug, Clone)]
pub struct MirrorPlan {
    /// The files to mirror, sorted by file name, each once.
    pub files: Vec<MirrorFile>,
    /// How many targets the files serve.
    pub targets: usize,
    /// Files and bytes of every wheel and sdist the lock lists for the same releases: what
    /// mirroring every variant would have taken.
    pub every_variant: (usize, u64),
    /// The files of those releases whose size the lock does not give (counted when mirrored;
    /// the others stay unknown and the summary says so).
    pub without_size: Vec<String>,
    /// Each class's files (its targets' choices with their fallbacks), by class name: what its
    /// own index `t/{class}/simple/` lists.
    pub classes: BTreeMap<String, BTreeSet<String>>,
    pub(crate) releases: Vec<Release>,
}

impl MirrorPlan {
    /// The plan for `targets` over `lock`, whose directory (absolute) is `lock_dir`: files the
    /// lock names by `path` (PEP 751, relative to it; a local wheelhouse) are read from under
    /// it. Fails, naming the entry, on a chosen file the lock does not list, a file without an
    /// http(s) URL or a path under the lock's directory, without a SHA-256, or a name that is
    /// not a plain distribution file name.
    pub fn new(
        lock: &Lock,
        lock_dir: Option<&Path>,
        targets: &[TargetFiles],
    ) -> Result<Self, MirrorError> {
        let mut chosen: BTreeMap<String, MirrorFile> = BTreeMap::new();
        let mut packages: BTreeSet<usize> = BTreeSet::new();
        let mut classes: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for target in targets {
            let mut class_files = match &target.class {
                Some(class) => {
                    let name =
                        vari_core::class::ClassName::new(class).map_err(|e| MirrorError::Plan {
                            entry: format!("target `{}`", target.name),
                            problem: e.to_string(),
                        })?;
                    Some(classes.entry(name.as_str().to_owned()).or_default())
                }
                None => None,
            };
            for (index, filename) in &target.files {
                let package = lock.packages.get(*index).ok_or_else(|| MirrorError::Plan {
                    entry: format!("packages[{index}]"),
                    problem: format!(
                        "target `{}` chose an entry the lock does not have",
                        target.name
                    ),
                })?;
                packages.insert(*index);
                let artifact =
                    find_artifact(package, filename).ok_or_else(|| MirrorError::Plan {
                        entry: entry_name(package),
                        problem: format!(
                            "target `{}` chose `{filename}`, which the entry does not list",
                            target.name
                        ),
                    })?;
                let mut added = vec![add(&mut chosen, package, artifact, lock_dir)?];
                if let Some(wheel) = artifact.wheel_filename() {
                    for fallback in fallbacks(package, &wheel) {
                        added.push(add(&mut chosen, package, fallback, lock_dir)?);
                    }
                }
                if let Some(files) = class_files.as_mut() {
                    files.extend(added);
                }
            }
        }
        let mut every = (0usize, 0u64);
        let mut releases = Vec::new();
        let mut without_size = Vec::new();
        for index in packages.clone() {
            let package = &lock.packages[index];
            for artifact in package.wheels.iter().chain(package.sdist.iter()) {
                every.0 += 1;
                match artifact.size {
                    Some(size) => every.1 += size,
                    None => without_size.extend(artifact.file_name()),
                }
            }
            if let Some(version) = &package.version {
                releases.push(Release {
                    project: package.name.clone(),
                    version: version.clone(),
                    variants_json: package.variants_json.clone(),
                });
            }
        }
        // A family lock's builds that no class chose (torch's cu130 build and the CUDA 13
        // libraries it brings, on a fleet of CPU and CUDA 12 nodes): what mirroring every build
        // would have taken too.
        for package in left_out_builds(lock, &packages) {
            for artifact in package.wheels.iter().chain(package.sdist.iter()) {
                every.0 += 1;
                match artifact.size {
                    Some(size) => every.1 += size,
                    None => without_size.extend(artifact.file_name()),
                }
            }
        }
        Ok(Self {
            files: chosen.into_values().collect(),
            targets: targets.len(),
            every_variant: every,
            without_size,
            classes,
            releases,
        })
    }

    /// Files and bytes the plan mirrors (sizes the lock does not give count as 0 until
    /// downloaded).
    pub fn totals(&self) -> (usize, u64) {
        (
            self.files.len(),
            self.files.iter().map(|f| f.size.unwrap_or(0)).sum(),
        )
    }
}

/// The entries of `lock` that only family builds no target chose bring in: entries with
/// `builds`, none of which comes with an entry of `chosen` (the entries the targets install).
fn left_out_builds<'a>(
    lock: &'a Lock,
    chosen: &BTreeSet<usize>,
) -> impl Iterator<Item = &'a Package> + 'a {
    let builds_of = |package: &'a Package| package.vari.iter().flat_map(|info| &info.builds);
    let taken: BTreeSet<&vari_lock::BuildRef> = chosen
        .iter()
        .filter_map(|index| lock.packages.get(*index))
        .flat_map(builds_of)
        .collect();
    let chosen = chosen.clone();
    lock.packages
        .iter()
        .enumerate()
        .filter(move |(index, package)| {
            !chosen.contains(index)
                && builds_of(package).next().is_some()
                && builds_of(package).all(|build| !taken.contains(build))
        })
        .map(|(_, package)| package)
}

/// The entry's artifact named `filename`: a wheel, or the sdist.
fn find_artifact<'a>(package: &'a Package, filename: &str) -> Option<&'a Artifact> {
    package
        .wheels
        .iter()
        .chain(package.sdist.iter())
        .find(|artifact| artifact.file_name().as_deref() == Some(filename))
}

/// The wheels of the same release and tags that an installer falls back to when it does not
/// take the chosen variant: the null variant (a variant-aware installer on a machine none of
/// the others fits) and the plain wheel (pip and uv without variant support).
fn fallbacks<'a>(
    package: &'a Package,
    chosen: &'a WheelFilename,
) -> impl Iterator<Item = &'a Artifact> + 'a {
    package.wheels.iter().filter(move |artifact| {
        artifact.wheel_filename().is_some_and(|wheel| {
            let fallback = wheel
                .label
                .as_ref()
                .is_none_or(|label| label.as_str() == "null");
            fallback
                && wheel.python_tags == chosen.python_tags
                && wheel.abi_tags == chosen.abi_tags
                && wheel.platform_tags == chosen.platform_tags
                && wheel.build == chosen.build
        })
    })
}

/// Adds `artifact` of `package` to the files, checked; its file name.
fn add(
    chosen: &mut BTreeMap<String, MirrorFile>,
    package: &Package,
    artifact: &Artifact,
    lock_dir: Option<&Path>,
) -> Result<String, MirrorError> {
    let file = mirror_file(package, artifact, lock_dir)?;
    let filename = file.filename.clone();
    chosen.entry(filename.clone()).or_insert(file);
    Ok(filename)
}

/// The checked [`MirrorFile`] of one lock artifact.
fn mirror_file(
    package: &Package,
    artifact: &Artifact,
    lock_dir: Option<&Path>,
) -> Result<MirrorFile, MirrorError> {
    let problem = |problem: String| MirrorError::Plan {
        entry: entry_name(package),
        problem,
    };
    let filename = artifact
        .file_name()
        .ok_or_else(|| problem("a file has no name".to_owned()))?;
    vari_fs::check_name(&filename).map_err(|e| problem(e.to_string()))?;
    let distribution = WheelFilename::parse(&filename).is_ok()
        || [".tar.gz", ".zip"].iter().any(|s| filename.ends_with(s));
    if filename.starts_with('.') || !distribution {
        return Err(problem(format!(
            "`{filename}` is not a wheel or source distribution file name"
        )));
    }
    let version = package
        .version
        .clone()
        .ok_or_else(|| problem(format!("`{filename}`: the entry has no version")))?;
    let url = match (artifact.url.as_deref(), artifact.path.as_deref()) {
        (Some(url), _) => Url::parse(url)
            .ok()
            .filter(|url| matches!(url.scheme(), "http" | "https"))
            .ok_or_else(|| problem(format!("`{filename}`: `{url}` is not an http(s) URL")))?,
        (None, Some(path)) => local_url(path, lock_dir)
            .map_err(|why| problem(format!("`{filename}`: `path = \"{path}\"`: {why}")))?,
        (None, None) => {
            return Err(problem(format!(
                "`{filename}` has neither a `url` nor a `path`"
            )))
        }
    };
    let sha256 = artifact
        .sha256()
        .filter(|digest| digest.len() == 64 && digest.bytes().all(|b| b.is_ascii_hexdigit()))
        .ok_or_else(|| {
            problem(format!(
                "`{filename}` has no SHA-256 hash to check it against"
            ))
        })?
        .to_ascii_lowercase();
    Ok(MirrorFile {
        filename,
        project: package.name.clone(),
        version,
        url,
        sha256,
        size: artifact.size,
    })
}

/// The `file:` URL of a lock's `path` entry: relative, `/`-separated, without `..`, under the
/// lock's absolute directory.
fn local_url(path: &str, lock_dir: Option<&Path>) -> Result<Url, String> {
    let dir = lock_dir
        .filter(|dir| dir.is_absolute())
        .ok_or("the lock's directory is not known")?;
    let file = vari_fs::safe_path::join_under(dir, path).map_err(|e| e.to_string())?;
    Url::from_file_path(&file).map_err(|()| "not a usable local path".to_owned())
}

/// `name==version` of an entry, for messages.
fn entry_name(package: &Package) -> String {
    match &package.version {
        Some(version) => format!("{}=={version}", package.name),
        None => package.name.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn artifact(name: &str, size: u64) -> Artifact {
        Artifact {
            name: Some(name.to_owned()),
            url: Some(format!("https://example.org/files/{name}")),
            path: None,
            size: Some(size),
            upload_time: None,
            hashes: BTreeMap::from([("sha256".to_owned(), "ab".repeat(32))]),
        }
    }

    fn package(name: &str, wheels: &[&str]) -> Package {
        Package {
            name: name.to_owned(),
            version: Some("1.0".parse().unwrap()),
            marker: None,
            requires_python: None,
            dependencies: Vec::new(),
            index: None,
            sdist: None,
            wheels: wheels.iter().map(|w| artifact(w, 10)).collect(),
            variants_json: None,
            vari: None,
            other: BTreeMap::new(),
        }
    }

    fn lock(packages: Vec<Package>) -> Lock {
        Lock {
            lock_version: "1.0".to_owned(),
            environments: Vec::new(),
            requires_python: None,
            extras: Vec::new(),
            dependency_groups: Vec::new(),
            default_groups: Vec::new(),
            created_by: "test".to_owned(),
            packages,
            vari: None,
            other_tools: BTreeMap::new(),
        }
    }

    const TORCH: [&str; 5] = [
        "t-1.0-py3-none-any.whl",
        "t-1.0-py3-none-any-null.whl",
        "t-1.0-py3-none-any-cu128.whl",
        "t-1.0-py3-none-any-cu130.whl",
        "t-1.0-py3-none-macosx_11_0_arm64.whl",
    ];

    #[test]
    fn a_variant_brings_the_null_variant_and_plain_wheel_of_its_tags() {
        let lock = lock(vec![package("t", &TORCH)]);
        let plan = MirrorPlan::new(
            &lock,
            None,
            &[TargetFiles {
                name: "a100".into(),
                class: None,
                files: vec![(0, TORCH[2].into())],
            }],
        )
        .unwrap();
        let names: Vec<_> = plan.files.iter().map(|f| f.filename.as_str()).collect();
        assert_eq!(names, [TORCH[2], TORCH[1], TORCH[0]]);
        assert_eq!(plan.every_variant, (5, 50));
        assert_eq!(plan.totals(), (3, 30));
    }

    #[test]
    fn two_targets_share_files_once() {
        let lock = lock(vec![package("t", &TORCH)]);
        let targets = [
            TargetFiles {
                name: "cpu".into(),
                class: None,
                files: vec![(0, TORCH[1].into())],
            },
            TargetFiles {
                name: "a100".into(),
                class: None,
                files: vec![(0, TORCH[2].into())],
            },
        ];
        let plan = MirrorPlan::new(&lock, None, &targets).unwrap();
        assert_eq!(plan.files.len(), 3);
        assert_eq!(plan.targets, 2);
    }

    #[test]
    fn each_class_lists_its_targets_choices_and_their_fallbacks() {
        let lock = lock(vec![package("t", &TORCH)]);
        let target = |name: &str, class: Option<&str>, file: &str| TargetFiles {
            name: name.into(),
            class: class.map(str::to_owned),
            files: vec![(0, file.into())],
        };
        // Two targets of one class (two Pythons, say) share its index; a target without a
        // class has none.
        let targets = [
            target("gpu-py3.12", Some("gpu"), TORCH[2]),
            target("gpu-py3.13", Some("gpu"), TORCH[3]),
            target("cpu", Some("cpu"), TORCH[0]),
            target("mac", None, TORCH[4]),
        ];
        let plan = MirrorPlan::new(&lock, None, &targets).unwrap();
        let names = |files: &[&str]| files.iter().map(|f| (*f).to_owned()).collect();
        assert_eq!(
            plan.classes,
            BTreeMap::from([
                ("cpu".to_owned(), names(&TORCH[..2])),
                ("gpu".to_owned(), names(&TORCH[..4])),
            ])
        );
        // A class name becomes a path of the site: checked.
        let err = MirrorPlan::new(&lock, None, &[target("x", Some("../x"), TORCH[0])]).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("target `x`: machine class name"),
            "{err}"
        );
    }

    #[test]
    fn the_builds_no_target_chose_count_in_what_every_build_would_take() {
        let with_build = |mut package: Package, build: &str| {
            package.vari = Some(vari_lock::PackageInfo {
                builds: vec![vari_lock::BuildRef {
                    family: "torch".into(),
                    build: build.into(),
                }],
                ..vari_lock::PackageInfo::default()
            });
            package
        };
        let lock = lock(vec![
            with_build(
                package("torch", &["torch-1.0+cu130-py3-none-any.whl"]),
                "cu130",
            ),
            with_build(
                package("nvidia-cublas", &["nvidia_cublas-1.0-py3-none-any.whl"]),
                "cu130",
            ),
            with_build(
                package("torch", &["torch-1.0+cu128-py3-none-any.whl"]),
                "cu128",
            ),
            with_build(package("torch", &["torch-1.0+cpu-py3-none-any.whl"]), "cpu"),
            package("typelike", &["typelike-1.0-py3-none-any.whl"]),
            package("unrelated", &["unrelated-1.0-py3-none-any.whl"]),
        ]);
        let target = |name: &str, files: Vec<(usize, String)>| TargetFiles {
            name: name.into(),
            class: None,
            files,
        };
        let plan = MirrorPlan::new(
            &lock,
            None,
            &[
                target("cpu", vec![(3, "torch-1.0+cpu-py3-none-any.whl".into())]),
                target("a100", vec![(2, "torch-1.0+cu128-py3-none-any.whl".into())]),
                target("both", vec![(4, "typelike-1.0-py3-none-any.whl".into())]),
            ],
        )
        .unwrap();
        // 3 files mirrored; the cu130 build's 2 entries left out count, an entry no build
        // brings in and no target installs does not.
        assert_eq!(plan.totals(), (3, 30));
        assert_eq!(plan.every_variant, (5, 50));
    }

    #[test]
    fn hostile_or_incomplete_entries_are_refused_naming_the_entry() {
        let mut bad = package("t", &["../evil-1.0-py3-none-any.whl"]);
        let target = |name: &str| TargetFiles {
            name: "cpu".into(),
            class: None,
            files: vec![(0, name.into())],
        };
        let err = MirrorPlan::new(
            &lock(vec![bad.clone()]),
            None,
            &[target("../evil-1.0-py3-none-any.whl")],
        )
        .unwrap_err();
        assert!(err.to_string().starts_with("t==1.0: "), "{err}");
        bad.wheels = vec![artifact(TORCH[0], 1)];
        bad.wheels[0].hashes.clear();
        let err = MirrorPlan::new(&lock(vec![bad.clone()]), None, &[target(TORCH[0])]).unwrap_err();
        assert!(err.to_string().contains("SHA-256"), "{err}");
        bad.wheels = vec![artifact(TORCH[0], 1)];
        bad.wheels[0].url = Some(format!("file:///etc/{}", TORCH[0]));
        let err = MirrorPlan::new(&lock(vec![bad.clone()]), None, &[target(TORCH[0])]).unwrap_err();
        assert!(err.to_string().contains("not an http(s) URL"), "{err}");
        let err =
            MirrorPlan::new(&lock(vec![bad.clone()]), None, &[target("other.whl")]).unwrap_err();
        assert!(err.to_string().contains("does not list"), "{err}");
        bad.wheels = vec![artifact("t-1.0-variants.json", 1)];
        let err =
            MirrorPlan::new(&lock(vec![bad]), None, &[target("t-1.0-variants.json")]).unwrap_err();
        assert!(
            err.to_string()
                .contains("not a wheel or source distribution"),
            "{err}"
        );
    }

    #[test]
    fn a_path_entry_is_read_from_under_the_lock_s_directory() {
        let mut local = package("t", &[TORCH[0]]);
        local.wheels[0].url = None;
        local.wheels[0].path = Some(format!("wheels/{}", TORCH[0]));
        let target = [TargetFiles {
            name: "cpu".into(),
            class: None,
            files: vec![(0, TORCH[0].into())],
        }];
        let plan = MirrorPlan::new(
            &lock(vec![local.clone()]),
            Some(Path::new("/srv/proj")),
            &target,
        )
        .unwrap();
        assert_eq!(
            plan.files[0].url.as_str(),
            format!("file:///srv/proj/wheels/{}", TORCH[0])
        );
        // Without the lock's directory, or out of it, nothing is read.
        let err = MirrorPlan::new(&lock(vec![local.clone()]), None, &target).unwrap_err();
        assert!(err.to_string().contains("directory is not known"), "{err}");
        local.wheels[0].path = Some(format!("../{}", TORCH[0]));
        let err =
            MirrorPlan::new(&lock(vec![local]), Some(Path::new("/srv/proj")), &target).unwrap_err();
        assert!(err.to_string().contains("path = \"../"), "{err}");
    }
}
