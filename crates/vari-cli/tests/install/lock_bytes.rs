//! Issue 34: `vari lock` reads no more of an index's files than `uv pip compile --universal` of
//! the same input does. Without PEP 658 `.metadata` files the proxy reads each wheel's METADATA
//! for uv with range requests; with them it serves uv the index's texts; either way it keeps
//! them and the lock maker takes them from there instead of reading them again. Counted at a
//! 127.0.0.1 upstream.

use std::path::Path;
use std::process::{Command, Stdio};

use vari_test_support::index::{FileAttrs, MetadataSpelling, Seen, TestIndex};
use vari_test_support::venv::{self, clean_installer_env, uv};
use vari_test_support::wheels::TestWheel;

use crate::common::{run, vari};

/// Non-variant releases on two Pythons: `toplike` requires `midlike` and, below Python 3.11,
/// `backlike`; `midlike` has a build per Python (uv reads one of them, the lock keeps both).
fn upstream(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    TestWheel::new("toplike-1.0-py3-none-any.whl")
        .requires(&["midlike>=1", "backlike ; python_version < '3.11'"])
        .write(dir);
    TestWheel::new("toplike-2.0-py3-none-any.whl")
        .requires(&["midlike>=2"])
        .requires_python(Some(">=3.11"))
        .write(dir);
    for python in ["cp310", "cp312"] {
        TestWheel::new(&format!(
            "midlike-1.5-{python}-{python}-manylinux_2_17_x86_64.whl"
        ))
        .requires(&["leaflike"])
        .write(dir);
    }
    TestWheel::new("leaflike-3.0-py3-none-any.whl").write(dir);
    TestWheel::new("backlike-1.0-py3-none-any.whl").write(dir);
}

/// `uv pip compile --universal` of `requirements` from `index`, fresh cache, lowest Python 3.10.
fn uv_universal(index: &str, requirements: &Path, cache: &Path) {
    let output = Command::new(uv())
        .env_clear()
        .envs(clean_installer_env())
        .args(["pip", "compile", "--no-config", "--quiet", "--no-header"])
        .args([
            "--universal",
            "--no-python-downloads",
            "--python-version",
            "3.10",
        ])
        .args(["--index-url", index])
        .arg("--cache-dir")
        .arg(cache)
        .arg(requirements)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "uv pip compile --universal failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Gives every wheel of `dir` a PEP 658 `.metadata` file (its METADATA), advertised by `index`.
fn offer_metadata(dir: &Path, index: &TestIndex) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if !name.ends_with(".whl") {
            continue;
        }
        let bytes = std::fs::read(dir.join(&name)).unwrap();
        let metadata = vari_test_support::wheels::member_text(&bytes, ".dist-info/METADATA");
        std::fs::write(dir.join(format!("{name}.metadata")), metadata).unwrap();
        index.attrs(
            &name,
            FileAttrs {
                core_metadata: Some(MetadataSpelling::Core),
                ..Default::default()
            },
        );
    }
}

/// `uv pip compile --universal` and then `vari lock` for two classes on two Pythons, of the
/// same input from a fresh upstream (with `.metadata` files or not); returns what the
/// upstream sent each of its wheels and `.metadata` files: (uv's, vari's) requests as
/// `path range` lines, and bytes.
fn uv_then_vari(metadata: bool) -> ((Vec<String>, usize), (Vec<String>, usize)) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    upstream(&root.join("upstream"));
    let profiles = vari_test_support::fleet::write_profiles(&root.join("profiles"));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let index = runtime.block_on(TestIndex::start(&root.join("upstream")));
    if metadata {
        offer_metadata(&root.join("upstream"), &index);
    }
    let requirements = root.join("requirements.in");
    std::fs::write(&requirements, "toplike\n").unwrap();

    uv_universal(&index.index_url(), &requirements, &root.join("uv-cache"));
    let uv_reads = file_reads(&index.seen());
    index.clear_seen();

    let mut command = vari();
    command
        .current_dir(root)
        .env(
            "PATH",
            format!("{}:/usr/bin:/bin", venv::test_venv().join("bin").display()),
        )
        .env("UV_CACHE_DIR", root.join("vari-uv-cache"))
        .env("VARI_CACHE_DIR", root.join("vari-cache"))
        .args(["lock", "--index-url", &index.index_url()])
        .args(["-r", "requirements.in", "-o", "pylock.toml"])
        .args(["--python-version", "3.10", "--python-version", "3.12"]);
    for (name, path) in &profiles {
        if name == "cpu" || name == "a100" {
            command.arg("--target").arg(path);
        }
    }
    run(&mut command).expect_code(0);
    let lock = std::fs::read_to_string(root.join("pylock.toml")).unwrap();
    // Both builds of midlike are kept; backlike only for Python 3.10.
    assert!(
        lock.contains("midlike-1.5-cp310") && lock.contains("midlike-1.5-cp312"),
        "{lock}"
    );
    assert!(lock.contains("name = \"backlike\""), "{lock}");
    (uv_reads, file_reads(&index.seen()))
}

/// The GETs of wheels and `.metadata` files the upstream answered, as `path range` lines
/// (`whole` without a range), and the body bytes it sent for them.
fn file_reads(seen: &[Seen]) -> (Vec<String>, usize) {
    let files = seen.iter().filter(|s| {
        s.method == "GET" && (s.path.ends_with(".whl") || s.path.ends_with(".metadata"))
    });
    let mut reads = Vec::new();
    let mut bytes = 0;
    for seen in files {
        bytes += seen.body_len;
        let range = seen.range.as_deref().unwrap_or("whole");
        reads.push(format!("{} {range}", seen.path));
    }
    (reads, bytes)
}

/// Nothing is asked twice, no wheel is downloaded whole, and vari's bytes are at most uv's.
fn assert_no_more_than_uv(uv: &(Vec<String>, usize), vari: &(Vec<String>, usize)) {
    let (reads, bytes) = vari;
    for read in reads {
        assert!(!read.ends_with(".whl whole"), "{read}");
        let times = reads.iter().filter(|r| *r == read).count();
        assert_eq!(times, 1, "{read} asked {times} times: {reads:?}");
    }
    assert!(
        *bytes <= uv.1,
        "vari lock was sent {bytes} bytes ({reads:?}), uv {} ({:?})",
        uv.1,
        uv.0
    );
}

#[test]
fn without_metadata_files_a_lock_reads_no_wheel_twice_and_no_more_than_uv() {
    let (uv, vari) = uv_then_vari(false);
    assert!(uv.0.iter().all(|r| !r.ends_with("whole")), "{:?}", uv.0);
    assert!(vari.0.iter().all(|r| r.contains(".whl ")), "{:?}", vari.0);
    assert_no_more_than_uv(&uv, &vari);
}

#[test]
fn with_metadata_files_a_lock_reads_each_once_and_no_wheel() {
    let (uv, vari) = uv_then_vari(true);
    // The proxy serves uv the index's texts and the lock takes them from there.
    assert!(
        vari.0.iter().all(|r| r.contains(".metadata ")),
        "{:?}",
        vari.0
    );
    assert_no_more_than_uv(&uv, &vari);
}
