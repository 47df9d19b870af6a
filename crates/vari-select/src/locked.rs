//! The install plan of a lock for one machine: which entries to install, with which file,
//! and why. Pure: no I/O, so `sync`, `export`, `install -r pylock.toml` and `mirror` ask the
//! same question and get the same answer. The lock is `vari-lock`'s model (the format crate
//! only reads and writes); judging its files is selection's, so it lives here.
//!
//! 1. The lock must be for the target: `requires-python` holds for its Python and, when
//!    `environments` is given, one of its markers is true.
//! 2. Build families: for each family the lock records (`[[tool.vari.families]]`), the
//!    build the target takes ([`BuildTaken`]: the best locked build whose recorded `requires`
//!    the target supports, else the null build; one build name for a group). An entry that
//!    only some builds bring in (`[packages.tool.vari] builds`) is a candidate only when one
//!    of them is taken: the CPU machine gets torch `+cpu` and no CUDA library. No build fits:
//!    [`PlanError::NoBuildFits`], with each locked build's reason.
//! 3. Roots: every entry that is not `through-variants` and whose `marker` (PEP 751, with
//!    `extras` and `dependency_groups`, the lock's `default-groups` when no group is asked
//!    for) is true for the target. With only groups asked for (`--only-group`), whose
//!    `[packages.tool.vari] group-marker` is: what the groups need on their own, the
//!    project's own requirements left out.
//! 4. Each entry to install gets its file by vari's rules, through
//!    [`judge_listed`](crate::judge_listed) (the same judging as `vari select`, each listed
//!    wheel a [`ListedFile`](crate::ListedFile)): the best variant among
//!    the listed wheels for the target's hardware, then the null variant, then the plain wheel,
//!    each only with tags the target interpreter accepts; the sdist only when no wheel fits.
//!    No file at all: [`PlanError::NothingFits`] with the report `select` explains from.
//! 5. The chosen wheel's `variant-dependencies` are evaluated with its label and properties;
//!    each that applies brings in the entry it names, and a `through-variants` entry brings in
//!    its `through-variants` dependencies. No other entry is installed: a CPU machine gets no
//!    CUDA runtime.

mod builds;
mod choose;
mod chosen;
mod closure;
mod groups;

use pep440_rs::Version;
use url::Url;
use vari_core::markers::{MarkerError, VariantMarkerContext};
use vari_core::metadata::VariantProperties;
use vari_core::ordering::SelectionOptions;
use vari_core::VariantLabel;
use vari_lock::export::Kept;
use vari_lock::Artifact;

use crate::index::{ChosenBecause, VersionReport};
use crate::target::Target;

pub use builds::BuildTaken;
pub use chosen::{plan_chosen, LockChoice};
pub use closure::plan;
pub use groups::{chosen_groups, ChosenGroups, GroupChoice};

/// What to plan for.
#[derive(Debug, Clone, Copy)]
pub struct PlanRequest<'a> {
    /// The machine and Python environment (the same value `vari select` chooses for).
    pub target: &'a Target,
    /// The user's selection options (`--variant`, `--forbid`, `--no-variants`, …).
    pub options: &'a SelectionOptions,
    /// The extras asked for.
    pub extras: &'a [String],
    /// The dependency groups asked for; `None`: the lock's `default-groups`.
    pub groups: Option<&'a [String]>,
    /// Only `groups`, without the project's own requirements (`--only-group`): the roots are
    /// the entries those groups need on their own (`[packages.tool.vari] group-marker`);
    /// refused with `extras`, and for a lock that does not record what each group needs
    /// ([`PlanError::NoGroupMarkers`]).
    pub only_groups: bool,
    /// The directory the lock's `path` entries are relative to, as a URL ending in `/`
    /// (`file:///project/`).
    pub lock_dir: &'a Url,
}

/// Which file of an entry to install.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlannedFile {
    /// `wheels[index]`, chosen because of `because`.
    Wheel {
        /// The index in the entry's `wheels`.
        index: usize,
        /// Why (the explanation `select` gives).
        because: ChosenBecause,
    },
    /// The `sdist`: no listed wheel fits the target.
    Sdist,
}

/// Why an entry is installed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NeededBy {
    /// It is a root of the lock: its marker (if any) is true for the target.
    Lock,
    /// The chosen wheel of `of` calls for it through a variant marker (`requirement`, one of
    /// `of`'s `variant-dependencies`).
    Variant {
        /// The entry whose wheel's variant asks for it.
        of: String,
        /// The `variant-dependencies` item that applied.
        requirement: String,
    },
    /// A `through-variants` entry `of` that is installed depends on it.
    Dependency {
        /// That entry.
        of: String,
    },
}

/// One entry to install, with its chosen file: everything later steps (fetching, checking,
/// reporting, narrowing) need of the entry, in one value.
#[derive(Debug, Clone)]
pub struct Planned {
    /// Its index in [`Lock::packages`](vari_lock::Lock::packages).
    pub package: usize,
    /// Its name.
    pub name: String,
    /// Its version, when the lock fixes one.
    pub version: Option<Version>,
    /// Which file to install, and why.
    pub file: PlannedFile,
    /// That file as the lock lists it (name, `url` or `path`, size, hashes).
    pub artifact: Artifact,
    /// The chosen wheel's variant label (`None`: a non-variant wheel or the sdist).
    pub label: Option<VariantLabel>,
    /// The properties the lock's `variants-json` gives that label.
    pub properties: Option<VariantProperties>,
    /// What the chosen wheel's variant markers see (its label and supported properties).
    pub context: VariantMarkerContext,
    /// Every listed wheel's fate and every variant's verdict, as `select` reports a version;
    /// `None` for an entry that lists no wheel to judge.
    pub report: Option<VersionReport>,
    /// Why the entry is installed at all.
    pub needed_by: NeededBy,
}

impl Planned {
    /// What it keeps of the lock, for [`vari_lock::export::narrow`]: its entry, its chosen
    /// file and label.
    pub fn kept(&self) -> Kept<'_> {
        Kept {
            package: self.package,
            wheel: match &self.file {
                PlannedFile::Wheel { index, .. } => Some(*index),
                PlannedFile::Sdist => None,
            },
            label: self.label.as_ref(),
        }
    }
}

impl Plan {
    /// What the plan keeps of the lock, for [`vari_lock::export::narrow`] ([`Planned::kept`]).
    pub fn kept(&self) -> Vec<Kept<'_>> {
        self.install.iter().map(Planned::kept).collect()
    }
}

/// Why an entry is left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkipReason {
    /// Its `marker` is false for the target and what was asked for.
    Marker(String),
    /// It is `through-variants` and no selected wheel's variant asks for it.
    NoVariantAsks,
    /// Only dependency groups were asked for (`--only-group`), and none of them needs it on
    /// its own (the project's own requirements do).
    OnlyGroups,
    /// It comes in with builds of a family the target does not take (torch `+cu128` on a
    /// CPU machine): `build` of `family` is the first of them.
    OtherBuild {
        /// The family.
        family: String,
        /// The build it comes in with (the first listed).
        build: String,
    },
}

/// One entry left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// Its index in [`Lock::packages`](vari_lock::Lock::packages).
    pub package: usize,
    /// Its name.
    pub name: String,
    /// Why.
    pub why: SkipReason,
}

/// The plan: the entries to install in the lock's order, and those left out.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The build each family of the lock takes on the target, in the lock's order of
    /// families (empty for a lock without families).
    pub builds: Vec<BuildTaken>,
    /// The entries to install, in the lock's order.
    pub install: Vec<Planned>,
    /// The entries left out, in the lock's order.
    pub skipped: Vec<Skipped>,
}

/// Why a lock cannot be installed on the target.
#[derive(Debug, Clone, thiserror::Error)]
pub enum PlanError {
    /// An extra or group was asked for that the lock does not offer.
    #[error("the lock has no {kind} `{name}` (it offers: {})", if .offered.is_empty() { "none".to_owned() } else { .offered.join(", ") })]
    NotOffered {
        /// `extra` or `dependency group`.
        kind: &'static str,
        /// The name asked for.
        name: String,
        /// What the lock lists.
        offered: Vec<String>,
    },
    /// Two options that cannot go together (`--only-group` and `--group`), as uv refuses
    /// them.
    #[error("`{option}` cannot be used with `{with}`")]
    Conflicting {
        /// The one given.
        option: &'static str,
        /// The one it cannot go with.
        with: &'static str,
    },
    /// `--only-group` on a lock that does not record what each dependency group needs
    /// without the project (`[tool.vari] group-markers`: locks written by another tool, or by
    /// vari before it recorded it).
    #[error(
        "--only-group: the lock (created by {created_by}) does not record which packages each \
         dependency group needs without the project's own requirements; lock it again with \
         `vari lock`"
    )]
    NoGroupMarkers {
        /// The lock's `created-by`.
        created_by: String,
    },
    /// The target's Python is outside the lock's `requires-python`.
    #[error("requires-python: the lock is for Python {requires}, the target has {python}")]
    RequiresPython {
        /// The lock's `requires-python`.
        requires: String,
        /// The target's Python version.
        python: String,
    },
    /// No marker of the lock's `environments` is true for the target.
    #[error("environments: the lock is for {}, not this target", .markers.join(" or "))]
    NotForEnvironment {
        /// The markers.
        markers: Vec<String>,
    },
    /// A marker of the lock cannot be read.
    #[error("{path}: {error}")]
    Marker {
        /// Its key path (`packages[3].marker`).
        path: String,
        /// What is wrong.
        error: MarkerError,
    },
    /// An item of the lock cannot be used (a `variant-dependencies` item that names no
    /// entry, a name that is not a project name in a lock built in code).
    #[error("{path}: {message}")]
    Invalid {
        /// Its key path (`packages[0].tool.vari.variant-dependencies[1]`).
        path: String,
        /// What is wrong.
        message: String,
    },
    /// The entry has no file vari can install (a VCS, directory or archive source).
    #[error("packages[{package}] ({name}): no wheel or sdist listed (vari installs only those)")]
    NotInstallable {
        /// Its index.
        package: usize,
        /// Its name.
        name: String,
    },
    /// No locked build of a family fits the target and the family has no null build.
    #[error("family {family}: {why}")]
    NoBuildFits {
        /// The family.
        family: String,
        /// Each locked build and why it does not fit, as `vari select` words a family's
        /// builds (`no build of torch fits: cu128 (torch): …`).
        why: String,
    },
    /// The families of one group locked no build name that fits every one of them.
    #[error("{message}")]
    GroupConflict {
        /// The members and the lines each offers here.
        message: String,
    },
    /// No listed file fits the target; `report` says why for each, as `select` reports it.
    #[error("{name} {version}: no listed wheel fits the target")]
    NothingFits {
        /// Its index.
        package: usize,
        /// Its name.
        name: String,
        /// Its version (`""` when the lock fixes none).
        version: String,
        /// Every file's fate and every variant's verdict.
        report: Box<VersionReport>,
    },
}

#[cfg(test)]
mod tests;
