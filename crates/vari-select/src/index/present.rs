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
use vari_client::{ClientError, IndexClient, IndexFile, Project};
use vari_core::ordering::SelectionOptions;

use super::presentation::{HiddenBecause, HiddenFile, Presentation, Shown, ShownBecause};
use super::report::{CandidateFate, NamespaceNeed};
use super::tag_sets::{decide, Decided, Decision};
use super::version::variants_if_used;
use crate::target::Target;

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
    super::selecting(&project.name);
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
            None | Some(Decision::Show(None)) => presentation.shown.push(as_listed(file)),
            Some(Decision::Show(Some(variant))) => presentation.shown.push(Shown {
                file: file.clone(),
                filename: without_label(file),
                variant: Some(variant.clone()),
                because: ShownBecause::Variant {
                    because: variant.because.clone(),
                    needs: needs_of(&presentation.fallback_needs, file.version()),
                },
            }),
            Some(Decision::Hide(why)) => presentation.hidden.push(HiddenFile {
                file: file.clone(),
                why: why.clone(),
            }),
        }
    }
    explain_as_listed(&mut presentation);
    Ok(presentation)
}

/// What `version`'s variants need, when its choice is a fallback.
fn needs_of(
    fallback_needs: &[(Version, Vec<NamespaceNeed>)],
    version: &Version,
) -> Vec<NamespaceNeed> {
    fallback_needs
        .iter()
        .find(|(v, _)| v == version)
        .map(|(_, needs)| needs.clone())
        .unwrap_or_default()
}

/// Sets why each file shown as listed is shown: a non-variant wheel whose tag set's variant
/// wheels are all hidden as unusable stands in for them ([`ShownBecause::Fallback`], with the
/// first such wheel's fate in page order); other wheels have no variant for their tags.
fn explain_as_listed(presentation: &mut Presentation) {
    let mut fallbacks: HashMap<(String, String), CandidateFate> = HashMap::new();
    for hidden in &presentation.hidden {
        let HiddenBecause::Unusable(fate) = &hidden.why else {
            continue;
        };
        let Some(wheel) = hidden.file.wheel().filter(|w| w.label.is_some()) else {
            continue;
        };
        let mut plain = wheel.clone();
        plain.label = None;
        fallbacks
            .entry((wheel.version.to_string(), plain.to_string()))
            .or_insert_with(|| fate.clone());
    }
    let has_variants = presentation.has_variants;
    for shown in &mut presentation.shown {
        if shown.variant.is_some() {
            continue;
        }
        shown.because = match (has_variants, shown.file.wheel()) {
            (false, _) => ShownBecause::ProjectHasNoVariants,
            (true, None) => ShownBecause::NotAWheel,
            (true, Some(wheel)) => {
                match fallbacks.get(&(wheel.version.to_string(), wheel.to_string())) {
                    Some(fate) => ShownBecause::Fallback {
                        needs: needs_of(&presentation.fallback_needs, shown.file.version()),
                        first_fate: fate.clone(),
                    },
                    None => ShownBecause::NoVariantsForTags,
                }
            }
        };
    }
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
        because: ShownBecause::NoVariantsForTags,
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
