//! # vari-select
//!
//! Selection as a library: every front-end (the `vari` command line today; the proxy, the
//! installer driver and the lock writer next) walks the same path through it.
//!
//! - [`Target`]: what the wheel is chosen for — the hardware lists (a profile, hardware facts,
//!   a snapshot, or this machine's detection) and the Python environment (`vari_python`'s one
//!   answer: version, interpreter, tags, installed packages, marker values).
//! - [`Release`]: the variant and non-variant wheels of one version with their combined
//!   metadata, read from a directory of wheels, one wheel, or a metadata file.
//! - [`choose`]: the [`Choice`] — the file to install, the ordered candidates, and for every
//!   rejected variant and file a reason as data ([`VariantRejection`], [`FileFate`]).
//! - [`select`]: the same choice from package indexes for a PEP 508 [`Request`], through
//!   `vari-client` (async): the version, the wheel, every considered file's fate
//!   ([`CandidateFate`]), what the variants need when nothing fits ([`NamespaceNeed`]), and the
//!   chosen wheel's dependencies. Local releases need no runtime: [`choose`] stays synchronous.
//! - [`present`]: what an installer that does not understand variants should see of one
//!   project ([`Presentation`]): per version and tag set the chosen variant wheel under its
//!   name without the label, every hidden file and version with why.
//! - [`locked`]: what one machine installs from a lock (`vari-lock`'s model): its markers,
//!   extras and groups, each entry's file judged as [`select`] judges one version (through
//!   [`ListedFile`], which index files and a lock's wheels both implement), and the entries the
//!   chosen variants bring in.
//!
//! Rules live here and in `vari-core`; the messages carry data and name no command-line flag:
//! a front-end phrases them and adds its own hints. Nothing here prints.

mod choice;
mod class;
mod class_match;
mod cross_cpu;
mod error;
mod hardware;
mod index;
pub mod locked;
mod release;
mod target;
mod unused;

pub use choice::{choose, Choice, FileFate, FileVerdict, VariantRejection, VariantVerdict};
pub use class::{resolve_source, ClassSource, MachineClass, ResolvedClass};
pub use class_match::{match_class, ClassFit, ClassMatch, ClassProfile, ClassReport};
pub use error::InputError;
pub use index::{
    build_request, choose_across_group, choose_families, choose_families_with, choose_in_family,
    family_offers, named_source, source_client, FamilyError, FamilyPick, FamilyPicks,
    SourceClients, SOURCE_CONCURRENCY,
};
pub use index::{judge_listed, requires_dist, Listed, ListedChoice, ListedFile, NeedText};
pub use index::{
    present, HiddenBecause, HiddenFile, Presentation, Shown, ShownBecause, ShownVariant,
};
pub use index::{
    select, select_all, CandidateFate, CandidateFile, Chosen, ChosenBecause, Dependency,
    IndexOptions, LabelVerdict, NamespaceNeed, Outcome, Request, RequestError, Resolution,
    SelectError, VersionReport, SELECTION_TRACE,
};
pub use release::{
    builtin_feature_kinds, inspect_wheel, read_text, text_of, wheel_input_error, InputKind,
    Release, ReleaseFile, UnusableReason,
};
pub use target::{
    host_platform, read_profile, Hardware, HardwareSource, Target, TargetError, TargetSettings,
};
pub use unused::{unused_options, UnusedOption};
