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
mod need_text;
mod needs;
mod present;
mod report;
mod request;
mod screen;
mod select;
mod tag_sets;
mod version;

pub use need_text::NeedText;
pub use present::{present, HiddenBecause, HiddenFile, Presentation, Shown, ShownVariant};
pub use report::{
    CandidateFate, CandidateFile, Chosen, ChosenBecause, Dependency, LabelVerdict, NamespaceNeed,
    Outcome, Resolution, VersionReport,
};
pub use request::{Request, RequestError};
pub use select::{select, select_all, IndexOptions, SelectError};
