//! Selection from package indexes (PEP 503/691 pages, find-links): for each PEP 508
//! requirement the version and the wheel a PEP 825 installer would choose for the target, with
//! every considered file's fate, what the variants need when nothing fits, and the chosen
//! wheel's dependencies with variant markers evaluated.
//!
//! Fetching and parsing is `vari-client`'s; choosing within one version is [`crate::choose`],
//! the same rules as for a directory of wheels. This module adds what only an index has:
//! several versions (specifiers, pre-releases, yanked files, `requires-python`) and variant
//! metadata read from the index.

mod dependencies;
mod family;
mod family_sources;
mod listed;
mod listed_file;
mod need_text;
mod needs;
mod present;
mod presentation;
mod report;
mod request;
mod screen;
mod select;
mod tag_sets;
mod version;

pub use dependencies::requires_dist;
pub use family::{
    build_request, choose_across_group, choose_families, choose_families_with, choose_in_family,
    family_offers, named_source, FamilyError, FamilyPick, FamilyPicks, SOURCE_CONCURRENCY,
};
pub use family_sources::{source_client, SourceClients};
pub use listed::{judge_listed, Listed, ListedChoice};
pub use listed_file::ListedFile;
pub use need_text::NeedText;
pub use present::present;
pub use presentation::{
    HiddenBecause, HiddenFile, Presentation, Shown, ShownBecause, ShownVariant,
};
pub use report::{
    CandidateFate, CandidateFile, Chosen, ChosenBecause, Dependency, LabelVerdict, NamespaceNeed,
    Outcome, Resolution, VersionReport,
};
pub use request::{Request, RequestError};
pub use select::{select, select_all, IndexOptions, SelectError};

/// The `tracing` target of the one event each selection for a project emits ([`select`] per
/// request, [`present`] per page), at debug level with the project's name as `project`: how a
/// front-end (or a test) counts how often a command selected.
pub const SELECTION_TRACE: &str = "vari_select::selection";

/// Emits the selection event for `project`.
fn selecting(project: &vari_client::ProjectName) {
    tracing::debug!(target: SELECTION_TRACE, project = %project, "selecting {project}");
}
