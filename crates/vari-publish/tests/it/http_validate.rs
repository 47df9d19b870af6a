//! `validate` over HTTP ([`HttpSite`]): a built site served on 127.0.0.1 by a small static
//! server that honours range requests (as object stores and CDNs do), with and without
//! content negotiation of the JSON pages.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use vari_publish::{validate, HttpSite, Severity};

use crate::validate::{replace_variants_json, site_with_variants};

/// What the server saw.
#[derive(Default)]
struct Counts {
    /// Directory requests answered with `index.json` by negotiation.
    json_pages: AtomicUsize,
    /// Requests answered with 206 Partial Content.
    ranges: AtomicUsize,
}

/// Serves `root` on 127.0.0.1 until the test process ends. With `negotiate`, a directory
/// request that accepts PEP 691 JSON gets `index.json` (the crate docs' nginx and Caddy rules);
/// without, every directory gets `index.html` (a plain static host).
fn serve_site(root: PathBuf, negotiate: bool) -> (String, Arc<Counts>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let counts = Arc::new(Counts::default());
    let shared = Arc::clone(&counts);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let root = root.clone();
            let counts = Arc::clone(&shared);
            std::thread::spawn(move || answer(stream, &root, negotiate, &counts));
        }
    });
    (url, counts)
}

/// One request per connection (`Connection: close`).
fn answer(mut stream: TcpStream, root: &Path, negotiate: bool, counts: &Counts) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    let (mut wants_json, mut range) = (false, None);
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).unwrap_or(0) == 0 || header.trim().is_empty() {
            break;
        }
        let lower = header.trim().to_ascii_lowercase();
        if lower.starts_with("accept:") && lower.contains("application/vnd.pypi.simple.v1+json") {
            wants_json = true;
        }
        if let Some(value) = lower.strip_prefix("range: bytes=") {
            range = Some(value.to_owned());
        }
    }
    let path = request_line.split_whitespace().nth(1).unwrap_or("/");
    let mut file = root.join(path.trim_start_matches('/'));
    let mut content_type = "application/octet-stream";
    if path.ends_with('/') {
        if negotiate && wants_json {
            counts.json_pages.fetch_add(1, Ordering::SeqCst);
            file = file.join("index.json");
            content_type = "application/vnd.pypi.simple.v1+json";
        } else {
            file = file.join("index.html");
            content_type = "text/html";
        }
    }
    let body = match (path.contains(".."), std::fs::read(&file)) {
        (false, Ok(body)) => body,
        _ => {
            let _ = stream.write_all(
                b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
            return;
        }
    };
    let total = body.len();
    let (status, start, end) = match range.as_deref().and_then(|r| span(r, total)) {
        Some((start, end)) => {
            counts.ranges.fetch_add(1, Ordering::SeqCst);
            ("206 Partial Content", start, end)
        }
        None => ("200 OK", 0, total),
    };
    let mut head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nAccept-Ranges: bytes\r\nConnection: close\r\n",
        end - start
    );
    if status.starts_with("206") {
        head.push_str(&format!(
            "Content-Range: bytes {start}-{}/{total}\r\n",
            end - 1
        ));
    }
    head.push_str("\r\n");
    let mut response = head.into_bytes();
    response.extend_from_slice(&body[start..end]);
    let _ = stream.write_all(&response);
}

/// `-N` or `A-B` (inclusive) as a half-open span of a `total`-byte file.
fn span(range: &str, total: usize) -> Option<(usize, usize)> {
    let (from, to) = range.split_once('-')?;
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

#[test]
fn an_intact_site_validates_over_http_from_a_plain_static_host() {
    let (_input, site) = site_with_variants();
    let (url, counts) = serve_site(site.path().to_owned(), false);
    let report = validate(&HttpSite::new(&url).unwrap()).unwrap();
    assert_eq!((report.projects, report.files), (1, 5), "{report:?}");
    assert_eq!(report.problems, [], "{report:?}");
    // Without negotiation the pages came from index.json; each variant wheel's variant.json
    // was read with range requests.
    assert_eq!(counts.json_pages.load(Ordering::SeqCst), 0);
    assert!(counts.ranges.load(Ordering::SeqCst) >= 3);
}

#[test]
fn a_variants_json_disagreeing_with_a_wheel_fails_over_http() {
    let (_input, site) = site_with_variants();
    let full = std::fs::read_to_string(site.path().join("files/pkg-1.0-variants.json")).unwrap();
    let mut doc: serde_json::Value = serde_json::from_str(&full).unwrap();
    doc["variants"]["v3"] = serde_json::json!({"x86_64": {"level": ["v1"]}});
    // The page's hash is fixed, so only the content disagrees with the wheel.
    replace_variants_json(site.path(), &serde_json::to_string_pretty(&doc).unwrap());
    let (url, counts) = serve_site(site.path().to_owned(), true);

    let report = validate(&HttpSite::new(&format!("{url}simple/")).unwrap()).unwrap();
    assert!(report.has_errors(), "{report:?}");
    let errors: Vec<_> = report
        .problems
        .iter()
        .filter(|p| p.severity == Severity::Error)
        .collect();
    assert_eq!(errors.len(), 1, "{report:?}");
    assert_eq!(errors[0].file, "pkg-1.0-py3-none-any-v3.whl");
    assert!(errors[0].message.contains("variants.v3"), "{errors:?}");
    assert!(counts.json_pages.load(Ordering::SeqCst) >= 2);
    assert!(counts.ranges.load(Ordering::SeqCst) >= 3);
}

#[test]
fn a_missing_wheel_and_an_unreachable_server_are_reported_over_http() {
    let (_input, site) = site_with_variants();
    std::fs::remove_file(site.path().join("files/pkg-1.0-py3-none-any-v2.whl")).unwrap();
    let (url, _counts) = serve_site(site.path().to_owned(), true);
    let report = validate(&HttpSite::new(&url).unwrap()).unwrap();
    let missing = report
        .problems
        .iter()
        .find(|p| p.file == "pkg-1.0-py3-none-any-v2.whl")
        .unwrap_or_else(|| panic!("{report:?}"));
    assert_eq!(missing.severity, Severity::Error);
    assert!(missing.message.contains("missing"), "{missing:?}");

    // A port nobody listens on: the project list cannot be fetched at all.
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = closed.local_addr().unwrap();
    drop(closed);
    let e = validate(&HttpSite::new(&format!("http://{address}/")).unwrap()).unwrap_err();
    assert!(e.to_string().contains(&address.to_string()), "{e}");
}
