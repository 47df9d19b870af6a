//! Variant metadata of one version from an index (PEP 825 "Installing a package from an
//! index", steps 5–6): the version's `{name}-{version}-variants.json` when a source links
//! it, otherwise the `*.dist-info/variant.json` of one wheel per label, read with range
//! requests and combined.
//!
//! The outcome is data for the selector: the metadata with the labels it does not describe
//! (their wheels are incompatible), or why the metadata is unusable (then the version's variant
//! wheels are unusable and its non-variant wheels still count).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use futures_util::stream::{self, StreamExt};
use pep440_rs::Version;
use url::Url;
use vari_core::filename::WheelFilename;
use vari_core::metadata::{
    combine, read_json_lenient, CombineError, MetadataError, SourceKind, VariantMetadata,
};
use vari_core::VariantLabel;

use crate::error::{ClientError, HashMismatch};
use crate::http::Http;
use crate::limits::BodyKind;
use crate::range::read_member;
use crate::simple::{IndexFile, Project};

/// What an index says about the variants of one version.
#[derive(Debug, Clone, PartialEq)]
pub enum VersionVariants {
    /// The version has no variant wheels: nothing to describe.
    NoVariants,
    /// Metadata for the version's variant wheels.
    Described(DescribedVariants),
    /// The metadata cannot be used: the version's variant wheels are unusable (warn), its
    /// non-variant wheels are not affected.
    Unusable(UnusableVariants),
}

/// Usable variant metadata of a version.
#[derive(Debug, Clone, PartialEq)]
pub struct DescribedVariants {
    /// The combined metadata. `None` when no wheel's metadata could be read (every label is
    /// then missing).
    pub metadata: Option<VariantMetadata>,
    /// Where it came from.
    pub origin: MetadataOrigin,
    /// Labels of wheels that the metadata does not describe: those wheels are incompatible
    /// (PEP 825, step 6).
    pub missing_labels: BTreeSet<VariantLabel>,
    /// Problems that did not make the metadata unusable: dropped variant entries, wheels
    /// whose `variant.json` is missing or broken, an unreachable `variants.json` that was
    /// replaced by the wheels' own metadata.
    pub warnings: Vec<String>,
}

/// Where variant metadata was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MetadataOrigin {
    /// Index-level `*-variants.json` files (one per source that links one).
    IndexFiles(Vec<Url>),
    /// The `variant.json` inside these wheels (one per label), read with range requests.
    Wheels(Vec<Url>),
}

/// Variant metadata that cannot be used, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct UnusableVariants {
    /// The file at fault (the first, when several sources were combined).
    pub url: Url,
    /// Why.
    pub reason: UnusableReason,
}

/// Why a version's variant metadata is unusable.
#[derive(Debug, Clone, PartialEq)]
pub enum UnusableReason {
    /// Its `$schema` names a schema version vari does not read (an unknown major version
    /// must be rejected, PEP 825).
    UnknownSchema(MetadataError),
    /// It is not valid metadata (not JSON, or problems outside the variant entries).
    Corrupt(Vec<MetadataError>),
    /// Its sources contradict each other.
    Inconsistent(CombineError),
    /// Its content does not have the hash the index lists for it: it is not the file the index
    /// vouches for, so none of it is used (as a wheel with a wrong hash is not installed).
    HashMismatch(Box<HashMismatch>),
}

impl fmt::Display for UnusableVariants {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.reason {
            UnusableReason::UnknownSchema(e) => write!(f, "{}: {e}", self.url),
            UnusableReason::Corrupt(errors) => {
                write!(f, "{}: ", self.url)?;
                for (i, e) in errors.iter().enumerate() {
                    if i > 0 {
                        f.write_str("; ")?;
                    }
                    write!(f, "{e}")?;
                }
                Ok(())
            }
            UnusableReason::Inconsistent(e) => write!(f, "{}: {e}", self.url),
            // The mismatch names the URL itself.
            UnusableReason::HashMismatch(e) => write!(f, "{e}"),
        }
    }
}

/// Reads the variant metadata of `version` of `project`.
pub(crate) async fn version_variants(
    http: &Http,
    project: &Project,
    version: &Version,
    concurrency: usize,
) -> Result<VersionVariants, ClientError> {
    let labels = project.variant_labels(version);
    if labels.is_empty() {
        return Ok(VersionVariants::NoVariants);
    }
    let mut warnings = Vec::new();
    if let Some(links) = project.variants_json.get(version) {
        match from_index_files(http, links, &mut warnings).await? {
            Some(Ok((metadata, urls))) => {
                return Ok(described(
                    Some(metadata),
                    MetadataOrigin::IndexFiles(urls),
                    &labels,
                    warnings,
                ))
            }
            Some(Err(unusable)) => return Ok(VersionVariants::Unusable(unusable)),
            None => {}
        }
    }
    from_wheels(http, project, version, &labels, concurrency, warnings).await
}

fn described(
    metadata: Option<VariantMetadata>,
    origin: MetadataOrigin,
    labels: &BTreeSet<VariantLabel>,
    warnings: Vec<String>,
) -> VersionVariants {
    let missing_labels = labels
        .iter()
        .filter(|label| {
            !metadata
                .as_ref()
                .is_some_and(|m| m.variants.contains_key(*label))
        })
        .cloned()
        .collect();
    VersionVariants::Described(DescribedVariants {
        metadata,
        origin,
        missing_labels,
        warnings,
    })
}

/// Whether a strict reader error says the schema version is unknown (`vari-core` reports it
/// on the `$schema` key, and fatally).
fn is_unknown_schema(errors: &[MetadataError]) -> Option<&MetadataError> {
    errors
        .iter()
        .find(|e| e.path == "$schema" && e.message.starts_with("unsupported schema version"))
}

type IndexFilesOutcome = Option<Result<(VariantMetadata, Vec<Url>), UnusableVariants>>;

/// The linked `variants.json` files, combined. `None` when none could be fetched (the wheels
/// are read instead).
async fn from_index_files(
    http: &Http,
    links: &[IndexFile],
    warnings: &mut Vec<String>,
) -> Result<IndexFilesOutcome, ClientError> {
    let mut read = Vec::new();
    const ACCEPT: &str = "application/json, */*;q=0.1";
    for link in links {
        let mut fetched = http.get(&link.url, ACCEPT, BodyKind::VariantsJson).await;
        // A listed hash that the (cached) copy does not have means the file was published
        // again (PEP 825 lets a publisher add variants): ask the server, past the cache, once.
        if matches!(&fetched, Ok(Some(f)) if crate::download::check_whole(link, &f.body).is_err()) {
            fetched = http
                .get_again(&link.url, ACCEPT, BodyKind::VariantsJson)
                .await;
        }
        let fetched = match fetched {
            Ok(Some(fetched)) => fetched,
            Ok(None) => {
                warnings.push(format!(
                    "{}: not found on the server; reading the wheels' own metadata",
                    link.url
                ));
                continue;
            }
            Err(
                e @ (ClientError::Offline { .. }
                | ClientError::Timeout { .. }
                | ClientError::Deadline { .. }
                | ClientError::TooLarge { .. }),
            ) => return Err(e),
            Err(e) => {
                warnings.push(format!("{e}; reading the wheels' own metadata"));
                continue;
            }
        };
        if let Err(mismatch) = crate::download::check_whole(link, &fetched.body) {
            return Ok(Some(Err(UnusableVariants {
                url: link.url.clone(),
                reason: UnusableReason::HashMismatch(mismatch),
            })));
        }
        let text = String::from_utf8_lossy(&fetched.body);
        match read_json_lenient(&text, SourceKind::IndexFile) {
            Ok((metadata, dropped)) => {
                warnings.extend(dropped.iter().map(|e| format!("{}: {e}", link.url)));
                read.push((link.url.clone(), metadata));
            }
            Err(errors) => {
                let reason = match is_unknown_schema(&errors) {
                    Some(e) => UnusableReason::UnknownSchema(e.clone()),
                    None => UnusableReason::Corrupt(errors),
                };
                return Ok(Some(Err(UnusableVariants {
                    url: link.url.clone(),
                    reason,
                })));
            }
        }
    }
    let Some((first_url, _)) = read.first() else {
        return Ok(None);
    };
    let first_url = first_url.clone();
    let names: Vec<String> = read.iter().map(|(url, _)| url.to_string()).collect();
    let combined = combine(
        names
            .iter()
            .map(String::as_str)
            .zip(read.iter().map(|(_, m)| m)),
    );
    Ok(Some(match combined {
        Ok(metadata) => Ok((metadata, read.into_iter().map(|(url, _)| url).collect())),
        Err(e) => Err(UnusableVariants {
            url: first_url,
            reason: UnusableReason::Inconsistent(e),
        }),
    }))
}

/// One wheel per label, its `variant.json` read with range requests, all combined.
async fn from_wheels(
    http: &Http,
    project: &Project,
    version: &Version,
    labels: &BTreeSet<VariantLabel>,
    concurrency: usize,
    mut warnings: Vec<String>,
) -> Result<VersionVariants, ClientError> {
    let mut one_per_label: BTreeMap<&VariantLabel, (&IndexFile, &WheelFilename)> = BTreeMap::new();
    for file in project.files_of(version) {
        if let Some(wheel) = file.wheel() {
            if let Some(label) = wheel.label.as_ref() {
                one_per_label.entry(label).or_insert((file, wheel));
            }
        }
    }
    let reads = stream::iter(
        one_per_label
            .into_iter()
            .map(|(label, (file, wheel))| async move {
                let member = read_member(http, &file.url, wheel, "variant.json").await;
                (label, file, member)
            }),
    )
    .buffer_unordered(concurrency.max(1))
    .collect::<Vec<_>>()
    .await;

    let mut read = Vec::new();
    for (label, file, member) in reads {
        let text = match member {
            Ok(Some((_, bytes))) => String::from_utf8_lossy(&bytes).into_owned(),
            Ok(None) => {
                warnings.push(format!(
                    "{}: the wheel has no *.dist-info/variant.json",
                    file.url
                ));
                continue;
            }
            Err(
                e @ (ClientError::Offline { .. }
                | ClientError::Timeout { .. }
                | ClientError::Deadline { .. }
                | ClientError::TooLarge { .. }),
            ) => return Err(e),
            Err(e) => {
                warnings.push(e.to_string());
                continue;
            }
        };
        match read_json_lenient(&text, SourceKind::WheelFile) {
            Ok((metadata, dropped)) => {
                warnings.extend(
                    dropped
                        .iter()
                        .map(|e| format!("{} variant.json: {e}", file.url)),
                );
                if !metadata.variants.contains_key(label) {
                    warnings.push(format!(
                        "{}: its variant.json does not describe its label `{label}`",
                        file.url
                    ));
                    continue;
                }
                read.push((file.url.clone(), metadata));
            }
            Err(errors) => {
                let listed: Vec<String> = errors.iter().map(ToString::to_string).collect();
                warnings.push(format!("{} variant.json: {}", file.url, listed.join("; ")));
            }
        }
    }
    read.sort_by(|a, b| a.0.as_str().cmp(b.0.as_str()));
    let urls: Vec<Url> = read.iter().map(|(url, _)| url.clone()).collect();
    if read.is_empty() {
        return Ok(described(
            None,
            MetadataOrigin::Wheels(urls),
            labels,
            warnings,
        ));
    }
    let names: Vec<String> = urls.iter().map(ToString::to_string).collect();
    match combine(
        names
            .iter()
            .map(String::as_str)
            .zip(read.iter().map(|(_, m)| m)),
    ) {
        Ok(metadata) => Ok(described(
            Some(metadata),
            MetadataOrigin::Wheels(urls),
            labels,
            warnings,
        )),
        Err(e) => Ok(VersionVariants::Unusable(UnusableVariants {
            url: urls[0].clone(),
            reason: UnusableReason::Inconsistent(e),
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_schema_is_told_apart_from_corruption() {
        let text = r#"{"$schema": "https://variants-schema.wheelnext.dev/v1.0.0.json",
                       "default-priorities": {"namespace": []}, "variants": {}}"#;
        let errors = read_json_lenient(text, SourceKind::IndexFile).unwrap_err();
        assert!(is_unknown_schema(&errors).is_some(), "{errors:?}");
        let errors = read_json_lenient("{not json", SourceKind::IndexFile).unwrap_err();
        assert!(is_unknown_schema(&errors).is_none());
    }
}
