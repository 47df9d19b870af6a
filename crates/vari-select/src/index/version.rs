//! One version of a project, judged for the target: its files screened, its variant metadata
//! read when a fitting wheel carries a label, a [`Release`] built from its wheels, and
//! [`choose`] run on it — the same rules as for a directory of wheels.

use std::collections::{BTreeSet, HashMap};

use pep440_rs::Version;
use url::Url;
use vari_client::{ClientError, IndexClient, IndexFile, MetadataOrigin, Project, VersionVariants};
use vari_core::markers::VariantMarkerContext;
use vari_core::metadata::VariantMetadata;
use vari_core::ordering::SelectionOptions;
use vari_core::VariantLabel;

use super::needs::needs;
use super::report::{
    candidate, CandidateFate, CandidateFile, ChosenBecause, LabelVerdict, VersionReport,
};
use super::screen::screen;
use crate::choice::{choose, Choice, FileFate};
use crate::release::{empty_metadata, Release, ReleaseFile, UnusableReason};
use crate::target::Target;

/// A chosen file, why, and the variant-marker values its dependencies see.
pub(crate) type ChosenFile = (IndexFile, ChosenBecause, VariantMarkerContext);

/// What one version gave.
pub(crate) struct Judged {
    pub(crate) report: VersionReport,
    pub(crate) chosen: Option<ChosenFile>,
    pub(crate) warnings: Vec<String>,
}

/// The facts about the requirement and target that judging a version needs.
pub(crate) struct Judge<'a> {
    pub(crate) client: &'a IndexClient,
    pub(crate) project: &'a Project,
    pub(crate) target: &'a Target,
    pub(crate) options: &'a SelectionOptions,
    pub(crate) python: Option<&'a Version>,
    pub(crate) pinned: bool,
}

impl Judge<'_> {
    /// Judges `version`.
    pub(crate) async fn version(&self, version: &Version) -> Result<Judged, ClientError> {
        let screened = screen(self.project.files_of(version), self.python, self.pinned);
        let mut set_aside = screened.set_aside;
        let mut warnings = Vec::new();
        let tags = self.target.python.tags();
        let needs_metadata = screened.eligible.iter().any(|f| {
            f.wheel()
                .is_some_and(|w| w.label.is_some() && tags.wheel_priority(w).is_some())
        });
        let mut metadata = None;
        let mut missing = BTreeSet::new();
        let mut metadata_from = None;
        let mut unusable_metadata = None;
        if needs_metadata {
            match self.client.variant_metadata(self.project, version).await? {
                VersionVariants::NoVariants => {}
                VersionVariants::Described(described) => {
                    metadata = described.metadata;
                    missing = described.missing_labels;
                    metadata_from = Some(match described.origin {
                        MetadataOrigin::IndexFiles(urls) | MetadataOrigin::Wheels(urls) => urls,
                    });
                    warnings.extend(described.warnings);
                }
                VersionVariants::Unusable(unusable) => {
                    let why = unusable.to_string();
                    warnings.push(format!(
                        "{} {version}: unusable variant metadata, so its variant wheels are \
                         skipped: {why}",
                        self.project.name
                    ));
                    metadata_from = Some(vec![unusable.url.clone()]);
                    unusable_metadata = Some(why);
                }
            }
        }
        let mut eligible = screened.eligible;
        if let Some(why) = &unusable_metadata {
            eligible.retain(|file| {
                let labelled = file.wheel().is_some_and(|w| w.label.is_some());
                if labelled {
                    set_aside.push(candidate(
                        file,
                        CandidateFate::UnusableMetadata { why: why.clone() },
                    ));
                }
                !labelled
            });
        }
        // Labels are judged against the metadata only when it was read: without a fitting
        // labelled wheel, the labelled ones are simply for other tags.
        let read = needs_metadata && unusable_metadata.is_none();
        let release = release_of(
            self.project,
            &eligible,
            metadata.unwrap_or_else(empty_metadata),
            read.then_some(&missing),
        );
        let choice = choose(&release, self.target, self.options);
        let chosen = chosen(&choice, &release, &eligible, self.options, self.target);
        let report = report(
            version,
            &choice,
            &eligible,
            set_aside,
            metadata_from,
            self.target,
        );
        Ok(Judged {
            report,
            chosen,
            warnings,
        })
    }
}

/// The release of one version: its eligible wheels, with labels the metadata does not describe
/// marked unusable (when the metadata was read: `missing` is `Some`), and the metadata's labels
/// kept only where a wheel carries them.
fn release_of(
    project: &Project,
    eligible: &[&IndexFile],
    mut metadata: VariantMetadata,
    missing: Option<&BTreeSet<VariantLabel>>,
) -> Release {
    let files: Vec<ReleaseFile> = eligible
        .iter()
        .filter_map(|file| {
            Some(ReleaseFile {
                filename: file.wheel()?.clone(),
                location: file.url.to_string(),
            })
        })
        .collect();
    let labels: BTreeSet<&VariantLabel> = files
        .iter()
        .filter_map(|f| f.filename.label.as_ref())
        .collect();
    metadata.variants.retain(|label, _| labels.contains(label));
    let unusable = match missing {
        Some(missing) => labels
            .iter()
            .filter(|l| missing.contains(**l) || !metadata.variants.contains_key(**l))
            .map(|label| ((*label).clone(), UnusableReason::NotDescribed))
            .collect(),
        None => Vec::new(),
    };
    let mut release = Release::from_metadata(metadata);
    release.name = Some(project.name.to_string());
    release.files = files;
    release.has_files = true;
    release.unusable = unusable;
    release
}

/// The index file behind each release file, by file name.
fn by_name<'p>(eligible: &[&'p IndexFile]) -> HashMap<&'p str, &'p IndexFile> {
    eligible.iter().map(|f| (f.filename.as_str(), *f)).collect()
}

fn chosen(
    choice: &Choice,
    release: &Release,
    eligible: &[&IndexFile],
    options: &SelectionOptions,
    target: &Target,
) -> Option<ChosenFile> {
    let file = choice.chosen()?;
    let index_file = (*by_name(eligible).get(file.name().as_str())?).clone();
    let (because, context) = match &file.filename.label {
        Some(label) => {
            let because = match label.is_null() {
                true => ChosenBecause::NullVariant,
                false => ChosenBecause::BestVariant {
                    selectable: choice.order.len(),
                },
            };
            let context = VariantMarkerContext::for_selection(
                &release.metadata,
                label,
                &target.hardware.profile,
            )
            .unwrap_or_default();
            (because, context)
        }
        None => {
            let variants = choice.variants.len();
            let because = if variants == 0 {
                ChosenBecause::NoVariants
            } else if options.no_variants {
                ChosenBecause::VariantsDisabled
            } else {
                ChosenBecause::NoVariantFits { variants }
            };
            (because, VariantMarkerContext::non_variant())
        }
    };
    Some((index_file, because, context))
}

fn report(
    version: &Version,
    choice: &Choice,
    eligible: &[&IndexFile],
    set_aside: Vec<CandidateFile>,
    metadata_from: Option<Vec<Url>>,
    target: &Target,
) -> VersionReport {
    let files_by_name = by_name(eligible);
    let variants: Vec<LabelVerdict> = choice
        .variants
        .iter()
        .map(|v| LabelVerdict {
            label: v.label.clone(),
            rejection: v.rejection.clone(),
        })
        .collect();
    let mut files: Vec<CandidateFile> = choice
        .files
        .iter()
        .filter_map(|verdict| {
            let index_file = files_by_name.get(verdict.file.name().as_str())?;
            let label = verdict.file.filename.label.as_ref();
            let fate = match &verdict.fate {
                FileFate::Chosen => CandidateFate::Chosen,
                FileFate::Candidate { rank } => CandidateFate::Candidate { rank: *rank },
                FileFate::WrongTags => CandidateFate::WrongTags,
                FileFate::VariantRejected => match label
                    .and_then(|l| choice.variant(l.as_str()))
                    .and_then(|v| v.rejection.clone())
                {
                    Some(rejection) => CandidateFate::VariantRejected(rejection),
                    None => CandidateFate::LabelNotDescribed,
                },
                FileFate::Unusable(UnusableReason::NotDescribed) => {
                    CandidateFate::LabelNotDescribed
                }
                FileFate::Unusable(other) => CandidateFate::Unusable(other.clone()),
            };
            Some(candidate(index_file, fate))
        })
        .collect();
    let mut set_aside = set_aside;
    set_aside.sort_by(|a, b| a.filename.cmp(&b.filename));
    files.extend(set_aside);
    // What would fit is worth saying whenever no variant with properties does (the choice
    // fell back to the null variant, a non-variant wheel, or nothing).
    let needs = match choice.order.iter().all(VariantLabel::is_null) {
        true => needs(&variants, target),
        false => Vec::new(),
    };
    VersionReport {
        version: version.clone(),
        files,
        variants,
        needs,
        metadata_from,
    }
}
