//! `vari cache dir|info|clean|prune` on a cache directory of the test's own (`VARI_CACHE_DIR`)
//! laid out as vari's crates write it, with file times set to make entries old or recent.

use std::path::Path;
use std::time::{Duration, SystemTime};

use serde_json::json;

use crate::common::{run, vari};

const DAY: Duration = Duration::from_secs(24 * 60 * 60);

/// Writes `size` bytes to `root/relative`, last modified `days` ago.
fn file(root: &Path, relative: &str, size: usize, days: u32) {
    let path = root.join(relative);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, vec![b'x'; size]).unwrap();
    let handle = std::fs::File::options().write(true).open(&path).unwrap();
    handle.set_modified(SystemTime::now() - DAY * days).unwrap();
}

const OLD_PAGE: &str = "http/0a/111111111111111111111111111111.entry";
const REVALIDATED_PAGE: &str = "http/0a/222222222222222222222222222222.entry";
const REVALIDATED_POLICY: &str = "http/0a/222222222222222222222222222222.policy";
const UNUSED_WHEEL: &str = "proxy/wheels/33333333333333333333333333333333";
const SERVED_WHEEL: &str = "proxy/wheels/44444444444444444444444444444444";
const LOCKED_FILE: &str = "locked/6666666666666666666666666666666666666666666666666666666666666666";
const MIRROR_STORE: &str = "mirror/s3-bucket-0123456789abcdef";

/// Two HTTP responses (one unused for 45 days, one revalidated yesterday), an interpreter
/// answer and a detection result (old, and never pruned), two rewritten wheels (one unused for
/// 45 days, one served 10 days ago), a locked file (fetched 45 days ago, used by a sync 20 days
/// ago), an object-store mirror's store (last run 45 days ago, never pruned), and a file that
/// is not vari's.
fn fixture(root: &Path) {
    file(root, OLD_PAGE, 2000, 45);
    file(root, REVALIDATED_PAGE, 3000, 45);
    file(root, REVALIDATED_POLICY, 48, 1);
    file(
        root,
        "python/55555555555555555555555555555555.json",
        600,
        90,
    );
    file(root, "detect-v1.json", 700, 90);
    file(
        root,
        &format!("{UNUSED_WHEEL}/torch-2.10.0-py3-none-any.whl"),
        2 * 1024 * 1024,
        45,
    );
    file(root, &format!("{UNUSED_WHEEL}/info.json"), 100, 45);
    file(
        root,
        &format!("{SERVED_WHEEL}/torch-2.9.0-py3-none-any.whl"),
        1024 * 1024,
        45,
    );
    file(root, &format!("{SERVED_WHEEL}/info.json"), 100, 10);
    file(
        root,
        &format!("{LOCKED_FILE}/six-1-py3-none-any.whl"),
        4000,
        45,
    );
    file(
        root,
        &format!("{LOCKED_FILE}/six-1-py3-none-any.whl.record.json"),
        100,
        20,
    );
    set_dir_days(&root.join(LOCKED_FILE), 45);
    file(
        root,
        &format!("{MIRROR_STORE}/files/six-1-py3-none-any.whl"),
        8000,
        45,
    );
    file(root, &format!("{MIRROR_STORE}/state.json"), 200, 45);
    file(root, "README.txt", 5, 400);
}

/// Sets the modification time of the directory `dir` to `days` ago (a directory's time is its
/// last change: making it must not look like a use).
fn set_dir_days(dir: &Path, days: u32) {
    let handle = std::fs::File::open(dir).unwrap();
    handle.set_modified(SystemTime::now() - DAY * days).unwrap();
}

fn cache_run(root: &Path, args: &[&str]) -> crate::common::Run {
    run(vari().arg("cache").args(args).env("VARI_CACHE_DIR", root))
}

fn area(name: &str, entries: u64, bytes: u64) -> serde_json::Value {
    json!({"area": name, "entries": entries, "bytes": bytes})
}

#[test]
fn dir_prints_the_cache_directory_or_says_why_there_is_none() {
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().join("cache");
    let shown = cache_run(&root, &["dir"]).expect_code(0);
    assert_eq!(shown.stdout, format!("{}\n", root.display()));
    // Nothing to derive it from: one error line.
    run(vari()
        .args(["cache", "dir"])
        .env_remove("VARI_CACHE_DIR")
        .env_remove("XDG_CACHE_HOME")
        .env_remove("HOME"))
    .expect_one_error(&["no cache directory", "VARI_CACHE_DIR"]);
}

#[test]
fn info_counts_entries_and_bytes_per_area() {
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path();
    fixture(root);
    let wheels = 2 * 1024 * 1024 + 100 + 1024 * 1024 + 100;
    let info = cache_run(root, &["info", "--json"]).expect_code(0).json();
    assert_eq!(
        info,
        json!({
            "cache_dir": root.display().to_string(),
            "areas": [
                area("http", 2, 5048),
                area("python", 1, 600),
                area("detect", 1, 700),
                area("proxy", 2, wheels),
                area("locked", 1, 4100),
                area("mirror", 1, 8200),
                area("profiles", 0, 0),
            ],
            "total": {"entries": 8, "bytes": 5048 + 600 + 700 + wheels + 4100 + 8200},
        })
    );
    let text = cache_run(root, &["info"]).expect_code(0).stdout;
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], root.display().to_string());
    assert_eq!(
        &lines[2..],
        [
            "area      entries     size",
            "http            2  4.9 KiB",
            "python          1    600 B",
            "detect          1    700 B",
            "proxy           2  3.0 MiB",
            "locked          1  4.0 KiB",
            "mirror          1  8.0 KiB",
            "profiles        0      0 B",
            "total           8  3.0 MiB",
        ]
    );
    // Counting changes nothing.
    assert!(root.join(OLD_PAGE).is_file());
}

#[test]
fn prune_removes_what_was_not_used_for_30_days_by_default() {
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path();
    fixture(root);
    let pruned = cache_run(root, &["prune", "--json"]).expect_code(0).json();
    assert_eq!(
        pruned,
        json!({
            "cache_dir": root.display().to_string(),
            "older_than_days": 30,
            "removed": [
                area("http", 1, 2000),
                area("proxy", 1, 2 * 1024 * 1024 + 100),
                area("locked", 0, 0),
            ],
            "total": {"entries": 2, "bytes": 2000 + 2 * 1024 * 1024 + 100},
        })
    );
    assert!(!root.join(OLD_PAGE).exists());
    assert!(!root.join(UNUSED_WHEEL).exists());
    // Revalidated yesterday, served 10 days ago, or not prunable: kept.
    for kept in [
        REVALIDATED_PAGE,
        REVALIDATED_POLICY,
        SERVED_WHEEL,
        LOCKED_FILE,
        MIRROR_STORE,
        "python/55555555555555555555555555555555.json",
        "detect-v1.json",
        "README.txt",
    ] {
        assert!(root.join(kept).exists(), "{kept} was removed");
    }
    // The proxy's directories stay for a proxy that is running.
    assert!(root.join("proxy/wheels").is_dir());

    let again = cache_run(root, &["prune"]).expect_code(0);
    assert_eq!(
        again.stdout,
        format!(
            "nothing unused for 30 days or more to remove in {}\n",
            root.display()
        )
    );
    // A shorter limit reaches the copy served 10 days ago and the file synced 20 days ago,
    // not the response revalidated yesterday.
    let text = cache_run(root, &["prune", "--older-than", "7"])
        .expect_code(0)
        .stdout;
    assert!(
        text.starts_with(&format!(
            "removed 2 entries unused for 7 days or more (1.0 MiB) from {}\n",
            root.display()
        )),
        "{text}"
    );
    assert!(text.contains("\nproxy         1  1.0 MiB\n"), "{text}");
    assert!(text.contains("\nlocked        1  4.0 KiB\n"), "{text}");
    assert!(!root.join(SERVED_WHEEL).exists());
    assert!(!root.join(LOCKED_FILE).exists());
    assert!(root.join("locked").is_dir());
    assert!(root.join(REVALIDATED_PAGE).is_file());
}

#[test]
fn clean_empties_the_areas_named_or_all() {
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path();
    fixture(root);
    let cleaned = cache_run(root, &["clean", "proxy", "python", "--json"])
        .expect_code(0)
        .json();
    let wheels = 2 * 1024 * 1024 + 100 + 1024 * 1024 + 100;
    assert_eq!(
        cleaned["removed"],
        json!([area("python", 1, 600), area("proxy", 2, wheels)])
    );
    assert_eq!(
        cleaned["total"],
        json!({"entries": 3, "bytes": 600 + wheels})
    );
    assert!(!root.join(SERVED_WHEEL).exists());
    assert!(root.join(OLD_PAGE).is_file());

    let text = cache_run(root, &["clean"]).expect_code(0).stdout;
    assert!(
        text.starts_with(&format!(
            "removed 5 entries (17.6 KiB) from {}\n",
            root.display()
        )),
        "{text}"
    );
    let info = cache_run(root, &["info", "--json"]).expect_code(0).json();
    assert_eq!(info["total"], json!({"entries": 0, "bytes": 0}));
    assert!(root.join("README.txt").is_file(), "not vari's: kept");
    assert_eq!(
        cache_run(root, &["clean"]).expect_code(0).stdout,
        format!("nothing to remove in {}\n", root.display())
    );
}

#[test]
fn a_cache_that_does_not_exist_is_empty() {
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().join("never-made");
    let info = cache_run(&root, &["info", "--json"]).expect_code(0).json();
    assert_eq!(info["total"], json!({"entries": 0, "bytes": 0}));
    cache_run(&root, &["clean"]).expect_code(0);
    cache_run(&root, &["prune"]).expect_code(0);
    assert!(!root.exists(), "looking creates nothing");
}

#[test]
fn an_unknown_area_is_a_usage_error() {
    let scratch = tempfile::tempdir().unwrap();
    let run = cache_run(scratch.path(), &["clean", "wheels"]).expect_code(2);
    assert!(
        run.stderr
            .contains("possible values: http, python, detect, proxy, locked, mirror"),
        "{}",
        run.stderr
    );
}

#[test]
fn the_files_a_sync_fetched_are_the_locked_area() {
    use crate::sync::{listed, sync, Fleet};
    use vari_test_support::venv::bare_venv;
    let dir = tempfile::tempdir().unwrap();
    let fleet = Fleet::new(dir.path());
    let scratch = dir.path().join("cpu");
    let venv = scratch.join("venv");
    bare_venv(&venv);
    let synced = run(&mut sync(
        &scratch,
        &fleet.lock,
        &venv,
        fleet.profile("cpu"),
    ))
    .expect_code(0);
    let fetched = synced.stdout.matches("installed ").count() as u64;
    assert!(fetched > 1, "{}", synced.stdout);
    let root = scratch.join("cache");
    let info = cache_run(&root, &["info", "--json"]).expect_code(0).json();
    let locked = info["areas"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["area"] == "locked")
        .unwrap()
        .clone();
    assert_eq!(locked["entries"], fetched, "one entry per file: {info}");
    assert!(locked["bytes"].as_u64().unwrap() > 0);
    // Just used: a prune keeps it.
    let pruned = cache_run(&root, &["prune", "--json"]).expect_code(0).json();
    assert_eq!(pruned["total"]["entries"], 0, "{pruned}");

    let cleaned = cache_run(&root, &["clean", "locked", "--json"])
        .expect_code(0)
        .json();
    assert_eq!(cleaned["removed"], json!([locked]));
    // Gone: a sync offline cannot have them any more, one online fetches them again.
    std::fs::remove_dir_all(&venv).unwrap();
    bare_venv(&venv);
    run(sync(&scratch, &fleet.lock, &venv, fleet.profile("cpu")).arg("--offline"))
        .expect_one_error(&["not in the store or a wheelhouse, and offline"]);
    assert_eq!(listed(&venv), []);
    run(&mut sync(
        &scratch,
        &fleet.lock,
        &venv,
        fleet.profile("cpu"),
    ))
    .expect_code(0);
    let info = cache_run(&root, &["info", "--json"]).expect_code(0).json();
    assert_eq!(info["areas"][4]["entries"], fetched);
}

/// An object-store destination's lock (`mirror/KEY.lock`, which `vari mirror` takes) and
/// publish journal (`mirror/KEY.journal`) are removed by `clean mirror`, unless a mirror holds
/// that lock.
#[test]
fn clean_mirror_removes_destination_locks_and_journals_no_mirror_holds() {
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path();
    let lock = root.join("mirror/s3-bucket-0123456789abcdef.lock");
    let journal = root.join("mirror/s3-bucket-0123456789abcdef.journal");
    file(root, "mirror/s3-bucket-0123456789abcdef.lock", 0, 0);
    file(root, "mirror/s3-bucket-0123456789abcdef.journal", 100, 0);
    let held = vari_fs::lock::lock_exclusive(&lock, || {}).unwrap();
    let cleaned = cache_run(root, &["clean", "mirror", "--json"])
        .expect_code(0)
        .json();
    assert_eq!(cleaned["total"], json!({"entries": 0, "bytes": 0}));
    assert!(lock.is_file() && journal.is_file());
    drop(held);
    let cleaned = cache_run(root, &["clean", "mirror", "--json"])
        .expect_code(0)
        .json();
    assert_eq!(cleaned["removed"], json!([area("mirror", 2, 100)]));
    assert!(!lock.exists() && !journal.exists());
}
