//! The cache areas `vari cache` looks after, each laid out by the crate that writes it
//! (`vari_fs::cache_admin` walks them and applies the clean and prune rules).

use vari_fs::cache_admin::AreaLayout;

/// Every area's layout, in the order they are reported ([`vari_fs::cache_admin::CacheArea::ALL`]).
pub(crate) const LAYOUTS: [&dyn AreaLayout; 7] = [
    &vari_client::HttpCacheLayout,
    &vari_python::PythonCacheLayout,
    &vari_detect::DetectCacheLayout,
    &vari_proxy::ProxyCacheLayout,
    &vari_install::sync::LockedCacheLayout,
    &vari_publish::mirror::MirrorCacheLayout,
    &vari_install::profile_store::ProfileCacheLayout,
];

// The fixtures set directory times through a handle, which Windows opens only for files. These
// check `vari_fs::cache_admin`'s rules over the writers' layouts, as `vari cache` runs them.
#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::path::Path;
    use std::time::{Duration, SystemTime};
    use vari_fs::cache_admin::{self, CacheArea, CacheEntry, Removed, Usage, DEFAULT_MAX_UNUSED};

    // `vari_fs::cache_admin`'s rules over the layouts `vari cache` uses.
    fn entries(
        root: &Path,
        area: CacheArea,
    ) -> Result<Vec<CacheEntry>, vari_fs::cache_admin::CacheIoError> {
        let layout = LAYOUTS.iter().find(|l| l.area() == area).unwrap();
        layout.entries(root)
    }

    fn usage(root: &Path) -> Result<Vec<(CacheArea, Usage)>, vari_fs::cache_admin::CacheIoError> {
        cache_admin::usage(root, &LAYOUTS)
    }

    fn clean(root: &Path, areas: &[CacheArea]) -> Removed {
        cache_admin::clean(root, &LAYOUTS, areas)
    }

    fn prune(root: &Path, max_unused: Duration, now: SystemTime) -> Removed {
        cache_admin::prune(root, &LAYOUTS, max_unused, now)
    }

    #[test]
    fn the_layouts_cover_every_area_in_order() {
        let areas: Vec<CacheArea> = LAYOUTS.iter().map(|l| l.area()).collect();
        assert_eq!(areas, CacheArea::ALL);
    }

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

    /// A locked file's directory: SHA-256 `n`.
    fn locked(n: u8) -> String {
        format!("locked/{n:064x}")
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
        // locked: a file fetched 40 days ago and never used since (1); one fetched as long ago
        // whose record a sync refreshed 2 days ago, with a copy for a target (2).
        let old = format!("{}/g-1-py3-none-any.whl", locked(1));
        file(root, &old, 7_000, now, 40);
        file(root, &format!("{old}.record.json"), 200, now, 40);
        let used = format!("{}/h-1-py3-none-any.whl", locked(2));
        file(root, &used, 8_000, now, 40);
        file(root, &format!("{used}.record.json"), 200, now, 2);
        let copy = format!("{}/m-0123456789abcdef/h-1-py3-none-any.whl", locked(2));
        file(root, &copy, 8_100, now, 40);
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
                (CacheArea::Locked, of(2, 7_200 + 16_300)),
                (CacheArea::Mirror, of(0, 0)),
                (CacheArea::Profiles, of(0, 0)),
            ]
        );
        let used = &entries(dir.path(), CacheArea::Locked).unwrap()[1];
        assert_eq!(used.path(), dir.path().join(locked(2)));
        assert_eq!(used.last_used(), now - DAY * 2, "its record's time");
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
                (CacheArea::Locked, of(1, 7_200)),
            ]
        );
        let mut gone: Vec<String> = removed.entries.iter().map(|e| relative(root, e)).collect();
        gone.sort();
        assert_eq!(
            gone,
            [
                "http/ab/.vari-Xy12.partial".to_owned(),
                http(1, "entry"),
                locked(1),
                "proxy/tmp/.tmpOLD".to_owned(),
                wheel(1),
                wheel(4)
            ]
        );
        assert_eq!(names(root, CacheArea::Locked), [locked(2)]);
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
        assert_eq!(removed.total(), of(2, 1010 + 16_300));
        assert_eq!(names(root, CacheArea::Http), [http(3, "entry")]);
        assert!(names(root, CacheArea::Locked).is_empty());
        assert!(!root.join(http(2, "policy")).exists());
        assert_not_vari_s_untouched(root);
    }

    /// Files in the cache directory that are not vari's.
    const NOT_VARIS: [&str; 10] = [
        "notes.txt",
        "detect-notes.json",
        "python/script.py",
        "http/README",
        "http/xy/00.entry",
        "http/ab/short.entry",
        "proxy/wheels/mine/a.whl",
        "proxy/tmp/keep",
        "locked/notes.txt",
        "locked/abc/x.whl",
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
        let removed = vari_proxy::prune_proxy_dir(&root.join("proxy"), DEFAULT_MAX_UNUSED, now);
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
        assert_eq!(removed.total(), of(4, 120 + 23_500));
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
        assert_eq!(old.paths()[0], root.join(wheel(1)).join("info.json"));
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
            "unknown cache area `wheels`: expected http, python, detect, proxy, locked, mirror or profiles"
        );
    }
}
