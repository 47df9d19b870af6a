//! Which environment `vari sync` and `vari install` may change: with no virtual environment
//! active, the `python3` on PATH is not one, and is refused unless `--system` is given.
//!
//! The interpreter on PATH here is never the machine's own: it is a copy of the test venv's
//! base interpreter in a prefix of the test's (its standard library linked in, its
//! site-packages empty but for a sentinel distribution), a real non-virtual Python whose
//! packages are the test's. Every run is a `--dry-run` too, so even a regression changes
//! nothing anywhere.

use std::path::{Path, PathBuf};
use std::process::Command;

use vari_lock::{Lock, LOCK_VERSION};
use vari_test_support::venv;

use crate::common::{run, vari};

/// A non-virtual Python with its own prefix under `dir`: `dir/bin/python3` (a copy of the
/// test venv's base interpreter), the base's standard library and shared libraries linked
/// under `dir/lib`, and an empty `dir/lib/pythonX.Y/site-packages`. `None` when this
/// platform's layout is not the one this builds (the test then has nothing to run on).
fn own_prefix_python(dir: &Path) -> Option<(PathBuf, PathBuf)> {
    let probe = Command::new(venv::python())
        .args([
            "-c",
            "import sys; print(sys.base_prefix); print(sys._base_executable); \
             print(f'python{sys.version_info[0]}.{sys.version_info[1]}')",
        ])
        .output()
        .ok()?;
    let text = String::from_utf8(probe.stdout).ok()?;
    let mut lines = text.lines();
    let base = PathBuf::from(lines.next()?);
    let executable = std::fs::canonicalize(lines.next()?).ok()?;
    let version = lines.next()?.to_owned();
    let stdlib = base.join("lib").join(&version);
    if !stdlib.join("os.py").is_file() {
        return None;
    }
    let lib = dir.join("lib");
    let site = lib.join(&version).join("site-packages");
    std::fs::create_dir_all(&site).ok()?;
    std::fs::create_dir_all(dir.join("bin")).ok()?;
    let python = dir.join("bin/python3");
    std::fs::copy(&executable, &python).ok()?;
    for entry in std::fs::read_dir(base.join("lib")).ok()?.flatten() {
        let name = entry.file_name();
        if name.to_string_lossy().contains(".so") {
            std::os::unix::fs::symlink(entry.path(), lib.join(&name)).ok()?;
        }
    }
    for entry in std::fs::read_dir(&stdlib).ok()?.flatten() {
        let name = entry.file_name();
        if name != "site-packages" && name != "dist-packages" {
            std::os::unix::fs::symlink(entry.path(), lib.join(&version).join(&name)).ok()?;
        }
    }
    // Only use it when it really is a Python of its own prefix, not a virtual environment.
    let asked = Command::new(&python)
        .args([
            "-c",
            "import sys; print(sys.prefix == sys.base_prefix, sys.prefix)",
        ])
        .output()
        .ok()?;
    let answer = String::from_utf8(asked.stdout).ok()?;
    let expected = format!("True {}", std::fs::canonicalize(dir).ok()?.display());
    let own = format!("True {}", dir.display());
    if answer.trim() != expected && answer.trim() != own {
        return None;
    }
    Some((python, site))
}

/// A lock with no packages: in an exact sync, everything installed would be removed.
fn empty_lock(path: &Path) {
    let lock = Lock {
        lock_version: LOCK_VERSION.to_owned(),
        environments: Vec::new(),
        requires_python: None,
        extras: Vec::new(),
        dependency_groups: Vec::new(),
        default_groups: Vec::new(),
        created_by: "vari tests".to_owned(),
        packages: Vec::new(),
        vari: None,
        other_tools: Default::default(),
    };
    std::fs::write(path, vari_lock::write_lock(&lock).unwrap()).unwrap();
}

#[test]
fn sync_with_no_environment_active_refuses_the_python_on_path() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("prefix");
    let Some((python, site)) = own_prefix_python(&prefix) else {
        eprintln!("skipped: cannot build a Python of its own prefix from the test venv's base");
        return;
    };
    let sentinel = site.join("sentinel-1.0.dist-info");
    std::fs::create_dir(&sentinel).unwrap();
    std::fs::write(
        sentinel.join("METADATA"),
        "Metadata-Version: 2.1\nName: sentinel\nVersion: 1.0\n",
    )
    .unwrap();
    let lock = dir.path().join("pylock.toml");
    empty_lock(&lock);
    let profile = dir.path().join("cpu.toml");
    std::fs::write(&profile, "schema = \"vari-facts/1\"\n[x86_64]\nlevel = 2\n").unwrap();
    let path = format!("{}:/usr/bin:/bin", python.parent().unwrap().display());
    let sync = |extra: &[&str]| {
        let mut command = vari();
        command
            .current_dir(dir.path())
            .env("PATH", &path)
            .arg("sync")
            .arg(&lock)
            .arg("--profile")
            .arg(&profile)
            .arg("--dry-run")
            .args(extra);
        run(&mut command)
    };

    // Refused: one line saying why and what to do; nothing listed for removal.
    let refused = sync(&[]);
    assert_eq!(refused.code, 1, "{}\n{}", refused.stdout, refused.stderr);
    assert!(refused.stdout.is_empty(), "{}", refused.stdout);
    assert!(
        refused.stderr.contains("no virtual environment found")
            && refused.stderr.contains("python3 on PATH")
            && refused.stderr.contains("--system"),
        "{}",
        refused.stderr
    );
    assert!(sentinel.is_dir());

    // With --system the same interpreter may be changed, and it is named on the first line.
    let allowed = sync(&["--system"]).expect_code(0);
    let first = allowed.stderr.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("note: Using system Python ") && first.contains("prefix"),
        "{}",
        allowed.stderr
    );
    assert!(
        allowed.stdout.contains("would remove sentinel 1.0"),
        "{}",
        allowed.stdout
    );

    // Named with --python, it is the user's choice: allowed, and named.
    let named = sync(&["--python", python.to_str().unwrap()]).expect_code(0);
    assert!(
        named.stderr.starts_with("note: Using system Python "),
        "{}",
        named.stderr
    );

    // `vari install` follows the same rule (before any installer runs).
    let install = run(vari()
        .current_dir(dir.path())
        .env("PATH", &path)
        .args([
            "install",
            "sentinel",
            "--index-url",
            "http://127.0.0.1:9/simple/",
        ])
        .arg("--profile")
        .arg(&profile));
    assert_eq!(install.code, 1, "{}", install.stderr);
    assert!(
        install.stderr.contains("no virtual environment found"),
        "{}",
        install.stderr
    );
    assert!(sentinel.is_dir());
}

#[test]
fn a_virtual_environment_is_named_on_the_first_line() {
    let dir = tempfile::tempdir().unwrap();
    let env = dir.path().join("venv");
    venv::bare_venv(&env);
    let lock = dir.path().join("pylock.toml");
    empty_lock(&lock);
    let synced = run(vari()
        .current_dir(dir.path())
        .env("VIRTUAL_ENV", &env)
        .arg("sync")
        .arg(&lock)
        .arg("--dry-run"))
    .expect_code(0);
    let first = synced.stderr.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("note: Using Python ") && first.ends_with(&format!("{}", env.display())),
        "{}",
        synced.stderr
    );
}
