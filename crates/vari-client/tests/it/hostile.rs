//! A hostile index: links to local files and other schemes, endless, dripping, compressed,
//! truncated and oversized bodies, range requests answered with too much, and a variants.json
//! whose listed hash is wrong. Each answer is written by hand on a raw socket, so the server
//! can break HTTP the way real misbehaving servers do.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use vari_client::{ClientError, UnusableReason, VersionVariants};

use crate::server::{FileAttrs, TestIndex};
use crate::support::{client, copy_fixture_wheels, name, settings, write_wheel};

/// What the raw server answers to one request (its path and `Range` header), on the socket.
type Answer = dyn Fn(&str, Option<&str>, &mut TcpStream) + Send + Sync;

/// A server on 127.0.0.1 that answers every request with `answer`, one thread per
/// connection, until the test ends.
fn raw_server(
    answer: impl Fn(&str, Option<&str>, &mut TcpStream) + Send + Sync + 'static,
) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let answer: Arc<Answer> = Arc::new(answer);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let answer = answer.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut first = String::new();
                if reader.read_line(&mut first).is_err() {
                    return;
                }
                let path = first.split_whitespace().nth(1).unwrap_or("/").to_owned();
                let mut range = None;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    if let Some((key, value)) = line.split_once(':') {
                        if key.eq_ignore_ascii_case("range") {
                            range = Some(value.trim().to_owned());
                        }
                    }
                }
                answer(&path, range.as_deref(), &mut stream);
            });
        }
    });
    format!("http://127.0.0.1:{port}")
}

fn head(stream: &mut TcpStream, status: &str, headers: &[(&str, String)]) {
    let mut text = format!("HTTP/1.1 {status}\r\nconnection: close\r\n");
    for (key, value) in headers {
        text.push_str(&format!("{key}: {value}\r\n"));
    }
    text.push_str("\r\n");
    let _ = stream.write_all(text.as_bytes());
}

fn page(stream: &mut TcpStream, content_type: &str, body: &str) {
    head(
        stream,
        "200 OK",
        &[
            ("content-type", content_type.to_owned()),
            ("content-length", body.len().to_string()),
        ],
    );
    let _ = stream.write_all(body.as_bytes());
}

/// Sends chunks of `chunk` until the client hangs up.
fn endless_chunked(stream: &mut TcpStream, chunk: &[u8]) {
    head(
        stream,
        "200 OK",
        &[
            ("content-type", "text/html".to_owned()),
            ("transfer-encoding", "chunked".to_owned()),
        ],
    );
    let framed = [format!("{:x}\r\n", chunk.len()).as_bytes(), chunk, b"\r\n"].concat();
    while stream.write_all(&framed).is_ok() {}
}

fn quick_settings(index: &str) -> vari_client::ClientSettings {
    let mut s = settings(&[index.to_owned()]);
    s.read_timeout = Duration::from_secs(20);
    s.limits.deadline = Duration::from_secs(30);
    s
}

const WHEEL: &str = "demo-1.0-py3-none-any.whl";

#[tokio::test]
async fn remote_pages_cannot_link_local_files_or_other_schemes() {
    let canary = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(canary.path(), b"secret").unwrap();
    let canary_url = url::Url::from_file_path(canary.path()).unwrap();
    let html = format!(
        r#"<a href="{canary_url}#sha256=00">demo-9.0-py3-none-any.whl</a>
           <a href="ftp://example.com/demo-8.0-py3-none-any.whl">ftp</a>
           <a href="javascript:alert(1)//demo-7.0-py3-none-any.whl">js</a>
           <a href="/files/{WHEEL}">ok</a>"#
    );
    let json = format!(
        r#"{{"meta": {{"api-version": "1.1"}}, "files": [
            {{"filename": "demo-9.0-py3-none-any.whl", "url": "file:///etc/passwd", "hashes": {{}}}},
            {{"filename": "demo-6.0-py3-none-any.whl", "url": "data:application/zip,PK", "hashes": {{}}}},
            {{"filename": "{WHEEL}", "url": "/files/{WHEEL}", "hashes": {{}}}}]}}"#
    );
    // A relative link resolved against a `file:` base is a local link too.
    let based = r#"<html><head><base href="file:///etc/"></head>
        <a href="passwd#/demo-5.0-py3-none-any.whl">demo-5.0-py3-none-any.whl</a></html>"#;
    let base = raw_server(move |path, _, stream| match path {
        "/html/demo/" => page(stream, "text/html", &html),
        "/json/demo/" => page(stream, "application/vnd.pypi.simple.v1+json", &json),
        "/based/demo/" => page(stream, "text/html", based),
        _ => head(stream, "404 Not Found", &[("content-length", "0".into())]),
    });
    for index in ["html", "json", "based"] {
        let client = client(quick_settings(&format!("{base}/{index}/")));
        let project = client.project(&name("demo")).await.unwrap();
        let schemes: Vec<&str> = project.files.iter().map(|f| f.url.scheme()).collect();
        assert!(
            schemes.iter().all(|s| *s == "http"),
            "{index}: {:?}",
            project.files
        );
        let page_url = format!("{base}/{index}/demo/");
        let warnings: Vec<String> = project.warnings.iter().map(ToString::to_string).collect();
        let skipped = if index == "based" { 1 } else { 2 };
        assert_eq!(
            warnings
                .iter()
                .filter(|w| w.contains("skipping link"))
                .count(),
            skipped,
            "{index}: {warnings:?}"
        );
        for warning in &warnings {
            assert!(warning.starts_with(&page_url), "{warning}");
        }
        if index != "based" {
            assert!(
                warnings.iter().any(|w| w.contains("file:///")
                    && w.contains("remote page may not link local files")),
                "{warnings:?}"
            );
        }
    }
}

#[tokio::test]
async fn local_pages_may_link_local_files() {
    let dir = tempfile::tempdir().unwrap();
    let wheel = write_wheel(dir.path(), WHEEL, None, 10);
    let page = dir.path().join("links.html");
    let wheel_url = url::Url::from_file_path(&wheel).unwrap();
    std::fs::write(&page, format!(r#"<a href="{wheel_url}">{WHEEL}</a>"#)).unwrap();
    let mut s = settings(&[]);
    s.indexes.clear();
    s.find_links = vec![vari_client::FindLinks::parse(page.to_str().unwrap()).unwrap()];
    let project = client(s).project(&name("demo")).await.unwrap();
    assert_eq!(project.files.len(), 1, "{:?}", project.warnings);
    assert_eq!(project.files[0].url, wheel_url);
}

#[tokio::test]
async fn an_endless_page_stops_at_the_ceiling() {
    let base = raw_server(|_, _, stream| endless_chunked(stream, &[b'a'; 8192]));
    let mut s = quick_settings(&format!("{base}/simple/"));
    s.limits.max_page_bytes = 1024 * 1024;
    let err = client(s).project(&name("demo")).await.unwrap_err();
    assert!(
        matches!(
            err,
            ClientError::TooLarge {
                limit: 1_048_576,
                ..
            }
        ),
        "{err}"
    );
    let text = err.to_string();
    assert!(text.contains(&format!("{base}/simple/demo/")), "{text}");
    assert!(
        text.contains("1048576-byte limit") && text.contains("VARI_MAX_PAGE_BYTES"),
        "{text}"
    );
}

#[tokio::test]
async fn an_announced_oversized_page_is_refused_before_reading() {
    let base = raw_server(|_, _, stream| {
        head(
            stream,
            "200 OK",
            &[
                ("content-type", "text/html".into()),
                ("content-length", (10u64 << 30).to_string()),
            ],
        );
        // Never sends the body: only the announcement can end the request quickly.
        std::thread::sleep(Duration::from_secs(60));
    });
    let mut s = quick_settings(&format!("{base}/simple/"));
    s.limits.max_page_bytes = 1024;
    let err = client(s).project(&name("demo")).await.unwrap_err();
    assert!(matches!(err, ClientError::TooLarge { .. }), "{err}");
}

#[tokio::test]
async fn a_dripping_page_ends_at_the_deadline() {
    let base = raw_server(|_, _, stream| {
        head(
            stream,
            "200 OK",
            &[
                ("content-type", "text/html".into()),
                ("content-length", "100000".into()),
            ],
        );
        for _ in 0..100_000 {
            if stream.write_all(b"<").is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    });
    let mut s = quick_settings(&format!("{base}/simple/"));
    s.limits.deadline = Duration::from_millis(1500);
    let err = client(s).project(&name("demo")).await.unwrap_err();
    assert!(matches!(err, ClientError::Deadline { .. }), "{err}");
    let text = err.to_string();
    assert!(text.contains(&format!("{base}/simple/demo/")), "{text}");
    assert!(
        text.contains("1.5 s deadline") && text.contains("VARI_HTTP_DEADLINE"),
        "{text}"
    );
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

#[tokio::test]
async fn gzip_pages_are_decoded_and_gzip_bombs_stop_at_the_ceiling() {
    let html = format!(r#"<a href="/files/{WHEEL}">{WHEEL}</a>"#);
    let good = gzip(html.as_bytes());
    let bomb = gzip(&vec![b' '; 64 * 1024 * 1024]);
    let base = raw_server(move |path, _, stream| {
        let (body, encoding) = match path {
            "/good/demo/" => (&good, "gzip"),
            "/bomb/demo/" => (&bomb, "gzip"),
            _ => (&good, "br"),
        };
        head(
            stream,
            "200 OK",
            &[
                ("content-type", "text/html".into()),
                ("content-encoding", encoding.into()),
                ("content-length", body.len().to_string()),
            ],
        );
        let _ = stream.write_all(body);
    });
    let project = client(quick_settings(&format!("{base}/good/")))
        .project(&name("demo"))
        .await
        .unwrap();
    assert_eq!(project.files.len(), 1);

    let mut s = quick_settings(&format!("{base}/bomb/"));
    s.limits.max_page_bytes = 4 * 1024 * 1024;
    let err = client(s).project(&name("demo")).await.unwrap_err();
    assert!(matches!(err, ClientError::TooLarge { .. }), "{err}");

    let err = client(quick_settings(&format!("{base}/brotli/")))
        .project(&name("demo"))
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains(&format!("{base}/brotli/demo/")) && text.contains("Content-Encoding `br`"),
        "{text}"
    );
}

#[tokio::test]
async fn a_truncated_page_says_it_was_cut_off() {
    let base = raw_server(|_, _, stream| {
        head(
            stream,
            "200 OK",
            &[
                ("content-type", "text/html".into()),
                ("content-length", "5000".into()),
            ],
        );
        let _ = stream.write_all(&[b' '; 1000]);
        // Closing now leaves 4,000 announced bytes unsent.
    });
    let err = client(quick_settings(&format!("{base}/simple/")))
        .project(&name("demo"))
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains(&format!("{base}/simple/demo/")) && text.contains("cut off after 1000 bytes"),
        "{text}"
    );
}

/// A wheel with a 4 MB payload and its variant.json at the end.
fn big_wheel(dir: &std::path::Path) -> Vec<u8> {
    let json = crate::support::variants_doc(&["x86_64_v3"]);
    let path = write_wheel(
        dir,
        "demo-1.0-py3-none-any-x86_64_v3.whl",
        Some(&json),
        4 << 20,
    );
    std::fs::read(path).unwrap()
}

fn is_variant_json(name: &str) -> bool {
    name.ends_with(".dist-info/variant.json")
}

#[tokio::test]
async fn a_206_with_too_much_body_keeps_only_what_was_asked() {
    let dir = tempfile::tempdir().unwrap();
    let wheel = Arc::new(big_wheel(dir.path()));
    let served = wheel.clone();
    let base = raw_server(move |_, range, stream| {
        let total = served.len();
        let start = match range.and_then(|r| r.strip_prefix("bytes=")) {
            Some(suffix) if suffix.starts_with('-') => {
                total - suffix[1..].parse::<usize>().unwrap()
            }
            Some(span) => span.split('-').next().unwrap().parse().unwrap(),
            None => 0,
        };
        head(
            stream,
            "206 Partial Content",
            &[
                (
                    "content-range",
                    format!("bytes {start}-{}/{total}", total - 1),
                ),
                ("transfer-encoding", "chunked".into()),
            ],
        );
        // The rest of the file, then zeros for ever.
        let rest = &served[start..];
        let framed = [format!("{:x}\r\n", rest.len()).as_bytes(), rest, b"\r\n"].concat();
        if stream.write_all(&framed).is_err() {
            return;
        }
        let zeros = [0u8; 65536];
        let framed = [format!("{:x}\r\n", zeros.len()).as_bytes(), &zeros, b"\r\n"].concat();
        while stream.write_all(&framed).is_ok() {}
    });
    let url =
        url::Url::parse(&format!("{base}/files/demo-1.0-py3-none-any-x86_64_v3.whl")).unwrap();
    let client = client(quick_settings(&format!("{base}/simple/")));
    let (member, content) = client
        .wheel_member(&url, is_variant_json)
        .await
        .unwrap()
        .unwrap();
    assert!(member.ends_with("variant.json"));
    assert!(String::from_utf8(content).unwrap().contains("x86_64_v3"));
}

#[tokio::test]
async fn a_server_ignoring_ranges_is_streamed_through() {
    let dir = tempfile::tempdir().unwrap();
    let wheel = Arc::new(big_wheel(dir.path()));
    let served = wheel.clone();
    for chunked in [false, true] {
        let served = served.clone();
        let base = raw_server(move |_, _, stream| {
            if chunked {
                head(stream, "200 OK", &[("transfer-encoding", "chunked".into())]);
                for piece in served.chunks(100_000) {
                    let framed =
                        [format!("{:x}\r\n", piece.len()).as_bytes(), piece, b"\r\n"].concat();
                    if stream.write_all(&framed).is_err() {
                        return;
                    }
                }
                let _ = stream.write_all(b"0\r\n\r\n");
            } else {
                head(
                    stream,
                    "200 OK",
                    &[("content-length", served.len().to_string())],
                );
                let _ = stream.write_all(&served);
            }
        });
        let url =
            url::Url::parse(&format!("{base}/files/demo-1.0-py3-none-any-x86_64_v3.whl")).unwrap();
        let client = client(quick_settings(&format!("{base}/simple/")));
        let (_, content) = client
            .wheel_member(&url, is_variant_json)
            .await
            .unwrap()
            .unwrap();
        assert!(String::from_utf8(content).unwrap().contains("x86_64_v3"));
        assert!(client.server_ignores_ranges(&url));
    }
}

#[tokio::test]
async fn a_variants_json_with_a_wrong_hash_is_unusable() {
    let dir = tempfile::tempdir().unwrap();
    copy_fixture_wheels(dir.path(), true);
    let server = TestIndex::start(dir.path()).await;
    server.attrs(
        "test_package-0-variants.json",
        FileAttrs {
            wrong_sha256: true,
            ..FileAttrs::default()
        },
    );
    let client = client(settings(&[server.index_url()]));
    let project = client.project(&name("test-package")).await.unwrap();
    let variants = client
        .variant_metadata(&project, &"0".parse().unwrap())
        .await
        .unwrap();
    let VersionVariants::Unusable(unusable) = variants else {
        panic!("expected unusable metadata, got {variants:?}");
    };
    assert!(matches!(unusable.reason, UnusableReason::HashMismatch(_)));
    let text = unusable.to_string();
    assert!(
        text.contains("test_package-0-variants.json") && text.contains("sha256"),
        "{text}"
    );
}
