//! The file of one lock entry for the target: its listed wheels judged as they are (each a
//! [`ListedFile`]: its name, where it is, the entry's `requires-python`) by
//! [`judge_listed`](crate::judge_listed), the rules `vari select` follows; the sdist as the
//! last resort.

use std::str::FromStr;

use pep440_rs::{Version, VersionSpecifiers};
use url::Url;
use vari_client::ProjectName;
use vari_core::filename::WheelFilename;
use vari_core::markers::VariantMarkerContext;
use vari_core::VariantLabel;
use vari_lock::{Artifact, Package};

use super::{PlanError, PlanRequest, PlannedFile};
use crate::index::{judge_listed, ListedFile, VersionReport};

/// What was chosen for one entry.
pub(super) struct EntryChoice {
    pub(super) file: PlannedFile,
    pub(super) artifact: Artifact,
    pub(super) label: Option<VariantLabel>,
    pub(super) context: VariantMarkerContext,
    pub(super) report: Option<VersionReport>,
}

/// One wheel of a lock entry as judging sees it: its place in `wheels`, its parsed name,
/// where it is (its `url`, or its `path` under the lock's directory) and the entry's
/// `requires-python`. Pinned: a lock's files are never yanked for it.
struct LockedWheel<'l> {
    at: usize,
    artifact: &'l Artifact,
    filename: String,
    wheel: WheelFilename,
    url: Url,
    requires_python: Option<&'l VersionSpecifiers>,
}

impl ListedFile for LockedWheel<'_> {
    fn filename(&self) -> &str {
        &self.filename
    }

    fn url(&self) -> &Url {
        &self.url
    }

    fn wheel(&self) -> Option<&WheelFilename> {
        Some(&self.wheel)
    }

    fn requires_python(&self) -> Option<&VersionSpecifiers> {
        self.requires_python
    }

    fn yanked(&self) -> Option<Option<&str>> {
        None
    }
}

/// Chooses the file of `package` (`packages[index]`) for the request's target.
pub(super) fn choose_file(
    package: &Package,
    index: usize,
    request: &PlanRequest<'_>,
) -> Result<EntryChoice, PlanError> {
    if package.wheels.is_empty() && package.sdist.is_none() {
        return Err(PlanError::NotInstallable {
            package: index,
            name: package.name.clone(),
        });
    }
    let requires_python = package
        .requires_python
        .as_deref()
        .and_then(|r| VersionSpecifiers::from_str(r).ok());
    // Each listed wheel whose name parses (the reader refuses the others) and whose place
    // can be named.
    let wheels: Vec<LockedWheel<'_>> = package
        .wheels
        .iter()
        .enumerate()
        .filter_map(|(at, artifact)| {
            Some(LockedWheel {
                at,
                artifact,
                filename: artifact.file_name()?,
                wheel: artifact.wheel_filename()?,
                url: locate(artifact, request.lock_dir)?,
                requires_python: requires_python.as_ref(),
            })
        })
        .collect();
    // The entry's version, else its wheels' (the reader checks that they agree); an entry
    // with neither lists no wheel to judge.
    let version: Option<Version> = package
        .version
        .clone()
        .or_else(|| wheels.first().map(|w| w.wheel.version.clone()));
    let judged = match &version {
        Some(version) => {
            let name = ProjectName::from_str(&package.name).map_err(|e| PlanError::Invalid {
                path: format!("packages[{index}].name"),
                message: e.to_string(),
            })?;
            Some(judge_listed(
                &name,
                version,
                &wheels,
                package.variants_json.clone(),
                request.target,
                request.options,
            ))
        }
        None => None,
    };
    let (chosen, context, report) = match judged {
        Some(judged) => (judged.chosen, judged.context, Some(judged.report)),
        None => (None, VariantMarkerContext::non_variant(), None),
    };
    if let Some(chosen) = chosen {
        return Ok(EntryChoice {
            file: PlannedFile::Wheel {
                index: chosen.file.at,
                because: chosen.because,
            },
            artifact: chosen.file.artifact.clone(),
            label: chosen.label,
            context,
            report,
        });
    }
    match (&package.sdist, report) {
        (Some(sdist), report) => Ok(EntryChoice {
            file: PlannedFile::Sdist,
            artifact: sdist.clone(),
            label: None,
            context: VariantMarkerContext::non_variant(),
            report,
        }),
        (None, Some(report)) => Err(PlanError::NothingFits {
            package: index,
            name: package.name.clone(),
            version: package
                .version
                .as_ref()
                .map(ToString::to_string)
                .unwrap_or_default(),
            report: Box::new(report),
        }),
        // No sdist, and no wheel whose name and place can be read.
        (None, None) => Err(PlanError::NotInstallable {
            package: index,
            name: package.name.clone(),
        }),
    }
}

/// Where a listed wheel is: its `url`, else its `path` resolved against the lock's directory.
fn locate(wheel: &Artifact, lock_dir: &Url) -> Option<Url> {
    match (&wheel.url, &wheel.path) {
        (Some(url), _) => Url::parse(url).ok(),
        (None, Some(path)) => lock_dir.join(path).ok(),
        (None, None) => None,
    }
}
