//! What the scenarios share: vari-client's test index (included, not copied), targets, proxy
//! settings, a raw HTTP/1.1 client, the captured log, and pip and uv runs.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use vari_client::{CacheMode, ClientSettings, FindLinks, IndexUrl, NetrcSource};
use vari_proxy::{ProxySettings, RunningProxy};
use vari_select::{Target, TargetSettings};

pub(crate) use vari_test_support::index as server;

pub(crate) use server::{FileAttrs, MetadataSpelling, TestIndex};

// ---------------------------------------------------------------------------------------------
// The log

#[derive(Clone)]
struct Capture(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Capture {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Everything logged at info and above by any test of this binary so far (tests run in
/// parallel: look for lines only your scenario writes).
pub(crate) fn logs() -> String {
    let buffer = log_buffer();
    let text = String::from_utf8_lossy(&buffer.lock().unwrap()).into_owned();
    text
}

/// Asserts that the log has `text` in it, showing the whole log where it has not.
pub(crate) fn assert_logged(text: &str) {
    let logs = logs();
    assert!(
        logs.contains(text),
        "not logged: {text:?}\n--- the log\n{logs}"
    );
}

fn log_buffer() -> Arc<Mutex<Vec<u8>>> {
    static BUFFER: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    BUFFER
        .get_or_init(|| {
            let buffer = Arc::new(Mutex::new(Vec::new()));
            let writer = Capture(buffer.clone());
            let _ = tracing_subscriber::fmt()
                .with_env_filter("info")
                .with_ansi(false)
                .with_writer(move || writer.clone())
                .try_init();
            buffer
        })
        .clone()
}

// ---------------------------------------------------------------------------------------------
// Targets

/// Target settings that read nothing of this machine but what is asked: Python 3.11 on Linux
/// x86_64 without an interpreter, and the hardware of `profile` or, without one, detected
/// under an empty directory with the override variables `env`.
pub(crate) fn target(profile: Option<&Path>, env: &[(&str, &str)], empty_root: &Path) -> Target {
    let mut settings = TargetSettings::from_process_env();
    settings.env.retain(|k, _| k == "HOME" || k == "PATH");
    settings
        .env
        .extend(env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
    settings.use_cache = false;
    match profile {
        Some(profile) => settings.profile = Some(profile.to_path_buf()),
        None => settings.sysroot = Some(empty_root.to_path_buf()),
    }
    settings.python.version = Some("3.11".parse().unwrap());
    settings.python.platform = Some("x86_64-manylinux_2_28".parse().unwrap());
    Target::resolve(&settings).unwrap()
}

/// A CPU: a `vari-profile/1` with x86-64 levels up to v3 and nothing else.
pub(crate) fn cpu_target(dir: &Path) -> Target {
    let path = dir.join("cpu-profile.json");
    std::fs::write(
        &path,
        r#"{"schema": "vari-profile/1",
  "namespaces": [{"namespace": "x86_64", "features": [{"name": "level", "values": ["v3", "v2", "v1"]}]}]}"#,
    )
    .unwrap();
    target(Some(&path), &[], dir)
}

/// An NVIDIA GPU with a CUDA 12.8 driver, from the provider's override variables.
pub(crate) fn cuda_12_8_target(dir: &Path) -> Target {
    target(
        None,
        &[
            ("NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION", "12.8"),
            ("NV_VARIANT_PROVIDER_FORCE_SM_ARCH", "8.6"),
        ],
        dir,
    )
}

/// An NVIDIA GPU with a CUDA 13 driver, from a facts profile.
pub(crate) fn cuda_13_target(dir: &Path) -> Target {
    let path = dir.join("blackwell.toml");
    std::fs::write(
        &path,
        "[nvidia]\ncuda_version = \"13.0\"\ncompute_capability = \"12.0\"\n",
    )
    .unwrap();
    target(Some(&path), &[], dir)
}

// ---------------------------------------------------------------------------------------------
// Proxies

/// Client settings for test upstreams: no HTTP cache, no netrc, no retries.
pub(crate) fn client(indexes: &[String], find_links: &[&Path]) -> ClientSettings {
    ClientSettings {
        indexes: indexes
            .iter()
            .map(|i| IndexUrl::parse(i).unwrap())
            .collect(),
        find_links: find_links
            .iter()
            .map(|p| FindLinks::Directory(p.to_path_buf()))
            .collect(),
        cache_dir: None,
        cache_mode: CacheMode::Normal,
        read_timeout: Duration::from_secs(20),
        connect_timeout: Duration::from_secs(5),
        retries: 0,
        netrc: NetrcSource::Disabled,
        ..ClientSettings::default()
    }
}

/// Proxy settings with a cache directory of the test's own.
pub(crate) fn settings(client: ClientSettings, target: Target, cache: &Path) -> ProxySettings {
    let mut settings = ProxySettings::new(client, target);
    settings.cache_dir = Some(cache.to_path_buf());
    settings
}

/// Starts a proxy (the log is captured from the first one on).
pub(crate) async fn start(settings: ProxySettings) -> RunningProxy {
    log_buffer();
    vari_proxy::start(settings).await.unwrap()
}

/// A proxy over the test index `index` alone, for the target `target` describes in a new
/// scratch directory (which also holds the proxy's cache). The directory is returned: keep it
/// while the proxy runs; tests read the target's profile path or the cache from it.
pub(crate) async fn proxy_over(
    index: &TestIndex,
    target: impl FnOnce(&Path) -> Target,
) -> (RunningProxy, tempfile::TempDir) {
    proxy_with(client(&[index.index_url()], &[]), target).await
}

/// [`proxy_over`] with other upstreams than one test index: `client` names them (indexes
/// elsewhere, find-links directories).
pub(crate) async fn proxy_with(
    client: ClientSettings,
    target: impl FnOnce(&Path) -> Target,
) -> (RunningProxy, tempfile::TempDir) {
    let scratch = tempfile::tempdir().unwrap();
    let proxy = start(settings(client, target(scratch.path()), scratch.path())).await;
    (proxy, scratch)
}

pub(crate) use vari_test_support::raw::unused_port;

/// [`proxy_with`] whose one index is down: `http://127.0.0.1:{port}/simple/`, where nothing
/// listens on the port returned.
pub(crate) async fn proxy_over_a_closed_port(
    target: impl FnOnce(&Path) -> Target,
) -> (RunningProxy, tempfile::TempDir, u16) {
    let port = unused_port();
    let index = format!("http://127.0.0.1:{port}/simple/");
    let (proxy, scratch) = proxy_with(client(&[index], &[]), target).await;
    (proxy, scratch, port)
}

/// How many requests for `path` the upstream saw.
pub(crate) fn upstream_requests(index: &TestIndex, path: &str) -> usize {
    index.seen().iter().filter(|s| s.path == path).count()
}

/// A directory with one upstream release written by `write`, served by a test index.
pub(crate) async fn upstream(write: &[fn(&Path)]) -> (tempfile::TempDir, TestIndex) {
    let dir = tempfile::tempdir().unwrap();
    for release in write {
        release(dir.path());
    }
    let index = TestIndex::start(dir.path()).await;
    (dir, index)
}

// ---------------------------------------------------------------------------------------------
// A raw HTTP/1.1 client: one request per connection, the answer read whole.

/// An answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl Reply {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text()))
    }
}

/// `method path` with `headers` to `addr`.
pub(crate) async fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
) -> Reply {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.unwrap();
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no header end in {:?}", String::from_utf8_lossy(&raw)));
    let head = String::from_utf8_lossy(&raw[..end]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let mut body = raw[end + 4..].to_vec();
    if headers
        .iter()
        .any(|(n, v)| n.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"))
    {
        body = dechunk(&body);
    }
    Reply {
        status,
        headers,
        body,
    }
}

fn dechunk(mut raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let Some(line_end) = raw.windows(2).position(|w| w == b"\r\n") else {
            return out;
        };
        let size = usize::from_str_radix(
            String::from_utf8_lossy(&raw[..line_end])
                .split(';')
                .next()
                .unwrap()
                .trim(),
            16,
        )
        .unwrap();
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&raw[line_end + 2..line_end + 2 + size]);
        raw = &raw[line_end + 2 + size + 2..];
    }
}

/// GET `path` asking for PEP 691 JSON.
pub(crate) async fn get_json(addr: SocketAddr, path: &str) -> Reply {
    request(
        addr,
        "GET",
        path,
        &[("Accept", "application/vnd.pypi.simple.v1+json")],
    )
    .await
}

/// The path of a URL the proxy gave (absolute paths are kept).
pub(crate) fn path_of(href: &str) -> String {
    href.split('#').next().unwrap().to_owned()
}

// ---------------------------------------------------------------------------------------------
// Installers

pub(crate) use vari_test_support::installers::{Installed, Installer, INSTALLERS};

/// Runs `installer` to install `requirements` from `index` into a new directory.
pub(crate) async fn install(installer: Installer, index: &str, requirements: &[&str]) -> Installed {
    install_with(installer, index, requirements, &[]).await
}

/// [`install`] with more arguments for the installer.
pub(crate) async fn install_with(
    installer: Installer,
    index: &str,
    requirements: &[&str],
    extra: &[&str],
) -> Installed {
    let mut arguments: Vec<String> = extra.iter().map(|r| (*r).to_owned()).collect();
    arguments.extend(requirements.iter().map(|r| (*r).to_owned()));
    install_blocking(installer, index, arguments, None).await
}

/// [`install`] with uv's cache in `cache` (kept for the next run), not a fresh one.
pub(crate) async fn install_with_cache(
    installer: Installer,
    index: &str,
    requirements: &[&str],
    cache: &Path,
) -> Installed {
    let arguments: Vec<String> = requirements.iter().map(|r| (*r).to_owned()).collect();
    install_blocking(installer, index, arguments, Some(cache.to_path_buf())).await
}

/// The shared installer run, off the runtime's threads (the proxy serves it meanwhile).
async fn install_blocking(
    installer: Installer,
    index: &str,
    arguments: Vec<String>,
    kept_cache: Option<PathBuf>,
) -> Installed {
    let index = index.to_owned();
    tokio::task::spawn_blocking(move || {
        vari_test_support::installers::install_into_target(
            installer,
            Path::new(env!("CARGO_TARGET_TMPDIR")),
            &index,
            &arguments,
            kept_cache.as_deref(),
        )
    })
    .await
    .unwrap()
}
