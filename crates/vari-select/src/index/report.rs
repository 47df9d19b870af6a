//! What a selection from an index found, as data: per considered version every file with its
//! fate and every variant with its verdict, what the release's variants need that the target
//! lacks, and the chosen wheel with the reason and its dependencies. Front-ends phrase it.

use pep440_rs::Version;
use url::Url;
use vari_client::{IndexFile, ProjectName};
use vari_core::ordering::Rejection;
use vari_core::{Namespace, VariantLabel};

use super::listed_file::ListedFile;
use crate::choice::VariantRejection;
use crate::release::UnusableReason;

/// The result of one requirement.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// The requirement's marker is false for the target: nothing is selected.
    Skipped {
        /// The marker as written.
        marker: String,
    },
    /// The project was looked at.
    Resolved(Box<Resolution>),
}

/// The versions considered for one requirement and what was chosen.
#[derive(Debug, Clone)]
pub struct Resolution {
    /// The project.
    pub name: ProjectName,
    /// The versions looked at, newest first; the chosen version (if any) is the last one.
    pub versions: Vec<VersionReport>,
    /// The chosen wheel, when one fits.
    pub chosen: Option<Chosen>,
    /// Versions that satisfy the specifiers but were not looked at because they are
    /// pre-releases and a final version was found (or pre-releases were not needed).
    pub prereleases_ignored: Vec<Version>,
    /// How many versions the sources list in all (before the specifiers).
    pub versions_listed: usize,
    /// Problems that did not stop the selection: skipped links, unusable or partly invalid
    /// variant metadata, unreadable dependencies.
    pub warnings: Vec<String>,
}

impl Resolution {
    /// The report of the chosen version.
    pub fn chosen_report(&self) -> Option<&VersionReport> {
        self.chosen.as_ref().and_then(|_| self.versions.last())
    }

    /// The newer versions that were passed over, newest first.
    pub fn passed_over(&self) -> &[VersionReport] {
        match self.chosen {
            Some(_) => &self.versions[..self.versions.len().saturating_sub(1)],
            None => &self.versions,
        }
    }
}

/// The wheel chosen for a requirement.
#[derive(Debug, Clone)]
pub struct Chosen {
    /// Its version.
    pub version: Version,
    /// The file, as the index lists it (URL, hashes, size).
    pub file: IndexFile,
    /// Its variant label; `None` for a non-variant wheel.
    pub label: Option<VariantLabel>,
    /// Why this file.
    pub because: ChosenBecause,
    /// The dependencies that apply to the target with this wheel; `None` when not asked for
    /// or when its metadata could not be read (a warning says why).
    pub dependencies: Option<Vec<Dependency>>,
}

/// Why the chosen file was chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChosenBecause {
    /// The best variant for the target, first of `selectable` labels.
    BestVariant {
        /// How many labels were selectable.
        selectable: usize,
    },
    /// The null variant: no variant with properties fits.
    NullVariant,
    /// A non-variant wheel, because no variant of the release fits the target.
    NoVariantFits {
        /// How many variants the release describes.
        variants: usize,
    },
    /// A non-variant wheel, and the version has no variant wheel for the target's Python and
    /// platform (or none at all).
    NoVariants,
    /// A non-variant wheel, because variant wheels were not allowed.
    VariantsDisabled,
}

/// One dependency of the chosen wheel (`Requires-Dist`) that applies to the target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dependency {
    /// The requirement, without its marker (`nvidia-cublas-cu12==12.8.4.1`).
    pub requirement: String,
    /// The marker that made it apply, as written (variant markers included).
    pub marker: Option<String>,
}

/// One considered version: every file with its fate, every variant with its verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionReport {
    /// The version.
    pub version: Version,
    /// Every file of the version (wheels and source distributions): the chosen one first, then
    /// the other candidates in preference order, then the rest by name.
    pub files: Vec<CandidateFile>,
    /// Every variant label of the version's fitting wheels with its verdict: the selectable
    /// ones best first, then the rejected ones by label.
    pub variants: Vec<LabelVerdict>,
    /// When no variant with properties fits: the namespaces the rejected variants need that
    /// the target lacks (empty otherwise, and for a release without variants).
    pub needs: Vec<NamespaceNeed>,
    /// Where the variant metadata came from (`None`: not read).
    pub metadata_from: Option<Vec<Url>>,
}

impl VersionReport {
    /// Whether a file of the version was chosen.
    pub fn has_chosen(&self) -> bool {
        self.files.iter().any(|f| f.fate == CandidateFate::Chosen)
    }

    /// How many files have the fate `matches` picks.
    pub fn count(&self, matches: impl Fn(&CandidateFate) -> bool) -> usize {
        self.files.iter().filter(|f| matches(&f.fate)).count()
    }
}

/// A variant label of a version and whether it can be selected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelVerdict {
    /// The label.
    pub label: VariantLabel,
    /// Why it cannot be selected; `None` when it can.
    pub rejection: Option<VariantRejection>,
}

/// One file of a considered version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CandidateFile {
    /// The file name.
    pub filename: String,
    /// Where it is.
    pub url: Url,
    /// Its variant label, for a variant wheel.
    pub label: Option<VariantLabel>,
    /// What happened to it.
    pub fate: CandidateFate,
}

/// What happened to one file of a considered version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CandidateFate {
    /// The file to install.
    Chosen,
    /// Installable, after the chosen one; `rank` counts from 1 for the first fallback.
    Candidate {
        /// Its place in the order of preference (the chosen file is 0).
        rank: usize,
    },
    /// Its tags fit no interpreter of the target (Python, ABI or platform).
    WrongTags,
    /// Its `requires-python` excludes the target's Python.
    RequiresPython {
        /// The specifiers, as the index gave them.
        requires: String,
    },
    /// Withdrawn by its publisher (PEP 592), and the requirement does not pin the version.
    Yanked {
        /// Why, when the index says.
        reason: Option<String>,
    },
    /// The version's variant metadata does not describe its label (PEP 825: incompatible).
    LabelNotDescribed,
    /// Its variant cannot be selected for the target.
    VariantRejected(VariantRejection),
    /// The version's variant metadata is unusable, so its variant wheels are too.
    UnusableMetadata {
        /// Why, with the file at fault.
        why: String,
    },
    /// Its label's metadata could not be read.
    Unusable(UnusableReason),
    /// A source distribution: only wheels are selected.
    SdistNotConsidered,
    /// Not a valid wheel (two `.dist-info` directories, a member name that escapes, …), found
    /// when its metadata was read: installers refuse it.
    Malformed {
        /// What is wrong with it, naming the file.
        why: String,
    },
}

impl CandidateFate {
    /// Whether the file is installable (chosen or a later candidate).
    pub fn is_installable(&self) -> bool {
        matches!(self, Self::Chosen | Self::Candidate { .. })
    }
}

/// A namespace that the variants of a version need and the target does not offer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamespaceNeed {
    /// The namespace.
    pub namespace: Namespace,
    /// The labels that need it.
    pub labels: Vec<VariantLabel>,
    /// The first of their rejections naming it (what exactly is missing).
    pub rejection: Rejection,
    /// Whether a provider built into vari detects the namespace; when not, only a profile
    /// that lists it can make those variants selectable.
    pub builtin_provider: bool,
    /// Why detection found the namespace absent, when the target was detected.
    pub absent_reason: Option<String>,
}

/// `file` in the report, with its URL, its label (for a variant wheel) and its fate.
pub(crate) fn candidate(file: &impl ListedFile, fate: CandidateFate) -> CandidateFile {
    CandidateFile {
        filename: file.filename().to_owned(),
        url: file.url().clone(),
        label: file.wheel().and_then(|w| w.label.clone()),
        fate,
    }
}
