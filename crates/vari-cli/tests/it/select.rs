//! `vari select` and `vari download` against vari-client's test index on 127.0.0.1.

use std::io::Write;
use std::path::Path;

use crate::common::{run, vari, Run};

#[path = "../../../vari-client/tests/it/server.rs"]
mod server;

use server::{FileAttrs, TestIndex};

/// A running index over `dir` (its runtime lives as long as the value).
struct Index {
    server: TestIndex,
    _runtime: tokio::runtime::Runtime,
}

fn serve(dir: &Path) -> Index {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let server = runtime.block_on(TestIndex::start(dir));
    Index {
        server,
        _runtime: runtime,
    }
}

fn wheel(dir: &Path, filename: &str, variant_json: Option<&str>) {
    let parsed = vari_core::filename::WheelFilename::parse(filename).unwrap();
    let info = format!("{}-{}.dist-info", parsed.name, parsed.version);
    let mut zip = zip::ZipWriter::new(std::fs::File::create(dir.join(filename)).unwrap());
    let options = zip::write::SimpleFileOptions::default();
    zip.start_file(format!("{info}/METADATA"), options).unwrap();
    write!(
        zip,
        "Metadata-Version: 2.1\nName: {}\nVersion: {}\nRequires-Dist: fast-math; \"x86_64 :: level :: v3\" in variant_properties\nRequires-Dist: slow-math; variant_label == \"\"\n",
        parsed.name, parsed.version
    )
    .unwrap();
    if let Some(json) = variant_json {
        zip.start_file(format!("{info}/variant.json"), options)
            .unwrap();
        zip.write_all(json.as_bytes()).unwrap();
    }
    zip.finish().unwrap();
}

const DOCUMENT: &str = r#"{"$schema": "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json",
  "default-priorities": {"namespace": ["x86_64"]},
  "variants": {"v4": {"x86_64": {"level": ["v4"]}}, "v3": {"x86_64": {"level": ["v3"]}}}}"#;

/// `demo 1.0`: x86-64-v4 and v3 builds and a plain wheel, with its variants.json; and a
/// profile supporting x86-64 up to v3 on Linux x86_64.
fn demo(dir: &Path) -> std::path::PathBuf {
    for label in ["v4", "v3"] {
        let mut doc: serde_json::Value = serde_json::from_str(DOCUMENT).unwrap();
        doc["variants"]
            .as_object_mut()
            .unwrap()
            .retain(|l, _| l == label);
        wheel(
            dir,
            &format!("demo-1.0-py3-none-any-{label}.whl"),
            Some(&doc.to_string()),
        );
    }
    wheel(dir, "demo-1.0-py3-none-any.whl", None);
    std::fs::write(dir.join("demo-1.0-variants.json"), DOCUMENT).unwrap();
    let profile = dir.join("v3.toml");
    std::fs::write(
        &profile,
        "[platform]\nsystem = \"Linux\"\nmachine = \"x86_64\"\n[x86_64]\nlevel = 3\n",
    )
    .unwrap();
    profile
}

fn select(index: &Index, profile: &Path, args: &[&str]) -> Run {
    let mut cmd = vari();
    cmd.arg("select")
        .args(args)
        .arg("--index-url")
        .arg(index.server.index_url())
        .arg("--profile")
        .arg(profile)
        .args([
            "--python-version",
            "3.12",
            "--python-platform",
            "x86_64-manylinux_2_28",
        ]);
    run(&mut cmd)
}

#[test]
fn select_prints_one_line_per_requirement_with_dependencies() {
    let dir = tempfile::tempdir().unwrap();
    let profile = demo(dir.path());
    let index = serve(dir.path());
    let run = select(&index, &profile, &["demo"]).expect_code(0);
    let first = run.stdout.lines().next().unwrap();
    assert!(
        first.starts_with("demo 1.0  demo-1.0-py3-none-any-v3.whl  v3  the best of 1 variant"),
        "{first}"
    );
    assert!(
        run.stdout.contains("requires: fast-math\n"),
        "{}",
        run.stdout
    );
}

#[test]
fn select_json_has_the_contract_fields() {
    let dir = tempfile::tempdir().unwrap();
    let profile = demo(dir.path());
    let index = serve(dir.path());
    let run = select(&index, &profile, &["demo>=1", "--json"]).expect_code(0);
    let json = run.json();
    let selection = &json["selections"][0];
    for key in [
        "requirement",
        "name",
        "version",
        "filename",
        "url",
        "label",
        "sha256",
        "reason",
    ] {
        assert!(selection.get(key).is_some(), "{key} missing: {selection}");
    }
    assert_eq!(selection["requirement"], "demo>=1");
    assert_eq!(selection["label"], "v3");
    let sha = selection["sha256"].as_str().unwrap();
    let bytes = std::fs::read(dir.path().join("demo-1.0-py3-none-any-v3.whl")).unwrap();
    use sha2::Digest;
    let actual: String = sha2::Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(sha, actual);
}

#[test]
fn explain_groups_the_files_by_fate() {
    let dir = tempfile::tempdir().unwrap();
    let profile = demo(dir.path());
    for n in 0..40 {
        std::fs::copy(
            dir.path().join("demo-1.0-py3-none-any.whl"),
            dir.path()
                .join(format!("demo-1.0-cp3{n}-cp3{n}-win_amd64.whl")),
        )
        .unwrap();
    }
    let index = serve(dir.path());
    let run = select(&index, &profile, &["demo", "--explain"]).expect_code(0);
    assert!(
        run.stdout
            .contains("✓ chosen   demo-1.0-py3-none-any-v3.whl"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("✗ demo-1.0-py3-none-any-v4.whl: no supported value for `x86_64 :: level`"),
        "{}",
        run.stdout
    );
    // Forty wrong-tag wheels are one line with a count and examples.
    let wrong: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.contains("tags for another Python or platform"))
        .collect();
    assert_eq!(wrong.len(), 1, "{}", run.stdout);
    assert!(wrong[0].contains("40 files"), "{}", wrong[0]);
    assert!(run.stdout.lines().count() < 15, "{}", run.stdout);
}

#[test]
fn nothing_fits_is_one_error_naming_what_would() {
    let dir = tempfile::tempdir().unwrap();
    let profile = demo(dir.path());
    std::fs::remove_file(dir.path().join("demo-1.0-py3-none-any.whl")).unwrap();
    let old = dir.path().join("old.toml");
    std::fs::write(
        &old,
        "[platform]\nsystem = \"Linux\"\nmachine = \"x86_64\"\n[x86_64]\nlevel = 2\n",
    )
    .unwrap();
    drop(profile);
    let index = serve(dir.path());
    select(&index, &old, &["demo"]).expect_one_error(&[
        "demo 1.0 has no build for facts",
        "builds for x86-64 CPUs (v3, v4)",
        "the wheel has v3",
    ]);
}

#[test]
fn without_an_index_the_error_says_how_to_name_one() {
    let mut cmd = vari();
    cmd.args(["select", "demo", "--python-version", "3.12"])
        .env_remove("UV_INDEX_URL")
        .env_remove("UV_DEFAULT_INDEX")
        .env_remove("PIP_INDEX_URL");
    run(&mut cmd).expect_one_error(&["no package index", "--index-url"]);
}

fn download(index: &Index, profile: &Path, dest: &Path) -> Run {
    let mut cmd = vari();
    cmd.args(["download", "demo", "-d"])
        .arg(dest)
        .arg("--index-url")
        .arg(index.server.index_url())
        .arg("--profile")
        .arg(profile)
        .args([
            "--python-version",
            "3.12",
            "--python-platform",
            "x86_64-manylinux_2_28",
        ]);
    run(&mut cmd)
}

#[test]
fn download_writes_the_chosen_wheel_and_prints_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let profile = demo(dir.path());
    let index = serve(dir.path());
    let dest = tempfile::tempdir().unwrap();
    let run = download(&index, &profile, &dest.path().join("wheels")).expect_code(0);
    let path = dest.path().join("wheels/demo-1.0-py3-none-any-v3.whl");
    assert_eq!(run.stdout.trim(), path.display().to_string());
    assert_eq!(
        std::fs::read(&path).unwrap(),
        std::fs::read(dir.path().join("demo-1.0-py3-none-any-v3.whl")).unwrap()
    );
}

#[test]
fn a_hash_mismatch_leaves_nothing_and_fails() {
    let dir = tempfile::tempdir().unwrap();
    let profile = demo(dir.path());
    let index = serve(dir.path());
    index.server.attrs(
        "demo-1.0-py3-none-any-v3.whl",
        FileAttrs {
            wrong_sha256: true,
            ..FileAttrs::default()
        },
    );
    let dest = tempfile::tempdir().unwrap();
    download(&index, &profile, dest.path())
        .expect_one_error(&["demo-1.0-py3-none-any-v3.whl", "sha256"]);
    assert_eq!(std::fs::read_dir(dest.path()).unwrap().count(), 0);
}

#[test]
fn a_broken_transfer_leaves_nothing_and_fails() {
    let dir = tempfile::tempdir().unwrap();
    let profile = demo(dir.path());
    let index = serve(dir.path());
    index.server.attrs(
        "demo-1.0-py3-none-any-v3.whl",
        FileAttrs {
            truncate_after: Some(100),
            ..FileAttrs::default()
        },
    );
    let dest = tempfile::tempdir().unwrap();
    download(&index, &profile, dest.path()).expect_one_error(&["demo-1.0-py3-none-any-v3.whl"]);
    assert_eq!(std::fs::read_dir(dest.path()).unwrap().count(), 0);
}
