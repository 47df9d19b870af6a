//! Choosing dependency groups, with uv's names and meanings: `--group NAME`, `--all-groups`,
//! `--no-default-groups`, `--no-group NAME` and `--only-group NAME` on `vari sync`, `vari
//! install -r` and `vari export` (a lock whose default group `dev` brings a test tool in, and
//! a project locked by the real `vari lock`).

use std::path::{Path, PathBuf};

use vari_lock::{Artifact, Lock, Package, LOCK_VERSION};
use vari_test_support::fleet;
use vari_test_support::venv::{bare_venv, test_venv, uv};
use vari_test_support::wheels::{sha256_hex, wheel};

use crate::common::{run, vari};
use crate::sync::{listed, serve, Index};

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

/// A project locked by the real `vari lock` (uv resolving against the fleet upstream on
/// 127.0.0.1) for the `cpu` class: the project needs `reqlike` (which needs `idnalike`); the
/// default group `dev` needs `sockslike` and `idnalike` (the project's too); `docs` needs
/// `numlike` (an x86-64 level build).
struct Project {
    dir: tempfile::TempDir,
    profile: PathBuf,
    _index: Index,
}

impl Project {
    fn locked() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let upstream = fleet::upstream(&dir.path().join("upstream"));
        let profiles = fleet::write_profiles(&dir.path().join("profiles"));
        let profile = profiles.iter().find(|(n, _)| n == "cpu").unwrap().1.clone();
        let index = serve(&upstream);
        let project = dir.path().join("project");
        std::fs::create_dir(&project).unwrap();
        std::fs::write(
            project.join("pyproject.toml"),
            r#"[project]
name = "service"
version = "0.1"
requires-python = ">=3.10"
dependencies = ["reqlike"]

[dependency-groups]
dev = ["sockslike", "idnalike"]
docs = ["numlike"]

[tool.uv]
default-groups = ["dev"]
"#,
        )
        .unwrap();
        run(vari()
            .current_dir(&project)
            .env(
                "PATH",
                format!("{}:/usr/bin:/bin", test_venv().join("bin").display()),
            )
            .env("UV_CACHE_DIR", dir.path().join("uv-cache"))
            .args(["lock", "--index-url", &index.server.index_url()])
            .arg("--target")
            .arg(&profile)
            .args(["--python-version", "3.12"]))
        .expect_code(0);
        Self {
            dir,
            profile,
            _index: index,
        }
    }

    fn project(&self) -> PathBuf {
        self.dir.path().join("project")
    }

    fn lock(&self) -> Lock {
        let text = std::fs::read_to_string(self.project().join("pylock.toml")).unwrap();
        vari_lock::read_lock(&text).unwrap()
    }

    /// `vari export` of the lock for the `cpu` class on Python 3.12 with `args`.
    fn export(&self, args: &[&str]) -> vari_test_support::binary::Run {
        run(vari()
            .current_dir(self.project())
            .env("VARI_CACHE_DIR", self.dir.path().join("cache"))
            .args(["export", "pylock.toml", "--variant-urls", "--profile"])
            .arg(&self.profile)
            .args([
                "--python-version",
                "3.12",
                "--python-platform",
                "x86_64-manylinux_2_28",
            ])
            .args(args))
    }

    /// The whole requirements file `vari export` writes for exactly the wheels `files`.
    fn expected_export(&self, files: &[&str]) -> String {
        let lock = self.lock();
        let mut text = format!(
            "# vari export of pylock.toml for facts {} (Python 3.12, Linux x86_64 glibc 2.28)\n\
             # install with `pip install -r FILE` or `uv pip install -r FILE`, run from this \
             file's directory\n",
            self.profile.display()
        );
        for file in files {
            let (package, wheel) = lock
                .packages
                .iter()
                .find_map(|p| {
                    let wheel = p
                        .wheels
                        .iter()
                        .find(|w| w.file_name().as_deref() == Some(*file))?;
                    Some((p, wheel))
                })
                .unwrap_or_else(|| panic!("{file} is not in the lock"));
            text.push_str(&format!(
                "{} @ {} --hash=sha256:{}\n",
                package.name,
                wheel.url.as_deref().unwrap(),
                wheel.sha256().unwrap()
            ));
        }
        text
    }
}

const IDNA: &str = "idnalike-3.0-py3-none-any.whl";
const NUM: &str = "numlike-2.3.4-py3-none-any-x86_64_v3.whl";
const REQ: &str = "reqlike-1.1-py3-none-any.whl";
const SOCKS: &str = "sockslike-1.0-py3-none-any.whl";

/// Every combination of the group options gives exactly the files uv's `export` would list
/// for the same project: `--only-group` leaves the project's own dependencies out, and a
/// package the project shares with a group stays when the group is left out.
#[test]
fn export_gives_each_choice_of_groups_exactly_its_packages() {
    let project = Project::locked();
    // What the lock records: `idnalike` is the project's everywhere (no marker), and `dev`'s.
    let lock = project.lock();
    assert!(lock.vari.as_ref().unwrap().group_markers);
    let group_marker = |name: &str| {
        let package = lock.packages.iter().find(|p| p.name == name).unwrap();
        (
            package.marker.clone(),
            package.vari.as_ref().unwrap().group_marker.clone(),
        )
    };
    let dev = Some("'dev' in dependency_groups".to_owned());
    assert_eq!(group_marker("idnalike"), (None, dev.clone()));
    assert_eq!(group_marker("sockslike"), (dev.clone(), dev));
    assert_eq!(group_marker("reqlike"), (None, None));

    let cases: [(&[&str], &[&str]); 13] = [
        (&[], &[IDNA, REQ, SOCKS]),
        (&["--no-default-groups"], &[IDNA, REQ]),
        (&["--no-group", "dev"], &[IDNA, REQ]),
        (&["--group", "docs"], &[IDNA, NUM, REQ, SOCKS]),
        (
            &["--no-default-groups", "--group", "docs"],
            &[IDNA, NUM, REQ],
        ),
        (&["--group", "docs", "--no-group", "dev"], &[IDNA, NUM, REQ]),
        (&["--all-groups"], &[IDNA, NUM, REQ, SOCKS]),
        (&["--all-groups", "--no-group", "docs"], &[IDNA, REQ, SOCKS]),
        (&["--only-group", "dev"], &[IDNA, SOCKS]),
        (&["--only-group", "docs"], &[NUM]),
        (
            &["--only-group", "dev", "--only-group", "docs"],
            &[IDNA, NUM, SOCKS],
        ),
        (
            &["--only-group", "dev", "--no-default-groups"],
            &[IDNA, SOCKS],
        ),
        (&["--only-group", "dev", "--no-group", "dev"], &[]),
    ];
    for (args, files) in cases {
        let out = project.export(args).expect_code(0);
        assert_eq!(out.stdout, project.expected_export(files), "{args:?}");
    }
}

/// The options uv refuses together are refused, before anything is read or written; a group
/// the lock does not offer is one line naming it.
#[test]
fn conflicting_group_options_are_refused() {
    let project = Project::locked();
    for (args, other) in [
        (&["--only-group", "dev", "--group", "docs"][..], "--group"),
        (&["--only-group", "dev", "--all-groups"][..], "--all-groups"),
        (&["--only-group", "dev", "--extra", "socks"][..], "--extra"),
        (&["--only-group", "dev", "--all-extras"][..], "--all-extras"),
    ] {
        let out = project.export(&[args, &["-o", "out.txt"]].concat());
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert!(
            out.stderr
                .contains("'--only-group <NAME>' cannot be used with")
                && out.stderr.contains(other),
            "{args:?}: {}",
            out.stderr
        );
        assert!(!project.project().join("out.txt").exists());
    }
    project
        .export(&["--only-group", "test"])
        .expect_one_error(&["no dependency group `test` (it offers: dev, docs)"]);
}

/// A lock that does not record what each group needs on its own (written before vari did,
/// or by another tool) still reads and installs as before; `--only-group` on it is one line
/// saying to lock again.
#[test]
fn only_group_on_a_lock_without_group_markers_says_to_lock_again() {
    let project = Project::locked();
    let path = project.project().join("pylock.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("group-markers = true\n"));
    std::fs::write(&path, text.replace("group-markers = true\n", "")).unwrap();
    let out = project.export(&[]).expect_code(0);
    assert_eq!(out.stdout, project.expected_export(&[IDNA, REQ, SOCKS]));
    project.export(&["--only-group", "dev"]).expect_one_error(&[
        "pylock.toml",
        "--only-group",
        "does not record which packages each dependency group needs",
        "lock it again with `vari lock`",
    ]);
}

/// `vari sync` and `vari install -r` install what the same options export: `--only-group dev`
/// without the project's `reqlike`, `--no-group dev` keeping the `idnalike` the project shares.
#[test]
fn sync_and_install_r_choose_groups_as_export_does() {
    let project = Project::locked();
    let venv = project.dir.path().join("venv");
    bare_venv(&venv);
    let command = |verb: &[&str], extra: &[&str]| {
        let mut command = vari();
        command
            .current_dir(project.project())
            .env("VARI_CACHE_DIR", project.dir.path().join("cache"))
            .env("UV_CACHE_DIR", project.dir.path().join("uv-cache"))
            .env("UV_NO_CONFIG", "1")
            .args(verb)
            .arg("--python")
            .arg(&venv)
            .arg("--profile")
            .arg(&project.profile)
            .arg("--installer")
            .arg(uv())
            .args(extra);
        command
    };
    let names = || -> Vec<String> { listed(&venv).into_iter().map(|(n, _)| n).collect() };
    run(&mut command(
        &["sync", "pylock.toml"],
        &["--only-group", "dev"],
    ))
    .expect_code(0);
    assert_eq!(names(), ["idnalike", "sockslike"]);
    run(&mut command(&["sync", "pylock.toml"], &[])).expect_code(0);
    assert_eq!(names(), ["idnalike", "reqlike", "sockslike"]);
    run(&mut command(
        &["sync", "pylock.toml"],
        &["--no-group", "dev"],
    ))
    .expect_code(0);
    assert_eq!(names(), ["idnalike", "reqlike"]);
    // `install -r` adds and removes nothing else.
    run(&mut command(
        &["install", "-r", "pylock.toml"],
        &["--only-group", "docs"],
    ))
    .expect_code(0);
    assert_eq!(names(), ["idnalike", "numlike", "reqlike"]);
    let conflict = run(&mut command(
        &["sync", "pylock.toml"],
        &["--only-group", "dev", "--group", "docs"],
    ));
    assert_eq!(conflict.code, 2, "{}", conflict.stderr);
    assert_eq!(names(), ["idnalike", "numlike", "reqlike"]);
}
