//! Choosing the version and the file for a requirement, as a PEP 825 installer does: the
//! newest version that satisfies the specifiers and has a wheel for the target, pre-releases
//! as pip treats them, then the file within it by [`choose`](crate::choose)'s rules.

use futures_util::future::join_all;
use pep440_rs::Version;
use vari_client::{ClientError, IndexClient};
use vari_core::ordering::SelectionOptions;

use super::dependencies::applicable;
use super::report::{Chosen, Outcome, Resolution};
use super::request::Request;
use super::version::{Judge, Judged};
use crate::target::Target;

/// How to select from an index, beyond the target.
#[derive(Debug, Clone, Default)]
pub struct IndexOptions {
    /// Which variants may be chosen and in which order (the same options as for a release read
    /// from files).
    pub selection: SelectionOptions,
    /// Allow pre-releases and development releases whatever the specifiers say. Without it
    /// they are considered when a specifier names one, or when no final version has a wheel
    /// that fits.
    pub pre: bool,
    /// Read the chosen wheel's core metadata and report the dependencies that apply.
    pub dependencies: bool,
}

/// Why a requirement could not be looked at.
#[derive(Debug, thiserror::Error)]
pub enum SelectError {
    /// The index or a file could not be read (the error names the URL).
    #[error(transparent)]
    Index(#[from] ClientError),
    /// A build family's source is not usable as one (its URL, and why).
    #[error("the build family source {url} cannot be used: {message}")]
    Source {
        /// The source's URL.
        url: String,
        /// Why.
        message: String,
    },
}

/// Selects the wheel for `request` from the client's sources for `target`.
///
/// The versions that satisfy the specifiers are judged newest first until one has a wheel that
/// fits; each judged version is reported with every file's fate. Final versions come first
/// unless pre-releases are allowed ([`IndexOptions::pre`], or a specifier names one); the
/// pre-releases are judged only when no final version fits, as pip does.
pub async fn select(
    client: &IndexClient,
    request: &Request,
    target: &Target,
    options: &IndexOptions,
) -> Result<Outcome, SelectError> {
    if !request.applies_to(target) {
        return Ok(Outcome::Skipped {
            marker: request.marker().unwrap_or_default(),
        });
    }
    super::selecting(request.name());
    let project = client.project(request.name()).await?;
    let python = target.python.version;
    let python = Some(Version::new([
        u64::from(python.major),
        u64::from(python.minor),
        u64::from(python.patch.unwrap_or(0)),
    ]));
    let listed = project.versions();
    let matching: Vec<&Version> = listed
        .iter()
        .rev()
        .copied()
        .filter(|v| request.specifiers().contains(v))
        .collect();
    let allow_pre = options.pre || request.names_prerelease();
    let (first, later): (Vec<&Version>, Vec<&Version>) = match allow_pre {
        true => (matching, Vec::new()),
        false => matching.into_iter().partition(|v| !v.any_prerelease()),
    };
    // Wheels refused when their metadata was read (not a valid wheel: two `.dist-info`
    // directories, a member name that escapes…), by URL, with why: the versions are judged
    // again without them, as `rank` and installers refuse them too.
    let mut refused: Vec<(String, String)> = Vec::new();
    loop {
        let judge = Judge {
            client,
            project: &project,
            target,
            options: &options.selection,
            python: python.as_ref(),
            pinned: request.is_pinned(),
            refused: &refused,
        };
        let (mut resolution, found) = judge_versions(&judge, &first, &later, listed.len()).await?;
        resolution
            .warnings
            .extend(refused.iter().map(|(_, why)| why.clone()));
        let Some((file, because, context)) = found else {
            return Ok(Outcome::Resolved(Box::new(resolution)));
        };
        let version = file.version().clone();
        // Choosing reads metadata, not the wheel: with `--no-deps`, or when the index serves
        // the wheel's METADATA on its own (PEP 658), the wheel is never opened here, so its
        // structure is not checked here. It is where the wheel is opened: a download
        // (`vari download`, the mirror, the proxy: `vari_client`'s download reads it with
        // `vari_wheel::inspect_reader` before keeping it) and an install (`vari sync`, `vari
        // install -r`: the store's fetch reads it the same way; pip and uv refuse it too).
        let dependencies = match options.dependencies {
            false => None,
            true => match client.core_metadata(&file).await {
                Ok(text) => {
                    let (applying, problems) =
                        applicable(&text, &target.markers, &context, request.extras());
                    resolution.warnings.extend(
                        problems
                            .iter()
                            .map(|p| format!("{}: Requires-Dist skipped: {p}", file.filename)),
                    );
                    Some(applying)
                }
                Err(e @ ClientError::Archive { .. }) if refused.len() < MAX_REFUSED => {
                    refused.push((
                        file.url.to_string(),
                        format!("{}: not a valid wheel, skipped: {e}", file.filename),
                    ));
                    continue;
                }
                Err(e) => {
                    resolution
                        .warnings
                        .push(format!("dependencies of {} unknown: {e}", file.filename));
                    None
                }
            },
        };
        resolution.chosen = Some(Chosen {
            version,
            label: file.wheel().and_then(|w| w.label.clone()),
            file,
            because,
            dependencies,
        });
        return Ok(Outcome::Resolved(Box::new(resolution)));
    }
}

/// How many malformed wheels one requirement may skip before the next one's problem is only a
/// warning (each skip judges the versions again).
const MAX_REFUSED: usize = 8;

type Found = Option<super::version::ChosenFile>;

/// Judges the versions, newest first: the final ones (`first`), then the pre-releases
/// (`later`) only when no final version fits.
async fn judge_versions(
    judge: &Judge<'_>,
    first: &[&Version],
    later: &[&Version],
    versions_listed: usize,
) -> Result<(Resolution, Found), ClientError> {
    let mut resolution = Resolution {
        name: judge.project.name.clone(),
        versions: Vec::new(),
        chosen: None,
        prereleases_ignored: Vec::new(),
        versions_listed,
        warnings: judge
            .project
            .warnings
            .iter()
            .map(ToString::to_string)
            .collect(),
    };
    let mut found = None;
    for version in first {
        if let Some(hit) = judge_into(judge, version, &mut resolution).await? {
            found = Some(hit);
            break;
        }
    }
    if found.is_none() {
        for version in later {
            if let Some(hit) = judge_into(judge, version, &mut resolution).await? {
                found = Some(hit);
                break;
            }
        }
    } else {
        resolution.prereleases_ignored = later.iter().map(|v| (*v).clone()).collect();
    }
    Ok((resolution, found))
}

/// Judges one version, keeps its report and warnings, and hands back the chosen file.
async fn judge_into(
    judge: &Judge<'_>,
    version: &Version,
    resolution: &mut Resolution,
) -> Result<Option<super::version::ChosenFile>, ClientError> {
    let Judged {
        report,
        chosen,
        warnings,
    } = judge.version(version).await?;
    resolution.versions.push(report);
    resolution.warnings.extend(warnings);
    Ok(chosen)
}

/// [`select`] for several requirements at once (their pages and metadata are fetched in
/// parallel); the results are in the order of `requests`.
pub async fn select_all(
    client: &IndexClient,
    requests: &[Request],
    target: &Target,
    options: &IndexOptions,
) -> Vec<Result<Outcome, SelectError>> {
    join_all(
        requests
            .iter()
            .map(|request| select(client, request, target, options)),
    )
    .await
}
