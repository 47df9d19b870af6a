//! What an installer that does not understand variants (released pip and uv) should see of one
//! project for a target: per version and tag set the variant wheel chosen for the target under
//! its name without the label, the other variants and the non-variant wheel it replaces hidden,
//! each hidden file and each version left without a fitting wheel with its reason as data.
//!
//! A variant-aware proxy index serves this; the rules are those of [`crate::choose`] and
//! [`crate::select`] (`spec/format.md` §9), applied to every tag set rather than only to the
//! target's best one. Which files of one version are shown is decided in `tag_sets`.

use std::collections::{BTreeMap, HashMap};

use futures_util::stream::{self, StreamExt, TryStreamExt};
use pep440_rs::Version;
use vari_client::{ClientError, IndexClient, IndexFile, Project, ProjectName};
use vari_core::markers::VariantMarkerContext;
use vari_core::ordering::SelectionOptions;
use vari_core::VariantLabel;

use super::report::{CandidateFate, ChosenBecause, NamespaceNeed, VersionReport};
use super::tag_sets::{decide, Decided, Decision};
use super::version::variants_if_used;
use crate::target::Target;

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

/// What an installer that does not understand variants should see of `project` for `target`.
///
/// Versions without variant wheels are shown as they are, and their variant metadata is not
/// read. For every other version the variant metadata is read (versions in parallel, bounded
/// by the client's concurrency), and per tag set (the wheel name without its label) the best
/// variant for the target's hardware is shown under the name without its label; the other
/// variants and the tag set's non-variant wheel are hidden. When no variant of a tag set fits,
/// its non-variant wheel is shown as it is. For the tags the target installs, labels rank
/// before tags, as [`crate::select`] ranks them: when a variant wheel is the target's choice,
/// every other fitting wheel of the version is hidden, so that an installer preferring better
/// tags still takes that choice. Unusable variant metadata hides the version's variant wheels
/// only. Source distributions are shown; `requires-python` is left to the installer. Yanked
/// wheels are hidden when a wheel of the version that the target can install is not yanked
/// (PEP 592: an installer would pass over them), else judged as usual and shown yanked (for
/// a requirement that pins the version); `variants.json` links are never shown.
///
/// Fails when the variant metadata of a version cannot be fetched at all (offline, timeout).
///
/// ```no_run
/// # async fn run(target: vari_select::Target) -> Result<(), vari_client::ClientError> {
/// use vari_client::{ClientSettings, IndexClient, IndexUrl, ProjectName};
/// use vari_core::ordering::SelectionOptions;
/// let client = IndexClient::new(ClientSettings {
///     indexes: vec![IndexUrl::parse("https://pypi.org/simple/").unwrap()],
///     ..ClientSettings::default()
/// })?;
/// let project = client.project(&ProjectName::new("torch").unwrap()).await?;
/// let page = vari_select::present(&client, &project, &target, &SelectionOptions::default()).await?;
/// for shown in &page.shown {
///     println!("{} is served as {}", shown.file.filename, shown.filename);
/// }
/// # Ok(()) }
/// ```
pub async fn present(
    client: &IndexClient,
    project: &Project,
    target: &Target,
    options: &SelectionOptions,
) -> Result<Presentation, ClientError> {
    let by_version = labelled_versions(project);
    let has_variants = !by_version.is_empty() || !project.variants_json.is_empty();
    let concurrency = client.settings().concurrency.max(1);
    // Newest first, so reports and warnings come out in the order `select` gives them.
    let decided: Vec<(&Version, Decided<'_>)> = stream::iter(by_version.into_iter().rev().map(
        |(version, files)| async move {
            let variants = variants_if_used(client, project, version, options).await?;
            let decided = decide(project, version, &files, variants, target, options);
            Ok::<_, ClientError>((version, decided))
        },
    ))
    .buffered(concurrency)
    .try_collect()
    .await?;

    let mut presentation = Presentation {
        name: project.name.clone(),
        has_variants,
        shown: Vec::with_capacity(project.files.len()),
        hidden: Vec::new(),
        hidden_versions: Vec::new(),
        fallback_needs: Vec::new(),
        warnings: project.warnings.iter().map(ToString::to_string).collect(),
    };
    let mut decisions: BTreeMap<&Version, HashMap<&str, Decision>> = BTreeMap::new();
    for (version, decided) in decided {
        presentation.warnings.extend(decided.warnings);
        presentation.hidden_versions.extend(decided.hidden_version);
        if !decided.fallback_needs.is_empty() {
            let needs = decided.fallback_needs;
            presentation.fallback_needs.push((version.clone(), needs));
        }
        decisions.insert(version, decided.decisions);
    }
    for file in &project.files {
        let decision = decisions
            .get(file.version())
            .and_then(|d| d.get(file.filename.as_str()));
        match decision {
            None => presentation.shown.push(as_listed(file)),
            Some(Decision::Show(None)) => presentation.shown.push(as_listed(file)),
            Some(Decision::Show(Some(variant))) => presentation.shown.push(Shown {
                file: file.clone(),
                filename: without_label(file),
                variant: Some(variant.clone()),
            }),
            Some(Decision::Hide(why)) => presentation.hidden.push(HiddenFile {
                file: file.clone(),
                why: why.clone(),
            }),
        }
    }
    Ok(presentation)
}

/// The files of every version that has a labelled wheel, by version.
fn labelled_versions(project: &Project) -> BTreeMap<&Version, Vec<&IndexFile>> {
    let mut by_version: BTreeMap<&Version, Vec<&IndexFile>> = BTreeMap::new();
    for file in &project.files {
        if file.wheel().is_some_and(|w| w.label.is_some()) {
            by_version.entry(file.version()).or_default();
        }
    }
    if by_version.is_empty() {
        return by_version;
    }
    for file in &project.files {
        if let Some(files) = by_version.get_mut(file.version()) {
            files.push(file);
        }
    }
    by_version
}

fn as_listed(file: &IndexFile) -> Shown {
    Shown {
        file: file.clone(),
        filename: file.filename.clone(),
        variant: None,
    }
}

/// A variant wheel's upstream name without its label (`…-manylinux_2_28_x86_64-cuda12.8.whl`
/// → `…-manylinux_2_28_x86_64.whl`); the rest of the name is kept as the source spelled it.
fn without_label(file: &IndexFile) -> String {
    let stripped = file
        .filename
        .strip_suffix(".whl")
        .and_then(|stem| stem.rsplit_once('-'))
        .map(|(rest, _label)| format!("{rest}.whl"));
    match (stripped, file.wheel()) {
        (Some(name), Some(w)) if w.label.is_some() => name,
        // Not a variant wheel: the name stays. (A parsed variant wheel always ends in
        // `-{label}.whl`; the canonical rendering is only a guard.)
        (_, Some(w)) if w.label.is_some() => {
            let mut plain = w.clone();
            plain.label = None;
            plain.to_string()
        }
        _ => file.filename.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vari_client::{CoreMetadata, FileKind, FileSource, Hashes};

    fn file(name: &str) -> IndexFile {
        let url = url::Url::parse(&format!("https://files.example/{name}")).unwrap();
        IndexFile {
            filename: name.to_owned(),
            kind: FileKind::Wheel(name.parse().unwrap()),
            url: url.clone(),
            hashes: Hashes::default(),
            requires_python: None,
            yanked: None,
            core_metadata: CoreMetadata::Absent,
            size: None,
            upload_time: None,
            source: FileSource::Index(url),
        }
    }

    #[test]
    fn the_label_is_dropped_and_the_rest_kept_as_spelled() {
        let cases = [
            (
                "torch-2.10.0-cp312-cp312-manylinux_2_28_x86_64-cuda12.8.whl",
                "torch-2.10.0-cp312-cp312-manylinux_2_28_x86_64.whl",
            ),
            (
                "Demo_Pkg-1.0-1b-py2.py3-none-any-null.whl",
                "Demo_Pkg-1.0-1b-py2.py3-none-any.whl",
            ),
            ("demo-1.0-py3-none-any.whl", "demo-1.0-py3-none-any.whl"),
            ("demo-1.0-2-py3-none-any.whl", "demo-1.0-2-py3-none-any.whl"),
        ];
        for (upstream, shown) in cases {
            assert_eq!(without_label(&file(upstream)), shown, "{upstream}");
        }
    }
}
