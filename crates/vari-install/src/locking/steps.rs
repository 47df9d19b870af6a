//! The steps both ways of resolving share: writing uv's input files, its command, and listing
//! the pinned releases' files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use vari_client::IndexClient;
use vari_core::ordering::SelectionOptions;
use vari_lock::LockedRelease;

use super::prefetch::Prefetched;
use super::request::{LockingError, LockingRequest, LockingTarget};
use crate::compile::CompileRequest;
use crate::lock_files::{locked_releases, LockFilesTarget, PinnedRelease};
use crate::run::TEMPORARY_PREFIX;

/// Per package, its version and the targets that pinned it.
pub(super) type Pins = BTreeMap<String, (String, Vec<String>)>;

/// Writes the requirements and the preferred pins (uv reads its output file as preferences)
/// into `scratch`, under names with `slot`; returns the input and output files.
pub(super) fn write_inputs(
    scratch: &Path,
    requirements: &[String],
    preferred: &BTreeMap<String, String>,
    slot: impl std::fmt::Display,
) -> Result<(PathBuf, PathBuf), LockingError> {
    let write = |path: &Path, text: String| {
        std::fs::write(path, text.as_bytes()).map_err(|source| LockingError::Scratch {
            path: path.to_owned(),
            source,
        })
    };
    let input = scratch.join(format!("requirements-{slot}.in"));
    let output = scratch.join(format!("requirements-{slot}.txt"));
    write(
        &input,
        requirements.iter().map(|r| format!("{r}\n")).collect(),
    )?;
    write(
        &output,
        preferred
            .iter()
            .map(|(name, version)| format!("{name}=={version}\n"))
            .collect(),
    )?;
    Ok((input, output))
}

/// The `uv pip compile` of `input` into `output` for `target`'s Python.
pub(super) fn compile_request(
    request: &LockingRequest<'_>,
    input: PathBuf,
    output: PathBuf,
    target: &LockingTarget,
) -> CompileRequest {
    CompileRequest {
        uv: request.uv.to_owned(),
        input,
        output,
        python_version: target.lock.python_version.clone(),
        python_platform: target.uv_platform(),
        pre: request.pre,
        annotate: false,
        piped: None,
    }
}

/// The files of the pinned releases, in the pins' order; those listed while uv ran
/// (`prefetched`) are taken from there.
pub(super) async fn list_files(
    client: &IndexClient,
    pins: &Pins,
    targets: &[LockFilesTarget],
    selection: &SelectionOptions,
    prefetched: Option<&Prefetched>,
) -> Result<Vec<LockedRelease>, LockingError> {
    let pinned: Vec<PinnedRelease> = pins
        .iter()
        .map(|(name, (version, targets))| PinnedRelease {
            name: name.clone(),
            version: version.clone(),
            targets: targets.clone(),
        })
        .collect();
    let known: Vec<Option<LockedRelease>> = pinned
        .iter()
        .map(|pin| prefetched.and_then(|p| p.take(pin)))
        .collect();
    let missing: Vec<PinnedRelease> = pinned
        .iter()
        .zip(&known)
        .filter(|(_, known)| known.is_none())
        .map(|(pin, _)| pin.clone())
        .collect();
    let listed = locked_releases(client, &missing, targets, selection).await?;
    Ok(merge(known, listed))
}

/// The releases in the pins' order: each known one where it is, the `listed` ones (in order)
/// in the gaps.
fn merge(known: Vec<Option<LockedRelease>>, listed: Vec<LockedRelease>) -> Vec<LockedRelease> {
    let mut listed = listed.into_iter();
    known
        .into_iter()
        .filter_map(|known| known.or_else(|| listed.next()))
        .collect()
}

/// The scratch directory of uv's input and output files, made when first needed (a
/// resolution that pipes them makes none) and removed when dropped.
#[derive(Default)]
pub(super) struct Scratch(std::sync::Mutex<Option<tempfile::TempDir>>);

impl Scratch {
    /// The directory, made now unless it exists.
    pub(super) fn path(&self) -> Result<PathBuf, LockingError> {
        let mut made = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(dir) = &*made {
            return Ok(dir.path().to_owned());
        }
        let dir = tempfile::Builder::new()
            .prefix(TEMPORARY_PREFIX)
            .tempdir()
            .map_err(|source| LockingError::Scratch {
                path: std::env::temp_dir(),
                source,
            })?;
        let path = dir.path().to_owned();
        *made = Some(dir);
        Ok(path)
    }
}

/// A release with no files, version 1.0, pinned by `targets`: what the tests of the ways to
/// resolve arrange.
#[cfg(test)]
pub(super) fn test_release(name: &str, targets: &[&str]) -> LockedRelease {
    LockedRelease {
        name: name.into(),
        version: "1.0".parse().expect("a version"),
        index: None,
        wheels: Vec::new(),
        sdist: None,
        variants_json: None,
        requires_dist: Vec::new(),
        requires_python: None,
        targets: targets.iter().map(|t| t.to_string()).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_listed_ahead_keep_their_place_among_the_others() {
        let release = |name: &str| test_release(name, &[]);
        let known = vec![None, Some(release("b")), None, Some(release("d"))];
        let merged = merge(known, vec![release("a"), release("c")]);
        let names: Vec<&str> = merged.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "c", "d"]);
    }
}
