//! Left-overs of runs that were killed before they could clean up (SIGKILL, a power cut): the
//! `.vari-*.partial` files of [`crate::AtomicFile`] and `vari install`'s `vari-install-*`
//! directories. The next run that writes in the same directory removes those older than
//! [`STALE_AFTER`]; younger ones may belong to a run still going (another process's download).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, SystemTime};

/// How old a left-over must be before another run removes it: a day, longer than any real
/// download or build takes.
pub const STALE_AFTER: Duration = Duration::from_secs(24 * 60 * 60);

/// The prefix of [`crate::AtomicFile`]'s temporary files.
pub const PARTIAL_PREFIX: &str = ".vari-";
/// The suffix of [`crate::AtomicFile`]'s temporary files.
pub const PARTIAL_SUFFIX: &str = ".partial";

/// Whether `name` is an [`crate::AtomicFile`] temporary file's name.
pub fn is_partial_name(name: &str) -> bool {
    name.len() > PARTIAL_PREFIX.len() + PARTIAL_SUFFIX.len()
        && name.starts_with(PARTIAL_PREFIX)
        && name.ends_with(PARTIAL_SUFFIX)
}

/// Removes the entries of `dir` for which `matches(name)` holds and whose modification time is
/// older than `older_than` (files, and directories with their content). Unreadable entries and
/// failed removals (another user's file) are skipped. Returns the paths removed.
pub fn remove_stale(
    dir: &Path,
    matches: impl Fn(&str) -> bool,
    older_than: Duration,
) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return removed;
    };
    let now = SystemTime::now();
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !name.to_str().is_some_and(&matches) {
            continue;
        }
        // Not following links: a link is judged and removed as itself.
        let Ok(meta) = entry.metadata() else { continue };
        let age = meta
            .modified()
            .ok()
            .and_then(|m| now.duration_since(m).ok());
        if age.is_none_or(|age| age < older_than) {
            continue;
        }
        let path = entry.path();
        let done = if meta.is_dir() {
            std::fs::remove_dir_all(&path)
        } else {
            std::fs::remove_file(&path)
        };
        if done.is_ok() {
            removed.push(path);
        }
    }
    removed
}

/// Removes stale `.vari-*.partial` files from `dir`, once per directory and process (a build
/// that writes ten thousand files in one directory lists it once).
pub(crate) fn sweep_partials_once(dir: &Path) {
    static SWEPT: OnceLock<Mutex<BTreeSet<PathBuf>>> = OnceLock::new();
    let first = SWEPT
        .get_or_init(Mutex::default)
        .lock()
        .map(|mut swept| swept.insert(dir.to_path_buf()))
        .unwrap_or(false);
    if first {
        remove_stale(dir, is_partial_name, STALE_AFTER);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn age(path: &Path, by: Duration) {
        let file = std::fs::File::options().write(true).open(path).unwrap();
        file.set_modified(SystemTime::now() - by).unwrap();
    }

    #[test]
    fn only_old_matching_entries_go() {
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join(".vari-old.partial");
        let fresh = dir.path().join(".vari-fresh.partial");
        let other = dir.path().join("old.whl");
        for path in [&old, &fresh, &other] {
            std::fs::write(path, b"x").unwrap();
        }
        age(&old, Duration::from_secs(2 * 24 * 3600));
        age(&other, Duration::from_secs(2 * 24 * 3600));
        let removed = remove_stale(dir.path(), is_partial_name, STALE_AFTER);
        assert_eq!(removed, std::slice::from_ref(&old));
        assert!(!old.exists() && fresh.exists() && other.exists());
    }

    #[test]
    fn partial_names() {
        assert!(is_partial_name(".vari-abc123.partial"));
        assert!(!is_partial_name(".vari-.partial"));
        assert!(!is_partial_name("vari-abc.partial"));
        assert!(!is_partial_name(".vari-abc.partial.json"));
    }
}
