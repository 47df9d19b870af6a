//! The union of several targets served as one index ([`ProxySettings::union`](crate::ProxySettings::union)), for a
//! resolver that must find one version of each package that every target can install with
//! its own variant (`vari lock`: one `uv pip compile` for all its targets instead of one each).
//!
//! What a page shows, for a project with variants (a project without variants is the same
//! for every target and is served as for one):
//! - a version when any target is shown a file of it (the targets that are shown nothing of it
//!   are recorded, so that the caller can refuse a resolution that pins it for them);
//! - per version and tag set (the name a file is shown under), the file the first target (in
//!   the order given) that is shown one there is shown, as the upstream has it: the index is
//!   for resolving, so its files are never rewritten copies;
//! - its PEP 658 metadata, when some target is shown a variant wheel there, or a non-variant
//!   wheel whose METADATA has variant markers: the METADATA that target is shown (variant
//!   markers evaluated for its variant, or for a non-variant wheel) with every `Requires-Dist`
//!   entry the other targets' shown wheels state (evaluated for each one's variant) added once.
//!   A resolution over these pages therefore satisfies each target's dependencies at once.
//!
//! Each page also records, per version, what every target is shown ([`UnionShown`]):
//! [`RunningProxy::union_view`](crate::RunningProxy::union_view) gives it, from which the caller
//! walks each target's own dependency closure over the union's pins and checks that each
//! target can use a file of every release in it.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use pep440_rs::Version;
use vari_client::{CoreMetadata, Hashes, IndexFile, Project, ProjectName};
use vari_core::markers::VariantMarkerContext;
use vari_core::metadata::{resolve_variant_markers, variant_marker_requirements};
use vari_select::{Presentation, Shown};

use crate::context::Context;
use crate::error::ServeError;
use crate::pages::{
    entry, from_presentation, presented, render, sha256_hex, upstream_fresh_until,
    MetadataDelivery, ProjectPage,
};
use crate::union_view::{UnionShown, UnionVersion};

/// The files shown under one name (one version and tag set), per target.
struct Slot<'a> {
    filename: &'a str,
    /// The target whose file is listed, and that file.
    first: (usize, &'a Shown),
    /// Per target, what it is shown under this name.
    shown: Vec<Option<&'a Shown>>,
}

/// Reads the upstream and builds the union page of `name` (a project without variants: the
/// page a single target gets, which every target would get).
pub(crate) async fn build(
    context: Arc<Context>,
    name: ProjectName,
) -> Result<ProjectPage, ServeError> {
    let started = Instant::now();
    let (project, first) = presented(&context, &name).await?;
    if !first.has_variants {
        return from_presentation(context, project, first, started).await;
    }
    let mut page = union_page(&context, &project, first).await?;
    page.upstream_fresh_until = upstream_fresh_until(&project, started);
    Ok(page)
}

/// The union page of `project`; `first`: the first target's presentation, already made.
async fn union_page(
    context: &Arc<Context>,
    project: &Project,
    first: Presentation,
) -> Result<ProjectPage, ServeError> {
    let mut presentations = vec![first];
    for target in &context.union[1..] {
        let presentation =
            vari_select::present(&context.client, project, target, &context.selection)
                .await
                .map_err(ServeError::client)?;
        presentations.push(presentation);
    }
    let targets = presentations.len();
    let mut slots: Vec<Slot<'_>> = Vec::new();
    for (at, presentation) in presentations.iter().enumerate() {
        for shown in &presentation.shown {
            let slot = match slots.iter().position(|s| s.filename == shown.filename) {
                Some(found) => found,
                None => {
                    slots.push(Slot {
                        filename: &shown.filename,
                        first: (at, shown),
                        shown: vec![None; targets],
                    });
                    slots.len() - 1
                }
            };
            slots[slot].shown[at].get_or_insert(shown);
        }
    }
    // The METADATA of every wheel shown (variant or not: a non-variant wheel's variant markers
    // are evaluated too, [`crate::pages::evaluates_markers`]), read once each and in parallel
    // (the client bounds it).
    let mut files: Vec<&IndexFile> = Vec::new();
    for slot in &slots {
        for shown in slot.shown.iter().flatten() {
            let read = shown.variant.is_some() || shown.file.wheel().is_some();
            if read && !files.iter().any(|f| f.url == shown.file.url) {
                files.push(&shown.file);
            }
        }
    }
    let read = futures_util::future::join_all(files.iter().map(|file| context.core_metadata(file)));
    let mut texts: HashMap<&url::Url, Arc<str>> = HashMap::new();
    let mut unread: HashMap<&url::Url, vari_client::ClientError> = HashMap::new();
    for (file, text) in files.iter().zip(read.await) {
        match text {
            Ok(text) => {
                texts.insert(&file.url, text);
            }
            Err(e) => {
                unread.insert(&file.url, e);
            }
        }
    }
    let mut views: BTreeMap<Version, Vec<UnionShown>> = BTreeMap::new();
    let mut entries = Vec::with_capacity(slots.len());
    for slot in &slots {
        let (at, shown) = slot.first;
        // Without a METADATA text, `entry` keeps the upstream file and its metadata.
        let mut entry = entry(context, &presentations[at], shown, None);
        let view = views
            .entry(shown.file.version().clone())
            .or_insert_with(|| vec![UnionShown::Nothing; targets]);
        if has_variant(slot) {
            // A variant's METADATA is needed to state its dependencies.
            for shown in slot.shown.iter().flatten() {
                if let Some(e) = unread.remove(&shown.file.url) {
                    return Err(ServeError::client(e));
                }
            }
        }
        // Non-variant wheels only: served as the upstream has them unless a variant marker
        // needs evaluating (one that cannot be read is served as listed).
        if !has_variant(slot) && !has_variant_markers(slot, &texts) {
            for (seen, shown) in view.iter_mut().zip(&slot.shown) {
                if shown.is_some() && *seen == UnionShown::Nothing {
                    *seen = UnionShown::AsUpstream;
                }
            }
            entries.push(entry);
            continue;
        }
        let mut merged: Option<String> = None;
        for (seen, shown) in view.iter_mut().zip(&slot.shown) {
            let Some(shown) = shown else { continue };
            let text = texts
                .get(&shown.file.url)
                .map(|t| evaluated(context, shown, t))
                .unwrap_or_default();
            let requires = vari_select::requires_dist(&text);
            match &mut merged {
                None => merged = Some(text),
                Some(merged) => add_requirements(merged, &requires),
            }
            match seen {
                UnionShown::Requires(known) => {
                    for requirement in requires {
                        if !known.contains(&requirement) {
                            known.push(requirement);
                        }
                    }
                }
                _ => *seen = UnionShown::Requires(requires),
            }
        }
        let bytes = Bytes::from(merged.unwrap_or_default().into_bytes());
        entry.listed.core_metadata =
            CoreMetadata::Available(Hashes::sha256_of(&sha256_hex(&bytes)));
        entry.metadata = MetadataDelivery::Text(bytes);
        entries.push(entry);
    }
    tracing::debug!(
        "{}: union page of {targets} targets built ({} files shown)",
        project.name,
        entries.len()
    );
    let mut page = render(
        project.name.clone(),
        Instant::now(),
        entries,
        &context.rewrites,
    );
    page.union = views
        .into_iter()
        .map(|(version, shown)| UnionVersion {
            version: version.to_string(),
            shown,
        })
        .collect();
    Ok(page)
}

fn has_variant(slot: &Slot<'_>) -> bool {
    slot.shown.iter().flatten().any(|s| s.variant.is_some())
}

/// Whether the METADATA read of a wheel of `slot` has a `Requires-Dist` with a variant marker.
fn has_variant_markers(slot: &Slot<'_>, texts: &HashMap<&url::Url, Arc<str>>) -> bool {
    slot.shown.iter().flatten().any(|shown| {
        texts
            .get(&shown.file.url)
            .is_some_and(|text| !variant_marker_requirements(text).is_empty())
    })
}

/// The METADATA `shown` is served with: variant markers evaluated for its variant, or for a
/// non-variant wheel (as it is when they cannot be: as a single target's page serves it).
fn evaluated(context: &Context, shown: &Shown, text: &str) -> String {
    let non_variant = VariantMarkerContext::non_variant();
    let markers = shown.variant.as_ref().map_or(&non_variant, |v| &v.markers);
    match resolve_variant_markers(text, markers) {
        Ok(Some(rewritten)) => rewritten,
        Ok(None) => text.to_owned(),
        Err(e) => {
            context.log_once(
                tracing::Level::WARN,
                format!(
                    "{}: cannot evaluate the variant markers of its METADATA ({e}); using it \
                     as it is",
                    shown.file.filename
                ),
            );
            text.to_owned()
        }
    }
}

/// Adds each of `requirements` that `metadata` does not state as a `Requires-Dist` field at
/// the end of its header block.
fn add_requirements(metadata: &mut String, requirements: &[String]) {
    let stated = vari_select::requires_dist(metadata);
    let added: String = requirements
        .iter()
        .filter(|r| !stated.contains(r))
        .map(|r| format!("Requires-Dist: {r}\n"))
        .collect();
    if added.is_empty() {
        return;
    }
    // The header block ends at the first empty line (the body, when there is one, follows).
    let blank = metadata
        .match_indices('\n')
        .map(|(at, _)| at + 1)
        .find(|&start| matches!(metadata[start..].split('\n').next(), Some("" | "\r")));
    let end = match blank.filter(|&start| start < metadata.len()) {
        Some(start) => start,
        None => {
            if !metadata.is_empty() && !metadata.ends_with('\n') {
                metadata.push('\n');
            }
            metadata.len()
        }
    };
    metadata.insert_str(end, &added);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requirements_are_added_once_to_the_header_block() {
        let mut text = "Metadata-Version: 2.1\nName: a\nRequires-Dist: b\n\nbody\n".to_owned();
        add_requirements(&mut text, &["b".to_owned(), "c>=1".to_owned()]);
        assert_eq!(
            text,
            "Metadata-Version: 2.1\nName: a\nRequires-Dist: b\nRequires-Dist: c>=1\n\nbody\n"
        );
        assert_eq!(vari_select::requires_dist(&text), ["b", "c>=1"]);
        let mut bare = "Name: a".to_owned();
        add_requirements(&mut bare, &["c".to_owned()]);
        assert_eq!(bare, "Name: a\nRequires-Dist: c\n");
        let mut crlf = "Name: a\r\n\r\nbody".to_owned();
        add_requirements(&mut crlf, &["c".to_owned()]);
        assert_eq!(crlf, "Name: a\r\nRequires-Dist: c\n\r\nbody");
    }
}
