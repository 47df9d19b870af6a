//! Slimming a wheel: every ELF member read (bounded, checked: `vari_scan::read_elf_members`),
//! its fat-binary containers rewritten (wherever they lie; a member with GPU code that cannot
//! be read is left whole and says nothing about the label, and a split of such a wheel is
//! refused: its families are unknown), the rewritten members and a `variant.json` for what
//! the build now holds written through `vari_wheel::derive_variant` (every other member copied
//! raw, RECORD updated, the output atomic).
//!
//! The slim wheel's properties are inferred from its own binaries as `vari wheel scan` would
//! infer them (`vari_scan::scan_elf` on the rewritten bytes), so the label can only claim code
//! the wheel carries. A variant wheel's declared properties of other features (a CUDA lower
//! bound more precise than the runtime's major, an x86-64 level) are kept: only
//! `nvidia :: sm_arch` must follow the code.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use vari_core::metadata::properties_of;
use vari_core::{Property, VariantLabel};
use vari_scan::{scan_elf, CodeKind, FatbinEntry, FileScan, ScanError, ScanProblem, WheelScan};
use vari_wheel::{LabelChoice, ValidValues, VariantSpec, WheelError};

use crate::elf::{slim_elf, ElfOutcome, ElfProblem, LeftWhole};
use crate::keep::{Keep, KeepSpec};
use crate::report::{CodeSize, FileReport, SlimReport};

/// Why a wheel could not be slimmed. Displays as `<wheel>: <member>: <problem>`.
#[derive(Debug, thiserror::Error)]
pub enum SlimError {
    /// A member could not be read (bounds, CRC, archive structure).
    #[error(transparent)]
    Read(#[from] ScanError),
    /// A member is not a well-formed ELF file or fat binary.
    #[error("{}: {member}: {problem}", .wheel.display())]
    Member {
        /// The wheel.
        wheel: PathBuf,
        /// The member at fault.
        member: String,
        /// What is wrong.
        problem: ElfProblem,
    },
    /// The wheel's layout, RECORD or metadata is wrong, or the output cannot be written.
    #[error(transparent)]
    Wheel(#[from] WheelError),
    /// A member carries GPU code vari cannot read: which GPU families the wheel serves is
    /// unknown, so it is not split.
    #[error(
        "{}: {member}: has GPU code vari cannot read ({why}), so which GPU families it serves \
         is unknown; no wheel is split from it",
        .wheel.display()
    )]
    Unreadable {
        /// The wheel.
        wheel: PathBuf,
        /// The member whose GPU code cannot be read.
        member: String,
        /// What could not be read, and where.
        why: String,
    },
    /// A rewritten member could not be set aside on disk until the output is written.
    #[error("{}: {member}: cannot write the rewritten member aside: {message}", .wheel.display())]
    Spill {
        /// The wheel.
        wheel: PathBuf,
        /// The member.
        member: String,
        /// What failed, naming the file.
        message: String,
    },
    /// Nothing of the wheel's GPU code runs on what was asked to be kept.
    #[error("{}: {message}", .wheel.display())]
    NothingKept {
        /// The wheel.
        wheel: PathBuf,
        /// What was asked, and what the wheel has.
        message: String,
    },
}

/// How to slim: what to keep and how to label the result.
#[derive(Debug, Clone, Default)]
pub struct SlimOptions {
    /// The label; by default the default label of the properties. For [`split_wheel`], the
    /// prefix of the labels: `{label}_{major}x` (`cu12_8x`).
    pub label: Option<VariantLabel>,
    /// The valid values of each provider's properties (the caller's registry).
    pub valid: ValidValues,
    /// Accept properties whose values cannot be checked.
    pub skip_validation: bool,
}

/// One ELF member after slimming.
struct Member {
    report: FileReport,
    /// The file holding its new bytes, when they changed (and were kept).
    spilled: Option<PathBuf>,
    scan: Option<FileScan>,
    /// What of its GPU code cannot be read, when something cannot.
    unreadable: Option<String>,
}

/// What `vari wheel scan` reads of each ELF member of the fat build, by path (`None`: an ELF
/// file scan skips, such as an object file). Read once per wheel: the x86-64 code and the
/// libraries a file links do not change when its GPU code does.
type BaseScans = BTreeMap<String, Option<FileScan>>;

/// Reads and slims every ELF member of `wheel`. `base` holds the fat build's scans when
/// already read; the members' own scans are added to it otherwise. With `spill`, each
/// rewritten member is written to a file of its own in that directory as soon as it is made,
/// so memory holds one member at a time however many the wheel has; without, the new bytes
/// are dropped (only the report is wanted).
fn slim_members(
    wheel: &Path,
    keep: &Keep,
    base: &mut BaseScans,
    spill: Option<&Path>,
) -> Result<Vec<Member>, SlimError> {
    let mut members = Vec::new();
    let mut failure = None;
    let read = vari_scan::read_elf_members(wheel, |name, bytes| {
        let mut data = bytes.to_vec();
        let outcome = match slim_elf(&mut data, keep) {
            Ok(outcome) => outcome,
            Err(problem) => {
                failure = Some(SlimError::Member {
                    wheel: wheel.to_owned(),
                    member: name.to_owned(),
                    problem,
                });
                return Err(stop(wheel));
            }
        };
        let fat_scan = match base.get(name) {
            Some(scan) => scan.clone(),
            None => {
                let scan = scan_elf(name, bytes).map_err(|problem| ScanError {
                    wheel: wheel.to_owned(),
                    member: Some(name.to_owned()),
                    problem,
                })?;
                base.insert(name.to_owned(), scan.clone());
                scan
            }
        };
        let changed = outcome.changed();
        // What scan reads of the rewritten file: its fat binaries' remaining entries. A file
        // whose GPU code cannot be read is left as the fat build has it and says nothing about
        // the label: it serves what it served.
        let scan = fat_scan.map(|s| {
            if outcome.unreadable.is_some() {
                FileScan {
                    gpu_code: Vec::new(),
                    ptx_isa: Vec::new(),
                    unreadable_gpu_code: None,
                    ..s
                }
            } else if changed {
                let kept: Vec<FatbinEntry> = outcome
                    .entries
                    .iter()
                    .filter(|e| e.kept)
                    .map(|e| e.entry.clone())
                    .chain(outcome.relocatable.iter().cloned())
                    .collect();
                s.with_fatbin_entries(&kept)
            } else {
                s
            }
        });
        let spilled = match (changed, spill) {
            (true, Some(dir)) => {
                let path = dir.join(format!("member-{}", members.len()));
                if let Err(e) = std::fs::write(&path, &data) {
                    failure = Some(SlimError::Spill {
                        wheel: wheel.to_owned(),
                        member: name.to_owned(),
                        message: format!("{}: {e}", path.display()),
                    });
                    return Err(stop(wheel));
                }
                Some(path)
            }
            _ => None,
        };
        drop(data);
        members.push(Member {
            report: file_report(name, &outcome),
            spilled,
            scan,
            unreadable: outcome.unreadable,
        });
        Ok(())
    });
    match (read, failure) {
        (_, Some(failure)) => Err(failure),
        (Err(e), None) => Err(e.into()),
        (Ok(()), None) => Ok(members),
    }
}

/// The error that stops the member walk when the real error is kept aside.
fn stop(wheel: &Path) -> ScanError {
    ScanError {
        wheel: wheel.to_owned(),
        member: None,
        problem: ScanProblem::Archive("stopped".to_owned()),
    }
}

fn file_report(path: &str, outcome: &ElfOutcome) -> FileReport {
    let mut code: BTreeMap<(u32, Option<CodeKind>, bool, u16), CodeSize> = BTreeMap::new();
    for e in &outcome.entries {
        let key = (
            e.entry.arch,
            e.entry.kind,
            e.entry.arch_specific,
            e.entry.raw_kind,
        );
        let size = code.entry(key).or_insert_with(|| CodeSize {
            arch: e.entry.arch,
            kind: e.entry.kind,
            arch_specific: e.entry.arch_specific,
            raw_kind: e.entry.raw_kind,
            before: 0,
            after: 0,
        });
        size.before += e.entry.len as u64;
        if e.kept {
            size.after += e.entry.len as u64;
        }
    }
    FileReport {
        path: path.to_owned(),
        code: code.into_values().collect(),
        left_whole: outcome.left_whole,
        changed: outcome.changed(),
    }
}

/// Writes into `out_dir` the wheel made of `wheel` keeping what `keep` selects of its GPU code
/// (the rule is in [`crate::keep`]), labelled by what it keeps. Nothing is written when a member
/// is malformed or nothing would be kept.
pub fn slim_wheel(
    wheel: &Path,
    out_dir: &Path,
    keep: &Keep,
    options: &SlimOptions,
) -> Result<SlimReport, SlimError> {
    slim_wheel_with(wheel, out_dir, keep, options, &mut BaseScans::new())
}

/// [`slim_wheel`], with the fat build's scans when already read.
fn slim_wheel_with(
    wheel: &Path,
    out_dir: &Path,
    keep: &Keep,
    options: &SlimOptions,
    base: &mut BaseScans,
) -> Result<SlimReport, SlimError> {
    // The layout, RECORD and variant.json first: a wheel vari would refuse to copy is refused
    // before its members are read.
    let info = vari_wheel::inspect(wheel)?;
    // Rewritten members wait on disk beside the output (a temporary directory may be in
    // memory), removed when this returns.
    let spill = tempfile::Builder::new()
        .prefix(".vari-slim-")
        .tempdir_in(out_dir)
        .or_else(|_| tempfile::tempdir())
        .map_err(|e| SlimError::Spill {
            wheel: wheel.to_owned(),
            member: String::new(),
            message: format!("{}: {e}", out_dir.display()),
        })?;
    let members = slim_members(wheel, keep, base, Some(spill.path()))?;
    let kept_any = members
        .iter()
        .flat_map(|m| &m.report.code)
        .any(|c| c.kind.is_some() && c.after > 0);
    if !kept_any {
        let has: BTreeSet<String> = members
            .iter()
            .flat_map(|m| &m.report.code)
            .filter_map(CodeSize::code)
            .map(|c| c.to_string())
            .collect();
        let has = if has.is_empty() {
            "none in its fat binaries".to_owned()
        } else {
            has.into_iter().collect::<Vec<_>>().join(", ")
        };
        return Err(SlimError::NothingKept {
            wheel: wheel.to_owned(),
            message: format!("none of its GPU code runs on what --keep names (it has: {has})"),
        });
    }

    let scan = WheelScan {
        wheel: wheel.to_owned(),
        files: members.iter().filter_map(|m| m.scan.clone()).collect(),
    };
    let declared: Vec<Property> = info
        .metadata
        .as_ref()
        .map(|m| m.variants.values().flat_map(properties_of).collect())
        .unwrap_or_default();
    let properties = merge_properties(&declared, scan.properties());
    let spec = VariantSpec {
        properties: properties.clone(),
        label: options
            .label
            .clone()
            .map_or(LabelChoice::Default, LabelChoice::Given),
        metadata: info.metadata.clone(),
        schema: None,
        skip_validation: options.skip_validation,
    };
    let mut files = Vec::new();
    let mut replaced = BTreeMap::new();
    for member in members {
        if let Some(path) = member.spilled {
            replaced.insert(member.report.path.clone(), path);
        }
        files.push(member.report);
    }
    let source_size = std::fs::metadata(wheel).map(|m| m.len()).unwrap_or(0);
    let written =
        vari_wheel::derive_variant_from_files(wheel, out_dir, replaced, &spec, &options.valid)?;
    drop(spill);
    Ok(SlimReport {
        wheel: wheel.to_owned(),
        wheel_size: source_size,
        output: written.path,
        output_size: written.size,
        label: written.label,
        metadata: written.metadata,
        properties,
        files,
        warnings: written.warnings,
    })
}

/// The slim wheel's properties: the declared ones except `nvidia :: sm_arch` (which must follow
/// the code), then the inferred ones of every feature not declared.
fn merge_properties(declared: &[Property], inferred: Vec<Property>) -> Vec<Property> {
    let is_sm_arch =
        |p: &Property| p.namespace.as_str() == "nvidia" && p.feature.as_str() == "sm_arch";
    let mut properties: Vec<Property> = declared
        .iter()
        .filter(|p| !is_sm_arch(p))
        .cloned()
        .collect();
    let declared_features: BTreeSet<(String, String)> = properties
        .iter()
        .map(|p| (p.namespace.to_string(), p.feature.to_string()))
        .collect();
    properties.extend(inferred.into_iter().filter(|p| {
        !declared_features.contains(&(p.namespace.to_string(), p.feature.to_string()))
    }));
    properties.sort();
    properties.dedup();
    properties
}

/// The architecture families (compute capability majors) of the SASS in a wheel's fat binaries,
/// outside files left whole: what [`split_wheel`] makes one wheel for.
pub fn families(wheel: &Path) -> Result<Vec<u32>, SlimError> {
    families_with(wheel, &mut BaseScans::new())
}

fn families_with(wheel: &Path, base: &mut BaseScans) -> Result<Vec<u32>, SlimError> {
    // Keeping nothing reads every entry (and writes nothing).
    let members = slim_members(wheel, &Keep::default(), base, None)?;
    // The families of code that cannot be read are unknown: a wheel per family of the rest
    // would be labelled for GPUs that are not all it serves (cuFFT's 5.x stub).
    if let Some(member) = members.iter().find(|m| m.unreadable.is_some()) {
        return Err(SlimError::Unreadable {
            wheel: wheel.to_owned(),
            member: member.report.path.clone(),
            why: member.unreadable.clone().unwrap_or_default(),
        });
    }
    let majors: BTreeSet<u32> = members
        .iter()
        .filter(|m| m.report.left_whole != Some(LeftWhole::NonStandard))
        .flat_map(|m| &m.report.code)
        .filter(|c| c.kind == Some(CodeKind::Sass))
        .map(|c| c.arch / 10)
        .collect();
    Ok(majors.into_iter().collect())
}

/// [`readable_families`]: the families, and `(member, why)` of each member whose GPU code
/// vari cannot read.
pub type ReadableFamilies = (Vec<u32>, Vec<(String, String)>);

/// The architecture families (compute capability majors) of the SASS in the fat binaries of
/// `wheel` that vari can read, and each member whose GPU code it cannot read, with why. Unlike
/// [`families`], such a member does not refuse: a slim wheel for one of these families keeps
/// it whole (so it serves that family as the fat build does), which is what a mirror slimming
/// for the families its machines have needs; only a split for every family is refused.
pub fn readable_families(wheel: &Path) -> Result<ReadableFamilies, SlimError> {
    let members = slim_members(wheel, &Keep::default(), &mut BaseScans::new(), None)?;
    let unreadable = members
        .iter()
        .filter_map(|m| Some((m.report.path.clone(), m.unreadable.clone()?)))
        .collect();
    let majors: BTreeSet<u32> = members
        .iter()
        .filter(|m| m.report.left_whole != Some(LeftWhole::NonStandard))
        .flat_map(|m| &m.report.code)
        .filter(|c| c.kind == Some(CodeKind::Sass))
        .map(|c| c.arch / 10)
        .collect();
    Ok((majors.into_iter().collect(), unreadable))
}

/// Writes one slim wheel per architecture family of `wheel` (`--keep M.x` for each major `M`
/// its SASS covers) into `out_dir`, labelled by [`SlimOptions::label`] as a prefix when given.
/// All or nothing: when one fails, those already written by this call are removed.
pub fn split_wheel(
    wheel: &Path,
    out_dir: &Path,
    options: &SlimOptions,
) -> Result<Vec<SlimReport>, SlimError> {
    split_wheel_reporting(wheel, out_dir, options, &mut |_| {})
}

/// Which family [`split_wheel_reporting`] is about to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SplitStep {
    /// The family's major architecture (`8` for `8.x`).
    pub major: u32,
    /// Its place among the families, from 1.
    pub index: usize,
    /// How many families the wheel has.
    pub count: usize,
}

/// [`split_wheel`], telling `on_family` which family it starts writing, in turn (for
/// progress: `8.x (2 of 3)`).
pub fn split_wheel_reporting(
    wheel: &Path,
    out_dir: &Path,
    options: &SlimOptions,
    on_family: &mut dyn FnMut(SplitStep),
) -> Result<Vec<SlimReport>, SlimError> {
    let mut base = BaseScans::new();
    let families = families_with(wheel, &mut base)?;
    if families.is_empty() {
        return Err(SlimError::NothingKept {
            wheel: wheel.to_owned(),
            message: "it has no SASS in its fat binaries to split by architecture".to_owned(),
        });
    }
    let mut reports: Vec<SlimReport> = Vec::new();
    let count = families.len();
    for (i, major) in families.into_iter().enumerate() {
        on_family(SplitStep {
            major,
            index: i + 1,
            count,
        });
        let keep = Keep::new([KeepSpec::Family(major)]);
        let mut family = options.clone();
        if let Some(prefix) = &options.label {
            let label = format!("{prefix}_{major}x");
            family.label = Some(
                VariantLabel::new(&label).map_err(|e| SlimError::NothingKept {
                    wheel: wheel.to_owned(),
                    message: format!("cannot label the {major}.x build `{label}`: {e}"),
                })?,
            );
        }
        let result = slim_wheel_with(wheel, out_dir, &keep, &family, &mut base);
        match result {
            Ok(report) => reports.push(report),
            Err(e) => {
                for written in &reports {
                    // Best effort: the error that matters is `e`.
                    let _ = std::fs::remove_file(&written.output);
                }
                return Err(e);
            }
        }
    }
    Ok(reports)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(list: &[&str]) -> Vec<Property> {
        list.iter().map(|p| p.parse().unwrap()).collect()
    }

    #[test]
    fn sm_arch_follows_the_code_other_features_keep_what_was_declared() {
        let declared = props(&[
            "nvidia :: sm_arch :: 80_real",
            "nvidia :: sm_arch :: 90_real",
            "nvidia :: cuda_version_lower_bound :: 12.8",
        ]);
        let inferred = props(&[
            "nvidia :: sm_arch :: 90_real",
            "nvidia :: cuda_version_lower_bound :: 12.0",
            "x86_64 :: level :: v2",
        ]);
        let merged: Vec<String> = merge_properties(&declared, inferred)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            merged,
            [
                "nvidia :: cuda_version_lower_bound :: 12.8",
                "nvidia :: sm_arch :: 90_real",
                "x86_64 :: level :: v2"
            ]
        );
    }
}
