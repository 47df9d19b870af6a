//! Issue 34, item 1: through the proxy, no installer downloads a wheel whole to read its
//! metadata. The upstream offers no `.metadata` files (most indexes behind Artifactory or
//! Nexus do not); the proxy offers PEP 658/714 metadata for every wheel it lists, read from
//! the wheel with range requests and kept, and the upstream counts what uv and pip cost it.

use std::path::Path;
use std::process::{Command, Stdio};

use vari_test_support::venv::{clean_installer_env, python, uv};
use vari_test_support::wheels::{record_row, write_zip};

use crate::support::*;

/// The bytes of each wheel's payload: large beside its metadata, so that a wheel downloaded
/// whole shows in the byte counts.
const PAYLOAD: usize = 384 * 1024;

/// A wheel of `name` `version` requiring `requires`, its payload first and its `.dist-info`
/// last (as build back-ends write them), the payload incompressible.
fn heavy_wheel(dir: &Path, name: &str, version: &str, requires: &[&str]) {
    let dist_info = format!("{name}-{version}.dist-info");
    let mut metadata = format!("Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n");
    for requirement in requires {
        metadata.push_str(&format!("Requires-Dist: {requirement}\n"));
    }
    // A xorshift stream: the same bytes every run, which deflate cannot shrink.
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15 ^ version.len() as u64;
    let payload: Vec<u8> = (0..PAYLOAD)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state.to_le_bytes()[0]
        })
        .collect();
    let mut members = vec![
        (format!("{name}/__init__.py"), b"".to_vec()),
        (format!("{name}/data.bin"), payload),
        (format!("{dist_info}/METADATA"), metadata.into_bytes()),
        (
            format!("{dist_info}/WHEEL"),
            b"Wheel-Version: 1.0\nGenerator: vari-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
                .to_vec(),
        ),
    ];
    let mut record: String = members.iter().map(|(n, b)| record_row(n, b)).collect();
    record.push_str(&format!("{dist_info}/RECORD,,\n"));
    members.push((format!("{dist_info}/RECORD"), record.into_bytes()));
    write_zip(
        &dir.join(format!("{name}-{version}-py3-none-any.whl")),
        &members,
    );
}

/// `app` requires `lib>=1` and `util`; `lib` has two releases, the newer requiring `util<2`.
fn releases(dir: &Path) {
    heavy_wheel(dir, "app", "1.0", &["lib>=1", "util"]);
    heavy_wheel(dir, "lib", "1.0", &[]);
    heavy_wheel(dir, "lib", "2.0", &["util<2"]);
    heavy_wheel(dir, "util", "1.5", &[]);
    heavy_wheel(dir, "util", "2.0", &[]);
}

/// What the upstream served of its files (not its pages): requests (HEAD too), whole
/// downloads (200 answers to a GET, as opposed to 206 ranges), and body bytes.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct FileTraffic {
    requests: usize,
    whole: usize,
    bytes: usize,
}

fn file_traffic(index: &TestIndex) -> FileTraffic {
    let mut traffic = FileTraffic::default();
    for seen in index.seen() {
        if !seen.path.starts_with("/files/") {
            continue;
        }
        traffic.requests += 1;
        traffic.bytes += seen.body_len;
        if seen.method == "GET" && seen.status == 200 && seen.path.ends_with(".whl") {
            traffic.whole += 1;
        }
    }
    traffic
}

/// `uv pip compile` of `app` from `index` with a fresh cache: the pins it prints.
fn uv_compile(index: &str, scratch: &Path) -> String {
    let requirements = scratch.join("requirements.in");
    std::fs::write(&requirements, "app\n").unwrap();
    let cache = tempfile::tempdir().unwrap();
    let output = Command::new(uv())
        .env_clear()
        .envs(clean_installer_env())
        .args(["pip", "compile", "--no-config", "--quiet", "--no-header"])
        .args(["--index-url", index])
        .arg("--python")
        .arg(python())
        .arg("--cache-dir")
        .arg(cache.path())
        .arg(&requirements)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "uv pip compile from {index} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    pins(&stdout)
}

/// `pip install --dry-run` of `app` from `index` (the test venv's newest pip): the pins its
/// report names.
fn pip_dry_run(index: &str) -> String {
    let output = Command::new(python())
        .env_clear()
        .envs(clean_installer_env())
        .env("PIP_CONFIG_FILE", "/dev/null")
        .args(["-m", "pip", "install", "--isolated", "--no-cache-dir"])
        .args(["--disable-pip-version-check", "--no-input", "--quiet"])
        .args(["--dry-run", "--ignore-installed", "--report", "-"])
        .args(["--index-url", index, "app"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "pip install --dry-run from {index} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let mut pins: Vec<String> = report["install"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| {
            format!(
                "{}=={}",
                item["metadata"]["name"].as_str().unwrap(),
                item["metadata"]["version"].as_str().unwrap()
            )
        })
        .collect();
    pins.sort();
    pins.join("\n")
}

/// The `name==version` lines of a compiled requirements file, sorted.
fn pins(compiled: &str) -> String {
    let mut pins: Vec<&str> = compiled
        .lines()
        .map(str::trim)
        .filter(|line| line.contains("=="))
        .collect();
    pins.sort_unstable();
    pins.join("\n")
}

async fn blocking<T: Send + 'static>(run: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(run).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn uv_and_pip_read_metadata_through_the_proxy_without_downloading_wheels() {
    let (_dir, index) = upstream(&[releases]).await;
    let scratch = tempfile::tempdir().unwrap();
    let expected = "app==1.0\nlib==2.0\nutil==1.5";

    // uv straight at the index: range requests of the wheels (the baseline to match).
    let direct_url = index.index_url();
    let root = scratch.path().to_path_buf();
    let direct = blocking(move || uv_compile(&direct_url, &root)).await;
    assert_eq!(direct, expected);
    let straight = file_traffic(&index);
    assert_eq!(straight.whole, 0, "{:?}", index.seen());
    index.clear_seen();

    // uv through the proxy: the pages advertise metadata for every wheel, read with ranges.
    let (proxy, _cache) = proxy_over(&index, cpu_target).await;
    let page = get_json(proxy.local_addr(), "/simple/lib/").await.json();
    for file in page["files"].as_array().unwrap() {
        assert_eq!(file["core-metadata"], serde_json::json!(true), "{file}");
        assert_eq!(
            file["dist-info-metadata"],
            serde_json::json!(true),
            "{file}"
        );
    }
    let url = proxy.index_url().to_string();
    let root = scratch.path().to_path_buf();
    let through = blocking(move || uv_compile(&url, &root)).await;
    assert_eq!(through, expected);
    let proxied = file_traffic(&index);
    assert_eq!(proxied.whole, 0, "{:?}", index.seen());
    assert!(
        proxied.bytes <= straight.bytes,
        "through the proxy the upstream sent {proxied:?}, to uv straight {straight:?}"
    );
    // Each wheel uv asked about was read once, in a few ranges: a second uv run with an
    // empty cache costs the upstream nothing.
    index.clear_seen();
    let (url, root) = (proxy.index_url().to_string(), scratch.path().to_path_buf());
    assert_eq!(blocking(move || uv_compile(&url, &root)).await, expected);
    assert_eq!(file_traffic(&index), FileTraffic::default());
    // Now that the texts are read, a page lists their hashes, and the bytes served have them.
    let page = get_json(proxy.local_addr(), "/simple/app/").await;
    assert_eq!(page.status, 200);
    proxy.shutdown().await;

    // pip through a fresh proxy (an empty metadata cache): no wheel downloaded either.
    index.clear_seen();
    let (proxy, _cache) = proxy_over(&index, cpu_target).await;
    let url = proxy.index_url().to_string();
    assert_eq!(blocking(move || pip_dry_run(&url)).await, expected);
    let pip = file_traffic(&index);
    assert_eq!(pip.whole, 0, "{:?}", index.seen());
    assert!(pip.requests > 0);
    proxy.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_metadata_hash_listed_is_the_hash_of_the_bytes_served() {
    let (_dir, index) = upstream(&[releases]).await;
    let scratch = tempfile::tempdir().unwrap();
    // Every request builds its page again, as one after the page TTL would.
    let fresh = || {
        let mut settings = settings(
            client(&[index.index_url()], &[]),
            cpu_target(scratch.path()),
            scratch.path(),
        );
        settings.page_ttl = std::time::Duration::ZERO;
        settings
    };
    let proxy = start(fresh()).await;
    let addr = proxy.local_addr();
    let listed = |page: &serde_json::Value| {
        page["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["filename"] == "lib-2.0-py3-none-any.whl")
            .unwrap()
            .clone()
    };
    // Not read yet: advertised without a hash (PEP 658 allows `true`).
    let first = listed(&get_json(addr, "/simple/lib/").await.json());
    assert_eq!(first["core-metadata"], serde_json::json!(true), "{first}");
    let url = format!("{}.metadata", path_of(first["url"].as_str().unwrap()));
    let served = request(addr, "GET", &url, &[]).await;
    assert_eq!(served.status, 200, "{}", served.text());
    assert!(
        served
            .text()
            .starts_with("Metadata-Version: 2.1\nName: lib\nVersion: 2.0\n"),
        "{}",
        served.text()
    );
    assert!(served.text().contains("Requires-Dist: util<2"));
    // Read once: listed with the hash of the bytes served from then on.
    let second = listed(&get_json(addr, "/simple/lib/").await.json());
    let sha256 = vari_test_support::wheels::sha256_hex(&served.body);
    assert_eq!(
        second["core-metadata"]["sha256"],
        sha256.as_str(),
        "{second}"
    );
    assert_eq!(second["dist-info-metadata"]["sha256"], sha256.as_str());
    // HEAD: the same headers, no body.
    let head = request(addr, "HEAD", &url, &[]).await;
    assert_eq!(head.status, 200);
    assert!(head.body.is_empty());
    proxy.shutdown().await;

    // A proxy started again on the same cache serves the text kept on disk: the upstream
    // sends no byte of the wheel.
    index.clear_seen();
    let again = start(fresh()).await;
    assert_eq!(again.fingerprint(), proxy_fingerprint(&url));
    let served_again = request(again.local_addr(), "GET", &url, &[]).await;
    assert_eq!(served_again.body, served.body);
    assert_eq!(
        file_traffic(&index),
        FileTraffic::default(),
        "{:?}",
        index.seen()
    );
    again.shutdown().await;
}

/// The fingerprint in a path under `/t/{fingerprint}/`.
fn proxy_fingerprint(path: &str) -> &str {
    path.trim_start_matches("/t/").split('/').next().unwrap()
}
