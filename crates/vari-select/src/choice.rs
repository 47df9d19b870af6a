//! Choosing the wheel of a release for a target, as a PEP 825 installer does
//! (`spec/format.md` §9), with every decision kept as data.
//!
//! 1. Keep the wheels whose tags fit the target interpreter; a label all of whose wheels are for
//!    other interpreters or platforms does not exist for this target.
//! 2. Labels the metadata does not describe make their wheels incompatible.
//! 3. Rank the remaining labels for the target's hardware (`vari_core::ordering`).
//! 4. The chosen file is the best label's wheel with the best tag (then the highest build
//!    number); when no variant fits, the best non-variant wheel.

use std::collections::BTreeSet;

use vari_core::metadata::VariantProperties;
use vari_core::ordering::{rank, Rejection, SelectionOptions};
use vari_core::VariantLabel;

use crate::release::{Release, ReleaseFile, UnusableReason};
use crate::target::Target;

/// Why a variant of the release cannot be selected for the target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VariantRejection {
    /// The ordering rejected it: the target's hardware or the user's options (see
    /// [`Rejection`]).
    Ranking(Rejection),
    /// None of its wheels has tags the target interpreter accepts.
    NoFittingWheel {
        /// The tag triples of its wheels (`cp27-cp27m-win32`).
        tags: Vec<String>,
    },
    /// Its wheels cannot be considered at all.
    Unusable(UnusableReason),
}

/// One variant of the release with its verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VariantVerdict<'a> {
    /// The label.
    pub label: &'a VariantLabel,
    /// Its properties (empty for a label the metadata does not describe).
    pub properties: &'a VariantProperties,
    /// Why it cannot be selected; `None` when it can.
    pub rejection: Option<VariantRejection>,
}

impl VariantVerdict<'_> {
    /// Whether the variant can be selected.
    pub fn is_selectable(&self) -> bool {
        self.rejection.is_none()
    }
}

/// What happened to one wheel file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileFate {
    /// The file to install.
    Chosen,
    /// Installable, but after the chosen one; `rank` counts from 1 for the first fallback.
    Candidate {
        /// Its place in the order of preference (the chosen file is 0).
        rank: usize,
    },
    /// Its tags fit no interpreter of the target (wrong Python, ABI or platform).
    WrongTags,
    /// Its variant cannot be selected (the variant's verdict says why).
    VariantRejected,
    /// Its label cannot be used.
    Unusable(UnusableReason),
}

/// One wheel file with its fate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileVerdict<'a> {
    /// The file.
    pub file: &'a ReleaseFile,
    /// What happened to it.
    pub fate: FileFate,
}

/// The choice for one release and one target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice<'a> {
    /// The selectable labels, best first (`null` last when present).
    pub order: Vec<VariantLabel>,
    /// Every variant: the selectable ones in `order`, then the rejected ones by label.
    pub variants: Vec<VariantVerdict<'a>>,
    /// Every file: the chosen one first, then the other candidates in preference order, then
    /// the rejected ones in name order. Empty for a release read from metadata alone.
    pub files: Vec<FileVerdict<'a>>,
    /// The label asked for with [`SelectionOptions::variant`] when the release has no such
    /// variant (nothing is selectable then).
    pub unmatched_variant: Option<VariantLabel>,
}

impl<'a> Choice<'a> {
    /// The file to install, if any fits.
    pub fn chosen(&self) -> Option<&'a ReleaseFile> {
        self.files
            .first()
            .filter(|f| f.fate == FileFate::Chosen)
            .map(|f| f.file)
    }

    /// The best selectable label, if any.
    pub fn best_label(&self) -> Option<&VariantLabel> {
        self.order.first()
    }

    /// The verdict of `label`.
    pub fn variant(&self, label: &str) -> Option<&VariantVerdict<'a>> {
        self.variants.iter().find(|v| v.label.as_str() == label)
    }

    /// Whether `label` is the null variant: the one without properties
    /// ([`vari_core::ordering::is_null_variant`], the rule the ranking puts it last by); a
    /// label the release does not describe counts by its name.
    pub fn is_null_variant(&self, label: &VariantLabel) -> bool {
        match self.variant(label.as_str()) {
            Some(verdict) => vari_core::ordering::is_null_variant(verdict.properties),
            None => label.is_null(),
        }
    }

    /// Whether no variant with properties fits: every selectable label (if any) is the null
    /// variant, so the choice is the null variant, a non-variant wheel or nothing.
    pub fn only_null_fits(&self) -> bool {
        self.order.iter().all(|label| self.is_null_variant(label))
    }
}

/// Chooses the wheel of `release` for `target` under the user's `options`.
pub fn choose<'a>(release: &'a Release, target: &Target, options: &SelectionOptions) -> Choice<'a> {
    choose_with(release, target, options, &|file| {
        target
            .python
            .tags()
            .wheel_priority(&file.filename)
            .map(|p| p as usize)
    })
}

/// [`choose`] with the tag rule given as a function: a file's priority among the target's tags
/// (lower is better), `None` when none of its tags fits.
pub(crate) fn choose_with<'a>(
    release: &'a Release,
    target: &Target,
    options: &SelectionOptions,
    tag_priority: &dyn Fn(&ReleaseFile) -> Option<usize>,
) -> Choice<'a> {
    let ranking = rank(
        &release.metadata,
        &target.hardware.profile,
        &target.markers,
        options,
    );
    let priorities: Vec<Option<usize>> = release.files.iter().map(tag_priority).collect();
    // Labels with at least one wheel the interpreter accepts; without files, every label.
    let fitting: BTreeSet<&VariantLabel> = release
        .files
        .iter()
        .zip(&priorities)
        .filter(|(_, p)| p.is_some())
        .filter_map(|(f, _)| f.filename.label.as_ref())
        .collect();
    let fits = |label: &VariantLabel| !release.has_files || fitting.contains(label);

    let mut order = Vec::new();
    let mut selectable = Vec::new();
    let mut rejected = Vec::new();
    for variant in ranking.variants {
        let rejection = match variant.rejection {
            Some(r) => Some(VariantRejection::Ranking(r)),
            None if !fits(variant.label) => Some(VariantRejection::NoFittingWheel {
                tags: release
                    .files_of(variant.label)
                    .map(|f| tag_triples(&f.filename))
                    .collect(),
            }),
            None => None,
        };
        let verdict = VariantVerdict {
            label: variant.label,
            properties: variant.declared,
            rejection,
        };
        if verdict.is_selectable() {
            order.push(variant.label.clone());
            selectable.push(verdict);
        } else {
            rejected.push(verdict);
        }
    }
    static NO_PROPERTIES: VariantProperties = VariantProperties::new();
    for (label, why) in &release.unusable {
        rejected.push(VariantVerdict {
            label,
            properties: &NO_PROPERTIES,
            rejection: Some(VariantRejection::Unusable(why.clone())),
        });
    }
    rejected.sort_by(|a, b| a.label.cmp(b.label));
    let files = file_verdicts(release, &order, &priorities);
    selectable.extend(rejected);
    Choice {
        order,
        variants: selectable,
        files,
        unmatched_variant: ranking.unmatched_variant,
    }
}

/// Every file with its fate, in the order [`Choice::files`] documents.
fn file_verdicts<'a>(
    release: &'a Release,
    order: &[VariantLabel],
    priorities: &[Option<usize>],
) -> Vec<FileVerdict<'a>> {
    let place = |label: Option<&VariantLabel>| match label {
        Some(label) => order.iter().position(|l| l == label),
        // Non-variant wheels come after every variant.
        None => Some(order.len()),
    };
    // (label place, tag priority, build number descending) for each installable file.
    let mut installable: Vec<(usize, usize, std::cmp::Reverse<_>, usize)> = Vec::new();
    let mut others: Vec<FileVerdict<'a>> = Vec::new();
    for (index, (file, priority)) in release.files.iter().zip(priorities).enumerate() {
        let label = file.filename.label.as_ref();
        let fate = if let Some(why) = label.and_then(|l| release.unusable_reason(l)) {
            Some(FileFate::Unusable(why.clone()))
        } else if priority.is_none() {
            Some(FileFate::WrongTags)
        } else if place(label).is_none() {
            Some(FileFate::VariantRejected)
        } else {
            None
        };
        match (fate, place(label), priority) {
            (None, Some(at), Some(priority)) => installable.push((
                at,
                *priority,
                std::cmp::Reverse(file.filename.build.clone()),
                index,
            )),
            (fate, _, _) => others.push(FileVerdict {
                file,
                fate: fate.unwrap_or(FileFate::VariantRejected),
            }),
        }
    }
    installable.sort();
    others.sort_by_key(|v| v.file.filename.to_string());
    let mut files: Vec<FileVerdict<'a>> = installable
        .into_iter()
        .enumerate()
        .map(|(rank, (.., index))| FileVerdict {
            file: &release.files[index],
            fate: if rank == 0 {
                FileFate::Chosen
            } else {
                FileFate::Candidate { rank }
            },
        })
        .collect();
    files.extend(others);
    files
}

/// `py3-none-any`, with compressed tag sets joined by `.` as in the file name.
pub(crate) fn tag_triples(filename: &vari_core::filename::WheelFilename) -> String {
    filename.tag_triple().to_string()
}
