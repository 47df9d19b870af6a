//! The file of one lock entry for the target: its listed files as an index would list them,
//! judged by `vari_select::judge_listed` (the rules `vari select` follows), the sdist as the
//! last resort.

use std::str::FromStr;

use pep440_rs::{Version, VersionSpecifiers};
use url::Url;
use vari_client::{CoreMetadata, FileKind, FileSource, Hashes, IndexFile, ProjectName};
use vari_core::markers::VariantMarkerContext;
use vari_core::VariantLabel;
use vari_select::{judge_listed, VersionReport};

use super::{PlanError, PlanRequest, PlannedFile};
use crate::model::{Artifact, Package};

/// What was chosen for one entry.
pub(super) struct EntryChoice {
    pub(super) file: PlannedFile,
    pub(super) label: Option<VariantLabel>,
    pub(super) context: VariantMarkerContext,
    pub(super) report: VersionReport,
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
    let version = package.version.clone().unwrap_or_else(|| Version::new([0]));
    let requires_python = package
        .requires_python
        .as_deref()
        .and_then(|r| VersionSpecifiers::from_str(r).ok());
    // Each listed wheel as an index file, with its place in `wheels`.
    let files: Vec<(usize, IndexFile)> = package
        .wheels
        .iter()
        .enumerate()
        .filter_map(|(at, wheel)| {
            index_file(wheel, request.lock_dir, requires_python.as_ref()).map(|f| (at, f))
        })
        .collect();
    let listed: Vec<IndexFile> = files.iter().map(|(_, f)| f.clone()).collect();
    let name = ProjectName::from_str(&package.name).map_err(|e| PlanError::Invalid {
        path: format!("packages[{index}].name"),
        message: e.to_string(),
    })?;
    let judged = judge_listed(
        &name,
        &version,
        &listed,
        package.variants_json.clone(),
        request.target,
        request.options,
    );
    if let Some(chosen) = judged.chosen {
        let at = files
            .iter()
            .find(|(_, f)| f.url == chosen.file.url)
            .map(|(at, _)| *at);
        if let Some(at) = at {
            return Ok(EntryChoice {
                file: PlannedFile::Wheel {
                    index: at,
                    because: chosen.because,
                },
                label: chosen.label,
                context: judged.context,
                report: judged.report,
            });
        }
    }
    match &package.sdist {
        Some(_) => Ok(EntryChoice {
            file: PlannedFile::Sdist,
            label: None,
            context: VariantMarkerContext::non_variant(),
            report: judged.report,
        }),
        None => Err(PlanError::NothingFits {
            package: index,
            name: package.name.clone(),
            version: package
                .version
                .as_ref()
                .map(ToString::to_string)
                .unwrap_or_default(),
            report: Box::new(judged.report),
        }),
    }
}

/// A listed wheel as an index lists it: its URL (a `path` resolved against the lock's
/// directory), its name, its SHA-256. `None` for a wheel whose name does not parse (the
/// reader already refuses those).
fn index_file(
    wheel: &Artifact,
    lock_dir: &Url,
    requires_python: Option<&VersionSpecifiers>,
) -> Option<IndexFile> {
    let url = match (&wheel.url, &wheel.path) {
        (Some(url), _) => Url::parse(url).ok()?,
        (None, Some(path)) => lock_dir.join(path).ok()?,
        (None, None) => return None,
    };
    let parsed = wheel.wheel_filename()?;
    Some(IndexFile {
        filename: wheel.file_name()?,
        kind: FileKind::Wheel(parsed),
        url,
        hashes: wheel.sha256().map(Hashes::sha256_of).unwrap_or_default(),
        requires_python: requires_python.cloned(),
        yanked: None,
        core_metadata: CoreMetadata::Absent,
        size: wheel.size,
        upload_time: wheel.upload_time.clone(),
        source: FileSource::FindLinks("pylock.toml".to_owned()),
    })
}
