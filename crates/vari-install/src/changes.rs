//! Which distributions an installer run wrote: the environment's `*.dist-info` directories
//! before and after, compared.
//!
//! Why not the proxy's journal ("the installer downloaded the file"): a download is not an
//! installation. The installer may fail after downloading (and pip then rolls back, leaving an
//! earlier install of the same version in place), and uv installs from its cache without
//! downloading anything. Why not the installers' reports: pip has `--report`, uv has none.
//! What both do on every install is write the distribution's `.dist-info` directory anew —
//! `RECORD` (which lists the installed paths and is always rewritten: uv's lists the
//! environment's paths, not the wheel's) and `INSTALLER` — so a distribution counts as
//! installed in this run when its directory is new, or one of those files is another file
//! (inode) or was written again (modification time, size).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The files whose identity says a `.dist-info` directory was written.
const WRITTEN_FILES: [&str; 2] = ["RECORD", "INSTALLER"];

/// How many entries of one site-packages directory are looked at: an environment is not
/// hostile, but a directory of millions of entries must not make the report slow.
const MAX_ENTRIES: usize = 200_000;

/// The identity of a file as far as "was it written again" goes.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FileStamp {
    len: u64,
    modified: Option<std::time::SystemTime>,
    inode: Option<u64>,
}

impl FileStamp {
    fn of(path: &Path) -> Option<Self> {
        // Not followed: a link in a dist-info directory is not the installer's writing.
        let meta = std::fs::symlink_metadata(path).ok()?;
        Some(Self {
            len: meta.len(),
            modified: meta.modified().ok(),
            inode: vari_fs::inode(&meta),
        })
    }
}

/// The `.dist-info` directories of an environment at one moment, by path, with the stamps of
/// their [`WRITTEN_FILES`].
#[derive(Debug, Clone, Default)]
pub(crate) struct Snapshot {
    dist_infos: HashMap<PathBuf, Vec<Option<FileStamp>>>,
}

impl Snapshot {
    /// Reads the `.dist-info` directories directly under each of `site_packages`.
    pub(crate) fn take(site_packages: &[PathBuf]) -> Self {
        let mut dist_infos = HashMap::new();
        for dir in site_packages {
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            for entry in entries.flatten().take(MAX_ENTRIES) {
                let path = entry.path();
                let is_dist_info = path
                    .file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.ends_with(".dist-info"));
                if !is_dist_info || !entry.file_type().is_ok_and(|t| t.is_dir()) {
                    continue;
                }
                let stamps = WRITTEN_FILES
                    .iter()
                    .map(|name| FileStamp::of(&path.join(name)))
                    .collect();
                dist_infos.insert(path, stamps);
            }
        }
        Self { dist_infos }
    }

    /// The `.dist-info` directories of `after` that are not in `self`, or whose written files
    /// changed: what the installer wrote in between.
    pub(crate) fn written_since(&self, after: &Snapshot) -> Vec<PathBuf> {
        let mut written: Vec<PathBuf> = after
            .dist_infos
            .iter()
            .filter(|(path, stamps)| self.dist_infos.get(*path) != Some(stamps))
            .map(|(path, _)| path.clone())
            .collect();
        written.sort();
        written
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dist_info(site: &Path, name: &str, installer: &str) -> PathBuf {
        let dir = site.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("RECORD"), format!("{name}/RECORD,,\n")).unwrap();
        std::fs::write(dir.join("INSTALLER"), installer).unwrap();
        dir
    }

    #[test]
    fn new_and_rewritten_dist_infos_count_untouched_ones_do_not() {
        let site = tempfile::tempdir().unwrap();
        let sites = [site.path().to_path_buf()];
        let kept = dist_info(site.path(), "kept-1.0.dist-info", "pip\n");
        let replaced = dist_info(site.path(), "replaced-1.0.dist-info", "pip\n");
        let before = Snapshot::take(&sites);
        assert!(before.written_since(&Snapshot::take(&sites)).is_empty());
        // An installer replacing a distribution removes its directory and writes a new one (a
        // new inode even when the length and the second are the same).
        std::fs::remove_dir_all(&replaced).unwrap();
        dist_info(site.path(), "replaced-1.0.dist-info", "uv\n");
        let new = dist_info(site.path(), "new-2.0.dist-info", "uv\n");
        // Not a dist-info directory: ignored.
        std::fs::create_dir(site.path().join("new")).unwrap();
        let after = Snapshot::take(&sites);
        assert_eq!(before.written_since(&after), [new, replaced]);
        assert!(!before.written_since(&after).contains(&kept));
    }
}
