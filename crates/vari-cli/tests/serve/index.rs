//! `vari index build` and `vari index validate` on the fixture wheels.

use std::path::Path;

use crate::common::{assert_output, assert_run, data, vari_run};
use vari_test_support::site::PythonHttpServer;

fn build_fixture_site(site: &Path) -> serde_json::Value {
    let run = vari_run([
        "index".as_ref(),
        "build".as_ref(),
        data("wheels").as_os_str(),
        "-o".as_ref(),
        site.as_os_str(),
        "--json".as_ref(),
    ])
    .expect_code(0);
    // The variants.json beside the fixtures matches the wheels: accepted without a word.
    assert!(
        !run.stderr.contains("test_package-0-variants.json"),
        "{}",
        run.stderr
    );
    crate::common::assert_json_schema("index-build", &run.json());
    run.json()
}

#[test]
fn build_prints_a_summary_and_a_rebuild_reads_nothing() {
    let site = tempfile::tempdir().unwrap();
    let summary = build_fixture_site(site.path());
    assert_eq!(summary["projects"], 1);
    assert_eq!(summary["files"], 7);
    assert_eq!(
        summary["variants_json"],
        serde_json::json!(["test_package-0-variants.json"])
    );
    assert_eq!(
        (summary["read"].as_u64(), summary["reused"].as_u64()),
        (Some(7), Some(0))
    );
    let again = build_fixture_site(site.path());
    assert_eq!(
        (again["read"].as_u64(), again["reused"].as_u64()),
        (Some(0), Some(7))
    );
    assert_eq!(again["written"], 0);

    let run = vari_run([
        "index".as_ref(),
        "validate".as_ref(),
        site.path().as_os_str(),
    ])
    .expect_code(0);
    assert!(run.stdout.starts_with("ok "), "{}", run.stdout);
    assert!(
        run.stdout.contains("0 error(s), 2 warning(s)"),
        "{}",
        run.stdout
    );
    assert!(
        run.stderr.contains(
            "warning: test_package-0-variants.json: variants.foo: has the same properties as \
             `60567bd9`"
        ),
        "{}",
        run.stderr
    );
}

fn build_json(input: &Path, site: &Path) -> serde_json::Value {
    vari_run([
        "index".as_ref(),
        "build".as_ref(),
        input.as_os_str(),
        "-o".as_ref(),
        site.as_os_str(),
        "--json".as_ref(),
    ])
    .expect_code(0)
    .json()
}

#[test]
fn a_distribution_rewritten_in_place_with_its_size_and_modification_time_kept_is_read_again() {
    let dir = tempfile::tempdir().unwrap();
    let (input, site) = (dir.path().join("in"), dir.path().join("site"));
    std::fs::create_dir(&input).unwrap();
    let sdist = input.join("pkg-1.0.tar.gz");
    std::fs::write(&sdist, b"the first release").unwrap();
    // Its last change in the past on any clock tick (no call sets a change time), so that the
    // build trusts what it read of it.
    std::thread::sleep(std::time::Duration::from_millis(50));
    let first = build_json(&input, &site);
    assert_eq!(
        (first["read"].as_u64(), first["reused"].as_u64()),
        (Some(1), Some(0))
    );
    let again = build_json(&input, &site);
    assert_eq!(
        (again["read"].as_u64(), again["reused"].as_u64()),
        (Some(0), Some(1))
    );

    // Other bytes, with the same size, inode and modification time.
    let before = std::fs::metadata(&sdist).unwrap();
    let file = std::fs::File::options().write(true).open(&sdist).unwrap();
    std::io::Write::write_all(&mut &file, b"the fixed release").unwrap();
    file.set_modified(before.modified().unwrap()).unwrap();
    drop(file);
    let after = std::fs::metadata(&sdist).unwrap();
    assert_eq!(
        (after.len(), after.modified().unwrap()),
        (before.len(), before.modified().unwrap())
    );

    let rebuilt = build_json(&input, &site);
    assert_eq!(
        (rebuilt["read"].as_u64(), rebuilt["reused"].as_u64()),
        (Some(1), Some(0))
    );
    let page: serde_json::Value =
        serde_json::from_slice(&std::fs::read(site.join("simple/pkg/index.json")).unwrap())
            .unwrap();
    assert_eq!(
        page["files"][0]["hashes"]["sha256"],
        vari_test_support::wheels::sha256_hex(b"the fixed release")
    );
    // The file the site serves has the hash its pages give.
    let run = vari_run(["index".as_ref(), "validate".as_ref(), site.as_os_str()]).expect_code(0);
    assert!(run.stdout.contains(" 0 error(s)"), "{}", run.stdout);
}

#[test]
fn the_variants_json_is_what_metadata_merge_writes() {
    let site = tempfile::tempdir().unwrap();
    build_fixture_site(site.path());
    let merged = site.path().join("merged.json");
    let mut args = vec!["metadata".into(), "merge".into()];
    let mut wheels: Vec<_> = std::fs::read_dir(data("wheels"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "whl"))
        .collect();
    wheels.sort();
    args.extend(wheels.into_iter().map(std::ffi::OsString::from));
    args.extend(["-o".into(), merged.clone().into_os_string()]);
    vari_run(args).expect_code(0);
    assert_eq!(
        std::fs::read_to_string(site.path().join("files/test_package-0-variants.json")).unwrap(),
        std::fs::read_to_string(&merged).unwrap()
    );
}

#[test]
fn validate_prints_each_problem_with_file_and_key_and_exits_1() {
    let site = tempfile::tempdir().unwrap();
    build_fixture_site(site.path());
    // Drop the `foo` variant from the index file (which also breaks its hash on the page), and
    // change the plain wheel's metadata file.
    let variants = site.path().join("files/test_package-0-variants.json");
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&variants).unwrap()).unwrap();
    doc["variants"].as_object_mut().unwrap().remove("foo");
    std::fs::write(&variants, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    std::fs::write(
        site.path()
            .join("files/test_package-0-py3-none-any.whl.metadata"),
        b"Name: changed\n",
    )
    .unwrap();

    let run = vari_run([
        "index".as_ref(),
        "validate".as_ref(),
        site.path().as_os_str(),
        "--json".as_ref(),
    ])
    .expect_code(1);
    // Each problem on its own line, naming the file and the key, in a fixed order.
    assert_output(
        &run.stderr,
        r#"error: test_package-0-py3-none-any.whl.metadata: the page's core-metadata.sha256 is [SHA256], the file has [SHA256]
error: test_package-0-variants.json: hashes.sha256: the page says [SHA256], the file has [SHA256]
error: test_package-0-variants.json: variants.foo: missing: test_package-0-py3-none-any-foo.whl has this label
error: test_package-0-variants.json: variants: lacks what test_package-0-py3-none-any-foo.whl's variant.json has there; rebuild the index
warning: test_package-0-variants.json: variants.fbe82642: has the same properties as `bar`, which installers prefer
"#,
        &[(site.path(), "[SITE]")],
    );
    let lines: Vec<&str> = run.stderr.lines().collect();
    let report = run.json();
    assert_eq!(report["ok"], false);
    assert_eq!(report["problems"].as_array().unwrap().len(), lines.len());
}

#[test]
fn a_broken_wheel_fails_the_build_with_one_error_line() {
    let input = tempfile::tempdir().unwrap();
    std::fs::copy(
        data("wheels/test_package-0-py3-none-any.whl"),
        input.path().join("test_package-0-py3-none-any.whl"),
    )
    .unwrap();
    std::fs::write(
        input.path().join("test_package-1-py3-none-any-v3.whl"),
        b"junk",
    )
    .unwrap();
    let site = tempfile::tempdir().unwrap();
    vari_run([
        "index".as_ref(),
        "build".as_ref(),
        input.path().as_os_str(),
        "-o".as_ref(),
        site.path().as_os_str(),
    ])
    .expect_one_error(&["test_package-1-py3-none-any-v3.whl"]);
    assert!(!site.path().join("simple").exists());
}

#[test]
fn a_base_url_must_be_a_url() {
    let site = tempfile::tempdir().unwrap();
    vari_run([
        "index".as_ref(),
        "build".as_ref(),
        data("wheels").as_os_str(),
        "-o".as_ref(),
        site.path().as_os_str(),
        "--base-url".as_ref(),
        "not a url".as_ref(),
    ])
    .expect_code(2);
}

#[test]
fn validate_reads_a_served_site_by_url() {
    let site = tempfile::tempdir().unwrap();
    build_fixture_site(site.path());
    let server = PythonHttpServer::start(site.path());
    let run = vari_run(["index", "validate", server.url.as_str(), "--json"]).expect_code(0);
    let report = run.json();
    crate::common::assert_json_schema("index-validate", &report);
    assert_eq!(
        (&report["ok"], &report["projects"], &report["files"]),
        (
            &serde_json::json!(true),
            &serde_json::json!(1),
            &serde_json::json!(8)
        ),
        "{report}"
    );

    // The index file now disagrees with the `foo` wheel's variant.json; the page's hash is
    // fixed so that only the content is at fault.
    let variants = site.path().join("files/test_package-0-variants.json");
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&variants).unwrap()).unwrap();
    doc["variants"].as_object_mut().unwrap().remove("foo");
    let text = serde_json::to_string_pretty(&doc).unwrap();
    std::fs::write(&variants, &text).unwrap();
    let hash: String = {
        use sha2::Digest;
        sha2::Sha256::digest(text.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    };
    let page_path = site.path().join("simple/test-package/index.json");
    let mut page: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&page_path).unwrap()).unwrap();
    for file in page["files"].as_array_mut().unwrap() {
        if file["filename"] == "test_package-0-variants.json" {
            file["hashes"]["sha256"] = serde_json::json!(hash);
        }
    }
    std::fs::write(&page_path, serde_json::to_string(&page).unwrap()).unwrap();

    let run = vari_run(["index", "validate", &format!("{}/simple/", server.url)]).expect_code(1);
    assert!(
        run.stderr.lines().any(|l| l
            == "error: test_package-0-variants.json: variants.foo: missing: \
                test_package-0-py3-none-any-foo.whl has this label"),
        "{}",
        run.stderr
    );
    assert!(run.stdout.starts_with("invalid http://"), "{}", run.stdout);
}

/// `index validate --for uv`: the demo release (PEP 825 metadata, no providers) is valid, but
/// uv 0.13 installs only its null variant, which each GPU build's target is told.
#[test]
fn validate_for_uv_names_what_uv_would_install_instead() {
    let site = tempfile::tempdir().unwrap();
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/demo");
    vari_run([
        "index".as_ref(),
        "build".as_ref(),
        demo.as_os_str(),
        "-o".as_ref(),
        site.path().as_os_str(),
    ])
    .expect_code(0);
    vari_run([
        "index".as_ref(),
        "validate".as_ref(),
        site.path().as_os_str(),
    ])
    .expect_code(0);
    let run = vari_run([
        "index".as_ref(),
        "validate".as_ref(),
        "--for".as_ref(),
        "uv".as_ref(),
        "--json".as_ref(),
        site.path().as_os_str(),
    ])
    .expect_code(1);
    let report = run.json();
    let messages: Vec<&str> = report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["severity"] == "error")
        .map(|p| p["message"].as_str().unwrap())
        .collect();
    assert!(
        messages
            .iter()
            .any(|m| m.starts_with("uv 0.13: no providers (schema 0.1.x)")),
        "{messages:?}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m.contains("a target built for cu128: vari installs cu128, uv null")),
        "{messages:?}"
    );
}

/// A destination vari cannot publish to, and a site that does not exist, are each one line naming
/// what is wrong, as the library words it, and nothing else.
#[test]
fn unusable_destinations_and_sites_are_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let run = vari_run([
        "index".as_ref(),
        "build".as_ref(),
        data("wheels").as_os_str(),
        "-o".as_ref(),
        "ftp://example.invalid/site".as_ref(),
    ]);
    assert_run(
        &run,
        1,
        "",
        "error: `ftp://example.invalid/site`: unsupported destination scheme (use a directory, \
         s3://, gs://, az:// or an http(s) WebDAV URL)\n",
        &[],
    );
    let missing = dir.path().join("no-site");
    let run = vari_run(["index".as_ref(), "validate".as_ref(), missing.as_os_str()]);
    assert_run(
        &run,
        1,
        "",
        "error: [TMP]/no-site: no such site directory (give the directory `vari index build` \
         wrote, or the http(s) URL of a served index)\n",
        &[(dir.path(), "[TMP]")],
    );
}

/// A site that is not there, or a file given for one: one line naming the path and saying what
/// to give instead, never the operating system's bare "No such file or directory (os error 2)".
#[test]
fn validate_names_a_missing_site_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-site");
    for json in [false, true] {
        let mut args = vec!["index".as_ref(), "validate".as_ref(), missing.as_os_str()];
        if json {
            args.push("--json".as_ref());
        }
        let run = vari_run(args).expect_one_error(&[&format!(
            "{}: no such site directory (give the directory `vari index build` wrote, or the \
             http(s) URL of a served index)",
            missing.display()
        )]);
        assert!(!run.stderr.contains("os error"), "{}", run.stderr);
    }
    let file = dir.path().join("index.html");
    std::fs::write(&file, "<html></html>").unwrap();
    vari_run(["index".as_ref(), "validate".as_ref(), file.as_os_str()]).expect_one_error(&[
        &format!(
            "{}: not a directory (a site is the directory `vari index build` wrote)",
            file.display()
        ),
    ]);
}
