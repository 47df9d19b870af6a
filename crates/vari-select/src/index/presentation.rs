//! What an installer that does not understand variants should see of one project, as data:
//! the files shown (with why), the files and versions hidden (with why). [`super::present`]
//! builds it; the version-by-version decisions ([`super::tag_sets`]) use its types.

use pep440_rs::Version;
use vari_client::{IndexFile, ProjectName};
use vari_core::markers::VariantMarkerContext;
use vari_core::VariantLabel;

use super::report::{CandidateFate, ChosenBecause, NamespaceNeed, VersionReport};

/// One project as an installer that does not understand variants should see it.
#[derive(Debug, Clone)]
pub struct Presentation {
    /// The project.
    pub name: ProjectName,
    /// Whether any version has variant wheels or a `variants.json` (false: every file is shown
    /// as the sources list it).
    pub has_variants: bool,
    /// Files the installer sees, in the upstream page's order (sources in order, then page
    /// order).
    pub shown: Vec<Shown>,
    /// Files kept from the installer, each with why, in the upstream page's order.
    pub hidden: Vec<HiddenFile>,
    /// Versions with variant wheels of which no wheel that fits the target is shown, newest
    /// first, each with its report: every file's fate, and [`VersionReport::needs`] (what
    /// hardware would fit). Files for other tags may still be shown for such a version.
    pub hidden_versions: Vec<VersionReport>,
    /// Versions of which the target's choice is a fallback (the null variant, or a non-variant
    /// wheel) because no variant with properties fits, newest first, each with what its
    /// variants need that the target lacks (as [`VersionReport::needs`]); versions whose
    /// variants need nothing hardware would change are left out.
    pub fallback_needs: Vec<(Version, Vec<NamespaceNeed>)>,
    /// Problems that did not stop the presentation: skipped links, unusable or partly invalid
    /// variant metadata (newest version first).
    pub warnings: Vec<String>,
}

/// A file the installer sees.
#[derive(Debug, Clone, PartialEq)]
pub struct Shown {
    /// The file as the upstream source lists it (URL, hashes, `requires-python`, yanked, core
    /// metadata…).
    pub file: IndexFile,
    /// The name the installer sees: a variant wheel's name without its label, else the
    /// upstream name.
    pub filename: String,
    /// Set when `file` is a variant wheel (the null variant included).
    pub variant: Option<ShownVariant>,
    /// Why it is shown, as data (a front-end words it).
    pub because: ShownBecause,
}

/// Why a file is shown to the installer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShownBecause {
    /// No version of the project has variant wheels: every file is shown as listed.
    ProjectHasNoVariants,
    /// A wheel whose tag set has no variant wheel (or whose version has none), shown as listed.
    NoVariantsForTags,
    /// Not a wheel (a source distribution): shown as listed.
    NotAWheel,
    /// The variant chosen for its tag set ([`Shown::variant`]).
    Variant {
        /// Why this variant ([`ShownVariant::because`]).
        because: ChosenBecause,
        /// When the choice is a fallback (the null variant): what the version's variants need
        /// that the target lacks (as [`VersionReport::needs`]); empty otherwise.
        needs: Vec<NamespaceNeed>,
    },
    /// The non-variant wheel of a tag set none of whose variants can be used, shown in their
    /// place.
    Fallback {
        /// What the version's variants need that the target lacks, when hardware would change
        /// that (as [`VersionReport::needs`]); empty otherwise.
        needs: Vec<NamespaceNeed>,
        /// The fate of the tag set's first hidden variant wheel (in page order).
        first_fate: CandidateFate,
    },
}

/// The variant behind a shown variant wheel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShownVariant {
    /// Its label.
    pub label: VariantLabel,
    /// The values its dependencies' variant markers are evaluated against.
    pub markers: VariantMarkerContext,
    /// Why this variant. For a tag set the target cannot install, the best variant of that
    /// tag set for the target's hardware.
    pub because: ChosenBecause,
}

/// A file kept from the installer.
#[derive(Debug, Clone, PartialEq)]
pub struct HiddenFile {
    /// The file as the upstream source lists it.
    pub file: IndexFile,
    /// Why it is hidden.
    pub why: HiddenBecause,
}

/// Why a file is kept from the installer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HiddenBecause {
    /// Another variant of the same version and tags is better for the target (or, for tags
    /// the target can install, another variant of the version is the target's choice).
    AnotherVariantChosen {
        /// The upstream name of the variant wheel chosen instead (with its label).
        chosen: String,
    },
    /// A non-variant wheel whose place a fitting variant wheel takes.
    ReplacedByVariant {
        /// The upstream name of that variant wheel (with its label).
        chosen: String,
    },
    /// The variant cannot be used on the target (label not described, variant rejected,
    /// unusable metadata…), as the selector judged it.
    Unusable(CandidateFate),
}
