//! Looking after the cache directory ([`crate::cache_dir`]): how much each area holds
//! ([`usage`]), emptying areas ([`clean`]) and removing what has not been used for a while
//! ([`prune`], [`prune_listed`]). `vari cache` and the proxy's start use it.
//!
//! What an entry is in each area, and what "last used" means for it, is said by the crate that
//! writes the area, in its [`AreaLayout`] (the table in [`layout`] sums them up); this module
//! keeps the walking ([`layout`]'s helpers) and the rules of [`usage`], [`clean`] and [`prune`],
//! which take the layouts as a list (`vari cache` assembles it). An entry is removed whole: the
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
pub mod layout;
mod walk;

pub use entry::{CacheArea, CacheEntry, CacheIoError, UnknownArea};
pub use layout::AreaLayout;

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

/// How many entries, and how many bytes, each area of the cache directory `root` holds, in the
/// order of `layouts`.
pub fn usage(
    root: &Path,
    layouts: &[&dyn AreaLayout],
) -> Result<Vec<(CacheArea, Usage)>, CacheIoError> {
    layouts
        .iter()
        .map(|layout| {
            let mut usage = Usage::default();
            for entry in layout.entries(root)? {
                usage.add(&entry);
            }
            Ok((layout.area(), usage))
        })
        .collect()
}

/// Removes every entry of the areas of `layouts` that `areas` names (each once, in the order of
/// `layouts`) from the cache directory `root`. An entry that cannot be removed is reported and
/// the others still are.
pub fn clean(root: &Path, layouts: &[&dyn AreaLayout], areas: &[CacheArea]) -> Removed {
    let mut removed = Removed::default();
    for layout in layouts.iter().filter(|l| areas.contains(&l.area())) {
        removed.remove(layout.area(), layout.entries(root), |_| true);
        layout.tidy(root);
    }
    removed
}

/// Removes the entries of the prunable areas ([`CacheArea::prunable`]) of `layouts` in the cache
/// directory `root` that have not been used for `max_unused` before `now`.
pub fn prune(
    root: &Path,
    layouts: &[&dyn AreaLayout],
    max_unused: Duration,
    now: SystemTime,
) -> Removed {
    let mut removed = Removed::default();
    for layout in layouts.iter().filter(|l| l.area().prunable()) {
        removed.prune(layout.area(), layout.entries(root), max_unused, now);
    }
    removed
}

/// [`prune`] for entries listed otherwise (a proxy prunes its own cache directory, wherever it
/// is): removes those of `listed` not used for `max_unused` before `now`.
pub fn prune_listed(
    area: CacheArea,
    listed: Result<Vec<CacheEntry>, CacheIoError>,
    max_unused: Duration,
    now: SystemTime,
) -> Removed {
    let mut removed = Removed::default();
    removed.prune(area, listed, max_unused, now);
    removed
}

/// Whether a prune removes `entry`: unused since `cutoff`, or a partial file of an interrupted
/// write older than [`crate::stale::STALE_AFTER`] (whatever `max_unused` is: nothing reads it).
fn unused_since(entry: &CacheEntry, cutoff: SystemTime, now: SystemTime) -> bool {
    let partial = entry
        .path()
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(layout::is_partial);
    let stale_partial = now
        .checked_sub(crate::stale::STALE_AFTER)
        .is_some_and(|old| entry.last_used <= old);
    entry.last_used <= cutoff || (partial && stale_partial)
}

impl Removed {
    fn prune(
        &mut self,
        area: CacheArea,
        listed: Result<Vec<CacheEntry>, CacheIoError>,
        max_unused: Duration,
        now: SystemTime,
    ) {
        let cutoff = now.checked_sub(max_unused).unwrap_or(UNIX_EPOCH);
        self.remove(area, listed, |entry| unused_since(entry, cutoff, now));
    }

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

// The fixtures set file times through a handle. The rules over the real layouts, which live
// with their writers, are checked where they are assembled (`vari-cli`'s `cache_areas`).
#[cfg(test)]
mod tests {
    use super::*;

    const DAY: Duration = Duration::from_secs(24 * 60 * 60);

    /// One file per entry in the directory `dir`, for `area`.
    struct Flat {
        area: CacheArea,
        dir: &'static str,
    }

    impl AreaLayout for Flat {
        fn area(&self) -> CacheArea {
            self.area
        }

        fn entries(&self, root: &Path) -> Result<Vec<CacheEntry>, CacheIoError> {
            layout::each_child(self.area, &root.join(self.dir), |name| name.ends_with(".e"))
        }

        fn tidy(&self, root: &Path) {
            let _ = std::fs::remove_dir(root.join(self.dir));
        }
    }

    const HTTP: Flat = Flat {
        area: CacheArea::Http,
        dir: "h",
    };
    const PYTHON: Flat = Flat {
        area: CacheArea::Python,
        dir: "p",
    };

    fn file(root: &Path, relative: &str, size: usize, now: SystemTime, days: u32) {
        let path = root.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, vec![b'x'; size]).unwrap();
        let handle = std::fs::File::options().write(true).open(&path).unwrap();
        handle.set_modified(now - DAY * days).unwrap();
    }

    fn fixture(root: &Path, now: SystemTime) {
        file(root, "h/old.e", 10, now, 40);
        file(root, "h/new.e", 20, now, 1);
        file(root, "h/other", 5, now, 40);
        file(root, "p/old.e", 30, now, 400);
    }

    #[test]
    fn usage_follows_the_layouts_in_their_order() {
        let dir = tempfile::tempdir().unwrap();
        fixture(dir.path(), SystemTime::now());
        let found = usage(dir.path(), &[&PYTHON, &HTTP]).unwrap();
        let of = |entries, bytes| Usage { entries, bytes };
        assert_eq!(
            found,
            [(CacheArea::Python, of(1, 30)), (CacheArea::Http, of(2, 30))]
        );
    }

    #[test]
    fn prune_looks_at_prunable_areas_only_and_by_age() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let now = SystemTime::now();
        fixture(root, now);
        let removed = prune(root, &[&HTTP, &PYTHON], DAY * 30, now);
        assert_eq!(removed.areas.len(), 1, "python is never pruned");
        let gone: Vec<&Path> = removed.entries.iter().map(CacheEntry::path).collect();
        assert_eq!(gone, [root.join("h/old.e")]);
        assert!(root.join("p/old.e").is_file() && root.join("h/other").is_file());
        let listed = HTTP.entries(root);
        assert_eq!(
            prune_listed(CacheArea::Http, listed, DAY * 2, now)
                .total()
                .entries,
            0
        );
        let listed = HTTP.entries(root);
        assert_eq!(
            prune_listed(CacheArea::Http, listed, DAY / 2, now)
                .total()
                .entries,
            1
        );
    }

    #[test]
    fn clean_empties_the_named_areas_then_tidies_them() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fixture(root, SystemTime::now());
        let removed = clean(root, &[&HTTP, &PYTHON], &[CacheArea::Python]);
        assert_eq!(
            removed.total(),
            Usage {
                entries: 1,
                bytes: 30
            }
        );
        assert!(!root.join("p").exists(), "tidied once empty");
        assert_eq!(HTTP.entries(root).unwrap().len(), 2);
    }
}
