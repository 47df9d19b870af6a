//! Issue 34, item 3: built pages kept on disk across runs. A proxy started again (as each
//! `vari install` starts one) answers a page whose upstream page is unchanged from the page
//! it kept, without building it; a changed upstream page, other target facts or a damaged
//! entry build it again.

use std::path::Path;

use vari_proxy::{PageBuilds, ProxySettings};

use crate::support::*;
use crate::wheels::*;

/// One run: a proxy over `index` with the cache directory `cache` for `target`, asked for
/// `plainpkg`'s JSON page (and, with `file`, for a file it lists); the page's body and what
/// the proxy built.
async fn run(settings: ProxySettings, file: bool) -> (Vec<u8>, PageBuilds) {
    let proxy = start(settings).await;
    let addr = proxy.local_addr();
    let path = format!("/t/{}/simple/plainpkg/", proxy.fingerprint());
    let page = get_json(addr, &path).await;
    assert_eq!(page.status, 200, "{}", page.text());
    if file {
        let json = page.json();
        let href = json["files"][0]["url"].as_str().unwrap();
        let reply = request(addr, "HEAD", &path_of(href), &[]).await;
        assert!(matches!(reply.status, 200 | 302), "{reply:?}");
    }
    let builds = proxy.page_builds();
    proxy.shutdown().await;
    (page.body, builds)
}

fn builds(built: usize, from_disk: usize) -> PageBuilds {
    PageBuilds { built, from_disk }
}

fn settings_for(index: &TestIndex, target: vari_select::Target, cache: &Path) -> ProxySettings {
    settings(client(&[index.index_url()], &[]), target, cache)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_unchanged_upstream_page_is_not_built_again() {
    let (dir, index) = upstream(&[plainpkg_release]).await;
    let scratch = tempfile::tempdir().unwrap();
    let cache = scratch.path().join("cache");
    let cpu = || cpu_target(scratch.path());

    let (first, built) = run(settings_for(&index, cpu(), &cache), false).await;
    assert_eq!(built, builds(1, 0));
    // Started again, the same upstream bytes: the kept page, byte for byte.
    let (second, built) = run(settings_for(&index, cpu(), &cache), false).await;
    assert_eq!(built, builds(0, 1));
    assert_eq!(second, first);

    // A file of a kept page: the page is built to serve it (a kept page has no entries).
    let (_, built) = run(settings_for(&index, cpu(), &cache), true).await;
    assert_eq!(built, builds(1, 1));

    // Other target facts: another fingerprint, another key.
    let (_, built) = run(
        settings_for(&index, cuda_13_target(scratch.path()), &cache),
        false,
    )
    .await;
    assert_eq!(built, builds(1, 0));

    // A changed upstream page: built again, and the new file listed.
    wheel(dir.path(), "plainpkg-3.0-py3-none-any.whl", None, &[]);
    let (third, built) = run(settings_for(&index, cpu(), &cache), false).await;
    assert_eq!(built, builds(1, 0));
    assert!(String::from_utf8_lossy(&third).contains("plainpkg-3.0-py3-none-any.whl"));
    let (again, built) = run(settings_for(&index, cpu(), &cache), false).await;
    assert_eq!(built, builds(0, 1));
    assert_eq!(again, third);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_damaged_kept_page_is_built_again() {
    let (_dir, index) = upstream(&[plainpkg_release]).await;
    let scratch = tempfile::tempdir().unwrap();
    let cache = scratch.path().join("cache");
    let cpu = || cpu_target(scratch.path());
    let (first, _) = run(settings_for(&index, cpu(), &cache), false).await;
    let kept: Vec<_> = std::fs::read_dir(cache.join("pages"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    // A body changed on disk (its length kept): refused, built again, and the entry replaced.
    let mut bytes = std::fs::read(&kept[0]).unwrap();
    let last = bytes.len() - 2;
    bytes[last] ^= 0x20;
    std::fs::write(&kept[0], &bytes).unwrap();
    let (second, built) = run(settings_for(&index, cpu(), &cache), false).await;
    assert_eq!(built, builds(1, 0));
    assert_eq!(second, first);
    let (_, built) = run(settings_for(&index, cpu(), &cache), false).await;
    assert_eq!(built, builds(0, 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_page_with_variants_is_not_kept() {
    let (_dir, index) = upstream(&[fastpkg_release]).await;
    let scratch = tempfile::tempdir().unwrap();
    let cache = scratch.path().join("cache");
    for _ in 0..2 {
        let proxy = start(settings_for(&index, cpu_target(scratch.path()), &cache)).await;
        let page = get_json(proxy.local_addr(), "/simple/fastpkg/").await;
        assert_eq!(page.status, 200, "{}", page.text());
        assert_eq!(proxy.page_builds(), builds(1, 0));
        proxy.shutdown().await;
    }
}
