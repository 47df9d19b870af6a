//! One version with variant wheels, decided for a target file by file: the version's wheels
//! grouped by tag set (the name without the label: build tag, Python, ABI and platform tags),
//! and in each group the variant to show, the files to hide and why.
//!
//! The judging is the selector's: the version's release is built and chosen as
//! [`Judge::version`](super::version::Judge::version) does, so a hidden file carries the fate
//! `select` gives it. Tag sets the target cannot install are ranked as if their tags fitted.

use std::collections::HashMap;

use pep440_rs::Version;
use vari_client::{IndexFile, Project, VersionVariants};
use vari_core::filename::BuildTag;
use vari_core::ordering::SelectionOptions;

use super::needs::needs;
use super::presentation::{HiddenBecause, ShownVariant};
use super::report::{CandidateFate, LabelVerdict, NamespaceNeed, VersionReport};
use super::screen::{screen, Screened};
use super::version::{
    because_of, candidate_fate, read_variants, release_of, report, set_aside_labelled, VariantsRead,
};
use crate::choice::{choose, choose_with, Choice};
use crate::release::{empty_metadata, Release, ReleaseFile};
use crate::target::Target;

/// What happens to one file.
#[derive(Debug, Clone)]
pub(crate) enum Decision {
    /// Shown; renamed without its label when it is a variant wheel.
    Show(Option<ShownVariant>),
    /// Hidden.
    Hide(HiddenBecause),
}

/// One version, decided.
#[derive(Debug)]
pub(crate) struct Decided<'p> {
    /// Every wheel's decision, by upstream file name (files not listed are shown as they are).
    pub(crate) decisions: HashMap<&'p str, Decision>,
    /// The version's report, when no wheel that fits the target is shown.
    pub(crate) hidden_version: Option<VersionReport>,
    /// When the target's choice is a fallback (no variant with properties fits): what the
    /// variants need that the target lacks.
    pub(crate) fallback_needs: Vec<NamespaceNeed>,
    /// Problems with the version's variant metadata.
    pub(crate) warnings: Vec<String>,
}

/// A tag set: the wheel name without name, version and label.
type TagSet<'r> = (
    &'r Option<BuildTag>,
    &'r [String],
    &'r [String],
    &'r [String],
);

/// A choice with each file's fate, by file location.
struct Judgement<'r> {
    choice: Choice<'r>,
    fates: HashMap<&'r str, CandidateFate>,
}

impl<'r> Judgement<'r> {
    fn new(choice: Choice<'r>) -> Self {
        let fates = choice
            .files
            .iter()
            .map(|verdict| {
                (
                    verdict.file.location.as_str(),
                    candidate_fate(&choice, verdict),
                )
            })
            .collect();
        Self { choice, fates }
    }

    fn fate(&self, file: &ReleaseFile) -> CandidateFate {
        // Every file of the release has a verdict; a missing one cannot be installed.
        self.fates
            .get(file.location.as_str())
            .cloned()
            .unwrap_or(CandidateFate::WrongTags)
    }

    /// The place of `file` in the order of preference, when it is installable.
    fn rank(&self, file: &ReleaseFile) -> Option<usize> {
        match self.fates.get(file.location.as_str())? {
            CandidateFate::Chosen => Some(0),
            CandidateFate::Candidate { rank } => Some(*rank),
            _ => None,
        }
    }
}

/// Decides the files of `version` (`files`: all of them, in page order) given what the index
/// said about its variants (`None`: not asked, variants being off).
pub(crate) fn decide<'p>(
    project: &'p Project,
    version: &Version,
    files: &[&'p IndexFile],
    variants: Option<VersionVariants>,
    target: &Target,
    options: &SelectionOptions,
) -> Decided<'p> {
    let tags = target.python.tags();
    // `requires-python` is the installer's to judge, and so are yanked files when every wheel
    // the target can install is yanked: they are judged as usual and shown yanked, for a
    // requirement that pins the version (PEP 592). When some such wheel is not yanked, an
    // installer passes over the yanked ones, so they are hidden and the choice is made
    // without them: shown, a yanked best variant would hide the version's other builds from
    // an installer that then skips it. Source distributions are set aside (and names listed
    // twice counted once).
    let unyanked_fits = files
        .iter()
        .any(|f| f.yanked.is_none() && f.wheel().is_some_and(|w| tags.wheel_priority(w).is_some()));
    let Screened {
        mut eligible,
        mut set_aside,
    } = screen(files.iter().copied(), None, !unyanked_fits);
    let mut decisions = HashMap::new();
    if unyanked_fits {
        for file in files {
            if let (Some(yanked), Some(_)) = (&file.yanked, file.wheel()) {
                let fate = CandidateFate::Yanked {
                    reason: yanked.reason.clone(),
                };
                let hide = Decision::Hide(HiddenBecause::Unusable(fate));
                decisions.insert(file.filename.as_str(), hide);
            }
        }
    }
    // Labels are judged against the metadata only when it was read.
    let read = variants.is_some();
    let VariantsRead {
        metadata,
        missing,
        from,
        unusable,
        warnings,
    } = match variants {
        Some(variants) => read_variants(project, version, variants),
        None => VariantsRead::default(),
    };
    if let Some(why) = &unusable {
        let fate = CandidateFate::UnusableMetadata { why: why.clone() };
        for file in &eligible {
            if file.wheel().is_some_and(|w| w.label.is_some()) {
                let hide = Decision::Hide(HiddenBecause::Unusable(fate.clone()));
                decisions.insert(file.filename.as_str(), hide);
            }
        }
        set_aside_labelled(&mut eligible, &mut set_aside, why);
    }
    let release = release_of(
        &project.name,
        &eligible,
        metadata.unwrap_or_else(empty_metadata),
        (read && unusable.is_none()).then_some(&missing),
    );
    let target_choice = Judgement::new(choose(&release, target, options));
    let by_location: HashMap<&str, &'p IndexFile> =
        eligible.iter().map(|f| (f.url.as_str(), *f)).collect();
    let upstream = |file: &ReleaseFile| -> &'p str {
        by_location
            .get(file.location.as_str())
            .map_or("", |f| f.filename.as_str())
    };
    let groups = tag_sets(&release);
    let fits = |files: &[&ReleaseFile]| {
        files
            .first()
            .is_some_and(|f| tags.wheel_priority(&f.filename).is_some())
    };
    // Tag sets the target cannot install are ranked as if their tags fitted.
    let all_fit = groups
        .iter()
        .any(|group| !fits(group) && group.iter().any(|f| f.filename.label.is_some()))
        .then(|| Judgement::new(choose_with(&release, target, options, &|_| Some(0))));
    let show = |judgement: &Judgement<'_>, file: &ReleaseFile| -> Option<ShownVariant> {
        let label = file.filename.label.clone()?;
        let (because, markers) = because_of(&judgement.choice, &release, file, options, target);
        Some(ShownVariant {
            label,
            markers,
            because,
        })
    };

    for group in &groups {
        let (judgement, best) = match (fits(group), &all_fit) {
            (true, _) => {
                // Labels rank before tags: when a variant is the target's choice, only wheels
                // of its label are shown among those the target can install.
                let chosen = target_choice
                    .choice
                    .chosen()
                    .filter(|f| f.filename.label.is_some());
                (&target_choice, chosen)
            }
            (false, Some(all_fit)) => {
                let best = group
                    .iter()
                    .filter(|f| f.filename.label.is_some())
                    .filter_map(|f| Some((all_fit.rank(f)?, *f)))
                    .min_by_key(|(rank, _)| *rank)
                    .map(|(_, f)| f);
                (all_fit, best)
            }
            // No variant wheel in a tag set the target cannot install: shown as it is.
            (false, None) => continue,
        };
        let shown = best.and_then(|best| Some((best, show(judgement, best)?)));
        for file in group {
            let name = upstream(file);
            let decision = match (&file.filename.label, &shown) {
                (Some(label), Some((_, variant))) if &variant.label == label => {
                    Decision::Show(Some(variant.clone()))
                }
                (Some(_), best) => {
                    let fate = judgement.fate(file);
                    Decision::Hide(match (best, fate.is_installable()) {
                        (Some((best, _)), true) => HiddenBecause::AnotherVariantChosen {
                            chosen: upstream(best).to_owned(),
                        },
                        _ => HiddenBecause::Unusable(fate),
                    })
                }
                (None, Some((best, _))) => Decision::Hide(HiddenBecause::ReplacedByVariant {
                    chosen: upstream(best).to_owned(),
                }),
                (None, None) => Decision::Show(None),
            };
            decisions.insert(name, decision);
        }
    }

    // The facts `select` gives for a fallback choice, computed as its report does.
    let fallback_needs = match target_choice.choice.chosen() {
        Some(_) if target_choice.choice.only_null_fits() => {
            let verdicts: Vec<LabelVerdict> = target_choice
                .choice
                .variants
                .iter()
                .map(|v| LabelVerdict {
                    label: v.label.clone(),
                    rejection: v.rejection.clone(),
                })
                .collect();
            needs(&verdicts, target)
        }
        _ => Vec::new(),
    };
    let hidden_version = match target_choice.choice.chosen() {
        Some(_) => None,
        None => Some(report(
            version,
            &target_choice.choice,
            &eligible,
            set_aside,
            from,
            target,
        )),
    };
    Decided {
        decisions,
        hidden_version,
        fallback_needs,
        warnings,
    }
}

/// The release's wheels grouped by tag set, in order of first appearance.
fn tag_sets(release: &Release) -> Vec<Vec<&ReleaseFile>> {
    let mut index: HashMap<TagSet<'_>, usize> = HashMap::new();
    let mut groups: Vec<Vec<&ReleaseFile>> = Vec::new();
    for file in &release.files {
        let name = &file.filename;
        let key = (
            &name.build,
            name.python_tags.as_slice(),
            name.abi_tags.as_slice(),
            name.platform_tags.as_slice(),
        );
        let at = *index.entry(key).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[at].push(file);
    }
    groups
}
