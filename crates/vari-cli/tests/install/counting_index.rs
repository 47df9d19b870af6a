//! A PEP 503 index on 127.0.0.1 serving the files of a directory (the demo release), which
//! counts the wheel downloads it answers and can be told to refuse them: what the install tests
//! need to see whether an installer reused its cache, and to make an installer fail after
//! resolving. One thread per connection, one request per connection (HTTP/1.0 style); each
//! wheel's METADATA is offered as PEP 658 metadata (as PyPI does: installers resolve from it and
//! download wheels only once resolved), and range requests are answered.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use vari_test_support::raw::{raw_server_with, RawRequest};
use vari_test_support::wheels::sha256_hex as hex;

/// A running index; it serves until the test process ends.
pub(crate) struct CountingIndex {
    /// `http://127.0.0.1:PORT/simple/`.
    pub(crate) url: String,
    shared: Arc<Shared>,
}

struct Shared {
    dir: PathBuf,
    /// Whole-file GETs of `.whl` files answered (or refused).
    wheel_downloads: AtomicUsize,
    /// Answer wheel downloads with 404 instead of the bytes.
    refuse_wheels: AtomicBool,
}

impl CountingIndex {
    /// Serves the files of `dir`: `/simple/{project}/` lists those whose name starts with
    /// the project's name (underscored), with their SHA-256; `/files/{name}` has the bytes.
    pub(crate) fn start(dir: &Path) -> Self {
        let shared = Arc::new(Shared {
            dir: dir.to_path_buf(),
            wheel_downloads: AtomicUsize::new(0),
            refuse_wheels: AtomicBool::new(false),
        });
        let serving = shared.clone();
        let addr = raw_server_with(move |request, stream| answer(request, stream, &serving));
        Self {
            url: format!("http://{addr}/simple/"),
            shared,
        }
    }

    /// How many whole wheel files were asked for so far.
    pub(crate) fn wheel_downloads(&self) -> usize {
        self.shared.wheel_downloads.load(Ordering::SeqCst)
    }

    /// From now on, wheel downloads get 404 (pages and ranges are still answered).
    pub(crate) fn refuse_wheels(&self) {
        self.shared.refuse_wheels.store(true, Ordering::SeqCst);
    }
}

fn answer(request: &RawRequest, stream: &mut TcpStream, shared: &Shared) {
    let head_only = request.method == "HEAD";
    let (status, body, extra) = respond(shared, &request.path, request.header("range"), head_only);
    // A HEAD answer says the length the GET would have, without the body.
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n{extra}\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes());
    if !head_only {
        let _ = stream.write_all(&body);
    }
}

fn respond(
    shared: &Shared,
    path: &str,
    range: Option<&str>,
    head: bool,
) -> (&'static str, Vec<u8>, String) {
    let not_found = || ("404 Not Found", b"not found".to_vec(), String::new());
    if let Some(project) = path
        .strip_prefix("/simple/")
        .and_then(|p| p.strip_suffix('/'))
    {
        return match page(&shared.dir, project) {
            Some(html) => (
                "200 OK",
                html.into_bytes(),
                "Content-Type: text/html\r\n".to_owned(),
            ),
            None => not_found(),
        };
    }
    let Some(name) = path.strip_prefix("/files/") else {
        return not_found();
    };
    if name.contains('/') || name.starts_with('.') {
        return not_found();
    }
    if let Some(wheel) = name.strip_suffix(".metadata") {
        return match wheel_metadata(&shared.dir.join(wheel)) {
            Some(text) => ("200 OK", text, String::new()),
            None => not_found(),
        };
    }
    let Ok(bytes) = std::fs::read(shared.dir.join(name)) else {
        return not_found();
    };
    if name.ends_with(".whl") && range.is_none() && !head {
        shared.wheel_downloads.fetch_add(1, Ordering::SeqCst);
        if shared.refuse_wheels.load(Ordering::SeqCst) {
            return not_found();
        }
    }
    // Files never change under their name: PyPI says so too, and installers then trust what
    // they cached (a file without it would be asked for again on every run, cache or not).
    let headers = "Accept-Ranges: bytes\r\nCache-Control: max-age=31536000, immutable\r\n";
    match range.and_then(|r| byte_range(r, bytes.len())) {
        Some((start, end)) => (
            "206 Partial Content",
            bytes[start..=end].to_vec(),
            format!(
                "Content-Range: bytes {start}-{end}/{}\r\n{headers}",
                bytes.len()
            ),
        ),
        None => ("200 OK", bytes, headers.to_owned()),
    }
}

/// `bytes=A-B`, `bytes=A-` or `bytes=-N` within a file of `len` bytes, inclusive.
fn byte_range(range: &str, len: usize) -> Option<(usize, usize)> {
    let spec = range.strip_prefix("bytes=")?;
    let (start, end) = spec.split_once('-')?;
    if len == 0 {
        return None;
    }
    let (start, end) = match (start.trim(), end.trim()) {
        ("", suffix) => (len.saturating_sub(suffix.parse().ok()?), len - 1),
        (start, "") => (start.parse().ok()?, len - 1),
        (start, end) => (start.parse().ok()?, end.parse::<usize>().ok()?.min(len - 1)),
    };
    (start <= end).then_some((start, end))
}

/// The project's page: the files whose name is `{project_with_underscores}-…`.
fn page(dir: &Path, project: &str) -> Option<String> {
    let prefix = format!("{}-", project.replace('-', "_"));
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.starts_with(&prefix) && (n.ends_with(".whl") || n.ends_with(".json")))
        .collect();
    if names.is_empty() {
        return None;
    }
    names.sort();
    let mut html = String::from("<!DOCTYPE html><html><body>\n");
    for name in names {
        let bytes = std::fs::read(dir.join(&name)).ok()?;
        let metadata = match wheel_metadata(&dir.join(&name)) {
            Some(text) => format!(" data-dist-info-metadata=\"sha256={}\"", hex(&text)),
            None => String::new(),
        };
        html.push_str(&format!(
            "<a href=\"/files/{name}#sha256={}\"{metadata}>{name}</a><br>\n",
            hex(&bytes)
        ));
    }
    html.push_str("</body></html>\n");
    Some(html)
}

/// The `*.dist-info/METADATA` of the wheel at `path`.
fn wheel_metadata(path: &Path) -> Option<Vec<u8>> {
    if path.extension()? != "whl" {
        return None;
    }
    let mut archive = zip::ZipArchive::new(std::fs::File::open(path).ok()?).ok()?;
    let name = archive
        .file_names()
        .find(|n| n.ends_with(".dist-info/METADATA") && n.matches('/').count() == 1)?
        .to_owned();
    let mut text = Vec::new();
    archive.by_name(&name).ok()?.read_to_end(&mut text).ok()?;
    Some(text)
}
