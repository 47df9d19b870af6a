//! Looking after the cache directory ([`crate::cache_dir`]): how much each area holds
//! ([`usage`]), emptying areas ([`clean`]) and removing what has not been used for a while
//! ([`prune`], [`prune_proxy`]). `vari cache` and the proxy's start use it.
//!
//! What an entry is in each area, and what "last used" means for it, is documented in one place
//! ([`CacheArea`], and the table in this module's `layout.rs`). An entry is removed whole: the
//! file that makes it trusted first (a rewritten wheel's `info.json`, an HTTP response's
//! `.entry`), so an entry whose removal is interrupted is never used half-removed.
//!
//! Removing is safe while other vari processes run. Their writers replace files atomically, so
//! a removed entry is simply missing next time (refetched, rebuilt, asked again). A reader that
//! already opened a file keeps reading it: on Unix an open file survives its unlink (its space
//! is freed when it is closed), so a download a proxy is serving from a removed copy completes
//! with the bytes it started with. On Windows a file in use cannot be removed: that entry is
//! reported as a failure (after its `info.json` went, so the copy is rebuilt next time).

mod entry;
mod layout;
mod walk;

pub use entry::{CacheArea, CacheEntry, CacheIoError, UnknownArea};

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long an entry may go unused before [`prune`] removes it by default, and before a
/// starting proxy evicts a rewritten wheel: 30 days.
///
/// Neither pip nor uv removes by age (`pip cache purge` and `uv cache clean` empty the cache,
/// `uv cache prune` removes only unreachable entries); Cargo's automatic clean-up removes
/// extracted sources unused for a month. A month fits a rewritten wheel too: it is a second
/// copy (pip and uv keep the wheel they installed in their own caches), it can be rebuilt from
/// the upstream wheel, it may be as large as a gigabyte, and a copy unused for a month belongs
/// to a release or a target the user has moved on from.
pub const DEFAULT_MAX_UNUSED: Duration = Duration::from_secs(30 * 24 * 60 * 60);

/// A number of entries and their size.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// How many entries.
    pub entries: u64,
    /// Their size in bytes.
    pub bytes: u64,
}

impl Usage {
    fn add(&mut self, entry: &CacheEntry) {
        self.entries += 1;
        self.bytes += entry.bytes;
    }

    /// The sum of several.
    pub fn total<'a>(parts: impl IntoIterator<Item = &'a Usage>) -> Self {
        parts.into_iter().fold(Self::default(), |sum, part| Self {
            entries: sum.entries + part.entries,
            bytes: sum.bytes + part.bytes,
        })
    }
}

/// What [`clean`] or [`prune`] removed, per area, and what it could not.
#[derive(Debug, Default)]
pub struct Removed {
    /// Each area looked at, with what was removed from it.
    pub areas: Vec<(CacheArea, Usage)>,
    /// The entries removed, for a log.
    pub entries: Vec<CacheEntry>,
    /// The entries (or area directories) that could not be removed (or read).
    pub failures: Vec<CacheIoError>,
}

impl Removed {
    /// Everything removed.
    pub fn total(&self) -> Usage {
        Usage::total(self.areas.iter().map(|(_, usage)| usage))
    }
}

/// The entries of `area` in the cache directory `root` (none when it does not exist).
pub fn entries(root: &Path, area: CacheArea) -> Result<Vec<CacheEntry>, CacheIoError> {
    layout::entries(root, area)
}

/// How many entries, and how many bytes, each area of the cache directory `root` holds, in the
/// order of [`CacheArea::ALL`].
pub fn usage(root: &Path) -> Result<Vec<(CacheArea, Usage)>, CacheIoError> {
    CacheArea::ALL
        .into_iter()
        .map(|area| {
            let mut usage = Usage::default();
            for entry in entries(root, area)? {
                usage.add(&entry);
            }
            Ok((area, usage))
        })
        .collect()
}

/// Removes every entry of `areas` (each once, in the order of [`CacheArea::ALL`]) from the cache
/// directory `root`. An entry that cannot be removed is reported and the others still are.
pub fn clean(root: &Path, areas: &[CacheArea]) -> Removed {
    let mut removed = Removed::default();
    for area in CacheArea::ALL.into_iter().filter(|a| areas.contains(a)) {
        let listed = entries(root, area);
        removed.remove(area, listed, |_| true);
        layout::tidy(root, area);
    }
    removed
}

/// Removes the entries of the prunable areas ([`CacheArea::prunable`]) of the cache directory
/// `root` that have not been used for `max_unused` before `now`.
pub fn prune(root: &Path, max_unused: Duration, now: SystemTime) -> Removed {
    let cutoff = now.checked_sub(max_unused).unwrap_or(UNIX_EPOCH);
    let mut removed = Removed::default();
    for area in CacheArea::ALL.into_iter().filter(|a| a.prunable()) {
        let listed = entries(root, area);
        removed.remove(area, listed, |entry| unused_since(entry, cutoff, now));
    }
    removed
}

/// Whether a prune removes `entry`: unused since `cutoff`, or a partial file of an interrupted
/// write older than [`crate::stale::STALE_AFTER`] (whatever `max_unused` is: nothing reads it).
fn unused_since(entry: &CacheEntry, cutoff: SystemTime, now: SystemTime) -> bool {
    let partial = entry
        .path()
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(crate::stale::is_partial_name);
    let stale_partial = now
        .checked_sub(crate::stale::STALE_AFTER)
        .is_some_and(|old| entry.last_used <= old);
    entry.last_used <= cutoff || (partial && stale_partial)
}

/// [`prune`] for a proxy's own cache directory (`cache_dir()/proxy`, or the one it was given):
/// the rewritten wheels not served for `max_unused` before `now`, and scratch directories that
/// builds left behind as long ago.
pub fn prune_proxy(proxy_dir: &Path, max_unused: Duration, now: SystemTime) -> Removed {
    let cutoff = now.checked_sub(max_unused).unwrap_or(UNIX_EPOCH);
    let mut removed = Removed::default();
    let listed = layout::proxy(proxy_dir);
    removed.remove(CacheArea::Proxy, listed, |entry| {
        unused_since(entry, cutoff, now)
    });
    removed
}

impl Removed {
    fn remove(
        &mut self,
        area: CacheArea,
        listed: Result<Vec<CacheEntry>, CacheIoError>,
        wanted: impl Fn(&CacheEntry) -> bool,
    ) {
        let mut usage = Usage::default();
        match listed {
            Ok(listed) => {
                for entry in listed.iter().filter(|e| wanted(e)) {
                    match entry.remove() {
                        Ok(()) => {
                            usage.add(entry);
                            self.entries.push(entry.clone());
                        }
                        Err(e) => self.failures.push(e),
                    }
                }
            }
            Err(e) => self.failures.push(e),
        }
        self.areas.push((area, usage));
    }
}

// The fixtures set directory times through a handle, which Windows opens only for files.
#[cfg(all(test, unix))]
mod tests {
    use super::*;

    const DAY: Duration = Duration::from_secs(24 * 60 * 60);

    /// Sets the modification time of a file or directory to `days` before `now`.
    fn age(path: &Path, now: SystemTime, days: u32) {
        let handle = if path.is_dir() {
            std::fs::File::open(path)
        } else {
            std::fs::File::options().write(true).open(path)
        };
        handle.unwrap().set_modified(now - DAY * days).unwrap();
    }

    /// Writes `size` bytes to `root/relative`, `days` old, its new directories as old.
    fn file(root: &Path, relative: &str, size: usize, now: SystemTime, days: u32) {
        let path = root.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, vec![b'x'; size]).unwrap();
        age(&path, now, days);
        let mut dir = path.parent();
        while let Some(d) = dir.filter(|d| *d != root) {
            age(d, now, days);
            dir = d.parent();
        }
    }

    /// An HTTP response's file name: shard `ab`, hash `n`.
    fn http(n: u8, extension: &str) -> String {
        format!("http/ab/{n:030x}.{extension}")
    }

    /// A rewritten wheel's directory: key `n`.
    fn wheel(n: u8) -> String {
        format!("proxy/wheels/{n:032x}")
    }

    /// A file in rewritten wheel `n`'s directory.
    fn wheel_file(n: u8, name: &str) -> String {
        format!("{}/{name}", wheel(n))
    }

    /// A cache with entries of every kind, old and recent, and files that are not vari's.
    fn fixture(root: &Path, now: SystemTime) {
        // http: a response fetched 40 days ago and never since (1); one fetched as long ago but
        // revalidated 2 days ago, its policy file new (2); a new one (3); a leftover temporary.
        file(root, &http(1, "entry"), 100, now, 40);
        file(root, &http(2, "entry"), 1000, now, 40);
        file(root, &http(2, "policy"), 10, now, 2);
        file(root, &http(3, "entry"), 200, now, 1);
        file(root, "http/ab/.vari-Xy12.partial", 5, now, 40);
        // Never pruned, however old.
        file(root, &format!("python/{:032x}.json", 7), 50, now, 400);
        file(root, "detect-v1.json", 70, now, 400);
        // proxy: a copy unused for 40 days (1); one built 40 days ago and served yesterday (2);
        // one being built, no info.json yet, new files (3); one an interrupted build left, no
        // info.json, old files (4); an old and a new scratch directory.
        file(
            root,
            &wheel_file(1, "a-1-py3-none-any.whl"),
            10_000,
            now,
            40,
        );
        file(root, &wheel_file(1, "info.json"), 90, now, 40);
        file(
            root,
            &wheel_file(2, "b-1-py3-none-any.whl"),
            20_000,
            now,
            40,
        );
        file(root, &wheel_file(2, "info.json"), 90, now, 1);
        file(root, &wheel_file(3, ".vari-c.partial"), 300, now, 0);
        file(root, &wheel_file(4, "d-1-py3-none-any.whl"), 400, now, 40);
        file(root, "proxy/tmp/.tmpOLD/e-1-py3-none-any.whl", 500, now, 40);
        file(root, "proxy/tmp/.tmpNEW/f-1-py3-none-any.whl", 600, now, 0);
        // Not vari's, however old: never counted, never removed (a cache directory pointed at
        // a home directory must not lose its `python/` scripts).
        for other in NOT_VARIS {
            file(root, other, 3, now, 400);
        }
    }

    /// The entries of `area`, as paths relative to `root`.
    fn names(root: &Path, area: CacheArea) -> Vec<String> {
        entries(root, area)
            .unwrap()
            .iter()
            .map(|e| relative(root, e))
            .collect()
    }

    fn relative(root: &Path, entry: &CacheEntry) -> String {
        let path = entry.path().strip_prefix(root).unwrap();
        path.to_string_lossy().into_owned()
    }

    fn of(entries: u64, bytes: u64) -> Usage {
        Usage { entries, bytes }
    }

    #[test]
    fn usage_counts_each_areas_entries_and_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let now = SystemTime::now();
        fixture(dir.path(), now);
        let found = usage(dir.path()).unwrap();
        assert_eq!(
            found,
            vec![
                (CacheArea::Http, of(4, 100 + 1010 + 200 + 5)),
                (CacheArea::Python, of(1, 50)),
                (CacheArea::Detect, of(1, 70)),
                (
                    CacheArea::Proxy,
                    of(6, 10_090 + 20_090 + 300 + 400 + 500 + 600)
                ),
            ]
        );
        // The two files of a response are one entry, named by its body.
        assert_eq!(
            names(dir.path(), CacheArea::Http),
            [
                "http/ab/.vari-Xy12.partial".to_owned(),
                http(1, "entry"),
                http(2, "entry"),
                http(3, "entry")
            ]
        );
        let revalidated = &entries(dir.path(), CacheArea::Http).unwrap()[2];
        assert_eq!(revalidated.last_used(), now - DAY * 2);
        assert_eq!(revalidated.bytes(), 1010);
        // A missing cache is empty, not an error.
        let none = usage(&dir.path().join("missing")).unwrap();
        assert_eq!(Usage::total(none.iter().map(|(_, u)| u)), Usage::default());
    }

    #[test]
    fn prune_removes_partial_files_older_than_a_day_whatever_the_age_asked() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let now = SystemTime::now();
        file(root, "http/ab/.vari-old.partial", 5, now, 2);
        file(root, "http/ab/.vari-new.partial", 5, now, 0);
        file(root, &http(1, "entry"), 100, now, 2);
        let removed = prune(root, DAY * 30, now);
        let gone: Vec<String> = removed.entries.iter().map(|e| relative(root, e)).collect();
        assert_eq!(gone, ["http/ab/.vari-old.partial"]);
        assert!(root.join("http/ab/.vari-new.partial").exists());
    }

    #[test]
    fn prune_removes_exactly_the_entries_unused_for_that_long() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let now = SystemTime::now();
        fixture(root, now);
        let removed = prune(root, DAY * 30, now);
        assert!(removed.failures.is_empty(), "{:?}", removed.failures);
        assert_eq!(
            removed.areas,
            vec![
                (CacheArea::Http, of(2, 105)),
                (CacheArea::Proxy, of(3, 10_090 + 400 + 500)),
            ]
        );
        let mut gone: Vec<String> = removed.entries.iter().map(|e| relative(root, e)).collect();
        gone.sort();
        assert_eq!(
            gone,
            [
                "http/ab/.vari-Xy12.partial".to_owned(),
                http(1, "entry"),
                "proxy/tmp/.tmpOLD".to_owned(),
                wheel(1),
                wheel(4)
            ]
        );
        assert_eq!(
            names(root, CacheArea::Http),
            [http(2, "entry"), http(3, "entry")]
        );
        assert!(root.join(http(2, "policy")).is_file());
        assert_eq!(
            names(root, CacheArea::Proxy),
            [wheel(2), wheel(3), "proxy/tmp/.tmpNEW".to_owned()]
        );
        assert_eq!(names(root, CacheArea::Python).len(), 1);
        assert_eq!(names(root, CacheArea::Detect), ["detect-v1.json"]);

        // A second prune finds nothing; the response revalidated 2 days ago survives a 3-day
        // prune, not a 36-hour one, which takes its policy file with it.
        assert_eq!(prune(root, DAY * 30, now).total(), Usage::default());
        assert_eq!(prune(root, DAY * 3, now).total(), Usage::default());
        let removed = prune(root, Duration::from_secs(36 * 60 * 60), now);
        assert_eq!(removed.total(), of(1, 1010));
        assert_eq!(names(root, CacheArea::Http), [http(3, "entry")]);
        assert!(!root.join(http(2, "policy")).exists());
        assert_not_vari_s_untouched(root);
    }

    /// Files in the cache directory that are not vari's.
    const NOT_VARIS: [&str; 8] = [
        "notes.txt",
        "detect-notes.json",
        "python/script.py",
        "http/README",
        "http/xy/00.entry",
        "http/ab/short.entry",
        "proxy/wheels/mine/a.whl",
        "proxy/tmp/keep",
    ];

    fn assert_not_vari_s_untouched(root: &Path) {
        for other in NOT_VARIS {
            assert!(root.join(other).is_file(), "{other} was removed");
        }
    }

    #[test]
    fn prune_proxy_looks_only_at_the_proxys_directory() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let now = SystemTime::now();
        fixture(root, now);
        let removed = prune_proxy(&root.join("proxy"), DEFAULT_MAX_UNUSED, now);
        assert_eq!(removed.total(), of(3, 10_090 + 400 + 500));
        assert_eq!(usage(root).unwrap()[0].1.entries, 4, "http untouched");
        // The directories a running proxy builds in stay.
        assert!(root.join("proxy/wheels").is_dir());
        assert!(root.join("proxy/tmp").is_dir());
    }

    #[test]
    fn clean_empties_the_named_areas_and_keeps_their_directories() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let now = SystemTime::now();
        fixture(root, now);
        let removed = clean(root, &[CacheArea::Proxy, CacheArea::Http]);
        assert!(removed.failures.is_empty(), "{:?}", removed.failures);
        assert_eq!(removed.total(), of(10, 1315 + 31_980));
        assert_eq!(
            removed.areas.iter().map(|(a, _)| *a).collect::<Vec<_>>(),
            [CacheArea::Http, CacheArea::Proxy]
        );
        assert!(names(root, CacheArea::Http).is_empty());
        assert!(names(root, CacheArea::Proxy).is_empty());
        // The area directories a running proxy or client writes into stay.
        assert!(root.join("http").is_dir());
        assert!(root.join("proxy/wheels").is_dir() && root.join("proxy/tmp").is_dir());
        assert_eq!(names(root, CacheArea::Python).len(), 1);

        let removed = clean(root, &CacheArea::ALL);
        assert_eq!(removed.total(), of(2, 120));
        let left = usage(root).unwrap();
        assert_eq!(Usage::total(left.iter().map(|(_, u)| u)), Usage::default());
        assert_not_vari_s_untouched(root);
    }

    #[test]
    fn clean_removes_empty_shards() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let now = SystemTime::now();
        file(root, &http(1, "entry"), 10, now, 0);
        file(root, "http/cd/.vari-1.partial", 10, now, 0);
        assert_eq!(clean(root, &[CacheArea::Http]).total(), of(2, 20));
        assert!(!root.join("http/ab").exists() && !root.join("http/cd").exists());
        assert!(root.join("http").is_dir());
    }

    #[test]
    fn an_entry_goes_trust_file_first_and_a_vanished_one_is_no_error() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let now = SystemTime::now();
        fixture(root, now);
        let proxy = entries(root, CacheArea::Proxy).unwrap();
        let old = &proxy[0];
        assert_eq!(old.path(), root.join(wheel(1)));
        assert_eq!(old.paths[0], root.join(wheel(1)).join("info.json"));
        // Removed by someone else in between: still a success.
        std::fs::remove_dir_all(root.join(wheel(1))).unwrap();
        old.remove().unwrap();
    }

    #[test]
    fn area_names_round_trip() {
        for area in CacheArea::ALL {
            assert_eq!(area.name().parse::<CacheArea>(), Ok(area));
        }
        let err = "wheels".parse::<CacheArea>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown cache area `wheels`: expected http, python, detect or proxy"
        );
    }
}
