//! A small simple-index server for tests, on 127.0.0.1 with an ephemeral port.
//!
//! It serves the files of one directory as a PEP 503 HTML and PEP 691 JSON index with
//! content negotiation, plus a flat find-links page, with knobs for the misbehaviour tests
//! need: no range support, N server errors before success, hanging, basic auth, cache
//! validators, wrong hashes, truncated bodies. Every request is recorded for assertions.
//!
//! It runs on the test's tokio runtime and stops when that runtime ends.
//!
//! Routes:
//! - `/simple/{project}/` — the project's files (those whose name, up to the first `-`,
//!   normalises to the project), HTML or JSON as `Accept` asks (JSON wins when offered).
//! - `/files/{filename}` — a file (ranges honoured unless disabled).
//! - `/files/{filename}.metadata` — `{filename}.metadata` from the directory (PEP 658).
//! - `/flat.html` — every file on one page (a find-links page).

use std::collections::HashMap;
use std::convert::Infallible;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::wheels::sha256_hex;

use base64::Engine as _;
use bytes::Bytes;
use http_body_util::{combinators::BoxBody, BodyExt, Full, StreamBody};
use hyper::body::Frame;
use hyper::{Request, Response, StatusCode};

/// Which page formats the server offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Formats {
    /// JSON when the client accepts it, else HTML.
    Negotiate,
    /// HTML only (a PEP 503 server that predates PEP 691).
    HtmlOnly,
}

/// How a file advertises its PEP 658 metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetadataSpelling {
    /// `data-dist-info-metadata` / `dist-info-metadata` (PEP 658).
    DistInfo,
    /// `data-core-metadata` / `core-metadata` (PEP 714).
    Core,
}

/// Per-file attributes the page gives.
#[derive(Debug, Clone, Default)]
pub struct FileAttrs {
    /// `Some(None)`: yanked without reason.
    pub yanked: Option<Option<String>>,
    /// `data-requires-python` / `requires-python`.
    pub requires_python: Option<String>,
    /// Advertise `{file}.metadata` with its sha256, in this spelling.
    pub core_metadata: Option<MetadataSpelling>,
    /// Advertise this sha256 instead of the real one.
    pub wrong_sha256: bool,
    /// Cut the body off after this many bytes (the connection breaks).
    pub truncate_after: Option<usize>,
    /// Declare this size on the JSON page instead of the real one (a lying index).
    pub declared_size: Option<u64>,
    /// Advertise a SHA-256 for `{file}.metadata` that its content does not have.
    pub wrong_metadata_sha256: bool,
}

/// The knobs, changeable while the server runs.
#[derive(Debug, Clone)]
pub struct Knobs {
    /// Which page formats are offered.
    pub formats: Formats,
    /// Honour `Range` (and say `Accept-Ranges: bytes`).
    pub ranges: bool,
    /// Answer this many requests with 500 first.
    pub fail_next: u32,
    /// Never answer.
    pub hang: bool,
    /// Require HTTP basic auth with this user and password.
    pub basic_auth: Option<(String, String)>,
    /// Send `ETag` (the body's hash) and honour `If-None-Match`.
    pub etag: bool,
    /// Send a fixed `Last-Modified` and honour `If-Modified-Since`.
    pub last_modified: bool,
    /// 304s carry no validator, as Python's `http.server` sends them.
    pub bare_not_modified: bool,
    /// `Cache-Control` of every response.
    pub cache_control: Option<String>,
    /// `Cache-Control` of the files under `/files/` instead (PyPI says its files are fresh for a
    /// year, its pages for minutes).
    pub files_cache_control: Option<String>,
    /// Give sha256 hashes of files.
    pub hashes: bool,
    /// Per-file attributes, by file name.
    pub attrs: HashMap<String, FileAttrs>,
    /// After this many requests of a project's page, that page advertises other SHA-256s for
    /// its files than the first answers did (an index that answers a later request
    /// otherwise); the files themselves do not change.
    pub other_hashes_after_pages: Option<usize>,
}

impl Default for Knobs {
    fn default() -> Self {
        Self {
            formats: Formats::Negotiate,
            ranges: true,
            fail_next: 0,
            hang: false,
            basic_auth: None,
            etag: false,
            last_modified: false,
            bare_not_modified: false,
            cache_control: None,
            files_cache_control: None,
            hashes: true,
            attrs: HashMap::new(),
            other_hashes_after_pages: None,
        }
    }
}

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    /// The request method.
    pub method: String,
    /// The request path.
    pub path: String,
    /// The `Range` header.
    pub range: Option<String>,
    /// The `Accept` header.
    pub accept: Option<String>,
    /// The `Authorization` header.
    pub authorization: Option<String>,
    /// The status answered.
    pub status: u16,
    /// Body bytes sent (before any truncation knob; none for HEAD).
    pub body_len: usize,
}

struct State {
    root: PathBuf,
    knobs: Mutex<Knobs>,
    seen: Mutex<Vec<Seen>>,
    /// Page requests answered so far, by project.
    pages: Mutex<HashMap<String, usize>>,
}

/// A running server; it stops when the test's runtime ends.
#[derive(Clone)]
pub struct TestIndex {
    state: Arc<State>,
    addr: std::net::SocketAddr,
}

const LAST_MODIFIED: &str = "Wed, 21 Oct 2015 07:28:00 GMT";

impl TestIndex {
    /// Serves `root` on 127.0.0.1.
    pub async fn start(root: &Path) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("local address");
        let state = Arc::new(State {
            root: root.to_path_buf(),
            knobs: Mutex::new(Knobs::default()),
            seen: Mutex::new(Vec::new()),
            pages: Mutex::new(HashMap::new()),
        });
        let served = state.clone();
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let state = served.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |req| {
                        let state = state.clone();
                        async move { Ok::<_, Infallible>(handle(&state, req).await) }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Self { state, addr }
    }

    /// `http://127.0.0.1:PORT/simple/`.
    pub fn index_url(&self) -> String {
        format!("http://{}/simple/", self.addr)
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Changes the knobs.
    pub fn set(&self, change: impl FnOnce(&mut Knobs)) {
        change(&mut self.state.knobs.lock().unwrap());
    }

    /// Sets the attributes of one file.
    pub fn attrs(&self, filename: &str, attrs: FileAttrs) {
        self.set(|k| {
            k.attrs.insert(filename.to_owned(), attrs);
        });
    }

    /// The requests so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.state.seen.lock().unwrap().clone()
    }

    /// Forgets the requests so far.
    pub fn clear_seen(&self) {
        self.state.seen.lock().unwrap().clear();
    }
}

type Body = BoxBody<Bytes, std::io::Error>;

fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into())
        .map_err(|never| match never {})
        .boxed()
}

fn header(req: &Request<hyper::body::Incoming>, name: &str) -> Option<String> {
    req.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

async fn handle(state: &State, req: Request<hyper::body::Incoming>) -> Response<Body> {
    let knobs = state.knobs.lock().unwrap().clone();
    let mut seen = Seen {
        method: req.method().to_string(),
        path: req.uri().path().to_owned(),
        range: header(&req, "range"),
        accept: header(&req, "accept"),
        authorization: header(&req, "authorization"),
        status: 0,
        body_len: 0,
    };
    if knobs.hang {
        state.seen.lock().unwrap().push(seen.clone());
        std::future::pending::<()>().await;
    }
    let response = respond(state, &knobs, &req);
    let response = match response {
        Ok(r) => r,
        Err(status) => Reply::status(status),
    };
    seen.status = response.status.as_u16();
    seen.body_len = match *req.method() {
        hyper::Method::HEAD => 0,
        _ => response.body.len(),
    };
    state.seen.lock().unwrap().push(seen);
    response.into_response()
}

struct Reply {
    status: StatusCode,
    headers: Vec<(&'static str, String)>,
    body: Vec<u8>,
    truncate_after: Option<usize>,
}

impl Reply {
    fn status(status: StatusCode) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: status.to_string().into_bytes(),
            truncate_after: None,
        }
    }

    fn into_response(self) -> Response<Body> {
        let mut builder = Response::builder().status(self.status);
        for (name, value) in &self.headers {
            builder = builder.header(*name, value);
        }
        let body = match self.truncate_after {
            None => full(self.body),
            Some(n) => {
                // Promise the whole length, send part, then break the connection.
                builder = builder.header("content-length", self.body.len().to_string());
                let part = Bytes::from(self.body[..n.min(self.body.len())].to_vec());
                let frames: Vec<Result<Frame<Bytes>, std::io::Error>> = vec![
                    Ok(Frame::data(part)),
                    Err(std::io::Error::other("connection cut by the test server")),
                ];
                StreamBody::new(futures_util::stream::iter(frames)).boxed()
            }
        };
        builder.body(body).expect("a valid response")
    }
}

fn respond(
    state: &State,
    knobs: &Knobs,
    req: &Request<hyper::body::Incoming>,
) -> Result<Reply, StatusCode> {
    if knobs.fail_next > 0 {
        state.knobs.lock().unwrap().fail_next -= 1;
        return Err(StatusCode::INTERNAL_SERVER_ERROR);
    }
    if let Some((user, password)) = &knobs.basic_auth {
        let expected = format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
        );
        if header(req, "authorization").as_deref() != Some(expected.as_str()) {
            return Err(StatusCode::UNAUTHORIZED);
        }
    }
    let path = percent_decode(req.uri().path());
    let is_file = path.starts_with("/files/");
    let (mut reply, cacheable) = if let Some(project) = path
        .strip_prefix("/simple/")
        .and_then(|p| p.strip_suffix('/'))
    {
        let json = knobs.formats == Formats::Negotiate
            && header(req, "accept")
                .is_some_and(|a| a.contains("application/vnd.pypi.simple.v1+json"));
        (project_page(state, knobs, project, json)?, true)
    } else if path == "/flat.html" {
        (flat_page(state, knobs)?, true)
    } else if let Some(name) = path.strip_prefix("/files/") {
        (
            file(state, knobs, req, name)?,
            name.ends_with(".json") || name.ends_with(".metadata"),
        )
    } else {
        return Err(StatusCode::NOT_FOUND);
    };
    if cacheable {
        let etag = format!("\"{}\"", &sha256_hex(&reply.body)[..16]);
        if knobs.etag {
            if header(req, "if-none-match").as_deref() == Some(etag.as_str()) {
                let mut not_modified = Reply::status(StatusCode::NOT_MODIFIED);
                not_modified.body.clear();
                if !knobs.bare_not_modified {
                    not_modified.headers.push(("etag", etag));
                }
                return Ok(not_modified);
            }
            reply.headers.push(("etag", etag));
        }
        if knobs.last_modified {
            if header(req, "if-modified-since").as_deref() == Some(LAST_MODIFIED) {
                // As nginx does: the 304 repeats the validator.
                let mut not_modified = Reply::status(StatusCode::NOT_MODIFIED);
                not_modified.body.clear();
                if !knobs.bare_not_modified {
                    not_modified
                        .headers
                        .push(("last-modified", LAST_MODIFIED.to_owned()));
                }
                return Ok(not_modified);
            }
            reply
                .headers
                .push(("last-modified", LAST_MODIFIED.to_owned()));
        }
        let cache_control = match &knobs.files_cache_control {
            Some(cc) if is_file => Some(cc),
            _ => knobs.cache_control.as_ref(),
        };
        if let Some(cc) = cache_control {
            reply.headers.push(("cache-control", cc.clone()));
        }
    }
    Ok(reply)
}

fn percent_decode(s: &str) -> String {
    let mut out = Vec::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 3 <= b.len() {
            if let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn normalise(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !out.ends_with('-') {
                out.push('-');
            }
        } else {
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

/// Files of the directory (not `.metadata` companions), sorted.
fn listing(state: &State) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&state.root)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| e.path().is_file())
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|name| !name.ends_with(".metadata"))
                .filter_map(|name| {
                    Some((name.clone(), std::fs::read(state.root.join(&name)).ok()?))
                })
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

fn project_page(
    state: &State,
    knobs: &Knobs,
    project: &str,
    json: bool,
) -> Result<Reply, StatusCode> {
    let project = normalise(project);
    let files: Vec<_> = listing(state)
        .into_iter()
        .filter(|(name, _)| name.split('-').next().map(normalise).as_deref() == Some(&project))
        .collect();
    if files.is_empty() {
        return Err(StatusCode::NOT_FOUND);
    }
    let answered = {
        let mut pages = state.pages.lock().unwrap();
        let count = pages.entry(project.clone()).or_default();
        *count += 1;
        *count - 1
    };
    let mut knobs = knobs.clone();
    if knobs
        .other_hashes_after_pages
        .is_some_and(|after| answered >= after)
    {
        for (name, _) in &files {
            knobs.attrs.entry(name.clone()).or_default().wrong_sha256 = true;
        }
    }
    let knobs = &knobs;
    let (content_type, body) = if json {
        (
            "application/vnd.pypi.simple.v1+json",
            json_page(state, knobs, &project, &files),
        )
    } else {
        (
            "application/vnd.pypi.simple.v1+html",
            html_page(state, knobs, &files, "../../files/"),
        )
    };
    Ok(Reply {
        status: StatusCode::OK,
        headers: vec![("content-type", content_type.to_owned())],
        body: body.into_bytes(),
        truncate_after: None,
    })
}

fn flat_page(state: &State, knobs: &Knobs) -> Result<Reply, StatusCode> {
    let body = html_page(state, knobs, &listing(state), "files/");
    Ok(Reply {
        status: StatusCode::OK,
        headers: vec![("content-type", "text/html".to_owned())],
        body: body.into_bytes(),
        truncate_after: None,
    })
}

fn advertised_sha256(knobs: &Knobs, name: &str, content: &[u8]) -> String {
    if knobs.attrs.get(name).is_some_and(|a| a.wrong_sha256) {
        sha256_hex(b"something else")
    } else {
        sha256_hex(content)
    }
}

fn metadata_sha256(state: &State, name: &str) -> Option<String> {
    std::fs::read(state.root.join(format!("{name}.metadata")))
        .ok()
        .map(|m| sha256_hex(&m))
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn html_page(state: &State, knobs: &Knobs, files: &[(String, Vec<u8>)], prefix: &str) -> String {
    let mut page = String::from("<!DOCTYPE html>\n<html><body>\n");
    for (name, content) in files {
        let attrs = knobs.attrs.get(name).cloned().unwrap_or_default();
        let mut a = format!("<a href=\"{prefix}{name}");
        if knobs.hashes {
            a.push_str(&format!(
                "#sha256={}",
                advertised_sha256(knobs, name, content)
            ));
        }
        a.push('"');
        if let Some(rp) = &attrs.requires_python {
            a.push_str(&format!(" data-requires-python=\"{}\"", escape(rp)));
        }
        if let Some(yanked) = &attrs.yanked {
            a.push_str(&format!(
                " data-yanked=\"{}\"",
                escape(yanked.as_deref().unwrap_or(""))
            ));
        }
        if let Some(spelling) = attrs.core_metadata {
            let attr = match spelling {
                MetadataSpelling::DistInfo => "data-dist-info-metadata",
                MetadataSpelling::Core => "data-core-metadata",
            };
            let value = metadata_sha256(state, name)
                .map(|h| {
                    if attrs.wrong_metadata_sha256 {
                        sha256_hex(b"other metadata")
                    } else {
                        h
                    }
                })
                .map(|h| format!("sha256={h}"))
                .unwrap_or_else(|| "true".into());
            a.push_str(&format!(" {attr}=\"{value}\""));
        }
        page.push_str(&format!("{a}>{name}</a><br/>\n"));
    }
    page.push_str("</body></html>\n");
    page
}

fn json_page(state: &State, knobs: &Knobs, project: &str, files: &[(String, Vec<u8>)]) -> String {
    let mut entries = Vec::new();
    for (name, content) in files {
        let attrs = knobs.attrs.get(name).cloned().unwrap_or_default();
        let mut entry = format!(
            "{{\"filename\": \"{name}\", \"url\": \"../../files/{name}\", \"size\": {}",
            attrs.declared_size.unwrap_or(content.len() as u64)
        );
        if knobs.hashes {
            entry.push_str(&format!(
                ", \"hashes\": {{\"sha256\": \"{}\"}}",
                advertised_sha256(knobs, name, content)
            ));
        } else {
            entry.push_str(", \"hashes\": {}");
        }
        if let Some(rp) = &attrs.requires_python {
            entry.push_str(&format!(", \"requires-python\": \"{rp}\""));
        }
        match &attrs.yanked {
            Some(Some(reason)) => entry.push_str(&format!(", \"yanked\": \"{reason}\"")),
            Some(None) => entry.push_str(", \"yanked\": true"),
            None => {}
        }
        if let Some(spelling) = attrs.core_metadata {
            let key = match spelling {
                MetadataSpelling::DistInfo => "dist-info-metadata",
                MetadataSpelling::Core => "core-metadata",
            };
            let value = metadata_sha256(state, name)
                .map(|h| {
                    if attrs.wrong_metadata_sha256 {
                        sha256_hex(b"other metadata")
                    } else {
                        h
                    }
                })
                .map(|h| format!("{{\"sha256\": \"{h}\"}}"))
                .unwrap_or_else(|| "true".into());
            entry.push_str(&format!(", \"{key}\": {value}"));
        }
        entry.push('}');
        entries.push(entry);
    }
    format!(
        "{{\"meta\": {{\"api-version\": \"1.1\"}}, \"name\": \"{project}\", \"files\": [{}]}}",
        entries.join(", ")
    )
}

fn file(
    state: &State,
    knobs: &Knobs,
    req: &Request<hyper::body::Incoming>,
    name: &str,
) -> Result<Reply, StatusCode> {
    if name.contains('/') || name.starts_with('.') {
        return Err(StatusCode::NOT_FOUND);
    }
    let content = std::fs::read(state.root.join(name)).map_err(|_| StatusCode::NOT_FOUND)?;
    let truncate_after = knobs.attrs.get(name).and_then(|a| a.truncate_after);
    let content_type = if name.ends_with(".json") {
        "application/json"
    } else {
        "application/octet-stream"
    };
    let mut headers = vec![("content-type", content_type.to_owned())];
    if knobs.ranges {
        headers.push(("accept-ranges", "bytes".to_owned()));
        if let Some((start, end)) =
            header(req, "range").and_then(|r| parse_range(&r, content.len()))
        {
            headers.push((
                "content-range",
                format!("bytes {start}-{end}/{}", content.len()),
            ));
            return Ok(Reply {
                status: StatusCode::PARTIAL_CONTENT,
                headers,
                body: content[start..=end].to_vec(),
                truncate_after,
            });
        }
    }
    Ok(Reply {
        status: StatusCode::OK,
        headers,
        body: content,
        truncate_after,
    })
}

/// `bytes=-N` or `bytes=A-B` or `bytes=A-` → inclusive (start, end).
fn parse_range(value: &str, len: usize) -> Option<(usize, usize)> {
    let spec = value.strip_prefix("bytes=")?;
    let (a, b) = spec.split_once('-')?;
    if len == 0 {
        return None;
    }
    if a.is_empty() {
        let n: usize = b.parse().ok()?;
        return Some((len.saturating_sub(n), len - 1));
    }
    let start: usize = a.parse().ok()?;
    let end = if b.is_empty() {
        len - 1
    } else {
        b.parse::<usize>().ok()?.min(len - 1)
    };
    (start <= end).then_some((start, end))
}
