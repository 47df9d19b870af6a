//! `vari index build` publishing to real hosts on 127.0.0.1, and real installers reading the
//! result: an S3 object store (SeaweedFS, or Garage where `VARI_GARAGE` names one;
//! `-o s3://BUCKET/PREFIX`, read back through a static site in front of the bucket)
//! and nginx from the system's packages (serving a built directory with the
//! configuration the README shows, `examples/nginx/vari-site.conf`).
//!
//! SeaweedFS comes from `scripts/seaweedfs-test-env`, nginx from `apt-get install nginx`; without them
//! these tests skip with a note, except under CI, where they fail.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::common::{run, v3_profile, vari, Run};
use vari_test_support::installers::{install_into_target, Installed, Installer};
use vari_test_support::nginx::Nginx;
use vari_test_support::s3_store::S3Store;
use vari_test_support::site::{get, head};
use vari_test_support::wheels::{level_variants, one_variant, TestWheel};

/// The bucket and prefix the object store tests publish to.
const BUCKET: &str = "vari-site";
const PREFIX: &str = "pypi";

/// `fast-pkg 1.0` (x86-64 v3 and v4 builds and a plain wheel), `plain-pkg 1.0+cpu` (a local
/// version: a `+` in an object key) and an sdist larger than one upload part.
fn inputs(dir: &Path) {
    let document = level_variants(&["v3", "v4"]);
    for label in ["v3", "v4"] {
        let filename = format!("fast_pkg-1.0-py3-none-any-{label}.whl");
        TestWheel::new(&filename)
            .variant_json(Some(&one_variant(&document, label)))
            .write(dir);
    }
    TestWheel::new("fast_pkg-1.0-py3-none-any.whl").write(dir);
    TestWheel::new("plain_pkg-1.0+cpu-py3-none-any.whl").write(dir);
    std::fs::write(dir.join("plain_pkg-0.9.tar.gz"), big_sdist()).unwrap();
    // Their last change in the past on any clock tick: a build trusts what it read only from
    // inputs changed before it began, and a rebuild then reads none of them again.
    std::thread::sleep(std::time::Duration::from_millis(50));
}

/// 9 MiB of varied bytes: sent in parts (8 MiB each) to an object store.
fn big_sdist() -> Vec<u8> {
    (0..9u32 << 20)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect()
}

fn s3_url() -> String {
    format!("s3://{BUCKET}/{PREFIX}")
}

/// `vari index build INPUT -o s3://BUCKET/PREFIX --json` with `store`'s credentials in the
/// environment (as a user exports them), plus `extra` variables.
fn build_to_s3(store: &S3Store, input: &Path, extra: &[(&str, &str)]) -> Run {
    let mut cmd = vari();
    store.client_env(&mut cmd);
    cmd.env("HOME", input.join("no-home"));
    for (key, value) in extra {
        cmd.env(key, value);
    }
    cmd.args(["index", "build"])
        .arg(input)
        .args(["-o", &s3_url(), "--json"]);
    run(&mut cmd)
}

fn install(installer: Installer, index: &str, requirement: &str) -> Installed {
    let installed = install_into_target(
        installer,
        Path::new(env!("CARGO_TARGET_TMPDIR")),
        index,
        &["--no-deps".to_owned(), requirement.to_owned()],
        None,
    );
    installed.assert_success();
    installed
}

/// The label the installed `fast_pkg` module was built with (`""` for the plain wheel).
fn installed_label(installed: &Installed) -> String {
    let module = installed.dir.path().join("fast_pkg/__init__.py");
    std::fs::read_to_string(&module)
        .unwrap_or_else(|e| panic!("{} ({e}):\n{}", module.display(), installed.output))
}

/// pip and uv install both projects from `index` (plain pip takes the plain wheel of fast-pkg).
fn assert_installers_install_from(index: &str) {
    for installer in [Installer::NewestPip, Installer::Uv] {
        let fast = install(installer, index, "fast-pkg==1.0");
        assert_eq!(fast.distributions(), ["fast_pkg-1.0"], "{}", fast.output);
        if installer == Installer::NewestPip {
            assert_eq!(installed_label(&fast), "LABEL = \"\"\n", "{}", fast.output);
        }
        let plain = install(installer, index, "plain-pkg==1.0+cpu");
        assert_eq!(
            plain.distributions(),
            ["plain_pkg-1.0+cpu"],
            "{}",
            plain.output
        );
    }
}

/// `vari select fast-pkg` against `index` for an x86-64-v3 machine picks the v3 build.
fn assert_vari_selects_v3_from(index: &str, scratch: &Path) {
    let profile = v3_profile(scratch);
    let run = run(vari()
        .args(["select", "fast-pkg", "--index-url", index, "--profile"])
        .arg(&profile)
        .args([
            "--python-version",
            "3.12",
            "--python-platform",
            "x86_64-manylinux_2_28",
        ]))
    .expect_code(0);
    let first = run.stdout.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("fast-pkg 1.0  fast_pkg-1.0-py3-none-any-v3.whl  v3"),
        "{}",
        run.stdout
    );
}

#[test]
fn index_build_to_s3_is_served_to_pip_uv_and_vari_with_the_right_content_types() {
    let Some(store) = S3Store::start_or_skip() else {
        return;
    };
    store.create_bucket(BUCKET);
    let web = store.website(BUCKET);
    let input = tempfile::tempdir().unwrap();
    inputs(input.path());

    let summary = build_to_s3(&store, input.path(), &[]).expect_code(0).json();
    assert_eq!(
        (summary["projects"].as_u64(), summary["files"].as_u64()),
        (Some(2), Some(5)),
        "{summary}"
    );
    // 5 files, 4 `.metadata`, 1 variants.json, 2 × 2 project pages, 2 root pages.
    assert_eq!(summary["written"], 16, "{summary}");

    let site = format!("{web}/{PREFIX}");
    for (path, accept, expected) in [
        ("simple/", None, "text/html; charset=utf-8"),
        ("simple/fast-pkg/", None, "text/html; charset=utf-8"),
        (
            "simple/fast-pkg/index.json",
            None,
            "application/vnd.pypi.simple.v1+json",
        ),
        (
            "files/fast_pkg-1.0-py3-none-any-v3.whl",
            None,
            "application/zip",
        ),
        (
            "files/fast_pkg-1.0-py3-none-any-v3.whl.metadata",
            None,
            "text/plain; charset=utf-8",
        ),
        ("files/fast_pkg-1.0-variants.json", None, "application/json"),
        ("files/plain_pkg-0.9.tar.gz", None, "application/gzip"),
        (
            "files/plain_pkg-1.0%2Bcpu-py3-none-any.whl",
            Some("*/*"),
            "application/zip",
        ),
    ] {
        let answer = head(&format!("{site}/{path}"), accept);
        assert_eq!(answer.status, 200, "{path}: {answer:?}");
        assert_eq!(answer.header("content-type"), Some(expected), "{path}");
    }

    // The sdist went up in parts and came back whole.
    assert!(
        get(&format!("{site}/files/plain_pkg-0.9.tar.gz")) == big_sdist(),
        "the sdist served is the one built from"
    );

    let index = format!("{site}/simple/");
    assert_installers_install_from(&index);
    assert_vari_selects_v3_from(&index, input.path());

    // Nothing changed: nothing is uploaded again.
    let again = build_to_s3(&store, input.path(), &[]).expect_code(0).json();
    assert_eq!(
        (again["written"].as_u64(), again["reused"].as_u64()),
        (Some(0), Some(5)),
        "{again}"
    );
}

#[test]
fn a_release_dropped_from_the_input_is_deleted_from_the_store_after_the_pages() {
    let Some(store) = S3Store::start_or_skip() else {
        return;
    };
    store.create_bucket(BUCKET);
    let web = store.website(BUCKET);
    let input = tempfile::tempdir().unwrap();
    inputs(input.path());
    TestWheel::new("plain_pkg-2.0-py3-none-any.whl").write(input.path());
    build_to_s3(&store, input.path(), &[]).expect_code(0);
    let old = format!("{web}/{PREFIX}/files/plain_pkg-1.0%2Bcpu-py3-none-any.whl");
    assert_eq!(head(&old, None).status, 200);

    std::fs::remove_file(input.path().join("plain_pkg-1.0+cpu-py3-none-any.whl")).unwrap();
    let summary = build_to_s3(&store, input.path(), &[]).expect_code(0).json();
    // The wheel and its `.metadata`; the project's two pages and nothing else rewritten.
    assert_eq!(
        (summary["removed"].as_u64(), summary["written"].as_u64()),
        (Some(2), Some(2)),
        "{summary}"
    );
    assert_eq!(head(&old, None).status, 404);
    assert_eq!(head(&format!("{old}.metadata"), None).status, 404);
    let page = String::from_utf8(get(&format!("{web}/{PREFIX}/simple/plain-pkg/"))).unwrap();
    assert!(!page.contains("1.0%2Bcpu"), "{page}");
    assert!(page.contains("plain_pkg-2.0-py3-none-any.whl"), "{page}");
    let plain = install(
        Installer::Uv,
        &format!("{web}/{PREFIX}/simple/"),
        "plain-pkg",
    );
    assert_eq!(plain.distributions(), ["plain_pkg-2.0"], "{}", plain.output);
}

#[test]
fn a_refused_upload_leaves_the_published_site_as_it_was_with_one_error_line() {
    let Some(store) = S3Store::start_or_skip() else {
        return;
    };
    store.create_bucket(BUCKET);
    let web = store.website(BUCKET);
    let input = tempfile::tempdir().unwrap();
    inputs(input.path());
    build_to_s3(&store, input.path(), &[]).expect_code(0);
    let root = format!("{web}/{PREFIX}/simple/");
    let before = get(&root);

    TestWheel::new("new_pkg-1.0-py3-none-any.whl").write(input.path());
    let wrong_secret = "f".repeat(64);
    let refused = build_to_s3(
        &store,
        input.path(),
        &[("AWS_SECRET_ACCESS_KEY", wrong_secret.as_str())],
    )
    .expect_code(1);
    let lines: Vec<&str> = refused.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", refused.stderr);
    assert!(
        lines[0].starts_with(&format!(
            "error: {}: listing failed: access denied (HTTP 403)",
            s3_url()
        )),
        "{}",
        refused.stderr
    );
    assert_eq!(get(&root), before, "the project list is unchanged");
    assert_eq!(
        head(&format!("{web}/{PREFIX}/simple/new-pkg/"), None).status,
        404
    );

    // A key that may list and read but not write: the listing succeeds, the first upload is
    // refused, and no page changes.
    store.allow_read_only(BUCKET);
    let refused = build_to_s3(
        &store,
        input.path(),
        &[
            (
                "AWS_ACCESS_KEY_ID",
                vari_test_support::s3_store::READ_ONLY_KEY_ID,
            ),
            (
                "AWS_SECRET_ACCESS_KEY",
                vari_test_support::s3_store::READ_ONLY_SECRET,
            ),
        ],
    )
    .expect_code(1);
    let lines: Vec<&str> = refused.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", refused.stderr);
    assert!(
        lines[0].starts_with(&format!(
            "error: {}/files/new_pkg-1.0-py3-none-any.whl",
            s3_url()
        )) && lines[0].contains(": upload failed: access denied (HTTP 403)"),
        "{}",
        refused.stderr
    );
    assert_eq!(get(&root), before, "the project list is unchanged");
    assert_eq!(
        head(&format!("{web}/{PREFIX}/simple/new-pkg/"), None).status,
        404
    );

    // A bucket that does not exist is named as such.
    let mut cmd = vari();
    cmd.env("HOME", input.path().join("no-home"));
    for (key, value) in store.env() {
        cmd.env(key, value);
    }
    let missing = run(cmd
        .args(["index", "build"])
        .arg(input.path())
        .args(["-o", "s3://no-such-bucket/site"]))
    .expect_code(1);
    assert!(
        missing.stderr.starts_with(
            "error: s3://no-such-bucket/site: listing failed: not found (HTTP 404): does the \
             bucket exist?"
        ),
        "{}",
        missing.stderr
    );
    assert_eq!(missing.stderr.lines().count(), 1, "{}", missing.stderr);

    // No credentials at all: said at once, not after asking a metadata service for minutes.
    let mut cmd = vari();
    for (key, _) in std::env::vars() {
        if key.starts_with("AWS_") {
            cmd.env_remove(key);
        }
    }
    let none = run(cmd
        .env("HOME", input.path().join("no-home"))
        .env("AWS_ENDPOINT_URL", store.s3_endpoint())
        .args(["index", "build"])
        .arg(input.path())
        .args(["-o", &s3_url()]))
    .expect_code(1);
    assert_eq!(
        none.stderr,
        format!(
            "error: {}: no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or name \
             a profile of ~/.aws/credentials with AWS_PROFILE\n",
            s3_url()
        )
    );
}

#[test]
fn credentials_region_and_endpoint_come_from_an_aws_profile() {
    let Some(store) = S3Store::start_or_skip() else {
        return;
    };
    store.create_bucket(BUCKET);
    let web = store.website(BUCKET);
    let input = tempfile::tempdir().unwrap();
    inputs(input.path());
    let home = input.path().join("home");
    std::fs::create_dir_all(home.join(".aws")).unwrap();
    std::fs::write(
        home.join(".aws/credentials"),
        format!(
            "[default]\naws_access_key_id = wrong\naws_secret_access_key = wrong\n\n\
             [garage]\naws_access_key_id = {}\naws_secret_access_key = {}\n",
            vari_test_support::s3_store::KEY_ID,
            vari_test_support::s3_store::SECRET
        ),
    )
    .unwrap();
    std::fs::write(
        home.join(".aws/config"),
        format!(
            "[profile garage]\nregion = {}\nendpoint_url = {}\n",
            vari_test_support::s3_store::REGION,
            store.s3_endpoint()
        ),
    )
    .unwrap();
    let mut cmd = vari();
    for (key, _) in std::env::vars() {
        if key.starts_with("AWS_") {
            cmd.env_remove(key);
        }
    }
    let summary = run(cmd
        .env("HOME", &home)
        .env("AWS_PROFILE", "garage")
        .args(["index", "build"])
        .arg(input.path())
        .args(["-o", &s3_url()]))
    .expect_code(0);
    assert!(
        summary
            .stdout
            .starts_with(&format!("built {}: 2 project(s), 5 file(s)", s3_url())),
        "{}",
        summary.stdout
    );
    assert_eq!(head(&format!("{web}/{PREFIX}/simple/"), None).status, 200);
}

/// The README's nginx configuration, as the tests use it.
fn nginx_config() -> String {
    std::fs::read_to_string(vari_test_support::paths::root().join("examples/nginx/vari-site.conf"))
        .unwrap()
}

#[test]
fn nginx_serves_a_built_site_to_pip_uv_and_vari_with_json_by_negotiation() {
    let input = tempfile::tempdir().unwrap();
    inputs(input.path());
    let site = tempfile::tempdir().unwrap();
    run(vari()
        .args(["index", "build"])
        .arg(input.path())
        .arg("-o")
        .arg(site.path()))
    .expect_code(0);
    let Some(nginx) = Nginx::serve_or_skip(site.path(), &nginx_config()) else {
        return;
    };
    let json = "application/vnd.pypi.simple.v1+json";
    for (path, accept, expected) in [
        ("/simple/", None, "text/html; charset=utf-8"),
        (
            "/simple/fast-pkg/",
            Some("text/html"),
            "text/html; charset=utf-8",
        ),
        ("/simple/fast-pkg/", Some(json), json),
        ("/simple/", Some(&format!("{json}, text/html;q=0.1")), json),
        (
            "/files/fast_pkg-1.0-py3-none-any-v3.whl",
            None,
            "application/zip",
        ),
        (
            "/files/fast_pkg-1.0-py3-none-any-v3.whl.metadata",
            None,
            "text/plain; charset=utf-8",
        ),
        (
            "/files/fast_pkg-1.0-variants.json",
            None,
            "application/json; charset=utf-8",
        ),
    ] {
        let answer = head(&format!("{}{path}", nginx.base), accept);
        assert_eq!(answer.status, 200, "{path}: {answer:?}");
        assert_eq!(
            answer.header("content-type"),
            Some(expected),
            "{path} {accept:?}"
        );
    }
    assert_eq!(
        head(&format!("{}/.vari-index-state.json", nginx.base), None).status,
        404
    );

    let index = format!("{}/simple/", nginx.base);
    assert_installers_install_from(&index);
    assert_vari_selects_v3_from(&index, input.path());
    // The installers read the project page from nginx.
    assert!(
        nginx.access_log().contains("GET /simple/fast-pkg/ "),
        "{}",
        nginx.access_log()
    );
}

/// An HTTP forwarder on 127.0.0.1 in front of the store at `upstream` (`host:port`), one
/// request per connection: it counts the `PUT` requests it forwards and, once `allowed` is
/// reached, refuses every further one with 403 (a store that fails part-way through a
/// publish). Its address and the count.
fn failing_forwarder(upstream: String, allowed: Arc<AtomicUsize>) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let puts = Arc::new(AtomicUsize::new(0));
    let counted = puts.clone();
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(client) = client else { continue };
            let (upstream, allowed, puts) = (upstream.clone(), allowed.clone(), counted.clone());
            std::thread::spawn(move || forward(client, &upstream, &allowed, &puts));
        }
    });
    (format!("http://{addr}"), puts)
}

/// Forwards one request of `client` to `upstream` and its answer back, both with
/// `Connection: close` (headers S3 signatures leave out).
fn forward(mut client: TcpStream, upstream: &str, allowed: &AtomicUsize, puts: &AtomicUsize) {
    let mut reader = BufReader::new(client.try_clone().unwrap());
    let mut head = Vec::new();
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        if line == "\r\n" {
            break;
        }
        let lower = line.to_ascii_lowercase();
        if let Some(value) = lower.strip_prefix("content-length:") {
            length = value.trim().parse().unwrap_or(0);
        }
        if !lower.starts_with("connection:") {
            head.push(line);
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    if head[0].starts_with("PUT ") {
        if puts.load(Ordering::SeqCst) >= allowed.load(Ordering::SeqCst) {
            let _ = client.write_all(
                b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
            return;
        }
        puts.fetch_add(1, Ordering::SeqCst);
    }
    let mut server = TcpStream::connect(upstream).unwrap();
    head.push("Connection: close\r\n\r\n".to_owned());
    server.write_all(head.concat().as_bytes()).unwrap();
    server.write_all(&body).unwrap();
    let mut answer = Vec::new();
    server.read_to_end(&mut answer).unwrap();
    let end = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or(answer.len());
    let answer_head = String::from_utf8_lossy(&answer[..end]).into_owned();
    let kept: Vec<&str> = answer_head
        .split("\r\n")
        .filter(|line| !line.to_ascii_lowercase().starts_with("connection:"))
        .collect();
    let _ = client.write_all(format!("{}\r\nConnection: close", kept.join("\r\n")).as_bytes());
    let _ = client.write_all(&answer[end..]);
}

/// A publish to an object store that fails part-way (the store refuses every upload after
/// the third) is run again: the re-run uploads only what the first did not, counted at the
/// store, and leaves no journal behind.
#[test]
fn an_interrupted_publish_uploads_only_what_is_missing_when_run_again() {
    let Some(store) = S3Store::start_or_skip() else {
        return;
    };
    store.create_bucket(BUCKET);
    let endpoint = store.s3_endpoint();
    let upstream = endpoint.trim_start_matches("http://").to_owned();
    let allowed = Arc::new(AtomicUsize::new(3));
    let (forwarder, puts) = failing_forwarder(upstream, allowed.clone());
    let input = tempfile::tempdir().unwrap();
    TestWheel::new("fast_pkg-1.0-py3-none-any.whl").write(input.path());
    for name in ["a_pkg", "b_pkg", "c_pkg"] {
        for version in ["1.0", "2.0"] {
            TestWheel::new(&format!("{name}-{version}-py3-none-any.whl")).write(input.path());
        }
    }
    let cache = tempfile::tempdir().unwrap();
    let build = |url: &str| {
        let mut cmd = vari();
        vari_test_support::s3_store::set_client_env(&mut cmd, &forwarder);
        cmd.env("HOME", input.path().join("no-home"))
            .env("VARI_CACHE_DIR", cache.path())
            .args(["index", "build"])
            .arg(input.path())
            .args(["-o", url, "--json"]);
        run(&mut cmd)
    };
    let url = format!("s3://{BUCKET}/resumed");
    build(&url).expect_code(1);
    assert_eq!(puts.load(Ordering::SeqCst), 3);

    allowed.store(usize::MAX, Ordering::SeqCst);
    puts.store(0, Ordering::SeqCst);
    let resumed = build(&url).expect_code(0).json();
    let resumed_puts = puts.load(Ordering::SeqCst);

    // The same site published whole, for comparison.
    puts.store(0, Ordering::SeqCst);
    let whole = build(&format!("s3://{BUCKET}/whole")).expect_code(0).json();
    let whole_puts = puts.load(Ordering::SeqCst);
    assert_eq!(resumed_puts, whole_puts - 3, "{resumed} {whole}");
    assert_eq!(
        resumed["written"].as_u64().unwrap() + 3,
        whole["written"].as_u64().unwrap(),
        "{resumed} {whole}"
    );
    let journals: Vec<_> = std::fs::read_dir(cache.path().join("mirror"))
        .map(|dir| dir.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(journals.is_empty(), "{journals:?}");
    let web = store.website(BUCKET);
    for site in ["resumed", "whole"] {
        for name in ["a-pkg", "b-pkg", "c-pkg", "fast-pkg"] {
            assert_eq!(
                head(&format!("{web}/{site}/simple/{name}/"), None).status,
                200,
                "{site} {name}"
            );
        }
    }
}
