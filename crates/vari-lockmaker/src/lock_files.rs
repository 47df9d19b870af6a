//! The files `vari lock` lists for each pinned release: read from the upstream index (not the
//! proxy, which shows one variant per target), kept when some target can use them.
//!
//! The rule, per wheel: it is kept when one target accepts its tags (Python, ABI, platform)
//! and its variant: a non-variant wheel always, the null variant always, another label when
//! the target's hardware can select it ([`vari_select::choose`]'s selectable labels; a target
//! described without hardware keeps every label the metadata describes). A source
//! distribution is kept only when some target has no kept wheel. Labels the release's
//! metadata does not describe are never kept (PEP 825: such wheels are incompatible).
//!
//! Every kept file needs a SHA-256: when the index does not list one, the file is streamed
//! and hashed (never held in memory). `Requires-Dist` comes from one wheel per kept label and
//! one kept non-variant wheel (PEP 658 metadata, else a range read of the wheel). Behind the
//! run's proxy ([`Texts`]) that wheel is one whose METADATA the proxy read for uv already, so
//! that no text uv made the proxy read is read again.

use std::collections::{BTreeMap, BTreeSet};

use futures_util::stream::{self, StreamExt, TryStreamExt};
use pep440_rs::Version;
use vari_client::{
    ClientError, FileKind, FileSource, IndexClient, IndexFile, Project, ProjectName,
    VersionVariants,
};
use vari_core::metadata::VariantMetadata;
use vari_core::ordering::{is_null_variant, SelectionOptions};
use vari_core::VariantLabel;
use vari_lock::{Artifact, LockedRelease};
use vari_proxy::RunningProxy;
use vari_select::{choose, Release, ReleaseFile, Target};

/// Where the METADATA texts of kept wheels come from.
#[derive(Clone, Copy, Default)]
pub(crate) enum Texts<'a> {
    /// Read from the index with the lock maker's client.
    #[default]
    Index,
    /// The proxy uv resolved through: a text it keeps (read for uv) of any wheel alike,
    /// else read through it (and kept there for the next run).
    Proxy(&'a RunningProxy),
    /// Listing ahead while uv resolves through the proxy: a text it keeps, or the index's
    /// `.metadata`; a wheel that needs range reads is left for after the resolution
    /// ([`LockFilesError::Deferred`]), when the proxy holds the text of whichever wheel uv
    /// read, so that no wheel is read twice.
    Ahead(&'a RunningProxy),
}

/// One target of a lock, for choosing the files to keep.
#[derive(Debug, Clone)]
pub struct LockFilesTarget {
    /// Its name in the lock.
    pub name: String,
    /// The target: its tags and hardware.
    pub target: Target,
    /// Whether its hardware was described (a profile): otherwise every variant is kept.
    pub has_hardware: bool,
}

/// Why the files of a release could not be listed.
#[derive(Debug, thiserror::Error)]
pub enum LockFilesError {
    /// The index could not be read.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// The name uv pinned is not a project name.
    #[error("{0}: not a project name")]
    Name(String),
    /// The index lists nothing a target can install for the pinned version.
    #[error("{name} {version}: the index lists no file for this version that the targets can use")]
    NoFiles {
        /// The project.
        name: String,
        /// The version.
        version: String,
    },
    /// A kept file has no SHA-256 and the index does not serve it.
    #[error("{url}: no SHA-256 on the index, and the file is not there to hash")]
    Missing {
        /// The file.
        url: url::Url,
    },
    /// A listing made ahead of the resolution (while uv still runs) left a wheel's METADATA for
    /// after it; never returned by a listing made after the resolution.
    #[error("{name} {version}: its METADATA is read after the resolution")]
    Deferred {
        /// The project.
        name: String,
        /// The version.
        version: String,
    },
    /// The pinned version is not a version.
    #[error("{name}: `{version}` is not a version")]
    Version {
        /// The project.
        name: String,
        /// What uv wrote.
        version: String,
    },
}

/// A pinned release with the names of the targets that pinned it.
#[derive(Debug, Clone)]
pub struct PinnedRelease {
    /// The normalised name.
    pub name: String,
    /// The version.
    pub version: String,
    /// The targets whose resolution pinned it, in the targets' order.
    pub targets: Vec<String>,
}

/// The kept files of every pinned release, with their `Requires-Dist` and narrowed variant
/// metadata; releases in parallel, bounded by the client's concurrency.
pub async fn locked_releases(
    client: &IndexClient,
    pins: &[PinnedRelease],
    targets: &[LockFilesTarget],
    selection: &SelectionOptions,
) -> Result<Vec<LockedRelease>, LockFilesError> {
    locked_releases_reporting(client, Texts::Index, pins, targets, selection, &|_| {}).await
}

/// [`locked_releases`], calling `on_listed` as each release's files are listed (for progress).
pub(crate) async fn locked_releases_reporting(
    client: &IndexClient,
    texts: Texts<'_>,
    pins: &[PinnedRelease],
    targets: &[LockFilesTarget],
    selection: &SelectionOptions,
    on_listed: &(dyn Fn(&PinnedRelease) + Sync),
) -> Result<Vec<LockedRelease>, LockFilesError> {
    let concurrency = client.settings().concurrency.max(1);
    stream::iter(pins.iter().map(|pin| async move {
        let release = locked_release(client, texts, pin, targets, selection).await;
        on_listed(pin);
        release
    }))
    .buffered(concurrency)
    .try_collect()
    .await
}

/// The kept files of one pinned release ([`locked_releases`] for one pin).
pub(crate) async fn locked_release(
    client: &IndexClient,
    texts: Texts<'_>,
    pin: &PinnedRelease,
    targets: &[LockFilesTarget],
    selection: &SelectionOptions,
) -> Result<LockedRelease, LockFilesError> {
    let name = ProjectName::new(&pin.name).map_err(|_| LockFilesError::Name(pin.name.clone()))?;
    let project = client.project(&name).await?;
    locked_release_of(client, texts, &project, pin, targets, selection).await
}

/// [`locked_release`] from the project's files as already read from the sources.
pub(crate) async fn locked_release_of(
    client: &IndexClient,
    texts: Texts<'_>,
    project: &Project,
    pin: &PinnedRelease,
    targets: &[LockFilesTarget],
    selection: &SelectionOptions,
) -> Result<LockedRelease, LockFilesError> {
    let version: Version = pin.version.parse().map_err(|_| LockFilesError::Version {
        name: pin.name.clone(),
        version: pin.version.clone(),
    })?;
    let files: Vec<&IndexFile> = project.files_of(&version).collect();
    let wheels: Vec<&IndexFile> = files
        .iter()
        .copied()
        .filter(|f| f.wheel().is_some())
        .collect();
    let metadata = match wheels
        .iter()
        .any(|f| f.wheel().is_some_and(|w| w.label.is_some()))
    {
        true => match client.variant_metadata(project, &version).await? {
            VersionVariants::Described(described) => described.metadata,
            VersionVariants::NoVariants | VersionVariants::Unusable(_) => None,
        },
        false => None,
    };
    let release = metadata.as_ref().map(|meta| Release {
        name: Some(pin.name.clone()),
        metadata: meta.clone(),
        files: wheels
            .iter()
            .filter_map(|f| {
                Some(ReleaseFile {
                    filename: f.wheel()?.clone(),
                    location: f.url.to_string(),
                })
            })
            .collect(),
        has_files: true,
        unusable: Vec::new(),
        warnings: Vec::new(),
    });
    // Per target, the labels it may use.
    let allowed: Vec<BTreeSet<VariantLabel>> = targets
        .iter()
        .map(|t| allowed_labels(release.as_ref(), metadata.as_ref(), t, selection))
        .collect();
    let fits = |t: &LockFilesTarget, f: &IndexFile| {
        f.wheel()
            .is_some_and(|w| t.target.python.tags().wheel_priority(w).is_some())
    };
    let kept: Vec<&IndexFile> = wheels
        .iter()
        .copied()
        .filter(|file| {
            let label = file.wheel().and_then(|w| w.label.as_ref());
            targets.iter().zip(&allowed).any(|(t, labels)| {
                fits(t, file) && label.is_none_or(|label| labels.contains(label))
            })
        })
        .collect();
    let needs_sdist = targets.iter().any(|t| !kept.iter().any(|f| fits(t, f)));
    let sdist = match needs_sdist {
        true => files
            .iter()
            .copied()
            .find(|f| matches!(f.kind, FileKind::Sdist { .. })),
        false => None,
    };
    if kept.is_empty() && sdist.is_none() {
        return Err(LockFilesError::NoFiles {
            name: pin.name.clone(),
            version: pin.version.clone(),
        });
    }
    let kept_labels: Vec<VariantLabel> = kept
        .iter()
        .filter_map(|f| f.wheel().and_then(|w| w.label.clone()))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let requires_dist =
        requires_dist(client, texts, &kept)
            .await?
            .ok_or_else(|| LockFilesError::Deferred {
                name: pin.name.clone(),
                version: pin.version.clone(),
            })?;
    let mut wheels_out = Vec::with_capacity(kept.len());
    for file in &kept {
        wheels_out.push(artifact(client, file).await?);
    }
    let sdist = match sdist {
        Some(file) => Some(artifact(client, file).await?),
        None => None,
    };
    let requires_python = kept
        .iter()
        .chain(
            sdist
                .is_some()
                .then_some(files.iter())
                .into_iter()
                .flatten(),
        )
        .find_map(|f| f.requires_python.as_ref().map(ToString::to_string));
    let index = kept
        .iter()
        .chain(files.iter())
        .find_map(|f| match &f.source {
            FileSource::Index(url) => Some(url.to_string()),
            FileSource::FindLinks(_) => None,
        });
    Ok(LockedRelease {
        name: pin.name.clone(),
        version,
        index,
        wheels: wheels_out,
        sdist,
        variants_json: metadata
            .filter(|_| !kept_labels.is_empty())
            .map(|meta| meta.keep_labels(&kept_labels)),
        requires_dist,
        requires_python,
        targets: pin.targets.clone(),
    })
}

/// The labels `target` may use: the null variant, and those its hardware can select (every
/// described label for a target without hardware).
fn allowed_labels(
    release: Option<&Release>,
    metadata: Option<&VariantMetadata>,
    target: &LockFilesTarget,
    selection: &SelectionOptions,
) -> BTreeSet<VariantLabel> {
    let (Some(release), Some(metadata)) = (release, metadata) else {
        return BTreeSet::new();
    };
    let mut allowed: BTreeSet<VariantLabel> = metadata
        .variants
        .iter()
        .filter(|(_, properties)| !target.has_hardware || is_null_variant(properties))
        .map(|(label, _)| label.clone())
        .collect();
    if target.has_hardware {
        allowed.extend(choose(release, &target.target, selection).order);
    }
    allowed
}

/// The `Requires-Dist` entries of one wheel per kept label and of one kept non-variant wheel,
/// each once, in the order read; `None` when [`Texts::Ahead`] left a text for later.
async fn requires_dist(
    client: &IndexClient,
    texts: Texts<'_>,
    kept: &[&IndexFile],
) -> Result<Option<Vec<String>>, LockFilesError> {
    let mut per_label: BTreeMap<Option<VariantLabel>, Vec<&IndexFile>> = BTreeMap::new();
    for file in kept {
        let label = file.wheel().and_then(|w| w.label.clone());
        per_label.entry(label).or_default().push(file);
    }
    let mut entries: Vec<String> = Vec::new();
    for alike in per_label.values() {
        let Some(text) = metadata_text(client, texts, alike).await? else {
            return Ok(None);
        };
        for entry in vari_select::requires_dist(&text) {
            if !entries.contains(&entry) {
                entries.push(entry);
            }
        }
    }
    Ok(Some(entries))
}

/// The METADATA text of one of `alike` (kept wheels of one label, the first preferred), from
/// where `texts` says.
async fn metadata_text(
    client: &IndexClient,
    texts: Texts<'_>,
    alike: &[&IndexFile],
) -> Result<Option<String>, LockFilesError> {
    let Some(first) = alike.first() else {
        return Ok(Some(String::new()));
    };
    let text = match texts {
        Texts::Index => Some(client.core_metadata(first).await?),
        Texts::Proxy(proxy) => proxy
            .metadata_of_any(alike, true)
            .await?
            .map(|text| text.to_string()),
        Texts::Ahead(proxy) => match proxy.metadata_of_any(alike, false).await? {
            Some(text) => Some(text.to_string()),
            // The index's own `.metadata` costs what uv pays for it; read through the proxy
            // (which serves uv that text from memory when it picks the same wheel).
            None if matches!(first.core_metadata, vari_client::CoreMetadata::Available(_)) => proxy
                .metadata_of_any(&alike[..1], true)
                .await?
                .map(|text| text.to_string()),
            None => None,
        },
    };
    Ok(text)
}

/// The lock's entry for `file`: its URL, size, upload time and SHA-256 (hashed from the file
/// when the index lists none).
async fn artifact(client: &IndexClient, file: &IndexFile) -> Result<Artifact, LockFilesError> {
    let sha256 = match file.hashes.sha256() {
        Some(digest) => digest.to_ascii_lowercase(),
        None => client
            .sha256(&file.url)
            .await?
            .ok_or_else(|| LockFilesError::Missing {
                url: file.url.clone(),
            })?,
    };
    Ok(Artifact {
        name: None,
        url: Some(file.url.to_string()),
        path: None,
        size: file.size,
        upload_time: file.upload_time.clone(),
        hashes: [("sha256".to_owned(), sha256)].into(),
    })
}
