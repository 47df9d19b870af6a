//! A hostile index: links to local files and other schemes, endless, dripping, compressed,
//! truncated and oversized bodies, range requests answered with too much, and a variants.json
//! whose listed hash is wrong. Each answer is written by hand on a raw socket, so the server
//! can break HTTP the way real misbehaving servers do.

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use vari_client::{ClientError, UnusableReason, VersionVariants};

use crate::raw_server::{drip, endless_chunked, head, page, range_start, raw_server};
use crate::server::{FileAttrs, TestIndex};
use crate::support::{client, copy_fixture_wheels, name, settings, write_wheel};

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
        drip(stream, "text/html", b'<', Duration::from_millis(100));
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
    let bomb = gzip_bomb(64);
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

/// The demo wheel these range tests read `variant.json` from.
fn demo_wheel() -> vari_core::filename::WheelFilename {
    vari_core::filename::WheelFilename::parse("demo-1.0-py3-none-any-x86_64_v3.whl").unwrap()
}

#[tokio::test]
async fn a_206_with_too_much_body_keeps_only_what_was_asked() {
    let dir = tempfile::tempdir().unwrap();
    let wheel = Arc::new(big_wheel(dir.path()));
    let served = wheel.clone();
    let base = raw_server(move |_, range, stream| {
        let total = served.len();
        let start = range_start(range, total);
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
        .wheel_member(&url, &demo_wheel(), "variant.json")
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
            .wheel_member(&url, &demo_wheel(), "variant.json")
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

/// Concatenated gzip members of 1 MiB of zeros each: `mib` MiB once decoded, about a
/// thousandth of that sent (a decoder that reads every member inflates all of it).
fn gzip_bomb(mib: usize) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(&vec![0u8; 1024 * 1024]).unwrap();
    encoder.finish().unwrap().repeat(mib)
}

/// An index whose one file drips a byte every 100 ms: inside any read timeout, never finishing.
fn dripping_file_server() -> String {
    raw_server(|path, _, stream| {
        if path.ends_with('/') {
            let html = format!(r#"<a href="/files/{WHEEL}">{WHEEL}</a>"#);
            return page(stream, "text/html", &html);
        }
        drip(
            stream,
            "application/octet-stream",
            b'x',
            Duration::from_millis(100),
        );
    })
}

#[tokio::test]
async fn dripping_streams_end_at_the_low_speed_rule() {
    let base = dripping_file_server();
    let url = url::Url::parse(&format!("{base}/files/{WHEEL}")).unwrap();
    let mut s = quick_settings(&format!("{base}/simple/"));
    // About 10 bytes arrive per second; the rule asks for 100 in each second.
    s.limits.low_speed_bytes = 100;
    s.limits.low_speed_time = Duration::from_secs(1);
    let client = client(s);
    let check = |err: ClientError| {
        assert!(matches!(err, ClientError::TooSlow { .. }), "{err}");
        let text = err.to_string();
        assert!(
            text.contains(url.as_str())
                && text.contains("100 bytes per 1 s")
                && text.contains("VARI_LOW_SPEED_BYTES"),
            "{text}"
        );
    };
    // A safety net only: without the rule each of these would wait about three hours.
    let all = async {
        // Downloads.
        let out = tempfile::tempdir().unwrap();
        let project = client.project(&name("demo")).await.unwrap();
        let file = project.files.iter().find(|f| f.url == url).unwrap().clone();
        check(
            client
                .download(&file, &out.path().join(WHEEL), &|_, _| {})
                .await
                .unwrap_err(),
        );
        assert_eq!(std::fs::read_dir(out.path()).unwrap().count(), 0);
        // The proxy's pass-through.
        let mut stream = client.open_file(&url).await.unwrap();
        let err = loop {
            match stream.chunk().await {
                Ok(Some(_)) => {}
                Ok(None) => panic!("the dripping body ended"),
                Err(e) => break e,
            }
        };
        check(err);
        // Hashing a file.
        check(client.sha256(&url).await.unwrap_err());
    };
    tokio::time::timeout(Duration::from_secs(120), all)
        .await
        .expect("the dripping transfers ended");
}
