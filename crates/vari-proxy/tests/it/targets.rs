//! URLs that name the target: the index URL carries a fingerprint of what decides the choices,
//! so that installers caching by index URL (uv) never mix targets; `/simple/` is an alias;
//! another fingerprint's URLs are refused.

use std::path::Path;

use vari_core::ordering::SelectionOptions;
use vari_select::Target;

use crate::support::*;
use crate::wheels::*;

/// The path of a running proxy's index URL, stopping the proxy.
async fn index_path(index: &TestIndex, target: Target, options: SelectionOptions) -> String {
    let scratch = tempfile::tempdir().unwrap();
    let mut settings = settings(client(&[index.index_url()], &[]), target, scratch.path());
    settings.selection = options;
    let proxy = start(settings).await;
    let path = proxy.index_url().path().to_owned();
    proxy.shutdown().await;
    path
}

fn forbid(pattern: &str) -> SelectionOptions {
    SelectionOptions {
        forbid: vec![pattern.parse().unwrap()],
        ..SelectionOptions::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_index_url_changes_with_what_decides_the_choice_and_only_with_that() {
    let (_dir, index) = upstream(&[plainpkg_release]).await;
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let cpu = index_path(&index, cpu_target(&a), SelectionOptions::default()).await;
    let fingerprint = cpu
        .strip_prefix("/t/")
        .and_then(|rest| rest.strip_suffix("/simple/"))
        .unwrap_or_else(|| panic!("{cpu}"));
    assert!(
        fingerprint.len() == 12 && fingerprint.bytes().all(|b| b.is_ascii_hexdigit()),
        "{cpu}"
    );
    // The same facts from another file, another run: the same URL (the cache is shared).
    assert_eq!(
        index_path(&index, cpu_target(&b), SelectionOptions::default()).await,
        cpu
    );
    // Other hardware, other options: other URLs.
    let gpu = index_path(&index, cuda_13_target(&a), SelectionOptions::default()).await;
    let forbidding = index_path(&index, cpu_target(&a), forbid("x86_64")).await;
    assert_ne!(gpu, cpu);
    assert_ne!(forbidding, cpu);
    assert_ne!(forbidding, gpu);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_and_files_are_served_under_the_targets_prefix_and_the_alias() {
    let (_dir, index) = upstream(&[fastpkg_release]).await;
    let (proxy, _scratch) = proxy_over(&index, cpu_target).await;
    let addr = proxy.local_addr();
    let prefix = format!("/t/{}", proxy.fingerprint());
    assert_eq!(proxy.index_url().path(), format!("{prefix}/simple/"));
    assert_eq!(proxy.alias_url().path(), "/simple/");

    let own = get_json(addr, &format!("{prefix}/simple/fastpkg/")).await;
    let alias = get_json(addr, "/simple/fastpkg/").await;
    assert_eq!((own.status, alias.status), (200, 200));
    // One page, whichever URL asked: files are linked under the target's prefix.
    assert_eq!(own.body, alias.body);
    let page = own.json();
    let url = page["files"][0]["url"].as_str().unwrap().to_owned();
    assert!(
        url.starts_with(&format!("{prefix}/files/fastpkg/")),
        "{url}"
    );
    let wheel = request(addr, "GET", &path_of(&url), &[]).await;
    assert!(matches!(wheel.status, 200 | 302), "{wheel:?}");
    // Redirects keep the prefix.
    for (path, location) in [
        (
            format!("{prefix}/simple/FastPkg/"),
            format!("{prefix}/simple/fastpkg/"),
        ),
        (format!("{prefix}/simple"), format!("{prefix}/simple/")),
        (format!("{prefix}/"), format!("{prefix}/simple/")),
    ] {
        let reply = request(addr, "GET", &path, &[]).await;
        assert_eq!(reply.header("location"), Some(location.as_str()), "{path}");
    }

    // A URL of another target: refused, never this target's wheels under it.
    let other = if proxy.fingerprint() == "000000000000" {
        "ffffffffffff"
    } else {
        "000000000000"
    };
    for path in [
        format!("/t/{other}/simple/fastpkg/"),
        format!("/t/{other}{}", path_of(&url).trim_start_matches(&prefix)),
    ] {
        let refused = request(addr, "GET", &path, &[]).await;
        assert_eq!(refused.status, 404, "{path}");
        let text = refused.text();
        assert!(
            text.contains(other) && text.contains(&format!("use {prefix}/simple/")),
            "{text}"
        );
    }
    assert_logged(&format!("the index URL names target {other}"));
    proxy.shutdown().await;
}

/// uv keeps registry wheels by index URL and file name: with one URL for every target, a
/// cache filled for one target would serve the next. Through the target's URL it cannot.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn uv_with_one_cache_gets_each_targets_own_variant() {
    let (_dir, index) = upstream(&[fastpkg_release]).await;
    let cache = tempfile::tempdir().unwrap();
    let port = unused_port();
    let mut labels = Vec::new();
    for level in [3u8, 1] {
        let scratch = tempfile::tempdir().unwrap();
        let mut settings = settings(
            client(&[index.index_url()], &[]),
            level_target(scratch.path(), level),
            scratch.path(),
        );
        // The same port each time, as `vari proxy` uses 3141.
        settings.bind = ([127, 0, 0, 1], port).into();
        let proxy = start(settings).await;
        let installed = install_with_cache(
            Installer::Uv,
            proxy.index_url().as_str(),
            &["--no-deps", "fastpkg"],
            cache.path(),
        )
        .await;
        installed.assert_success();
        labels.push(installed.label("fastpkg-1.0.dist-info"));
        proxy.shutdown().await;
    }
    assert_eq!(labels, [Some("v3".to_owned()), Some("v1".to_owned())]);
}

/// An x86-64 CPU of `level` (and the levels below), as a `vari-profile/1`.
fn level_target(dir: &Path, level: u8) -> Target {
    let levels: Vec<String> = (1..=level).rev().map(|l| format!("\"v{l}\"")).collect();
    let path = dir.join("levels.json");
    std::fs::write(
        &path,
        format!(
            r#"{{"schema": "vari-profile/1", "namespaces": [{{"namespace": "x86_64",
              "features": [{{"name": "level", "values": [{}]}}]}}]}}"#,
            levels.join(", ")
        ),
    )
    .unwrap();
    target(Some(&path), &[], dir)
}
