//! A starting proxy removes the rewritten wheels of its cache that nothing served for 30 days,
//! and the METADATA texts written 30 days ago, in the background, and keeps the others.

use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use crate::support::{client, cpu_target, settings, start};

const DAY: Duration = Duration::from_secs(24 * 60 * 60);

/// Keys are 32 hex digits, as the proxy names its copies.
const UNUSED: &str = "0123456789abcdef0123456789abcdef";
const SERVED_LAST_WEEK: &str = "fedcba9876543210fedcba9876543210";

/// A finished copy under `cache/wheels/{key}/` whose `info.json` was last touched `days` ago.
fn copy(cache: &Path, key: &str, days: u32) {
    let dir = cache.join("wheels").join(key);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("demo-1.0-py3-none-any.whl"), b"wheel").unwrap();
    let info = dir.join("info.json");
    std::fs::write(&info, br#"{"sha256": "00", "size": 5}"#).unwrap();
    let file = std::fs::File::options().write(true).open(&info).unwrap();
    file.set_modified(SystemTime::now() - DAY * days).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_starting_proxy_evicts_copies_unused_for_30_days() {
    let scratch = tempfile::tempdir().unwrap();
    let cache = scratch.path().join("proxy");
    copy(&cache, UNUSED, 31);
    copy(&cache, SERVED_LAST_WEEK, 7);
    let target = cpu_target(scratch.path());
    let proxy = start(settings(client(&[], &[]), target, &cache)).await;

    let deadline = Instant::now() + Duration::from_secs(20);
    while cache.join("wheels").join(UNUSED).exists() {
        assert!(Instant::now() < deadline, "the unused copy is still there");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let kept = cache.join("wheels").join(SERVED_LAST_WEEK);
    assert!(kept.join("demo-1.0-py3-none-any.whl").is_file());
    assert!(kept.join("info.json").is_file());
    proxy.shutdown().await;
}

/// A METADATA text read from a wheel (`cache/metadata/{key}`) written `days` ago.
fn text(cache: &Path, key: &str, days: u32) {
    let dir = cache.join("metadata");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(key);
    std::fs::write(&path, b"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n").unwrap();
    let file = std::fs::File::options().write(true).open(&path).unwrap();
    file.set_modified(SystemTime::now() - DAY * days).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_starting_proxy_evicts_metadata_texts_written_30_days_ago() {
    let scratch = tempfile::tempdir().unwrap();
    let cache = scratch.path().join("proxy");
    text(&cache, UNUSED, 31);
    text(&cache, SERVED_LAST_WEEK, 7);
    let target = cpu_target(scratch.path());
    let proxy = start(settings(client(&[], &[]), target, &cache)).await;

    let deadline = Instant::now() + Duration::from_secs(20);
    while cache.join("metadata").join(UNUSED).exists() {
        assert!(Instant::now() < deadline, "the old text is still there");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(cache.join("metadata").join(SERVED_LAST_WEEK).is_file());
    proxy.shutdown().await;
}
