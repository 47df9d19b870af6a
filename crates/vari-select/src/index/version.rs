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

use super::listed_file::ListedFile;
use super::needs::needs;
use super::report::{
    candidate, CandidateFate, CandidateFile, ChosenBecause, LabelVerdict, VersionReport,
};
use super::screen::screen;
use crate::choice::{choose, Choice, FileFate, FileVerdict};
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
    /// Wheels found not to be valid wheels when read, by URL, with why: set aside.
    pub(crate) refused: &'a [(String, String)],
}

impl Judge<'_> {
    /// Judges `version`.
    pub(crate) async fn version(&self, version: &Version) -> Result<Judged, ClientError> {
        let mut screened = screen(self.project.files_of(version), self.python, self.pinned);
        let mut set_aside = screened.set_aside;
        screened.eligible.retain(|file| {
            let url = file.url.as_str();
            let Some((_, why)) = self.refused.iter().find(|(u, _)| u == url) else {
                return true;
            };
            set_aside.push(candidate(
                file,
                CandidateFate::Malformed { why: why.clone() },
            ));
            false
        });
        let mut warnings = Vec::new();
        let tags = self.target.python.tags();
        let needs_metadata = screened.eligible.iter().any(|f| {
            f.wheel()
                .is_some_and(|w| w.label.is_some() && tags.wheel_priority(w).is_some())
        });
        let fetched = match needs_metadata {
            true => variants_if_used(self.client, self.project, version, self.options).await?,
            false => None,
        };
        // Without metadata read, labels are not judged against it (below).
        let needs_metadata = fetched.is_some();
        let read = match fetched {
            Some(variants) => read_variants(self.project, version, variants),
            None => VariantsRead::default(),
        };
        let VariantsRead {
            metadata,
            missing,
            from: metadata_from,
            unusable: unusable_metadata,
            warnings: read_warnings,
        } = read;
        warnings.extend(read_warnings);
        let mut eligible = screened.eligible;
        if let Some(why) = &unusable_metadata {
            set_aside_labelled(&mut eligible, &mut set_aside, why);
        }
        // Labels are judged against the metadata only when it was read: without a fitting
        // labelled wheel, the labelled ones are simply for other tags.
        let read = needs_metadata && unusable_metadata.is_none();
        let release = release_of(
            &self.project.name,
            &eligible,
            metadata.unwrap_or_else(empty_metadata),
            read.then_some(&missing),
        );
        let choice = choose(&release, self.target, self.options);
        let chosen = chosen(&choice, &release, &eligible, self.options, self.target)
            .map(|(file, because, context)| (file.clone(), because, context));
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

/// What the index says about `version`'s variants, fetched only when it can change the
/// answer: with variants off (`--no-variants`, `no-variants = true`) no variant wheel can be
/// chosen, so no `variants.json` and no wheel's `variant.json` is fetched (`None`), and every
/// labelled wheel is simply rejected. `select`, `download`, `install` and the proxy's pages
/// all ask through here.
pub(crate) async fn variants_if_used(
    client: &IndexClient,
    project: &Project,
    version: &Version,
    options: &SelectionOptions,
) -> Result<Option<VersionVariants>, ClientError> {
    if options.no_variants {
        return Ok(None);
    }
    client.variant_metadata(project, version).await.map(Some)
}

/// A version's variant metadata as judging uses it.
#[derive(Debug, Default)]
pub(crate) struct VariantsRead {
    /// The metadata (`None`: none read, or none usable).
    pub(crate) metadata: Option<VariantMetadata>,
    /// Labels of wheels that the metadata does not describe.
    pub(crate) missing: BTreeSet<VariantLabel>,
    /// Where it came from (`None`: not read).
    pub(crate) from: Option<Vec<Url>>,
    /// Why it is unusable, when it is (its variant wheels are then set aside).
    pub(crate) unusable: Option<String>,
    /// Problems worth telling.
    pub(crate) warnings: Vec<String>,
}

/// What the client said about `version`'s variants, as judging uses it.
pub(crate) fn read_variants(
    project: &Project,
    version: &Version,
    variants: VersionVariants,
) -> VariantsRead {
    let mut read = VariantsRead::default();
    match variants {
        VersionVariants::NoVariants => {}
        VersionVariants::Described(described) => {
            read.metadata = described.metadata;
            read.missing = described.missing_labels;
            read.from = Some(match described.origin {
                MetadataOrigin::IndexFiles(urls) | MetadataOrigin::Wheels(urls) => urls,
            });
            read.warnings = described.warnings;
        }
        VersionVariants::Unusable(unusable) => {
            let why = unusable.to_string();
            read.warnings.push(format!(
                "{} {version}: unusable variant metadata, so its variant wheels are \
                 skipped: {why}",
                project.name
            ));
            read.from = Some(vec![unusable.url.clone()]);
            read.unusable = Some(why);
        }
    }
    read
}

/// Moves the labelled wheels of `eligible` to `set_aside`: the version's variant metadata is
/// unusable (`why`).
pub(crate) fn set_aside_labelled<F: ListedFile>(
    eligible: &mut Vec<&F>,
    set_aside: &mut Vec<CandidateFile>,
    why: &str,
) {
    eligible.retain(|file| {
        let labelled = file.wheel().is_some_and(|w| w.label.is_some());
        if labelled {
            set_aside.push(candidate(
                file,
                CandidateFate::UnusableMetadata {
                    why: why.to_owned(),
                },
            ));
        }
        !labelled
    });
}

/// The release of one version: its eligible wheels, with labels the metadata does not describe
/// marked unusable (when the metadata was read: `missing` is `Some`), and the metadata's labels
/// kept only where a wheel carries them.
pub(crate) fn release_of<F: ListedFile>(
    name: &vari_client::ProjectName,
    eligible: &[&F],
    mut metadata: VariantMetadata,
    missing: Option<&BTreeSet<VariantLabel>>,
) -> Release {
    let files: Vec<ReleaseFile> = eligible
        .iter()
        .filter_map(|file| {
            Some(ReleaseFile {
                filename: file.wheel()?.clone(),
                location: file.url().to_string(),
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
    release.name = Some(name.to_string());
    release.files = files;
    release.has_files = true;
    release.unusable = unusable;
    release
}

/// The index file behind each release file, by its URL (a release file's `location`). Not by
/// name: a release file's name is the canonical rendering of the parsed filename, and upstream
/// names need not be canonical (`PyYAML-6.0-….whl`, `Demo-1.0-….whl`).
fn by_location<'p, F: ListedFile>(eligible: &[&'p F]) -> HashMap<String, &'p F> {
    eligible.iter().map(|f| (f.url().to_string(), *f)).collect()
}

/// The chosen file of `choice`, why, and the variant-marker values its dependencies see.
pub(crate) fn chosen<'p, F: ListedFile>(
    choice: &Choice,
    release: &Release,
    eligible: &[&'p F],
    options: &SelectionOptions,
    target: &Target,
) -> Option<(&'p F, ChosenBecause, VariantMarkerContext)> {
    let file = choice.chosen()?;
    let listed = *by_location(eligible).get(&file.location)?;
    let (because, context) = because_of(choice, release, file, options, target);
    Some((listed, because, context))
}

/// Why `file` (a file of `choice`, chosen or taking the chosen one's place for other tags) is
/// chosen, and the variant-marker values its dependencies see.
pub(crate) fn because_of(
    choice: &Choice,
    release: &Release,
    file: &ReleaseFile,
    options: &SelectionOptions,
    target: &Target,
) -> (ChosenBecause, VariantMarkerContext) {
    match &file.filename.label {
        Some(label) => {
            let because = match choice.is_null_variant(label) {
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
            // With variants off their metadata is not read, so `variants` may be 0 although
            // the target could install a labelled wheel.
            let tags = target.python.tags();
            let labelled_fit = release
                .files
                .iter()
                .any(|f| f.filename.label.is_some() && tags.wheel_priority(&f.filename).is_some());
            let because = if options.no_variants && (variants > 0 || labelled_fit) {
                ChosenBecause::VariantsDisabled
            } else if variants == 0 {
                ChosenBecause::NoVariants
            } else {
                ChosenBecause::NoVariantFits { variants }
            };
            (because, VariantMarkerContext::non_variant())
        }
    }
}

/// The report of one judged version.
pub(crate) fn report<F: ListedFile>(
    version: &Version,
    choice: &Choice,
    eligible: &[&F],
    set_aside: Vec<CandidateFile>,
    metadata_from: Option<Vec<Url>>,
    target: &Target,
) -> VersionReport {
    let files_by_location = by_location(eligible);
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
            let index_file = files_by_location.get(&verdict.file.location)?;
            let fate = candidate_fate(choice, verdict);
            Some(candidate(index_file, fate))
        })
        .collect();
    let mut set_aside = set_aside;
    set_aside.sort_by(|a, b| a.filename.cmp(&b.filename));
    files.extend(set_aside);
    // What would fit is worth saying whenever no variant with properties does (the choice
    // fell back to the null variant, a non-variant wheel, or nothing).
    let needs = match choice.only_null_fits() {
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

/// The fate of one file of `choice`, as the report gives it.
pub(crate) fn candidate_fate(choice: &Choice, verdict: &FileVerdict) -> CandidateFate {
    let label = verdict.file.filename.label.as_ref();
    match &verdict.fate {
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
        FileFate::Unusable(UnusableReason::NotDescribed) => CandidateFate::LabelNotDescribed,
        FileFate::Unusable(other) => CandidateFate::Unusable(other.clone()),
    }
}
