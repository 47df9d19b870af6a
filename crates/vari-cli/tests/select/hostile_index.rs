//! `vari select`, `vari download` and `vari index validate` against indexes that misbehave on
//! purpose (raw sockets on 127.0.0.1): links to local files, endless, dripping, compressed
//! and truncated pages, ranges answered with endless bodies, pages of 100,000 wheels. Each
//! run's peak memory is read from `wait4`'s rusage and must stay under 256 MB.

use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use crate::common::{measured, vari};

use vari_test_support::raw::{chunk, drip, endless_chunked, head, page, range_start, raw_server};

/// The memory ceiling of any command on hostile input.
const PEAK_CEILING_KIB: i64 = 256 * 1024;

fn assert_bounded(peak_kib: i64, what: &str) {
    eprintln!("{what}: peak RSS {} MiB", peak_kib / 1024);
    assert!(
        peak_kib < PEAK_CEILING_KIB,
        "{what}: peak RSS {peak_kib} KiB is over the ceiling"
    );
}

/// A profile supporting x86-64 up to v3 on Linux x86_64.
use crate::common::v3_profile as profile;

/// `vari COMMAND demo --index-url INDEX` with the profile and a Python target.
fn against(command: &str, index: &str, profile: &Path) -> Command {
    let mut cmd = vari();
    cmd.args([command, "demo", "--index-url", index, "--profile"])
        .arg(profile)
        .args([
            "--python-version",
            "3.12",
            "--python-platform",
            "x86_64-manylinux_2_28",
        ]);
    cmd
}

#[test]
fn a_remote_page_cannot_make_vari_read_local_files() {
    let scratch = tempfile::tempdir().unwrap();
    let profile = profile(scratch.path());
    let canary = scratch.path().join("canary.whl");
    std::fs::write(&canary, b"not for the network").unwrap();
    let canary_url = url::Url::from_file_path(&canary).unwrap();
    let html = format!(r#"<a href="{canary_url}">demo-9.0-py3-none-any.whl</a>"#);
    let json = r#"{"meta": {"api-version": "1.1"}, "files": [
        {"filename": "demo-9.0-py3-none-any.whl", "url": "file:///etc/passwd", "hashes": {}}]}"#;
    let base = raw_server(move |path, _, stream| match path {
        "/html/demo/" => page(stream, "text/html", &html),
        _ => page(stream, "application/vnd.pypi.simple.v1+json", json),
    });
    for (index, link) in [
        ("html", canary_url.to_string()),
        ("json", "file:///etc/passwd".into()),
    ] {
        let dest = scratch.path().join(format!("out-{index}"));
        let page_url = format!("{base}/{index}/demo/");
        let mut cmd = against("download", &format!("{base}/{index}/"), &profile);
        cmd.arg("-d").arg(&dest);
        let (run, peak) = measured(&mut cmd);
        assert_eq!(run.code, 1, "{index}: {}", run.stderr);
        assert!(
            run.stderr
                .lines()
                .any(|l| l.starts_with("warning:") && l.contains(&page_url) && l.contains(&link)),
            "{index}: no warning naming the page and the link:\n{}",
            run.stderr
        );
        let written = std::fs::read_dir(&dest).map(|d| d.count()).unwrap_or(0);
        assert_eq!(
            written,
            0,
            "{index}: something was written to {}",
            dest.display()
        );
        assert_bounded(peak, "download with file: links");
    }
    assert_eq!(std::fs::read(&canary).unwrap(), b"not for the network");
}

#[test]
fn index_validate_never_reads_a_local_file_a_remote_page_links() {
    let root = r#"{"meta": {"api-version": "1.1"}, "projects": [{"name": "demo"}]}"#;
    let project = r#"{"meta": {"api-version": "1.1"}, "name": "demo", "files": [
        {"filename": "demo-1.0-py3-none-any.whl", "url": "file:///etc/passwd",
         "hashes": {"sha256": "00"}}]}"#;
    let base = raw_server(move |path, _, stream| {
        let body = if path.ends_with("/demo/") {
            project
        } else {
            root
        };
        page(stream, "application/vnd.pypi.simple.v1+json", body)
    });
    let mut cmd = vari();
    cmd.args(["index", "validate", &format!("{base}/simple/")]);
    let (run, peak) = measured(&mut cmd);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let output = format!("{}{}", run.stdout, run.stderr);
    assert!(
        output.contains("file:///etc/passwd: not fetched"),
        "{output}"
    );
    // Reading it would have reported its real digest against the page's `00`.
    assert!(!output.contains("the file has"), "{output}");
    assert_bounded(peak, "index validate with a file: link");
}

#[test]
fn an_endless_page_is_one_error_naming_the_url_and_the_limit() {
    let scratch = tempfile::tempdir().unwrap();
    let profile = profile(scratch.path());
    let base = raw_server(|_, _, stream| endless_chunked(stream, &[b'a'; 65536]));
    let (run, peak) = measured(&mut against("select", &format!("{base}/simple/"), &profile));
    run.expect_one_error(&[
        &format!("{base}/simple/demo/"),
        "67108864-byte limit",
        "VARI_MAX_PAGE_BYTES",
    ]);
    assert_bounded(peak, "select on an endless page");
}

#[test]
fn index_validate_stops_an_endless_page() {
    let base = raw_server(|_, _, stream| endless_chunked(stream, &[b'{'; 65536]));
    let mut cmd = vari();
    cmd.args(["index", "validate", &format!("{base}/simple/")]);
    let (run, peak) = measured(&mut cmd);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!("{base}/simple/")) && run.stderr.contains("byte limit"),
        "{}",
        run.stderr
    );
    assert_bounded(peak, "index validate on an endless page");
}

#[test]
fn a_dripping_page_ends_at_the_deadline() {
    let scratch = tempfile::tempdir().unwrap();
    let profile = profile(scratch.path());
    let base = raw_server(|_, _, stream| {
        drip(stream, "text/html", b'<', Duration::from_millis(200));
    });
    let mut cmd = against("select", &format!("{base}/simple/"), &profile);
    cmd.env("VARI_HTTP_DEADLINE", "2");
    let (run, peak) = measured(&mut cmd);
    run.expect_one_error(&[
        &format!("{base}/simple/demo/"),
        "2 s deadline",
        "VARI_HTTP_DEADLINE",
    ]);
    assert_bounded(peak, "select on a dripping page");
}

#[test]
fn a_dripping_wheel_ends_at_the_low_speed_rule() {
    let scratch = tempfile::tempdir().unwrap();
    let profile = profile(scratch.path());
    let name = "demo-1.0-py3-none-any.whl";
    let html = format!(r#"<a href="/files/{name}">{name}</a>"#);
    // The page at once; the wheel one byte every 200 ms, inside any read timeout.
    let base = raw_server(move |path, _, stream| {
        if path.ends_with('/') {
            return page(stream, "text/html", &html);
        }
        drip(
            stream,
            "application/octet-stream",
            b'x',
            Duration::from_millis(200),
        );
    });
    let dest = scratch.path().join("out");
    let mut cmd = against("download", &format!("{base}/simple/"), &profile);
    cmd.arg("-d").arg(&dest);
    cmd.env("VARI_LOW_SPEED_BYTES", "100")
        .env("VARI_LOW_SPEED_SECONDS", "1");
    let (run, peak) = measured(&mut cmd);
    run.expect_one_error(&[
        &format!("{base}/files/{name}"),
        "100 bytes per 1 s",
        "low-speed-bytes",
        "VARI_LOW_SPEED_SECONDS",
    ]);
    let written = std::fs::read_dir(&dest).map(|d| d.count()).unwrap_or(0);
    assert_eq!(written, 0, "something was left in {}", dest.display());
    assert_bounded(peak, "download of a dripping wheel");
}

#[test]
fn a_gzip_bomb_page_stops_at_the_ceiling() {
    let scratch = tempfile::tempdir().unwrap();
    let profile = profile(scratch.path());
    // 2 GiB once inflated, about 2 MB sent.
    let bomb = gzip_bomb(2048);
    let base = raw_server(move |_, _, stream| {
        head(
            stream,
            "200 OK",
            &[
                ("content-type", "text/html".into()),
                ("content-encoding", "gzip".into()),
                ("content-length", bomb.len().to_string()),
            ],
        );
        let _ = stream.write_all(&bomb);
    });
    let (run, peak) = measured(&mut against("select", &format!("{base}/simple/"), &profile));
    run.expect_one_error(&[&format!("{base}/simple/demo/"), "67108864-byte limit"]);
    assert_bounded(peak, "select on a gzip bomb");
}

#[test]
fn a_truncated_page_says_so() {
    let scratch = tempfile::tempdir().unwrap();
    let profile = profile(scratch.path());
    let base = raw_server(|_, _, stream| {
        head(
            stream,
            "200 OK",
            &[
                ("content-type", "text/html".into()),
                ("content-length", "100000".into()),
            ],
        );
        let _ = stream.write_all(&[b' '; 5000]);
    });
    let mut cmd = against("select", &format!("{base}/simple/"), &profile);
    let (run, _) = measured(&mut cmd);
    run.expect_one_error(&[
        &format!("{base}/simple/demo/"),
        "cut off after 5000 bytes of the 100000 announced",
    ]);
}

#[test]
fn an_unasked_encoding_says_so() {
    let scratch = tempfile::tempdir().unwrap();
    let profile = profile(scratch.path());
    let base = raw_server(|_, _, stream| {
        head(
            stream,
            "200 OK",
            &[
                ("content-type", "text/html".into()),
                ("content-encoding", "br".into()),
                ("content-length", "4".into()),
            ],
        );
        let _ = stream.write_all(b"\x1b\x03\x00\x00");
    });
    let (run, _) = measured(&mut against("select", &format!("{base}/simple/"), &profile));
    run.expect_one_error(&[&format!("{base}/simple/demo/"), "Content-Encoding `br`"]);
}

/// A variant wheel whose `variant.json` says x86-64-v3, after a 2 MB payload.
fn v3_wheel() -> Vec<u8> {
    let mut bytes = std::io::Cursor::new(Vec::new());
    let mut zip = zip::ZipWriter::new(&mut bytes);
    let stored =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    zip.start_file("demo/payload.bin", stored).unwrap();
    zip.write_all(&vec![7u8; 2 << 20]).unwrap();
    zip.start_file("demo-1.0.dist-info/METADATA", stored)
        .unwrap();
    zip.write_all(b"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n")
        .unwrap();
    zip.start_file("demo-1.0.dist-info/variant.json", stored)
        .unwrap();
    zip.write_all(
        br#"{"$schema": "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json",
            "default-priorities": {"namespace": ["x86_64"]},
            "variants": {"v3": {"x86_64": {"level": ["v3"]}}}}"#,
    )
    .unwrap();
    zip.finish().unwrap();
    bytes.into_inner()
}

#[test]
fn range_reads_answered_with_endless_bodies_keep_only_what_they_asked() {
    let scratch = tempfile::tempdir().unwrap();
    let profile = profile(scratch.path());
    let wheel = Arc::new(v3_wheel());
    let name = "demo-1.0-py3-none-any-v3.whl";
    let html = format!(r#"<a href="/files/{name}">{name}</a>"#);
    let base = raw_server(move |path, range, stream| {
        if path.ends_with('/') {
            return page(stream, "text/html", &html);
        }
        let total = wheel.len();
        let start = range_start(range, total);
        // A 206 that sends the rest of the file and then zeros for ever.
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
        if stream.write_all(&chunk(&wheel[start..])).is_err() {
            return;
        }
        let zeros = chunk(&[0u8; 65536]);
        while stream.write_all(&zeros).is_ok() {}
    });
    let (run, peak) = measured(&mut against("select", &format!("{base}/simple/"), &profile));
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains(name), "{}", run.stdout);
    assert_bounded(peak, "select with endless 206 answers");
}

/// Concatenated gzip members of 1 MiB of zeros each: `mib` MiB once decoded, about a
/// thousandth of that sent (a decoder that reads every member inflates all of it).
fn gzip_bomb(mib: usize) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(&vec![0u8; 1024 * 1024]).unwrap();
    encoder.finish().unwrap().repeat(mib)
}

/// A project page in `format` (`json` or `html`) listing `count` valid wheels of `demo`, each
/// with a SHA-256 and a `requires-python`, linked to `/files/` on the same server.
fn many_wheels_page(format: &str, count: usize) -> String {
    let wheels = (0..count).map(|i| {
        let name = format!("demo-{}.{}-py3-none-any.whl", i / 10, i % 10);
        (format!("/files/{name}"), format!("{i:064x}"), name)
    });
    if format == "json" {
        let files: Vec<String> = wheels
            .map(|(url, digest, name)| {
                format!(
                    r#"{{"filename": "{name}", "url": "{url}", "hashes": {{"sha256": "{digest}"}}, "requires-python": ">=3.8"}}"#
                )
            })
            .collect();
        format!(
            r#"{{"meta": {{"api-version": "1.1"}}, "name": "demo", "files": [{}]}}"#,
            files.join(",\n")
        )
    } else {
        wheels
            .map(|(url, digest, name)| {
                format!(
                    "<a href=\"{url}#sha256={digest}\" data-requires-python=\"&gt;=3.8\">{name}</a>\n"
                )
            })
            .collect()
    }
}

#[test]
fn a_page_of_100000_wheels_is_selected_from_within_the_memory_ceiling() {
    let scratch = tempfile::tempdir().unwrap();
    let profile = profile(scratch.path());
    let json = Arc::new(many_wheels_page("json", 100_000));
    let html = Arc::new(many_wheels_page("html", 100_000));
    let base = raw_server(move |path, _, stream| match path {
        "/json/demo/" => page(stream, "application/vnd.pypi.simple.v1+json", &json),
        "/html/demo/" => page(stream, "text/html", &html),
        // The wheels themselves are not served: their dependencies stay unknown (a warning).
        _ => head(stream, "404 Not Found", &[("content-length", "0".into())]),
    });
    for format in ["json", "html"] {
        let (run, peak) = measured(&mut against(
            "select",
            &format!("{base}/{format}/"),
            &profile,
        ));
        assert_eq!(run.code, 0, "{format}: {}", run.stderr);
        assert!(
            run.stdout.contains("demo-9999.9-py3-none-any.whl"),
            "{format}: {}",
            run.stdout
        );
        assert_bounded(
            peak,
            &format!("select on a {format} page of 100,000 wheels"),
        );
    }
}
