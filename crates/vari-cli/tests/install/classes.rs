//! One machine class for every command that takes one (`vari lock --target`, `vari mirror
//! --target`, `vari proxy --target`, `vari detect --class`): the same `[NAME=]PROFILE` grammar,
//! the same sources (a facts file or a snapshot directory alike), the same class-name rule, and
//! a profile's platform deciding the class's tags (an aarch64 class gets aarch64 wheels from
//! an x86_64 machine). Real uv, an index and the proxy on 127.0.0.1, stand-in wheels.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use vari_test_support::index::TestIndex;
use vari_test_support::venv;
use vari_test_support::wheels::wheel;

use crate::common::{run, vari, Run};

/// `app` needs `armlib` (one wheel per architecture).
fn upstream(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    wheel(dir, "app-1.0-py3-none-any.whl", None, &["armlib"]);
    for arch in ["x86_64", "aarch64"] {
        let name = format!("armlib-1.0-py3-none-manylinux_2_17_{arch}.whl");
        wheel(dir, &name, None, &[]);
    }
}

const ARM: &str =
    "schema = \"vari-facts/1\"\n[platform]\nsystem = \"Linux\"\nmachine = \"aarch64\"\n";
const X86: &str =
    "schema = \"vari-facts/1\"\n[platform]\nsystem = \"Linux\"\nmachine = \"x86_64\"\n";

/// A scratch project: the upstream served, an aarch64 and an x86_64 facts file under
/// `profiles/`, and a snapshot directory `snap/` (a machine whose files say nothing: no GPU,
/// no CPU facts).
struct Project {
    dir: tempfile::TempDir,
    server: TestIndex,
    _runtime: tokio::runtime::Runtime,
}

impl Project {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        upstream(&dir.path().join("upstream"));
        std::fs::create_dir_all(dir.path().join("profiles")).unwrap();
        std::fs::write(dir.path().join("profiles/arm.toml"), ARM).unwrap();
        std::fs::write(dir.path().join("profiles/x86.toml"), X86).unwrap();
        std::fs::create_dir_all(dir.path().join("snap")).unwrap();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let server = runtime.block_on(TestIndex::start(&dir.path().join("upstream")));
        Self {
            dir,
            server,
            _runtime: runtime,
        }
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    /// `vari ARGS…` in the project, uv on PATH, its own caches.
    fn vari(&self, args: &[&str]) -> Run {
        let mut command: Command = vari();
        command
            .current_dir(self.dir.path())
            .env(
                "PATH",
                format!("{}:/usr/bin:/bin", venv::test_venv().join("bin").display()),
            )
            .env("UV_CACHE_DIR", self.path("uv-cache"))
            .env("VARI_CACHE_DIR", self.path("vari-cache"))
            .args(args);
        run(&mut command)
    }
}

#[test]
fn lock_and_mirror_take_named_classes_and_snapshot_directories() {
    let project = Project::new();
    let index = project.server.index_url();
    let locked = project
        .vari(&[
            "lock",
            "--index-url",
            &index,
            "--target",
            "arm64=profiles/arm.toml",
            "--target",
            "snap/",
            "--python-version",
            "3.12",
            "app",
        ])
        .expect_code(0);
    assert!(
        locked.stdout.contains("2 targets (arm64, snap)"),
        "{}",
        locked.stdout
    );
    let text = std::fs::read_to_string(project.path("pylock.toml")).unwrap();
    let lock = vari_lock::read_lock(&text).unwrap();
    let targets = lock.vari.unwrap().targets;
    let recorded: Vec<(&str, Option<&str>)> = targets
        .iter()
        .map(|t| (t.name.as_str(), t.profile.as_deref()))
        .collect();
    // The snapshot is recorded relative to the lock, as a profile file is.
    assert_eq!(
        recorded,
        [("arm64", Some("profiles/arm.toml")), ("snap", Some("snap"))]
    );
    assert!(
        targets.iter().all(|t| t.profile_hash.is_some()),
        "{targets:?}"
    );
    // Both architectures' wheels: each class's platform decides what it can use.
    assert!(text.contains("manylinux_2_17_aarch64.whl"), "{text}");
    // Made again from what the lock records: the same inputs, the snapshot read again.
    project.vari(&["lock", "--check"]).expect_code(0);

    // The mirror of the lock for the aarch64 class alone (named after its file): its wheel only.
    let mirrored = project
        .vari(&[
            "mirror",
            "--lock",
            "pylock.toml",
            "--target",
            "profiles/arm.toml",
            "-o",
            "site",
            "--store",
            "store",
        ])
        .expect_code(0);
    let files = crate::common::files_in(&project.path("site/files"));
    assert!(
        files.contains(&"armlib-1.0-py3-none-manylinux_2_17_aarch64.whl".to_owned())
            && !files.iter().any(|f| f.ends_with("x86_64.whl")),
        "{files:?}\n{}",
        mirrored.stdout
    );
    // Requirements for a snapshot class and a named one, resolved as `vari lock` does.
    project
        .vari(&[
            "mirror",
            "--index-url",
            &index,
            "--target",
            "x86=profiles/x86.toml",
            "--target",
            "snap",
            "--python-version",
            "3.12",
            "-o",
            "site2",
            "--store",
            "store2",
            "app",
        ])
        .expect_code(0);
    let files = crate::common::files_in(&project.path("site2/files"));
    assert!(
        files.contains(&"armlib-1.0-py3-none-manylinux_2_17_x86_64.whl".to_owned()),
        "{files:?}"
    );
}

#[test]
fn a_bad_class_name_is_refused_by_every_command_with_one_line_naming_the_flag() {
    let project = Project::new();
    let index = project.server.index_url();
    project
        .vari(&[
            "lock",
            "--index-url",
            &index,
            "--target",
            "GPU=profiles/x86.toml",
            "app",
        ])
        .expect_one_error(&["--target \"GPU=profiles/x86.toml\"", "\"GPU\" is not valid"]);
    // A name taken from a file is brought to the grammar (`Big.GPU` is `big-gpu`); a file
    // whose name makes none (too long to be one) is refused with the way out.
    let long = format!("profiles/{}.toml", "g".repeat(41));
    std::fs::write(project.path(&long), X86).unwrap();
    project
        .vari(&["lock", "--index-url", &index, "--target", &long, "app"])
        .expect_one_error(&[&format!("--target \"{long}\""), "name it NAME=PROFILE"]);
    project
        .vari(&[
            "mirror",
            "--index-url",
            &index,
            "--target",
            "a.b=snap",
            "-o",
            "site",
            "app",
        ])
        .expect_one_error(&["--target \"a.b=snap\"", "is not valid"]);
    project
        .vari(&[
            "detect",
            "--class",
            "x86=profiles/x86.toml",
            "--class",
            "profiles/x86.toml",
        ])
        .expect_one_error(&[
            "--class \"profiles/x86.toml\"",
            "machine class x86 is given twice",
        ]);
    assert!(!project.path("pylock.toml").exists());
    assert!(!project.path("site").exists());
}

#[test]
fn detect_class_takes_bare_profiles_and_snapshots() {
    let project = Project::new();
    let matched = project
        .vari(&[
            "detect",
            "--profile",
            "profiles/arm.toml",
            "--class",
            "profiles/x86.toml",
            "--class",
            "profiles/arm.toml",
        ])
        .expect_code(0);
    assert_eq!(matched.stdout, "arm\n");
    let matched = project
        .vari(&["detect", "--sysroot", "snap", "--class", "snap"])
        .expect_code(0);
    assert_eq!(matched.stdout, "snap\n");
}

/// Stops the proxy when the test ends, however it ends.
struct Proxy(std::process::Child);

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `GET url` (`http://ADDR/PATH`): the body.
fn get(url: &str) -> String {
    let rest = url.strip_prefix("http://").unwrap();
    let (addr, path) = rest.split_at(rest.find('/').unwrap());
    let mut stream = TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAccept: text/html\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{url}: {answer}");
    answer
}

#[test]
fn the_proxy_serves_bare_profiles_and_snapshot_directories_as_classes() {
    let project = Project::new();
    let mut command = vari();
    command
        .current_dir(project.dir.path())
        .args(["proxy", "--bind", "127.0.0.1:0", "--json", "--find-links"])
        .arg(project.path("upstream"))
        .args(["--python-version", "3.12"])
        .args([
            "--target",
            "profiles/arm.toml",
            "--target",
            "x86=profiles/x86.toml",
        ])
        .args(["--target", "snap/"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = command.spawn().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let _proxy = Proxy(child);
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let announced: serde_json::Value = serde_json::from_str(&line).unwrap();
    let classes = announced["classes"].as_array().unwrap();
    let names: Vec<&str> = classes
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["arm", "x86", "snap"], "{line}");
    // Each class is read from its own source: the snapshot's is the directory.
    assert!(
        classes[2]["source"].as_str().unwrap().contains("snap"),
        "{line}"
    );
    for class in classes {
        let page = get(&format!("{}armlib/", class["alias_url"].as_str().unwrap()));
        assert!(page.contains("armlib-1.0"), "{page}");
    }
}
