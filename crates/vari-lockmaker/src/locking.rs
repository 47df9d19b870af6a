//! Resolving requirements for several machine classes into the releases a lock lists: what
//! `vari lock` writes and what `vari mirror` mirrors from requirements. Resolving is uv's
//! ([`compile`], through the proxy); the files each target can use are
//! [`locked_releases`]'; arranging them into a `pylock.toml` is `vari_lock::build_lock`'s.
//!
//! Targets on several Pythons or platforms are resolved once, together: one universal
//! resolution through a proxy serving the union of every target's view, each pin's marker
//! evaluated per target and the result verified per target ([`universal`]). Targets alike but
//! for their hardware are resolved once, together, through a proxy serving their union, and
//! the result verified per target ([`union`]; when the universal resolution cannot be
//! trusted, one union per group of alike targets); otherwise, or when that result cannot be
//! trusted, one target at a time, as follows.
//!
//! Versions agree across targets through preferences: every target is resolved at once, each
//! preferring the given pins (an existing lock's); when targets pin different versions, they
//! are resolved again one after another, each preferring the pins of those before it (uv reads
//! its output file as preferences). When targets still pin different versions, one error names
//! the package, the versions and the targets. Dependencies that a kept variant asks for
//! through variant markers but no target's best variant did are resolved too (a few rounds at
//! most), so that every wheel the lock lists has what it needs in the lock.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use vari_client::IndexClient;
use vari_core::markers::TargetEnvironment;
use vari_lock::LockedRelease;
use vari_proxy::{ProxySettings, RunningProxy};

use crate::compile::{compile_through, read_output, read_pins, CompileError, Pin};
use crate::lock_files::{LockFilesError, LockFilesTarget};
use vari_install::{Installer, InstallerChoice, InstallerError, Program};

mod prefetch;
mod request;
mod steps;
mod union;
mod universal;

pub use request::{LockingError, LockingProgress, LockingRequest, LockingTarget, NoProgress};
pub use union::PER_TARGET_VARIABLE;

use steps::{check_pinned, compile_request, list_files, write_inputs, Pins, Scratch};

/// How many rounds resolve the dependencies that kept variants bring in.
const VARIANT_DEPENDENCY_ROUNDS: usize = 4;

/// The uv on `path` (the `PATH` variable's value) that resolves.
pub fn find_uv(path: Option<&OsStr>) -> Result<PathBuf, LockingError> {
    // Not the installer's wording: resolving has no `--installer pip` to fall back on.
    let missing = || LockingError::NoUv("uv is not on PATH (install it: `pip install uv`)".into());
    let installer = Installer::find(Some(&InstallerChoice::Uv), path, Path::new("python"), &[])
        .map_err(|e| match e {
            InstallerError::UvNotFound => missing(),
            other => LockingError::NoUv(other.to_string()),
        })?;
    match installer.program {
        Program::Uv(uv) => Ok(uv),
        _ => Err(missing()),
    }
}

/// Resolves the requirements for every target, then lists the files of each pinned release
/// that some target can use, with the dependencies kept variants bring in resolved too.
///
/// Every page is read once for the whole run ([`vari_client::Listings`]): the proxies uv
/// resolves through, the listing ahead while uv runs and the listing of the pinned releases'
/// files all take the first answer, so the lock names exactly the files and hashes the
/// resolution saw, whatever an index answers to a second request.
pub async fn resolve_releases(
    request: &LockingRequest<'_>,
) -> Result<Vec<LockedRelease>, LockingError> {
    let sources = vari_client::ClientSettings {
        listings: vari_client::Listings::kept(),
        ..request.sources.clone()
    };
    let request = &LockingRequest {
        sources: &sources,
        ..*request
    };
    let resolver = Resolver {
        request,
        scratch: Scratch::default(),
        proxies: tokio::sync::Mutex::new(BTreeMap::new()),
    };
    let resolved = resolve_with(request, &resolver).await;
    resolver.stop_proxies().await;
    resolved
}

/// [`resolve_releases`] with `resolver` (whose proxies the caller stops).
async fn resolve_with(
    request: &LockingRequest<'_>,
    resolver: &Resolver<'_>,
) -> Result<Vec<LockedRelease>, LockingError> {
    let client = IndexClient::new(request.sources.clone()).map_err(LockFilesError::from)?;
    let files: Vec<LockFilesTarget> = request.targets.iter().map(|t| t.files.clone()).collect();
    // A proxy serving several targets as one chooses no family build: with the catalog, each
    // target resolves through its own proxy.
    let together = request.families.is_none();
    let resolved = match together && union::universal_wanted(request) {
        true => union::resolve_universal(request, &resolver.scratch, &client, &files).await?,
        false => None,
    };
    let groups = union::groups(request).filter(|_| together);
    let resolved = match (resolved, groups) {
        (Some(resolved), _) => Some(resolved),
        (None, Some(groups)) => {
            union::resolve_groups(request, &groups, &resolver.scratch, &client, &files).await?
        }
        (None, None) => None,
    };
    let (mut pins, mut releases) = match resolved {
        Some(resolved) => resolved,
        None => {
            let pins = resolver.resolve_all(request.preferences).await?;
            let releases = list_files(request, &client, &pins, &files, None).await?;
            (pins, releases)
        }
    };
    let environments: Vec<TargetEnvironment> = request
        .targets
        .iter()
        .map(|t| t.files.target.markers.clone())
        .collect();
    // Dependencies of kept variants that no target's resolution pinned.
    for _ in 0..VARIANT_DEPENDENCY_ROUNDS {
        let missing = missing_variant_dependencies(&releases, &pins, &environments)?;
        if missing.is_empty() {
            break;
        }
        let mut wanted = request.requirements.to_vec();
        wanted.extend(missing);
        let known: BTreeMap<String, String> = pins
            .iter()
            .map(|(name, (version, _))| (name.clone(), version.clone()))
            .collect();
        let added = resolver
            .resolve(&wanted, &request.targets[0], &known, 0)
            .await?;
        let mut new = BTreeMap::new();
        for pin in added {
            match pins.get(&pin.name) {
                Some((version, targets)) if *version != pin.version => {
                    return Err(LockingError::VariantDependencies {
                        name: pin.name,
                        pinned: version.clone(),
                        targets: targets.join(", "),
                        wanted: pin.version,
                    });
                }
                Some(_) => {}
                None => {
                    pins.insert(pin.name.clone(), (pin.version.clone(), Vec::new()));
                    new.insert(pin.name, (pin.version, Vec::new()));
                }
            }
        }
        releases.extend(list_files(request, &client, &new, &files, None).await?);
    }
    local_paths(&mut releases, request.lock_dir)?;
    Ok(releases)
}

/// Files from a find-links directory come as `file:` URLs; a lock names them by a path
/// relative to its own directory (PEP 751 `path`), which must lie under that directory, so
/// that the lock can be moved with its files and never names a file elsewhere. The one rule
/// for every lock made here (`vari lock`, `vari mirror`).
fn local_paths(releases: &mut [LockedRelease], lock_dir: &Path) -> Result<(), LockingError> {
    let parent = match lock_dir.as_os_str().is_empty() {
        true => Path::new("."),
        false => lock_dir,
    };
    let dir = std::fs::canonicalize(parent).map_err(|source| LockingError::LockDir {
        path: parent.to_owned(),
        source,
    })?;
    let artifacts = releases
        .iter_mut()
        .flat_map(|r| r.wheels.iter_mut().chain(r.sdist.as_mut()));
    for artifact in artifacts {
        let Some(url) = artifact.url.as_deref().filter(|u| u.starts_with("file:")) else {
            continue;
        };
        let outside = || LockingError::OutsideLock {
            url: url.to_owned(),
            dir: dir.clone(),
        };
        let file = url::Url::parse(url)
            .ok()
            .and_then(|u| u.to_file_path().ok())
            .and_then(|p| std::fs::canonicalize(p).ok())
            .ok_or_else(outside)?;
        let relative = file.strip_prefix(&dir).map_err(|_| outside())?;
        let relative: Vec<String> = relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let relative = relative.join("/");
        vari_fs::safe_path::check_relative(&relative).map_err(|_| outside())?;
        artifact.url = None;
        artifact.path = Some(relative);
    }
    Ok(())
}

/// Per package, its versions and the targets that pinned each.
type Pinned = BTreeMap<String, BTreeMap<String, Vec<String>>>;

/// Runs uv for each target.
struct Resolver<'a> {
    request: &'a LockingRequest<'a>,
    scratch: Scratch,
    /// Each target's proxy, by the target's name: started for its first resolution and kept
    /// for the others of the run (again one after another, the variants' dependencies), so
    /// that its pages are built once per run, not once per uv run.
    proxies: tokio::sync::Mutex<BTreeMap<String, Arc<RunningProxy>>>,
}

impl Resolver<'_> {
    /// Every target's resolution; returns per package its version and the targets that pinned
    /// it. The targets are resolved at once, each preferring `preferences`; when they pin
    /// different versions of a package, they are resolved again one after another, each
    /// preferring the pins of those before it, and a package they still disagree on is an
    /// error naming the versions and the targets.
    async fn resolve_all(
        &self,
        preferences: &BTreeMap<String, String>,
    ) -> Result<Pins, LockingError> {
        let requirements = self.request.requirements;
        let targets = self.request.targets;
        let progress = self.request.progress;
        progress.resolving(targets.len());
        let at_once = targets.iter().enumerate().map(|(i, target)| async move {
            let pins = self.resolve(requirements, target, preferences, i).await;
            progress.resolved(&target.lock.name);
            pins
        });
        let results = futures_util::future::join_all(at_once).await;
        let mut pinned = Pinned::new();
        for (target, result) in targets.iter().zip(results) {
            add_pins(&mut pinned, result?, &target.lock.name);
        }
        if pinned.values().any(|versions| versions.len() > 1) {
            pinned.clear();
            let mut preferred = preferences.clone();
            // Again, one after another, each preferring the pins of those before it.
            progress.resolving(targets.len());
            for (i, target) in targets.iter().enumerate() {
                let pins = self.resolve(requirements, target, &preferred, i).await?;
                progress.resolved(&target.lock.name);
                for pin in &pins {
                    let first = pinned
                        .get(&pin.name)
                        .and_then(|versions| versions.keys().next().cloned());
                    preferred.insert(pin.name.clone(), first.unwrap_or(pin.version.clone()));
                }
                add_pins(&mut pinned, pins, &target.lock.name);
            }
        }
        let mut pins = Pins::new();
        for (name, versions) in pinned {
            if versions.len() > 1 {
                let listed: Vec<String> = versions
                    .iter()
                    .map(|(version, targets)| format!("{version} ({})", targets.join(", ")))
                    .collect();
                return Err(LockingError::Disagree {
                    name,
                    versions: listed.join(", "),
                });
            }
            if let Some((version, targets)) = versions.into_iter().next() {
                pins.insert(name, (version, targets));
            }
        }
        Ok(pins)
    }

    /// One `uv pip compile` for `target`, preferring `preferred`; its files in the scratch
    /// directory are numbered `slot`, so that resolutions can run at once.
    async fn resolve(
        &self,
        requirements: &[String],
        target: &LockingTarget,
        preferred: &BTreeMap<String, String>,
        slot: usize,
    ) -> Result<Vec<Pin>, LockingError> {
        let scratch = self.scratch.path()?;
        let (input, output) = write_inputs(&scratch, requirements, preferred, slot)?;
        let compile_request = compile_request(self.request, input, output, target);
        let failed = |source| LockingError::Resolve {
            target: target.lock.name.clone(),
            source: Box::new(source),
        };
        let proxy = self.proxy(target).await.map_err(failed)?;
        let pins = compile_through(&proxy, &compile_request)
            .await
            .and_then(|piped| match piped {
                Some(text) => read_pins(&text).map_err(|message| CompileError::Output {
                    path: PathBuf::from("-"),
                    message,
                }),
                None => read_output(&compile_request.output),
            })
            .map_err(failed)?;
        check_pinned(requirements, &pins, target)?;
        Ok(match self.request.families {
            Some(catalog) => crate::family_pins::without_selectors(catalog, pins),
            None => pins,
        })
    }

    /// `target`'s proxy: the one started for it earlier in the run, else a new one.
    async fn proxy(&self, target: &LockingTarget) -> Result<Arc<RunningProxy>, CompileError> {
        // Held while a proxy starts (a millisecond): a target's resolutions at once would
        // otherwise start two.
        let mut proxies = self.proxies.lock().await;
        if let Some(proxy) = proxies.get(&target.lock.name) {
            return Ok(proxy.clone());
        }
        let settings = ProxySettings {
            selection: self.request.selection.clone(),
            families: self.request.families.cloned(),
            ..ProxySettings::new(self.request.sources.clone(), target.files.target.clone())
        };
        let proxy = Arc::new(vari_install::stable_port::start_stable(settings).await?);
        proxies.insert(target.lock.name.clone(), proxy.clone());
        Ok(proxy)
    }

    /// Stops the targets' proxies (each once no resolution holds it: all have ended).
    async fn stop_proxies(&self) {
        let proxies = std::mem::take(&mut *self.proxies.lock().await);
        for proxy in proxies.into_values() {
            if let Ok(proxy) = Arc::try_unwrap(proxy) {
                proxy.shutdown().await;
            }
        }
    }
}

/// Adds `target`'s pins to `pinned`.
fn add_pins(pinned: &mut Pinned, pins: Vec<Pin>, target: &str) {
    for pin in pins {
        pinned
            .entry(pin.name)
            .or_default()
            .entry(pin.version)
            .or_default()
            .push(target.to_owned());
    }
}

/// The requirements (markers dropped) that kept variants ask for through variant markers and
/// no resolution pinned.
fn missing_variant_dependencies(
    releases: &[LockedRelease],
    pins: &Pins,
    environments: &[TargetEnvironment],
) -> Result<Vec<String>, LockingError> {
    let mut missing: Vec<String> = Vec::new();
    for release in releases {
        for (name, requirement) in vari_lock::variant_requirements(release, environments)? {
            if !pins.contains_key(&name) && !missing.contains(&requirement) {
                missing.push(requirement);
            }
        }
    }
    Ok(missing)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_files_are_named_by_paths_under_the_lock_s_directory() {
        let dir = tempfile::tempdir().unwrap();
        let house = dir.path().join("lockdir/wheels");
        std::fs::create_dir_all(&house).unwrap();
        let wheel = house.join("t-1.0-py3-none-any.whl");
        std::fs::write(&wheel, b"x").unwrap();
        let release = || LockedRelease {
            name: "t".to_owned(),
            version: "1.0".parse().unwrap(),
            index: None,
            wheels: vec![vari_lock::Artifact {
                name: None,
                url: Some(url::Url::from_file_path(&wheel).unwrap().to_string()),
                path: None,
                size: Some(1),
                upload_time: None,
                hashes: BTreeMap::new(),
            }],
            sdist: None,
            variants_json: None,
            requires_dist: Vec::new(),
            requires_python: None,
            targets: Vec::new(),
        };
        let mut releases = vec![release()];
        local_paths(&mut releases, &dir.path().join("lockdir")).unwrap();
        let artifact = &releases[0].wheels[0];
        assert_eq!(
            artifact.path.as_deref(),
            Some("wheels/t-1.0-py3-none-any.whl")
        );
        assert_eq!(artifact.url, None);
        // A lock beside the wheelhouse, not above it: refused, naming the file.
        let mut releases = vec![release()];
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        let err = local_paths(&mut releases, &elsewhere).unwrap_err();
        assert!(
            matches!(err, LockingError::OutsideLock { .. })
                && err.to_string().contains("t-1.0-py3-none-any.whl"),
            "{err}"
        );
    }

    #[test]
    fn without_uv_the_error_says_how_to_get_it_and_offers_no_installer_choice() {
        let empty = tempfile::tempdir().unwrap();
        let err = find_uv(Some(empty.path().as_os_str())).unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with("resolving needs uv: uv is not on PATH"),
            "{text}"
        );
        assert!(
            text.contains("pip install uv") && !text.contains("--installer"),
            "{text}"
        );
    }
}
