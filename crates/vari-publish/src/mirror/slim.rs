//! `vari mirror --slim`: per-GPU-family wheels of the CUDA builds a mirror holds, for the
//! families its targets declare, so that a node downloads only the GPU code its GPU executes.
//!
//! For each wheel a target with GPU families installs ([`slim_requests`], pure), the store's fat
//! copy is read once for the families its SASS covers (`vari_slim::families`); for each family
//! a target asks for, the wheel `vari wheel split` writes for it (`--keep M.x`, labelled
//! `{label}_{M}x` when the fat build has a label, else by its properties) is written into the
//! store beside the fat one, which stays (plain installers and targets without a GPU family
//! still need it). A wheel without SASS is not a CUDA build and is left alone. A member whose
//! GPU code vari cannot read (cuBLASLt's tables) is kept whole inside each slim wheel (which so
//! serves its family as the fat build does: `vari_slim::readable_families`), named and counted;
//! a wheel that cannot be slimmed at all (a malformed fat binary, no code for a family) is
//! mirrored whole, named and counted. Members stream through `vari_slim` one at a time (rewritten ones wait on disk), so
//! memory does not grow with the wheel.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::{Deserialize, Serialize};
use vari_core::filename::WheelFilename;
use vari_core::metadata::VariantMetadata;
use vari_core::VariantLabel;
use vari_lock::{Artifact, Lock};
use vari_slim::{Keep, KeepSpec, SlimError, SlimOptions};
use vari_wheel::ValidValues;

use super::error::MirrorError;
use super::plan::TargetFiles;
use super::store::Store;

/// What `--slim` asks of a mirror run.
#[derive(Debug, Clone, Default)]
pub struct SlimRequest {
    /// For each wheel to slim (a file of the plan), the GPU families to write a wheel for.
    pub wheels: BTreeMap<String, BTreeSet<u32>>,
    /// The valid values of each provider's properties (for the slim wheels' `variant.json`).
    pub valid: ValidValues,
    /// Each class's one GPU family ([`class_families`]), whose slim wheels its index lists.
    pub classes: BTreeMap<String, Option<u32>>,
}

/// The one GPU family of each machine class (`None` when its targets have none, several, or
/// not all the same one: no single slim wheel serves it). `families[i]` are those of
/// `targets[i]`, as for [`slim_requests`]. Pure.
pub fn class_families(
    targets: &[TargetFiles],
    families: &[BTreeSet<u32>],
) -> BTreeMap<String, Option<u32>> {
    let mut classes: BTreeMap<String, Option<u32>> = BTreeMap::new();
    for (target, families) in targets.iter().zip(families) {
        let Some(class) = target
            .class
            .as_deref()
            .and_then(|c| vari_core::class::ClassName::new(c).ok())
        else {
            continue;
        };
        let one = match families.len() {
            1 => families.first().copied(),
            _ => None,
        };
        classes
            .entry(class.as_str().to_owned())
            .and_modify(|family| {
                if *family != one {
                    *family = None;
                }
            })
            .or_insert(one);
    }
    classes
}

/// Each class's files (`classes`, class → file names) with every fat *variant* wheel replaced
/// by the slim wheel written for the class's one GPU family (`families`, [`class_families`]),
/// so that an installer reading the class's index downloads only the GPU code its GPU runs:
/// the wheel `vari sync` of the mirror's lock installs on that class. A fat wheel without a
/// label stays listed: its slim wheels carry a label, a file name plain pip and uv without
/// wheel-variants support reject, so listing one instead would leave them nothing to install.
pub(crate) fn class_files_with_slim(
    classes: &BTreeMap<String, BTreeSet<String>>,
    families: &BTreeMap<String, Option<u32>>,
    summary: &SlimSummary,
) -> BTreeMap<String, BTreeSet<String>> {
    let labelled = |file: &str| WheelFilename::parse(file).is_ok_and(|w| w.label.is_some());
    classes
        .iter()
        .map(|(class, files)| {
            let family = families.get(class).copied().flatten();
            let files = files
                .iter()
                .map(|file| {
                    family
                        .filter(|_| labelled(file))
                        .and_then(|family| {
                            summary
                                .wheels
                                .iter()
                                .find(|w| &w.fat == file && w.family == family)
                        })
                        .map_or_else(|| file.clone(), |slim| slim.filename.clone())
                })
                .collect();
            (class.clone(), files)
        })
        .collect()
}

/// The wheels to slim: every wheel a target with GPU families installs, with the union of the
/// families of the targets that install it. `families[i]` are the families of `targets[i]`
/// (`vari_slim::profile_families` of its profile); a target without any asks for nothing.
/// Pure.
pub fn slim_requests(
    targets: &[TargetFiles],
    families: &[BTreeSet<u32>],
) -> BTreeMap<String, BTreeSet<u32>> {
    let mut wheels: BTreeMap<String, BTreeSet<u32>> = BTreeMap::new();
    for (target, families) in targets.iter().zip(families) {
        if families.is_empty() {
            continue;
        }
        for (_, filename) in &target.files {
            if filename.ends_with(".whl") {
                wheels
                    .entry(filename.clone())
                    .or_default()
                    .extend(families.iter().copied());
            }
        }
    }
    wheels
}

/// One slim wheel written into the mirror.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlimWheel {
    /// The fat wheel it was made from.
    pub fat: String,
    /// The GPU family (compute capability major) it serves.
    pub family: u32,
    /// Its file name.
    pub filename: String,
    /// Its SHA-256, lowercase hex.
    pub sha256: String,
    /// Its size in bytes.
    pub size: u64,
    /// Its label.
    pub label: Option<VariantLabel>,
    /// Its `variant.json` (its label's properties and the providers), for the mirror's lock.
    pub metadata: Option<VariantMetadata>,
}

/// What slimming did in one run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SlimSummary {
    /// The slim wheels, by fat wheel then family.
    pub wheels: Vec<SlimWheel>,
    /// Wheels (or a family of one) mirrored whole, with why: `(file name, reason)`.
    pub left_whole: Vec<(String, String)>,
    /// Members of slimmed wheels whose GPU code vari cannot read, kept whole in each slim
    /// wheel: `(wheel, "member: why")`.
    pub kept_whole: Vec<(String, String)>,
    /// What the targets' GPU families would download fat: the fat wheel's bytes once per family
    /// that asked for it.
    pub fat_bytes: u64,
    /// What they download from the mirror: each slim wheel's bytes, and the fat bytes of what
    /// was left whole.
    pub slim_bytes: u64,
}

impl SlimSummary {
    /// `slimmed: 1.2 MiB of 4.0 MiB (30 %) for 2 GPU families; left whole (GPU code vari
    /// cannot read): a.whl (why)`.
    pub fn line(&self) -> String {
        if self.wheels.is_empty() && self.left_whole.is_empty() && self.kept_whole.is_empty() {
            return "slimmed: nothing (no CUDA wheel a target with a GPU family installs)"
                .to_owned();
        }
        let percent = if self.fat_bytes > 0 {
            self.slim_bytes as f64 * 100.0 / self.fat_bytes as f64
        } else {
            100.0
        };
        let families: BTreeSet<u32> = self.wheels.iter().map(|w| w.family).collect();
        let mut text = format!(
            "slimmed: {} of {} ({percent:.0} %) in {} per-family wheel(s)",
            vari_fs::human_bytes(self.slim_bytes),
            vari_fs::human_bytes(self.fat_bytes),
            self.wheels.len(),
        );
        if !families.is_empty() {
            let names: Vec<String> = families.iter().map(|f| format!("{f}.x")).collect();
            text.push_str(&format!(" for GPU families {}", names.join(", ")));
        }
        if !self.kept_whole.is_empty() {
            let names: Vec<String> = self
                .kept_whole
                .iter()
                .map(|(wheel, member)| format!("{wheel}: {member}"))
                .collect();
            text.push_str(&format!(
                "; GPU code vari cannot read kept whole: {} file(s): {}",
                self.kept_whole.len(),
                names.join(", ")
            ));
        }
        if !self.left_whole.is_empty() {
            let names: Vec<String> = self
                .left_whole
                .iter()
                .map(|(name, why)| format!("{name} ({why})"))
                .collect();
            text.push_str(&format!(
                "; left whole: {} file(s): {}",
                self.left_whole.len(),
                names.join(", ")
            ));
        }
        text
    }
}

/// The file in the store remembering, per fat wheel (by SHA-256), what slimming found and
/// wrote, so that a re-run neither reads the fat wheels again nor rewrites the slim ones.
const STATE_FILE: &str = "slim.json";
/// Written into it so that a different layout is recognised and ignored.
const FORMAT: &str = "vari-mirror-slim/1";

#[derive(Debug, Default, Serialize, Deserialize)]
struct State {
    format: String,
    /// By the fat wheel's SHA-256.
    fat: BTreeMap<String, FatRecord>,
}

/// What slimming found of one fat wheel.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct FatRecord {
    /// The families its SASS covers (empty: not a CUDA build).
    has: Vec<u32>,
    /// Why it is mirrored whole, when its GPU code cannot be read.
    whole: Option<String>,
    /// The slim wheel written per family: its file name and SHA-256.
    slim: BTreeMap<u32, (String, String)>,
    /// Its members whose GPU code vari cannot read, with why: kept whole in every slim wheel.
    #[serde(default)]
    unreadable: Vec<(String, String)>,
}

/// Writes the slim wheels `request` asks for into `store`, from the fat wheels it holds
/// (`sha256` gives each one's SHA-256, as the lock does).
pub(super) fn slim_store(
    store: &mut Store,
    request: &SlimRequest,
    sha256: &BTreeMap<&str, &str>,
) -> Result<SlimSummary, MirrorError> {
    let state_path = store.root().join(STATE_FILE);
    let old: BTreeMap<String, FatRecord> =
        vari_fs::read_input(&state_path, vari_fs::InputKind::Metadata)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<State>(&bytes).ok())
            .filter(|state| state.format == FORMAT)
            .map(|state| state.fat)
            .unwrap_or_default();
    let mut new: BTreeMap<String, FatRecord> = BTreeMap::new();
    let mut summary = SlimSummary::default();
    // Written beside the store's files (same file system: moved in by rename), never among
    // them, so that an interrupted run leaves nothing the site would publish.
    let work = store.root().join(".slim");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).map_err(|source| MirrorError::Store {
        path: work.clone(),
        source,
    })?;
    for (fat, families) in &request.wheels {
        let Some(fat_sha) = sha256.get(fat.as_str()).map(|s| (*s).to_owned()) else {
            continue;
        };
        let path = store.path(fat);
        let size = std::fs::metadata(&path)
            .map(|m| m.len())
            .map_err(|source| MirrorError::Store {
                path: path.clone(),
                source,
            })?;
        let mut record = match old.get(&fat_sha) {
            Some(known) => FatRecord {
                slim: BTreeMap::new(),
                ..known.clone()
            },
            None => match vari_slim::readable_families(&path) {
                Ok((has, unreadable)) => FatRecord {
                    has,
                    unreadable,
                    ..FatRecord::default()
                },
                Err(e) => FatRecord {
                    whole: Some(whole_reason(&e)),
                    ..FatRecord::default()
                },
            },
        };
        let whole = record.whole.clone().or_else(|| {
            // No SASS vari reads, but GPU code it cannot read: a CUDA build mirrored whole.
            let (member, why) = record
                .unreadable
                .first()
                .filter(|_| record.has.is_empty())?;
            Some(format!("{member}: GPU code vari cannot read: {why}"))
        });
        if let Some(why) = whole {
            summary.fat_bytes += size * families.len() as u64;
            summary.slim_bytes += size * families.len() as u64;
            summary.left_whole.push((fat.clone(), why));
        } else if !record.has.is_empty() {
            for (member, why) in &record.unreadable {
                summary
                    .kept_whole
                    .push((fat.clone(), format!("{member}: {why}")));
            }
            let label = WheelFilename::parse(fat).ok().and_then(|w| w.label);
            for &family in families {
                summary.fat_bytes += size;
                if !record.has.contains(&family) {
                    // No SASS for this family: its GPUs run the fat build's PTX (or nothing).
                    summary.slim_bytes += size;
                    summary.left_whole.push((
                        fat.clone(),
                        format!("no {family}.x code to keep: its GPUs get the whole build"),
                    ));
                    continue;
                }
                let known = old
                    .get(&fat_sha)
                    .and_then(|r| r.slim.get(&family))
                    .filter(|(name, _)| vari_fs::check_name(name).is_ok());
                let reused = match known {
                    Some((name, sha)) if store.has(name, sha)? => {
                        Some(known_wheel(store, fat, family, name, sha))
                    }
                    _ => None,
                };
                let made = match reused.flatten() {
                    Some(wheel) => Ok(wheel),
                    None => slim_one(store, &work, fat, family, label.as_ref(), &request.valid),
                };
                match made {
                    Ok(wheel) => {
                        summary.slim_bytes += wheel.size;
                        record
                            .slim
                            .insert(family, (wheel.filename.clone(), wheel.sha256.clone()));
                        summary.wheels.push(wheel);
                    }
                    Err(SlimFailure::Store(e)) => return Err(e),
                    Err(SlimFailure::Slim(e)) => {
                        summary.slim_bytes += size;
                        summary.left_whole.push((fat.clone(), whole_reason(&e)));
                    }
                }
            }
        }
        new.insert(fat_sha, record);
    }
    let _ = std::fs::remove_dir_all(&work);
    let state = State {
        format: FORMAT.to_owned(),
        fat: new,
    };
    // Serialising maps of strings and numbers cannot fail.
    let text = serde_json::to_vec(&state).unwrap_or_default();
    vari_fs::write_atomic(&state_path, &text)?;
    Ok(summary)
}

/// A slim wheel a previous run wrote (the store vouches for its SHA-256), as this run reports
/// it; `None` when it cannot be read back (it is then written again).
fn known_wheel(
    store: &Store,
    fat: &str,
    family: u32,
    filename: &str,
    sha256: &str,
) -> Option<SlimWheel> {
    let path = store.path(filename);
    let size = std::fs::metadata(&path).ok()?.len();
    let info = vari_wheel::inspect(&path).ok()?;
    Some(SlimWheel {
        fat: fat.to_owned(),
        family,
        filename: filename.to_owned(),
        sha256: sha256.to_owned(),
        size,
        label: info.filename.label.clone(),
        metadata: info.metadata,
    })
}

enum SlimFailure {
    Store(MirrorError),
    Slim(SlimError),
}

/// Writes the `family` wheel of the store's `fat` and records it in the store.
fn slim_one(
    store: &mut Store,
    work: &Path,
    fat: &str,
    family: u32,
    label: Option<&VariantLabel>,
    valid: &ValidValues,
) -> Result<SlimWheel, SlimFailure> {
    let label = label.and_then(|l| VariantLabel::new(format!("{l}_{family}x")).ok());
    let options = SlimOptions {
        label,
        valid: valid.clone(),
        skip_validation: false,
    };
    let keep = Keep::new([KeepSpec::Family(family)]);
    let report = vari_slim::slim_wheel(&store.path(fat), work, &keep, &options)
        .map_err(SlimFailure::Slim)?;
    let store_error = |path: &Path, source| {
        SlimFailure::Store(MirrorError::Store {
            path: path.to_owned(),
            source,
        })
    };
    let filename = report
        .output
        .file_name()
        .and_then(|n| n.to_str())
        .map(str::to_owned)
        .ok_or_else(|| {
            store_error(
                &report.output,
                std::io::Error::other("the slim wheel has no usable file name"),
            )
        })?;
    let sha256 = super::store::hash_file(&report.output).map_err(SlimFailure::Store)?;
    let target = store.path(&filename);
    std::fs::rename(&report.output, &target).map_err(|e| store_error(&target, e))?;
    store
        .record(&filename, sha256.clone())
        .map_err(SlimFailure::Store)?;
    Ok(SlimWheel {
        fat: fat.to_owned(),
        family,
        filename,
        sha256,
        size: report.output_size,
        label: report.label,
        metadata: report.metadata,
    })
}

/// `lock` with each slim wheel listed in the entry of the wheel it was made from, named by
/// `path` (`{files_path}{file name}`, relative to the lock's directory: where the mirror's
/// site holds it) with its SHA-256 and size, and its label and properties added to the entry's
/// `variants-json`: what `vari sync` of the mirror's lock chooses from, so a node of each GPU
/// family installs its family's wheel and the hash it checks is the slim file's.
///
/// A plain fat wheel stays listed (a supported variant wins over it; a target without a GPU
/// still installs it). A fat *variant* wheel declaring `nvidia :: sm_arch` ties with its slim
/// wheels in the ranking (same best property; the label decides, and `cu12` sorts before
/// `cu12_9x`), and only targets with a GPU family can install it: when every family asked of it
/// got its slim wheel, it leaves the mirror's lock, so those targets install their slim one.
pub fn lock_with_slim_wheels(lock: &Lock, summary: &SlimSummary, files_path: &str) -> Lock {
    let original = lock;
    let mut lock = lock.clone();
    let whole: BTreeSet<&str> = summary.left_whole.iter().map(|(f, _)| f.as_str()).collect();
    let slimmed: BTreeSet<&str> = summary
        .wheels
        .iter()
        .map(|w| w.fat.as_str())
        .filter(|fat| !whole.contains(fat))
        .collect();
    for package in &mut lock.packages {
        let variants = package.variants_json.as_ref();
        package.wheels.retain(|artifact| {
            let Some(name) = artifact.file_name() else {
                return true;
            };
            if !slimmed.contains(name.as_str()) {
                return true;
            }
            let label = WheelFilename::parse(&name).ok().and_then(|w| w.label);
            let gpu_only = label
                .and_then(|label| variants?.variants.get(&label))
                .and_then(|properties| properties.iter().find(|(ns, _)| ns.as_str() == "nvidia"))
                .is_some_and(|(_, features)| features.iter().any(|(f, _)| f.as_str() == "sm_arch"));
            !gpu_only
        });
    }
    for wheel in &summary.wheels {
        // The entry that listed the fat wheel (in the lock as given: it may have left).
        let Some(index) = original.packages.iter().position(|p| {
            p.wheels
                .iter()
                .any(|a| a.file_name().as_deref() == Some(wheel.fat.as_str()))
        }) else {
            continue;
        };
        let package = &mut lock.packages[index];
        if package
            .wheels
            .iter()
            .any(|a| a.file_name().as_deref() == Some(wheel.filename.as_str()))
        {
            continue;
        }
        package.wheels.push(Artifact {
            name: Some(wheel.filename.clone()),
            url: None,
            path: Some(format!("{files_path}{}", wheel.filename)),
            size: Some(wheel.size),
            upload_time: None,
            hashes: BTreeMap::from([("sha256".to_owned(), wheel.sha256.clone())]),
        });
        if let Some(metadata) = &wheel.metadata {
            match &mut package.variants_json {
                None => package.variants_json = Some(metadata.clone()),
                Some(existing) => {
                    for (label, properties) in &metadata.variants {
                        existing
                            .variants
                            .entry(label.clone())
                            .or_insert_with(|| properties.clone());
                    }
                    for (namespace, provider) in &metadata.providers {
                        existing
                            .providers
                            .entry(namespace.clone())
                            .or_insert_with(|| provider.clone());
                    }
                    for (namespace, properties) in &metadata.static_properties {
                        existing
                            .static_properties
                            .entry(namespace.clone())
                            .or_insert_with(|| properties.clone());
                    }
                    for namespace in &metadata.priorities.namespace {
                        if !existing.priorities.namespace.contains(namespace) {
                            existing.priorities.namespace.push(namespace.clone());
                        }
                    }
                }
            }
        }
    }
    lock
}

/// Why a wheel is mirrored whole, in a few words.
fn whole_reason(e: &SlimError) -> String {
    match e {
        SlimError::Unreadable { member, why, .. } => {
            format!("{member}: GPU code vari cannot read: {why}")
        }
        SlimError::Member {
            member, problem, ..
        } => format!("{member}: {problem}"),
        SlimError::Read(e) => match &e.member {
            Some(member) => format!("{member}: {}", e.problem),
            None => e.problem.to_string(),
        },
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_wheels_of_targets_with_gpu_families_are_slimmed_for_the_union_of_their_families() {
        let target = |name: &str, files: &[&str]| TargetFiles {
            name: name.to_owned(),
            class: None,
            files: files.iter().map(|f| (0, (*f).to_owned())).collect(),
        };
        let targets = [
            target("a100", &["cuda-1.0-py3-none-any.whl", "x-1.0.tar.gz"]),
            target("h100", &["cuda-1.0-py3-none-any.whl"]),
            target("cpu", &["cpu-1.0-py3-none-any.whl"]),
        ];
        let families = [BTreeSet::from([8]), BTreeSet::from([9]), BTreeSet::new()];
        let wheels = slim_requests(&targets, &families);
        assert_eq!(
            wheels,
            BTreeMap::from([(
                "cuda-1.0-py3-none-any.whl".to_owned(),
                BTreeSet::from([8, 9])
            )])
        );
    }

    #[test]
    fn a_class_of_one_gpu_family_lists_its_slim_variant_wheels_in_place_of_the_fat_ones() {
        let target = |name: &str, class: &str| TargetFiles {
            name: name.to_owned(),
            class: Some(class.to_owned()),
            files: Vec::new(),
        };
        let targets = [
            target("h100-py312", "h100"),
            target("h100-py313", "h100"),
            target("mixed-a", "mixed"),
            target("mixed-b", "mixed"),
            target("cpu", "cpu"),
        ];
        let families = [
            BTreeSet::from([9]),
            BTreeSet::from([9]),
            BTreeSet::from([8]),
            BTreeSet::from([9]),
            BTreeSet::new(),
        ];
        let class_families = class_families(&targets, &families);
        assert_eq!(
            class_families,
            BTreeMap::from([
                ("cpu".to_owned(), None),
                ("h100".to_owned(), Some(9)),
                ("mixed".to_owned(), None),
            ])
        );
        let slim = |fat: &str, family: u32, filename: &str| SlimWheel {
            fat: fat.to_owned(),
            family,
            filename: filename.to_owned(),
            sha256: "ab".repeat(32),
            size: 1,
            label: None,
            metadata: None,
        };
        let fat_variant = "t-1.0-py3-none-any-cu12.whl";
        let fat_plain = "u-1.0-py3-none-any.whl";
        let summary = SlimSummary {
            wheels: vec![
                slim(fat_variant, 8, "t-1.0-py3-none-any-cu12_8x.whl"),
                slim(fat_variant, 9, "t-1.0-py3-none-any-cu12_9x.whl"),
                slim(fat_plain, 9, "u-1.0-py3-none-any-sm9x.whl"),
            ],
            ..SlimSummary::default()
        };
        let files = BTreeSet::from([fat_variant.to_owned(), fat_plain.to_owned()]);
        let classes: BTreeMap<String, BTreeSet<String>> = ["cpu", "h100", "mixed"]
            .iter()
            .map(|c| ((*c).to_owned(), files.clone()))
            .collect();
        let listed = class_files_with_slim(&classes, &class_families, &summary);
        // The family's slim variant wheel replaces the fat one; a plain fat wheel stays, its
        // slim wheel's labelled name being one plain installers reject.
        assert_eq!(
            listed["h100"],
            BTreeSet::from([
                "t-1.0-py3-none-any-cu12_9x.whl".to_owned(),
                fat_plain.to_owned()
            ])
        );
        // No single family, or none: the fat wheels, which serve every GPU.
        assert_eq!(listed["mixed"], files);
        assert_eq!(listed["cpu"], files);
    }

    fn package(name: &str, wheels: &[&str], variants: Option<&str>) -> vari_lock::Package {
        vari_lock::Package {
            name: name.to_owned(),
            version: Some("1.0".parse().unwrap()),
            marker: None,
            requires_python: None,
            dependencies: Vec::new(),
            index: None,
            sdist: None,
            wheels: wheels
                .iter()
                .map(|w| Artifact {
                    name: Some((*w).to_owned()),
                    url: Some(format!("https://example.org/files/{w}")),
                    path: None,
                    size: Some(10),
                    upload_time: None,
                    hashes: BTreeMap::from([("sha256".to_owned(), "ab".repeat(32))]),
                })
                .collect(),
            variants_json: variants.map(|text| {
                vari_core::metadata::read_json(text, vari_core::metadata::SourceKind::IndexFile)
                    .unwrap()
            }),
            vari: None,
            other: BTreeMap::new(),
        }
    }

    fn slim_wheel(fat: &str, family: u32, filename: &str, variants: &str) -> SlimWheel {
        let metadata =
            vari_core::metadata::read_json(variants, vari_core::metadata::SourceKind::IndexFile)
                .unwrap();
        SlimWheel {
            fat: fat.to_owned(),
            family,
            filename: filename.to_owned(),
            sha256: format!("{family}").repeat(64),
            size: 5,
            label: metadata.variants.keys().next().cloned(),
            metadata: Some(metadata),
        }
    }

    #[test]
    fn the_mirror_s_lock_lists_the_slim_wheels_and_drops_a_fat_gpu_variant_they_replace() {
        let variants = |label: &str, values: &str| {
            format!(
                r#"{{"default-priorities": {{"namespace": ["nvidia"]}}, "variants":
                {{"{label}": {{"nvidia": {{"sm_arch": [{values}]}}}}}}}}"#
            )
        };
        let lock = Lock {
            lock_version: "1.0".to_owned(),
            environments: Vec::new(),
            requires_python: None,
            extras: Vec::new(),
            dependency_groups: Vec::new(),
            default_groups: Vec::new(),
            created_by: "test".to_owned(),
            packages: vec![
                package(
                    "g",
                    &["g-1.0-py3-none-any-cu12.whl"],
                    Some(&variants("cu12", r#""80_real", "90_real""#)),
                ),
                package("p", &["p-1.0-py3-none-any.whl"], None),
                package(
                    "w",
                    &["w-1.0-py3-none-any-cu12.whl"],
                    Some(&variants("cu12", r#""80_real", "90_real""#)),
                ),
            ],
            vari: None,
            other_tools: BTreeMap::new(),
        };
        let g = "g-1.0-py3-none-any-cu12.whl";
        let p = "p-1.0-py3-none-any.whl";
        let w = "w-1.0-py3-none-any-cu12.whl";
        let summary = SlimSummary {
            wheels: vec![
                slim_wheel(
                    g,
                    8,
                    "g-1.0-py3-none-any-cu12_8x.whl",
                    &variants("cu12_8x", r#""80_real""#),
                ),
                slim_wheel(
                    g,
                    9,
                    "g-1.0-py3-none-any-cu12_9x.whl",
                    &variants("cu12_9x", r#""90_real""#),
                ),
                slim_wheel(
                    p,
                    9,
                    "p-1.0-py3-none-any-abc.whl",
                    &variants("abc", r#""90_real""#),
                ),
                slim_wheel(
                    w,
                    9,
                    "w-1.0-py3-none-any-cu12_9x.whl",
                    &variants("cu12_9x", r#""90_real""#),
                ),
            ],
            // `w` has no 8.x code: 8.x machines need the fat build.
            left_whole: vec![(w.to_owned(), "no 8.x code".to_owned())],
            kept_whole: Vec::new(),
            fat_bytes: 0,
            slim_bytes: 0,
        };
        let out = lock_with_slim_wheels(&lock, &summary, "site/files/");
        let names = |i: usize| -> Vec<String> {
            out.packages[i]
                .wheels
                .iter()
                .filter_map(|a| a.name.clone())
                .collect()
        };
        // The fat GPU variant leaves: every family asked of it has its slim wheel.
        assert_eq!(
            names(0),
            [
                "g-1.0-py3-none-any-cu12_8x.whl",
                "g-1.0-py3-none-any-cu12_9x.whl"
            ]
        );
        // A plain fat wheel stays; so does a variant a family still needs whole.
        assert_eq!(names(1), [p, "p-1.0-py3-none-any-abc.whl"]);
        assert_eq!(names(2), [w, "w-1.0-py3-none-any-cu12_9x.whl"]);
        let slim = &out.packages[0].wheels[1];
        assert_eq!(
            slim.path.as_deref(),
            Some("site/files/g-1.0-py3-none-any-cu12_9x.whl")
        );
        assert_eq!(slim.url, None);
        assert_eq!(slim.hashes["sha256"], "9".repeat(64));
        let labels: Vec<String> = out.packages[0]
            .variants_json
            .as_ref()
            .unwrap()
            .variants
            .keys()
            .map(ToString::to_string)
            .collect();
        assert_eq!(labels, ["cu12", "cu12_8x", "cu12_9x"]);
        assert!(out.packages[1].variants_json.is_some());
    }

    #[test]
    fn the_line_says_what_was_slimmed_and_names_what_was_left_whole() {
        let summary = SlimSummary {
            wheels: vec![SlimWheel {
                fat: "a.whl".to_owned(),
                family: 9,
                filename: "a-9x.whl".to_owned(),
                sha256: String::new(),
                size: 0,
                label: None,
                metadata: None,
            }],
            left_whole: vec![("b.whl".to_owned(), "why".to_owned())],
            kept_whole: vec![("a.whl".to_owned(), "lib.so: tables".to_owned())],
            fat_bytes: 4 << 20,
            slim_bytes: 1 << 20,
        };
        assert_eq!(
            summary.line(),
            "slimmed: 1.0 MiB of 4.0 MiB (25 %) in 1 per-family wheel(s) for GPU families 9.x; \
             GPU code vari cannot read kept whole: 1 file(s): a.whl: lib.so: tables; left \
             whole: 1 file(s): b.whl (why)"
        );
        assert_eq!(
            SlimSummary::default().line(),
            "slimmed: nothing (no CUDA wheel a target with a GPU family installs)"
        );
    }
}
