//! Choosing among files that are already listed, one version's, with the variant metadata
//! that describes them: a lock file's entry (`pylock.toml`), where the version is fixed and
//! every file is known. The same judging as one version of an index (screen, build the
//! release, [`choose`](crate::choose), report), over any [`ListedFile`], so a lock's install
//! explains itself exactly as `select` does.

use std::collections::BTreeSet;

use pep440_rs::Version;
use vari_client::ProjectName;
use vari_core::markers::VariantMarkerContext;
use vari_core::metadata::VariantMetadata;
use vari_core::ordering::SelectionOptions;
use vari_core::VariantLabel;

use super::listed_file::ListedFile;
use super::report::{ChosenBecause, VersionReport};
use super::screen::screen;
use super::version::{chosen, release_of, report};
use crate::choice::choose;
use crate::release::empty_metadata;
use crate::target::Target;

/// What [`judge_listed`] found.
#[derive(Debug, Clone)]
pub struct Listed<'f, F> {
    /// Every file with its fate, every variant with its verdict, and what the variants need
    /// when none with properties fits: what `select` reports for one version.
    pub report: VersionReport,
    /// The chosen wheel and why; `None` when no wheel fits.
    pub chosen: Option<ListedChoice<'f, F>>,
    /// What the chosen wheel's variant markers see (a non-variant wheel's when none fits).
    pub context: VariantMarkerContext,
}

/// The wheel [`judge_listed`] chose.
#[derive(Debug, Clone)]
pub struct ListedChoice<'f, F> {
    /// The file, one of those given.
    pub file: &'f F,
    /// Its variant label; `None` for a non-variant wheel.
    pub label: Option<VariantLabel>,
    /// Why this file.
    pub because: ChosenBecause,
}

/// Judges the `files` of `version` of `name` for `target`: `metadata` describes their labels
/// (a label it does not describe is unusable, as PEP 825 has it; `None` makes every labelled
/// wheel so). Files are taken as pinned (a yanked mark does not set them aside);
/// `requires-python` and tags are checked as for an index.
pub fn judge_listed<'f, F: ListedFile>(
    name: &ProjectName,
    version: &Version,
    files: &'f [F],
    metadata: Option<VariantMetadata>,
    target: &Target,
    options: &SelectionOptions,
) -> Listed<'f, F> {
    let python = target.python.version;
    let python = Version::new([
        u64::from(python.major),
        u64::from(python.minor),
        u64::from(python.patch.unwrap_or(0)),
    ]);
    let screened = screen(files.iter(), Some(&python), true);
    let no_labels_missing = BTreeSet::new();
    let release = release_of(
        name,
        &screened.eligible,
        metadata.unwrap_or_else(empty_metadata),
        Some(&no_labels_missing),
    );
    let choice = choose(&release, target, options);
    let picked = chosen(&choice, &release, &screened.eligible, options, target);
    let report = report(
        version,
        &choice,
        &screened.eligible,
        screened.set_aside,
        None,
        target,
    );
    let (chosen, context) = match picked {
        Some((file, because, context)) => (
            Some(ListedChoice {
                label: file.wheel().and_then(|w| w.label.clone()),
                file,
                because,
            }),
            context,
        ),
        None => (None, VariantMarkerContext::non_variant()),
    };
    Listed {
        report,
        chosen,
        context,
    }
}
