//! The steps both ways of resolving share: writing uv's input files, its command, and listing
//! the pinned releases' files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use vari_client::IndexClient;
use vari_lock::LockedRelease;

use super::prefetch::Prefetched;
use super::request::{LockingError, LockingRequest, LockingTarget};
use crate::compile::{CompileRequest, Pin};
use crate::lock_files::{locked_releases_reporting, LockFilesTarget, PinnedRelease, Texts};
use vari_install::TEMPORARY_PREFIX;

/// Per package, its version and the targets that pinned it.
pub(super) type Pins = BTreeMap<String, (String, Vec<String>)>;

/// The requirements as uv's input, one a line. A requirement holding a character that could
/// end a line in a requirements file or hide what it says (a control character, a Unicode line
/// separator, [`vari_lock::limits::is_forbidden_char`]) is refused: it would say more than the
/// one requirement it is.
pub(super) fn requirements_text(requirements: &[String]) -> Result<String, LockingError> {
    let mut text = String::new();
    for requirement in requirements {
        if let Some(c) = requirement
            .chars()
            .find(|c| vari_lock::limits::is_forbidden_char(*c))
        {
            return Err(LockingError::Requirement {
                requirement: requirement.escape_default().to_string(),
                message: format!("holds the character {}", c.escape_unicode()),
            });
        }
        text.push_str(requirement);
        text.push('\n');
    }
    Ok(text)
}

/// Checks that `pins` (one target's resolution) pins every requirement whose marker holds for
/// `target`: uv that exits 0 having written nothing, or having left a requirement out, must not
/// make a lock that installs less than was asked for.
pub(super) fn check_pinned(
    requirements: &[String],
    pins: &[Pin],
    target: &LockingTarget,
) -> Result<(), LockingError> {
    for requirement in requirements {
        // Every requirement was parsed when it was read; one that is not a plain requirement
        // (none reach here) has nothing to look for.
        let Ok(request) = vari_select::Request::parse(requirement) else {
            continue;
        };
        if !request.applies_to(&target.files.target) {
            continue;
        }
        let name = vari_core::project::normalize(request.name().as_str());
        if !pins.iter().any(|pin| pin.name == name) {
            return Err(LockingError::Unpinned {
                target: target.lock.name.clone(),
                requirement: requirement.clone(),
            });
        }
    }
    Ok(())
}

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
    write(&input, requirements_text(requirements)?)?;
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
        universal: false,
        piped: None,
    }
}

/// The files of the pinned releases, in the pins' order; those listed while uv ran
/// (`prefetched`) are taken from there, and METADATA texts from where `texts` says.
pub(super) async fn list_files(
    request: &LockingRequest<'_>,
    client: &IndexClient,
    texts: Texts<'_>,
    pins: &Pins,
    targets: &[LockFilesTarget],
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
    let progress = request.progress;
    progress.listing(missing.len());
    let report = |pin: &PinnedRelease| progress.listed(&pin.name);
    // A family build on an index of its own (`torch 2.9.0+cu128`) is listed from that index,
    // which is asked for the build's own name only; every other release from the sources.
    let mut by_source: BTreeMap<Option<vari_family::BuildSource>, Vec<usize>> = BTreeMap::new();
    for (i, pin) in missing.iter().enumerate() {
        let source = request
            .families
            .and_then(|catalog| crate::family_pins::build_source(catalog, &pin.name, &pin.version));
        by_source.entry(source).or_default().push(i);
    }
    let mut listed: Vec<Option<LockedRelease>> = vec![None; missing.len()];
    for (source, at) in by_source {
        let pins: Vec<PinnedRelease> = at.iter().map(|&i| missing[i].clone()).collect();
        let releases = match &source {
            None => {
                locked_releases_reporting(client, texts, &pins, targets, request.selection, &report)
                    .await?
            }
            Some(source) => {
                let own = vari_select::source_client(client.settings(), source).map_err(|e| {
                    LockingError::FamilySource {
                        url: source.url().to_string(),
                        message: e.to_string(),
                    }
                })?;
                locked_releases_reporting(&own, texts, &pins, targets, request.selection, &report)
                    .await?
            }
        };
        for (i, release) in at.into_iter().zip(releases) {
            listed[i] = Some(release);
        }
    }
    Ok(merge(known, listed.into_iter().flatten().collect()))
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
pub(super) struct Scratch(std::sync::Mutex<Option<vari_fs::interrupt::TempDir>>);

impl Scratch {
    /// The directory, made now unless it exists.
    pub(super) fn path(&self) -> Result<PathBuf, LockingError> {
        let mut made = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(dir) = &*made {
            return Ok(dir.path().to_owned());
        }
        // Removed on an interruption too (once uv, which reads it, has exited).
        let dir = vari_fs::interrupt::TempDir::new(TEMPORARY_PREFIX).map_err(|source| {
            LockingError::Scratch {
                path: std::env::temp_dir(),
                source,
            }
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

    /// A target on Python 3.12, Linux x86_64, without hardware.
    fn target() -> LockingTarget {
        let mut settings = vari_select::TargetSettings::default();
        settings.python.version = Some("3.12".parse().unwrap());
        settings.python.platform = Some("x86_64-manylinux_2_28".parse().unwrap());
        let target = vari_select::Target::resolve(&settings).unwrap();
        LockingTarget {
            lock: vari_lock::LockTarget {
                name: "cpu".into(),
                ..Default::default()
            },
            files: LockFilesTarget {
                name: "cpu".into(),
                target,
                has_hardware: false,
            },
        }
    }

    fn pin(name: &str) -> Pin {
        Pin {
            name: name.into(),
            version: "1.0".into(),
        }
    }

    #[test]
    fn every_requirement_that_applies_must_be_pinned() {
        let target = target();
        let requirements = [
            "App_Like[x]>=1".to_owned(),
            "tomli ; python_version < '3.11'".to_owned(),
        ];
        // uv exited 0 and wrote nothing.
        let err = check_pinned(&requirements, &[], &target).unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot resolve for target cpu: uv reported success but pinned nothing for \
             `App_Like[x]>=1`; no lock is written"
        );
        // A requirement whose marker does not hold for the target need not be pinned.
        check_pinned(&requirements, &[pin("app-like")], &target).unwrap();
        let both = ["a".to_owned(), "b".to_owned()];
        assert!(check_pinned(&both, &[pin("a")], &target).is_err());
    }

    #[test]
    fn a_requirement_that_would_say_more_than_one_line_is_not_given_to_uv() {
        assert_eq!(
            requirements_text(&["a>=1".into(), "b ; python_version >= '3'".into()]).unwrap(),
            "a>=1\nb ; python_version >= '3'\n"
        );
        for hostile in [
            "a\n--index-url=https://evil.example/",
            "a\u{2028}-i x",
            "a\r",
        ] {
            let err = requirements_text(&[hostile.to_owned()]).unwrap_err();
            assert!(!err.to_string().contains('\n'), "{err}");
        }
    }

    #[test]
    fn releases_listed_ahead_keep_their_place_among_the_others() {
        let release = |name: &str| test_release(name, &[]);
        let known = vec![None, Some(release("b")), None, Some(release("d"))];
        let merged = merge(known, vec![release("a"), release("c")]);
        let names: Vec<&str> = merged.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "c", "d"]);
    }
}
