//! Issue 34: behind an index without PEP 658 `.metadata` files, `vari lock` reads no more of
//! the index's wheels than `uv pip compile --universal` of the same input does. The proxy reads
//! each wheel's METADATA for uv with range requests; the lock maker takes the texts from the
//! proxy instead of reading the wheels again. Counted at a 127.0.0.1 upstream.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};

use vari_test_support::index::{Seen, TestIndex};
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

/// What the upstream sent of its wheels: body bytes, and per wheel the `Range` headers asked
/// (a whole download as `whole`).
fn wheel_reads(seen: &[Seen]) -> (usize, BTreeMap<String, Vec<String>>) {
    let mut bytes = 0;
    let mut reads: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for seen in seen.iter().filter(|s| s.path.ends_with(".whl")) {
        bytes += seen.body_len;
        if seen.method == "GET" {
            let range = seen.range.clone().unwrap_or_else(|| "whole".to_owned());
            reads.entry(seen.path.clone()).or_default().push(range);
        }
    }
    (bytes, reads)
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

#[test]
fn a_lock_reads_no_wheel_twice_and_no_more_of_them_than_uv() {
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
    let requirements = root.join("requirements.in");
    std::fs::write(&requirements, "toplike\n").unwrap();

    uv_universal(&index.index_url(), &requirements, &root.join("uv-cache"));
    let (uv_bytes, uv_reads) = wheel_reads(&index.seen());
    assert!(
        uv_reads.values().flatten().all(|r| r != "whole"),
        "{uv_reads:?}"
    );
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
    let (vari_bytes, vari_reads) = wheel_reads(&index.seen());
    for (wheel, ranges) in &vari_reads {
        assert!(!ranges.iter().any(|r| r == "whole"), "{wheel}: {ranges:?}");
        let mut once = ranges.clone();
        once.sort();
        once.dedup();
        assert_eq!(once.len(), ranges.len(), "{wheel} read twice: {ranges:?}");
    }
    assert!(
        vari_bytes <= uv_bytes,
        "vari lock read {vari_bytes} bytes of wheels ({vari_reads:?}), \
         uv {uv_bytes} ({uv_reads:?})"
    );
}
