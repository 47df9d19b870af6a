//! A static host on 127.0.0.1 serving a built site (`vari index build`'s output) as object
//! stores, CDNs and plain web servers do: files by path, `index.html` for a directory, and,
//! when asked to, `index.json` for a directory request that accepts PEP 691 JSON (the nginx and
//! Caddy rules in vari-publish's docs). It counts what tests check.

use std::io::Write;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::raw::{raw_server_with, RawRequest};

/// How the host behaves.
#[derive(Debug, Clone, Copy, Default)]
pub struct SiteOptions {
    /// Answer a directory request that accepts PEP 691 JSON with `index.json`.
    pub negotiate: bool,
    /// Honour `Range` (and say `Accept-Ranges: bytes`).
    pub ranges: bool,
}

#[derive(Default)]
struct Counts {
    json_pages: AtomicUsize,
    ranges: AtomicUsize,
}

/// A running host; it serves until the test process ends.
pub struct StaticSite {
    /// `http://127.0.0.1:PORT` (no trailing slash).
    pub base: String,
    counts: Arc<Counts>,
}

impl StaticSite {
    /// Serves the directory `root`.
    pub fn serve(root: &Path, options: SiteOptions) -> Self {
        let root = root.to_path_buf();
        let counts = Arc::new(Counts::default());
        let counting = Arc::clone(&counts);
        let addr = raw_server_with(move |request, stream| {
            answer(request, stream, &root, options, &counting)
        });
        Self {
            base: format!("http://{addr}"),
            counts,
        }
    }

    /// Directory requests answered with `index.json` by negotiation so far.
    pub fn json_pages(&self) -> usize {
        self.counts.json_pages.load(Ordering::SeqCst)
    }

    /// Requests answered with 206 Partial Content so far.
    pub fn ranges(&self) -> usize {
        self.counts.ranges.load(Ordering::SeqCst)
    }
}

fn answer(
    request: &RawRequest,
    stream: &mut TcpStream,
    root: &Path,
    options: SiteOptions,
    counts: &Counts,
) {
    let path = percent_decode(request.path.split(['?', '#']).next().unwrap_or("/"));
    let (file, content_type) = resolve(root, &path, options.negotiate && request.wants_json());
    let body = match (path.contains(".."), std::fs::read(&file)) {
        (false, Ok(body)) => body,
        _ => {
            let _ = stream.write_all(
                b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
            return;
        }
    };
    if content_type == JSON {
        counts.json_pages.fetch_add(1, Ordering::SeqCst);
    }
    let total = body.len();
    let span = request
        .header("range")
        .filter(|_| options.ranges)
        .and_then(|range| span(range, total));
    let (status, start, end) = match span {
        Some((start, end)) => {
            counts.ranges.fetch_add(1, Ordering::SeqCst);
            ("206 Partial Content", start, end)
        }
        None => ("200 OK", 0, total),
    };
    let mut head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n",
        end - start
    );
    if options.ranges {
        head.push_str("Accept-Ranges: bytes\r\n");
    }
    if span.is_some() {
        head.push_str(&format!(
            "Content-Range: bytes {start}-{}/{total}\r\n",
            end - 1
        ));
    }
    head.push_str("\r\n");
    let mut response = head.into_bytes();
    if request.method != "HEAD" {
        response.extend_from_slice(&body[start..end]);
    }
    let _ = stream.write_all(&response);
}

const JSON: &str = "application/vnd.pypi.simple.v1+json";

/// The file a request path names, and its content type.
fn resolve(root: &Path, path: &str, json: bool) -> (PathBuf, &'static str) {
    let file = root.join(path.trim_start_matches('/'));
    match (path.ends_with('/'), json) {
        (true, true) => (file.join("index.json"), JSON),
        (true, false) => (file.join("index.html"), "text/html"),
        (false, _) => (file, "application/octet-stream"),
    }
}

/// `bytes=-N`, `bytes=A-` or `bytes=A-B` (inclusive) as a half-open span of a `total`-byte
/// file.
fn span(range: &str, total: usize) -> Option<(usize, usize)> {
    let (from, to) = range.trim().strip_prefix("bytes=")?.split_once('-')?;
    if from.is_empty() {
        let n: usize = to.parse().ok()?;
        return Some((total.saturating_sub(n), total));
    }
    let start: usize = from.parse().ok()?;
    let end = if to.is_empty() {
        total
    } else {
        (to.parse::<usize>().ok()? + 1).min(total)
    };
    (start < end).then_some((start, end))
}

/// `%XX` escapes decoded (file names of a built site are percent-encoded in its pages).
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Some(byte) = text
                .get(i + 1..i + 3)
                .and_then(|hex| u8::from_str_radix(hex, 16).ok())
            {
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

/// `python -m http.server` (the test venv's Python) serving a directory on 127.0.0.1: a plain
/// static host, HTML for directories, no range support. Killed on drop.
pub struct PythonHttpServer {
    child: std::process::Child,
    /// `http://127.0.0.1:PORT/`.
    pub url: String,
}

impl PythonHttpServer {
    /// Serves `dir`.
    pub fn start(dir: &Path) -> Self {
        use std::io::{BufRead, BufReader};
        use std::process::{Command, Stdio};
        let mut child = Command::new(crate::venv::python())
            .args(["-u", "-m", "http.server", "--bind", "127.0.0.1", "0"])
            .current_dir(dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("python runs");
        // "Serving HTTP on 127.0.0.1 port 43127 (http://127.0.0.1:43127/) ..."
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("piped stdout"))
            .read_line(&mut line)
            .expect("http.server's banner");
        let url = line
            .split_once("(http://")
            .and_then(|(_, rest)| rest.split_once(')'))
            .map(|(address, _)| format!("http://{address}"))
            .unwrap_or_else(|| panic!("unexpected http.server banner: {line:?}"));
        Self { child, url }
    }
}

impl Drop for PythonHttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A response's status and headers (names lowercase), from a plain `http://` request.
#[derive(Debug, Clone)]
pub struct Head {
    /// The status code.
    pub status: u16,
    /// The headers, names lowercase, in order.
    pub headers: Vec<(String, String)>,
}

impl Head {
    /// The first header called `name` (lowercase).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// `HEAD url` (plain `http://`), with `Accept: accept` when given: what a real server (nginx,
/// an object store's website endpoint) answers, headers only.
pub fn head(url: &str, accept: Option<&str>) -> Head {
    use std::io::Read;
    let rest = url.strip_prefix("http://").expect("an http:// URL");
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let (host, port) = authority.rsplit_once(':').expect("host:port");
    let mut stream =
        TcpStream::connect((host, port.parse::<u16>().expect("a port"))).expect("connect");
    let accept = accept
        .map(|a| format!("Accept: {a}\r\n"))
        .unwrap_or_default();
    write!(
        stream,
        "HEAD {path} HTTP/1.1\r\nHost: {authority}\r\n{accept}Connection: close\r\n\r\n"
    )
    .expect("send");
    let mut text = String::new();
    stream.read_to_string(&mut text).expect("read");
    let mut lines = text.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {text}"));
    let headers = lines
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    Head { status, headers }
}

/// `GET url` (plain `http://`): the body, after checking the answer is `200`. What a real
/// server (nginx, an object store's website endpoint) serves, byte for byte.
pub fn get(url: &str) -> Vec<u8> {
    use std::io::Read;
    let rest = url.strip_prefix("http://").expect("an http:// URL");
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let (host, port) = authority.rsplit_once(':').expect("host:port");
    let mut stream =
        TcpStream::connect((host, port.parse::<u16>().expect("a port"))).expect("connect");
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n"
    )
    .expect("send");
    let mut bytes = Vec::new();
    stream.read_to_end(&mut bytes).expect("read");
    let end = bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("headers end");
    let head = String::from_utf8_lossy(&bytes[..end]).into_owned();
    assert!(head.starts_with("HTTP/1.1 200"), "{url}: {head}");
    bytes[end + 4..].to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_half_open_spans() {
        assert_eq!(span("bytes=-10", 100), Some((90, 100)));
        assert_eq!(span("bytes=10-", 100), Some((10, 100)));
        assert_eq!(span("bytes=10-19", 100), Some((10, 20)));
        assert_eq!(span("bytes=10-999", 100), Some((10, 100)));
        assert_eq!(span("bytes=100-", 100), None);
        assert_eq!(span("items=1-2", 100), None);
    }

    #[test]
    fn escapes_are_decoded() {
        assert_eq!(percent_decode("/a%2Bb/%zz"), "/a+b/%zz");
    }
}
