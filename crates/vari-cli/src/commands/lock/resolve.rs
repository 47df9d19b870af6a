//! Resolving for every target with uv through the proxy, and making the targets agree.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use vari_client::ClientSettings;
use vari_install::{CompileRequest, Pin};
use vari_proxy::ProxySettings;

use crate::error::CliError;
use vari_install::LockFilesTarget;
use vari_lock::LockTarget;

/// One target with what it resolved to.
pub(super) struct ResolvedTarget {
    /// As the lock records it.
    pub(super) lock: LockTarget,
    /// As the file listing reads it (the resolved target).
    pub(super) files: LockFilesTarget,
}

/// Runs uv for each target.
pub(super) struct Resolver {
    pub(super) uv: PathBuf,
    pub(super) scratch: PathBuf,
    pub(super) sources: ClientSettings,
    pub(super) selection: vari_core::ordering::SelectionOptions,
    pub(super) pre: bool,
}

/// Per package, its versions and the targets that pinned each.
type Pinned = BTreeMap<String, BTreeMap<String, Vec<String>>>;

impl Resolver {
    /// Every target's resolution; returns per package its version and the targets that pinned
    /// it. The targets are resolved at once, each preferring the existing lock's pins; when
    /// they pin different versions of a package, they are resolved again one after another,
    /// each preferring the pins of those before it, and a package they still disagree on is
    /// an error naming the versions and the targets.
    pub(super) fn resolve_all(
        &self,
        runtime: &tokio::runtime::Runtime,
        requirements: &[String],
        targets: &[ResolvedTarget],
        preferences: &BTreeMap<String, String>,
    ) -> Result<BTreeMap<String, (String, Vec<String>)>, CliError> {
        let at_once = targets
            .iter()
            .enumerate()
            .map(|(i, target)| self.resolve(requirements, target, preferences, i));
        let results = runtime.block_on(futures_util::future::join_all(at_once));
        let mut pinned = Pinned::new();
        for (target, result) in targets.iter().zip(results) {
            add_pins(&mut pinned, result?, &target.lock.name);
        }
        if pinned.values().any(|versions| versions.len() > 1) {
            pinned.clear();
            let mut preferred = preferences.clone();
            for (i, target) in targets.iter().enumerate() {
                let pins = runtime.block_on(self.resolve(requirements, target, &preferred, i))?;
                for pin in &pins {
                    let first = pinned
                        .get(&pin.name)
                        .and_then(|versions| versions.keys().next().cloned());
                    preferred.insert(pin.name.clone(), first.unwrap_or(pin.version.clone()));
                }
                add_pins(&mut pinned, pins, &target.lock.name);
            }
        }
        let mut pins = BTreeMap::new();
        for (name, versions) in pinned {
            if versions.len() > 1 {
                let listed: Vec<String> = versions
                    .iter()
                    .map(|(version, targets)| format!("{version} ({})", targets.join(", ")))
                    .collect();
                return Err(CliError::Other(format!(
                    "targets disagree on {name}: {}; pin it in the requirements, or lock these \
                     targets separately",
                    listed.join(", ")
                )));
            }
            if let Some((version, targets)) = versions.into_iter().next() {
                pins.insert(name, (version, targets));
            }
        }
        Ok(pins)
    }

    /// One resolution for `target` on `runtime`.
    pub(super) fn resolve_one(
        &self,
        runtime: &tokio::runtime::Runtime,
        requirements: &[String],
        target: &ResolvedTarget,
        preferred: &BTreeMap<String, String>,
    ) -> Result<Vec<Pin>, CliError> {
        runtime.block_on(self.resolve(requirements, target, preferred, 0))
    }

    /// One `uv pip compile` for `target`, preferring `preferred`; its files in the scratch
    /// directory are numbered `slot`, so that resolutions can run at once.
    async fn resolve(
        &self,
        requirements: &[String],
        target: &ResolvedTarget,
        preferred: &BTreeMap<String, String>,
        slot: usize,
    ) -> Result<Vec<Pin>, CliError> {
        let write = |path: &Path, text: String| {
            vari_fs::write_atomic(path, text.as_bytes()).map_err(|e| CliError::Other(e.to_string()))
        };
        let input = self.scratch.join(format!("requirements-{slot}.in"));
        let output = self.scratch.join(format!("requirements-{slot}.txt"));
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
        let request = CompileRequest {
            uv: self.uv.clone(),
            input,
            output,
            python_version: target.lock.python_version.clone(),
            python_platform: target.lock.python_platform.clone(),
            pre: self.pre,
        };
        let settings = ProxySettings {
            selection: self.selection.clone(),
            ..ProxySettings::new(self.sources.clone(), target.files.target.clone())
        };
        vari_install::compile(settings, &request)
            .await
            .map_err(|e| {
                CliError::Other(format!(
                    "cannot resolve for target {}: {e}",
                    target.lock.name
                ))
            })
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
