//! What an existing lock contributes to the next one: its pins as preferences (less those
//! upgraded), and, when it is made again from nothing new, its recorded requirements and
//! indexes.

use std::collections::BTreeMap;
use std::path::Path;

use vari_client::{ClientSettings, IndexUrl};
use vari_lock::{Lock, LockInfo};
use vari_select::InputError;

use crate::error::LockMakeError;
use crate::inputs::Requirements;
use crate::job::Upgrade;

/// The lock at `path`, when there is one: opened as every command opens a lock
/// (`vari_install::sync::open_lock`: read bounded, checked).
pub(crate) fn read_existing(path: &Path) -> Result<Option<Lock>, LockMakeError> {
    if !path.exists() {
        return Ok(None);
    }
    match vari_install::sync::open_lock(path) {
        Ok(file) => Ok(Some(file.into_lock())),
        Err(vari_install::sync::LoadError::Invalid { path, error }) => {
            Err(InputError::at(path, error.path, error.message).into())
        }
        Err(other) => Err(LockMakeError::Read(other.to_string())),
    }
}

/// The requirements the existing lock records (`[tool.vari] requirements`), checked.
pub(crate) fn recorded_requirements(
    lock: &Lock,
    path: &Path,
) -> Result<Requirements, LockMakeError> {
    let recorded = lock
        .vari
        .as_ref()
        .map(|i| i.requirements.clone())
        .unwrap_or_default();
    if recorded.is_empty() {
        return Err(InputError::at(
            path,
            "tool.vari.requirements",
            "records no requirements to lock again: give requirements, -r FILE or --project DIR",
        )
        .into());
    }
    for (i, requirement) in recorded.iter().enumerate() {
        vari_select::Request::parse(requirement).map_err(|e| {
            InputError::at(path, format!("tool.vari.requirements[{i}]"), e.to_string())
        })?;
    }
    Ok(Requirements {
        base: recorded,
        ..Requirements::default()
    })
}

/// The indexes the existing lock records, in its order (none, for a lock made from find-links
/// alone), unless the command line names its own (`indexes_given`).
pub(crate) fn recorded_indexes(
    sources: &mut ClientSettings,
    info: &LockInfo,
    indexes_given: bool,
    path: &Path,
) -> Result<(), LockMakeError> {
    // A lock made from find-links alone records no index: none is added again.
    if indexes_given || (info.indexes.is_empty() && info.find_links.is_empty()) {
        return Ok(());
    }
    sources.indexes = info
        .indexes
        .iter()
        .enumerate()
        .map(|(i, url)| {
            IndexUrl::parse(url)
                .map_err(|e| InputError::at(path, format!("tool.vari.indexes[{i}]"), e.to_string()))
        })
        .collect::<Result<_, _>>()?;
    Ok(())
}

/// The existing lock's pins that uv should prefer: none with `--upgrade`, and not those of
/// `--upgrade-package`.
pub(crate) fn preferences(existing: Option<&Lock>, upgrade: &Upgrade) -> BTreeMap<String, String> {
    let Some(lock) = existing.filter(|_| !upgrade.all) else {
        return BTreeMap::new();
    };
    let upgraded: Vec<String> = upgrade
        .packages
        .iter()
        .map(|n| vari_core::project::normalize(n))
        .collect();
    lock.packages
        .iter()
        .filter(|p| !upgraded.contains(&p.name))
        .filter_map(|p| Some((p.name.clone(), p.version.as_ref()?.to_string())))
        .collect()
}
