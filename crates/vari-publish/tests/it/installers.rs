//! PEP 825's promise to existing installers, with the real pip and uv of the test venv: from a
//! site built here and served on 127.0.0.1, plain pip and uv ignore the variant wheels and
//! install the non-variant wheel. Served twice: by Python's static file server (HTML pages, as
//! any static host) and by a small server here that answers JSON requests with `index.json` (as
//! the nginx and Caddy rules in the crate docs do), so both page forms meet real clients.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use vari_publish::{build, BuildOptions};

use crate::common::*;

/// The workspace's test venv: `$VARI_TEST_VENV` or `<workspace>/.venv`.
fn venv() -> PathBuf {
    let venv = std::env::var_os("VARI_TEST_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv"));
    assert!(
        venv.join("bin/python").is_file() && venv.join("bin/uv").is_file(),
        "the test venv {} is missing (or lacks uv): run scripts/test-env",
        venv.display()
    );
    venv
}

/// `python -m http.server` serving `dir` on 127.0.0.1; killed on drop.
struct StaticServer {
    child: Child,
    url: String,
}

impl StaticServer {
    fn start(dir: &Path) -> Self {
        let mut child = Command::new(venv().join("bin/python"))
            .args(["-u", "-m", "http.server", "--bind", "127.0.0.1", "0"])
            .current_dir(dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("python runs");
        // "Serving HTTP on 127.0.0.1 port 43127 (http://127.0.0.1:43127/) ..."
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .split_once("(http://")
            .and_then(|(_, rest)| rest.split_once(')'))
            .map(|(address, _)| format!("http://{address}"))
            .unwrap_or_else(|| panic!("unexpected http.server banner: {line:?}"));
        Self { child, url }
    }
}

impl Drop for StaticServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A static server that, like the documented nginx and Caddy rules, answers a directory request
/// with `index.json` when the client accepts `application/vnd.pypi.simple.v1+json`, else with
/// `index.html`. Runs until the test process ends; counts the JSON pages it served.
fn negotiating_server(root: PathBuf) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let json_pages = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&json_pages);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let root = root.clone();
            let counter = Arc::clone(&counter);
            std::thread::spawn(move || serve(stream, &root, &counter));
        }
    });
    (url, json_pages)
}

fn serve(mut stream: TcpStream, root: &Path, json_pages: &AtomicUsize) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    let mut wants_json = false;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).unwrap_or(0) == 0 || header.trim().is_empty() {
            break;
        }
        let lower = header.to_ascii_lowercase();
        if lower.starts_with("accept:") && lower.contains("application/vnd.pypi.simple.v1+json") {
            wants_json = true;
        }
    }
    let target = request_line.split_whitespace().nth(1).unwrap_or("/");
    let path = target.split(['?', '#']).next().unwrap_or("/");
    let decoded = percent_decode(path);
    let mut file = root.join(decoded.trim_start_matches('/'));
    let mut content_type = "application/octet-stream";
    if decoded.ends_with('/') {
        if wants_json {
            json_pages.fetch_add(1, Ordering::SeqCst);
            file = file.join("index.json");
            content_type = "application/vnd.pypi.simple.v1+json";
        } else {
            file = file.join("index.html");
            content_type = "text/html";
        }
    }
    let response = match (decoded.contains(".."), std::fs::read(&file)) {
        (false, Ok(body)) => {
            let mut head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            )
            .into_bytes();
            head.extend(body);
            head
        }
        _ => b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_vec(),
    };
    let _ = stream.write_all(&response);
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Ok(byte) = u8::from_str_radix(&text[i + 1..i + 3], 16) {
                out.push(byte);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The outcome of one installer run.
struct Installed {
    target: tempfile::TempDir,
    output: String,
}

impl Installed {
    /// The installed `.dist-info` directory's file names.
    fn dist_info_files(&self, dist_info: &str) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.target.path().join(dist_info))
            .unwrap_or_else(|e| panic!("{dist_info} not installed ({e}):\n{}", self.output))
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

fn run(mut command: Command) -> Installed {
    let target = tempfile::tempdir().unwrap();
    let output = command
        .arg("--target")
        .arg(target.path())
        .stdin(Stdio::null())
        .output()
        .expect("the installer runs");
    let text = format!(
        "--- stdout\n{}\n--- stderr\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "installer failed:\n{text}");
    Installed {
        target,
        output: text,
    }
}

/// An installer run: index URL, requirement.
type Install = fn(&str, &str) -> Installed;

fn pip_install(index: &str, requirement: &str) -> Installed {
    let mut command = Command::new(venv().join("bin/python"));
    command
        .args([
            "-m",
            "pip",
            "install",
            "--isolated",
            "--no-deps",
            "--no-cache-dir",
        ])
        .args(["--disable-pip-version-check", "--no-compile", "-v"])
        .args(["--index-url", index, requirement])
        .env("PIP_CONFIG_FILE", "/dev/null");
    run(command)
}

fn uv_install(index: &str, requirement: &str) -> Installed {
    let cache = tempfile::tempdir().unwrap();
    let mut command = Command::new(venv().join("bin/uv"));
    command
        .args(["pip", "install", "--no-config", "--no-deps", "-v"])
        .args(["--python", venv().join("bin/python").to_str().unwrap()])
        .args(["--index-url", index, requirement])
        .env("UV_CACHE_DIR", cache.path())
        .env_remove("UV_INDEX_URL")
        .env_remove("UV_EXTRA_INDEX_URL");
    let installed = run(command);
    drop(cache);
    installed
}

/// The fixture project: the plain wheel is installed, not one of the six variant wheels.
fn assert_plain_fixture_installed(installed: &Installed) {
    let files = installed.dist_info_files("test_package-0.dist-info");
    assert!(
        !files.contains(&"variant.json".to_owned()),
        "{files:?}\n{}",
        installed.output
    );
    let record = std::fs::read_to_string(
        installed
            .target
            .path()
            .join("test_package-0.dist-info/RECORD"),
    )
    .unwrap();
    assert!(!record.contains("variant.json"), "{record}");
}

/// The generated project: `LABEL = ""` is the plain wheel's module.
fn assert_plain_generated_installed(installed: &Installed) {
    let module = installed.target.path().join("fast_pkg/__init__.py");
    let text = std::fs::read_to_string(&module)
        .unwrap_or_else(|e| panic!("{} ({e}):\n{}", module.display(), installed.output));
    assert_eq!(text, "LABEL = \"\"\n", "{}", installed.output);
}

/// A site from the fixture wheels plus a generated project whose variants sort before its plain
/// wheel by file name.
fn site() -> tempfile::TempDir {
    let input = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(fixture_wheels()).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, input.path().join(path.file_name().unwrap())).unwrap();
    }
    for level in ["v1", "v3", "v4"] {
        WheelSpec::x86_64("fast_pkg", "1.0", level).write(input.path());
    }
    WheelSpec::plain("fast_pkg", "1.0").write(input.path());
    let site = tempfile::tempdir().unwrap();
    build(&BuildOptions::new(input.path(), site.path())).unwrap();
    site
}

#[test]
fn pip_and_uv_install_the_plain_wheel_from_static_html_pages() {
    let site = site();
    let server = StaticServer::start(site.path());
    let index = format!("{}/simple/", server.url);
    assert_plain_fixture_installed(&pip_install(&index, "test-package"));
    assert_plain_generated_installed(&pip_install(&index, "fast-pkg"));
    assert_plain_fixture_installed(&uv_install(&index, "test-package"));
    assert_plain_generated_installed(&uv_install(&index, "fast-pkg"));
}

#[test]
fn pip_and_uv_install_the_plain_wheel_from_json_pages() {
    let site = site();
    let (url, json_pages) = negotiating_server(site.path().to_owned());
    let index = format!("{url}/simple/");
    let installs: [(&str, Install); 2] = [("pip", pip_install), ("uv", uv_install)];
    for (installer, install) in installs {
        let before = json_pages.load(Ordering::SeqCst);
        assert_plain_fixture_installed(&install(&index, "test-package"));
        assert_plain_generated_installed(&install(&index, "fast-pkg"));
        assert!(
            json_pages.load(Ordering::SeqCst) > before,
            "{installer} did not ask for the JSON pages"
        );
    }
}
