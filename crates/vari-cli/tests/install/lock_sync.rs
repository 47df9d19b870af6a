//! Lock once, install anywhere, end to end: the real `vari lock` (driving the real uv) writes
//! one pylock.toml for three machine classes of `vari_test_support::fleet`'s upstream, then
//! `vari sync` installs that same file on each simulated machine, and `vari export` gives
//! plain pip one class's files.

use std::path::Path;

use vari_test_support::fleet;
use vari_test_support::venv::{bare_venv, test_venv};

use crate::common::{run, vari};
use crate::sync::{listed, serve, sync};

fn path_with_uv() -> String {
    format!("{}:/usr/bin:/bin", test_venv().join("bin").display())
}

#[test]
fn one_lock_from_vari_lock_installs_each_class_its_own_build() {
    let dir = tempfile::tempdir().unwrap();
    let upstream = fleet::upstream(&dir.path().join("upstream"));
    let profiles = fleet::write_profiles(&dir.path().join("profiles"));
    let profile = |class: &str| -> &Path { &profiles.iter().find(|(n, _)| n == class).unwrap().1 };
    let index = serve(&upstream);

    let mut lock = vari();
    lock.current_dir(dir.path())
        .env("PATH", path_with_uv())
        .env("UV_CACHE_DIR", dir.path().join("uv-cache"))
        .args(["lock", "app-like", "--index-url", &index.server.index_url()]);
    for class in ["cpu", "a100", "mi300"] {
        lock.arg("--target").arg(profile(class));
    }
    run(&mut lock).expect_code(0);
    let lock_path = dir.path().join("pylock.toml");
    assert!(lock_path.is_file());

    for class in ["cpu", "a100", "mi300"] {
        let scratch = dir.path().join(class);
        let venv = scratch.join("venv");
        bare_venv(&venv);
        let synced = run(&mut sync(&scratch, &lock_path, &venv, profile(class))).expect_code(0);
        assert_eq!(
            listed(&venv),
            fleet::installed(class),
            "{class}: {}",
            synced.stdout
        );
    }

    // One class's files for a tool without variant support: plain pip, hashes required.
    let exported = dir.path().join("cpu-requirements.txt");
    let wheelhouse = dir.path().join("cpu-wheels");
    run(vari()
        .arg("export")
        .arg(&lock_path)
        .arg("--target")
        .arg(profile("cpu"))
        .arg("--wheelhouse")
        .arg(&wheelhouse)
        .arg("-o")
        .arg(&exported))
    .expect_code(0);
    let venv = dir.path().join("plain-pip");
    bare_venv(&venv);
    let pip = std::process::Command::new(test_venv().join("bin/python"))
        .args(["-m", "pip", "--python"])
        .arg(&venv)
        .args(["install", "--no-index", "--require-hashes", "--quiet"])
        .args(["--disable-pip-version-check", "--no-cache-dir", "-r"])
        .arg(&exported)
        .current_dir(dir.path())
        .env("PIP_CONFIG_FILE", "/dev/null")
        .env_remove("PIP_FIND_LINKS")
        .output()
        .unwrap();
    assert!(
        pip.status.success(),
        "{}",
        String::from_utf8_lossy(&pip.stderr)
    );
    let plain: Vec<String> = listed(&venv).into_iter().map(|(name, _)| name).collect();
    let cpu: Vec<String> = fleet::installed("cpu")
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    assert_eq!(plain, cpu);
}
