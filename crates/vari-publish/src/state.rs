//! The build state: what an earlier build learned from each input, so that a rebuild opens only
//! new or changed files, and which site files it wrote, so that a rebuild removes the ones no
//! longer published.
//!
//! Kept in `SITE/.vari-index-state.json`. It is a cache: a missing, unreadable or foreign state
//! file only means every input is read again. An input counts as unchanged while its size,
//! modification time and inode are those recorded; tools that rewrite a file in place within
//! the same nanosecond and size are not a concern for release artefacts.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::dist::DistFacts;
use crate::error::BuildError;

/// The state file's name in the site directory.
pub(crate) const STATE_FILE: &str = ".vari-index-state.json";

/// Written into the file so that a future, different layout is recognised and ignored.
const FORMAT: &str = "vari-index-state/1";

/// What identifies an unchanged input without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Fingerprint {
    pub(crate) size: u64,
    pub(crate) mtime_ns: u64,
    pub(crate) inode: u64,
}

impl Fingerprint {
    /// The fingerprint of a file from its metadata (as `std::fs::metadata` gives it, following
    /// symbolic links).
    pub(crate) fn of(meta: &std::fs::Metadata) -> Self {
        let mtime_ns = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
        #[cfg(unix)]
        let inode = std::os::unix::fs::MetadataExt::ino(meta);
        #[cfg(not(unix))]
        let inode = 0;
        Self {
            size: meta.len(),
            mtime_ns,
            inode,
        }
    }
}

/// One input as last read.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct InputState {
    pub(crate) fingerprint: Fingerprint,
    pub(crate) facts: DistFacts,
}

/// The whole state file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct State {
    format: String,
    /// By input file name.
    pub(crate) inputs: BTreeMap<String, InputState>,
    /// Site files this build wrote, relative to the site root, `/`-separated.
    pub(crate) outputs: BTreeSet<String>,
}

impl Default for State {
    fn default() -> Self {
        Self {
            format: FORMAT.to_owned(),
            inputs: BTreeMap::new(),
            outputs: BTreeSet::new(),
        }
    }
}

impl State {
    /// The state of the site at `site`, or an empty one.
    pub(crate) fn load(site: &Path) -> Self {
        std::fs::read(state_path(site))
            .ok()
            .and_then(|bytes| serde_json::from_slice::<State>(&bytes).ok())
            .filter(|state| state.format == FORMAT)
            .unwrap_or_default()
    }

    /// Writes the state into `site`, atomically.
    pub(crate) fn save(&self, site: &Path) -> Result<(), BuildError> {
        // Serialising maps of strings and numbers cannot fail.
        let text = serde_json::to_vec(self).unwrap_or_default();
        vari_fs::write_atomic(&state_path(site), &text)?;
        Ok(())
    }
}

fn state_path(site: &Path) -> PathBuf {
    site.join(STATE_FILE)
}
