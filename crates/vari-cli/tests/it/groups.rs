//! Leaving dependency groups out, with uv's names: `--no-default-groups` and `--no-group NAME`
//! on `vari sync`, `vari install -r` and `vari export` (a lock whose default group `dev`
//! brings a test tool in).

use std::path::Path;

use vari_lock::{Artifact, Lock, Package, LOCK_VERSION};
use vari_test_support::venv::{bare_venv, uv};
use vari_test_support::wheels::{sha256_hex, wheel};

use crate::common::{run, vari};
use crate::sync::listed;

/// `pylock.toml` in `dir`: `app` for everyone, `testtool` for the `dev` group (a default
/// group), `docstool` for the `docs` group; their wheels under `dir/wheels`.
fn write_lock(dir: &Path) {
    let wheels = dir.join("wheels");
    std::fs::create_dir_all(&wheels).unwrap();
    let mut packages = Vec::new();
    for (name, marker) in [
        ("app", None),
        ("testtool", Some("'dev' in dependency_groups")),
        ("docstool", Some("'docs' in dependency_groups")),
    ] {
        let filename = format!("{name}-1.0-py3-none-any.whl");
        let path = wheel(&wheels, &filename, None, &[]);
        let bytes = std::fs::read(&path).unwrap();
        packages.push(Package {
            name: name.to_owned(),
            version: Some("1.0".parse().unwrap()),
            marker: marker.map(str::to_owned),
            requires_python: None,
            dependencies: Vec::new(),
            index: None,
            sdist: None,
            wheels: vec![Artifact {
                name: None,
                url: None,
                path: Some(format!("wheels/{filename}")),
                size: Some(bytes.len() as u64),
                upload_time: None,
                hashes: [("sha256".to_owned(), sha256_hex(&bytes))].into(),
            }],
            variants_json: None,
            vari: None,
            other: Default::default(),
        });
    }
    let lock = Lock {
        lock_version: LOCK_VERSION.to_owned(),
        environments: Vec::new(),
        requires_python: None,
        extras: Vec::new(),
        dependency_groups: vec!["dev".to_owned(), "docs".to_owned()],
        default_groups: vec!["dev".to_owned()],
        created_by: "vari tests".to_owned(),
        packages,
        vari: None,
        other_tools: Default::default(),
    };
    std::fs::write(
        dir.join("pylock.toml"),
        vari_lock::write_lock(&lock).unwrap(),
    )
    .unwrap();
}

fn profile(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("cpu.toml");
    std::fs::write(&path, "schema = \"vari-facts/1\"\n[x86_64]\nlevel = 2\n").unwrap();
    path
}

/// The project names `vari export` writes with `args`.
fn exported(dir: &Path, args: &[&str]) -> Vec<String> {
    let out = run(vari()
        .current_dir(dir)
        .args(["export", "pylock.toml", "--format", "pylock", "--profile"])
        .arg(profile(dir))
        .args(args))
    .expect_code(0);
    let lock = vari_lock::read_lock(&out.stdout).unwrap();
    lock.packages.into_iter().map(|p| p.name).collect()
}

#[test]
fn export_leaves_out_the_default_groups_or_one_group() {
    let dir = tempfile::tempdir().unwrap();
    write_lock(dir.path());
    assert_eq!(exported(dir.path(), &[]), ["app", "testtool"]);
    assert_eq!(exported(dir.path(), &["--no-default-groups"]), ["app"]);
    assert_eq!(exported(dir.path(), &["--no-group", "dev"]), ["app"]);
    assert_eq!(
        exported(dir.path(), &["--no-default-groups", "--group", "docs"]),
        ["app", "docstool"]
    );
    assert_eq!(
        exported(
            dir.path(),
            &["--group", "docs", "--group", "dev", "--no-group", "dev"]
        ),
        ["app", "docstool"]
    );
    // A group the lock does not offer: one error line naming it and what is offered.
    let bad = run(vari()
        .current_dir(dir.path())
        .args(["export", "pylock.toml", "--no-group", "test", "--profile"])
        .arg(profile(dir.path())));
    assert_eq!(bad.code, 1, "{}", bad.stderr);
    assert!(
        bad.stderr
            .contains("no dependency group `test` (it offers: dev, docs)"),
        "{}",
        bad.stderr
    );
}

#[test]
fn sync_and_install_r_leave_out_a_group() {
    let dir = tempfile::tempdir().unwrap();
    write_lock(dir.path());
    let profile = profile(dir.path());
    let venv = dir.path().join("venv");
    bare_venv(&venv);
    let command = |verb: &[&str], extra: &[&str]| {
        let mut command = vari();
        command
            .current_dir(dir.path())
            .env("UV_CACHE_DIR", dir.path().join("uv-cache"))
            .env("UV_NO_CONFIG", "1")
            .args(verb)
            .arg("--python")
            .arg(&venv)
            .arg("--profile")
            .arg(&profile)
            .arg("--installer")
            .arg(uv())
            .args(extra);
        command
    };
    run(&mut command(
        &["sync", "pylock.toml"],
        &["--no-group", "dev"],
    ))
    .expect_code(0);
    let names: Vec<String> = listed(&venv).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["app"]);
    run(&mut command(
        &["install", "-r", "pylock.toml"],
        &["--no-default-groups", "--group", "docs"],
    ))
    .expect_code(0);
    let names: Vec<String> = listed(&venv).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["app", "docstool"]);
}
