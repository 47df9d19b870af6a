//! `vari sync` and `vari install -r pylock.toml` end to end: a lock of the fleet upstream
//! (`vari_test_support::fleet`, served on 127.0.0.1) installed by the real uv and pip into
//! fresh environments for simulated machine classes (facts profiles), each installed label
//! read back with `vari list --json`; offline from a wheelhouse, a tampered wheel, removal of
//! what the lock does not list, a machine no locked variant serves.
//!
//! Until `vari lock` writes them, the locks are built here with the `vari-lock` model from
//! the served files' URLs, sizes and SHA-256 ([`fleet_lock`]).

use std::path::{Path, PathBuf};
use std::process::Command;

use vari_lock::{Artifact, Lock, Package, PackageInfo, LOCK_VERSION};
use vari_test_support::fleet;
use vari_test_support::index::TestIndex;
use vari_test_support::venv::{bare_venv, uv};

use crate::common::{on_terminal, run, vari, Run};

/// A running index over `dir` (its runtime lives as long as the value).
pub(crate) struct Index {
    pub(crate) server: TestIndex,
    _runtime: tokio::runtime::Runtime,
}

pub(crate) fn serve(dir: &Path) -> Index {
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

/// The fleet upstream in `dir/upstream`, its profiles in `dir/profiles`, the server, and a
/// lock of it at `dir/pylock.toml`.
pub(crate) struct Fleet {
    pub(crate) upstream: PathBuf,
    pub(crate) profiles: Vec<(String, PathBuf)>,
    pub(crate) index: Option<Index>,
    pub(crate) lock: PathBuf,
}

impl Fleet {
    pub(crate) fn new(dir: &Path) -> Self {
        let upstream = fleet::upstream(&dir.join("upstream"));
        let profiles = fleet::write_profiles(&dir.join("profiles"));
        let index = serve(&upstream);
        let lock = dir.join("pylock.toml");
        let written = fleet_lock(&upstream, &format!("{}/files/", index.server.base()));
        std::fs::write(&lock, vari_lock::write_lock(&written).unwrap()).unwrap();
        Self {
            upstream,
            profiles,
            index: Some(index),
            lock,
        }
    }

    pub(crate) fn profile(&self, class: &str) -> &Path {
        &self.profiles.iter().find(|(n, _)| n == class).unwrap().1
    }
}

/// What `vari lock` will write for the fleet upstream (one version of each project, every
/// wheel with its URL under `files`, size and SHA-256, the variants inlined, the CUDA runtime
/// behind vari-demo's variant marker, `sockslike` behind the lock's `socks` extra).
pub(crate) fn fleet_lock(upstream: &Path, files: &str) -> Lock {
    let mut names: Vec<String> = std::fs::read_dir(upstream)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".whl") && !n.starts_with("reqlike-1.0-"))
        .collect();
    names.sort();
    let mut packages: Vec<Package> = Vec::new();
    for name in names {
        let parsed = vari_core::filename::WheelFilename::parse(&name).unwrap();
        let project = vari_core::project::normalize(parsed.name.as_ref());
        let bytes = std::fs::read(upstream.join(&name)).unwrap();
        let artifact = Artifact {
            name: None,
            url: Some(format!("{files}{name}")),
            path: None,
            size: Some(bytes.len() as u64),
            upload_time: None,
            hashes: [(
                "sha256".to_owned(),
                vari_test_support::wheels::sha256_hex(&bytes),
            )]
            .into(),
        };
        match packages.iter_mut().find(|p| p.name == project) {
            Some(package) => package.wheels.push(artifact),
            None => packages.push(Package {
                name: project.clone(),
                version: Some(parsed.version.to_string().parse().unwrap()),
                marker: None,
                requires_python: None,
                dependencies: Vec::new(),
                index: None,
                sdist: None,
                wheels: vec![artifact],
                variants_json: None,
                vari: None,
                other: Default::default(),
            }),
        }
    }
    for package in &mut packages {
        let version = package.version.as_ref().unwrap();
        let document = upstream.join(format!(
            "{}-{version}-variants.json",
            package.name.replace('-', "_")
        ));
        if let Ok(text) = std::fs::read_to_string(&document) {
            package.variants_json = Some(
                vari_core::metadata::read_json(&text, vari_core::metadata::SourceKind::IndexFile)
                    .unwrap(),
            );
        }
        match package.name.as_str() {
            "vari-demo" => {
                package.vari = Some(PackageInfo {
                    variant_dependencies: vec![
                        "vari-demo-cuda-runtime==1.0.0 ; \"nvidia\" in variant_namespaces"
                            .to_owned(),
                    ],
                    ..PackageInfo::default()
                })
            }
            "vari-demo-cuda-runtime" => {
                package.vari = Some(PackageInfo {
                    through_variants: true,
                    ..PackageInfo::default()
                })
            }
            "sockslike" => package.marker = Some("'socks' in extras".to_owned()),
            _ => {}
        }
    }
    Lock {
        lock_version: LOCK_VERSION.to_owned(),
        environments: Vec::new(),
        requires_python: Some(">=3.9".to_owned()),
        extras: vec!["socks".to_owned()],
        dependency_groups: Vec::new(),
        default_groups: Vec::new(),
        created_by: "vari tests".to_owned(),
        packages,
        vari: None,
        other_tools: Default::default(),
    }
}

/// `vari sync LOCK --python VENV --profile PROFILE --installer uv`, with a cache of its own
/// (`scratch/cache`) and the test venv's uv.
pub(crate) fn sync(scratch: &Path, lock: &Path, venv: &Path, profile: &Path) -> Command {
    sync_with(scratch, lock, venv, profile, &uv())
}

/// [`sync`] with another `--installer`.
pub(crate) fn sync_with(
    scratch: &Path,
    lock: &Path,
    venv: &Path,
    profile: &Path,
    installer: &Path,
) -> Command {
    let mut command = vari();
    command
        .env("VARI_CACHE_DIR", scratch.join("cache"))
        .env("UV_CACHE_DIR", scratch.join("uv-cache"))
        .env("UV_NO_CONFIG", "1")
        .env("PIP_CONFIG_FILE", "/dev/null")
        .env_remove("PIP_FIND_LINKS")
        .env_remove("PIP_INDEX_URL")
        .env_remove("PIP_EXTRA_INDEX_URL")
        .arg("sync")
        .arg(lock)
        .arg("--python")
        .arg(venv)
        .arg("--profile")
        .arg(profile)
        .arg("--installer")
        .arg(installer);
    command
}

/// name → label of everything `venv` holds (`vari list --json`), sorted by name.
pub(crate) fn listed(venv: &Path) -> Vec<(String, Option<String>)> {
    let run = run(vari().arg("list").arg("--json").arg("--python").arg(venv)).expect_code(0);
    crate::common::assert_json_schema("list", &run.json());
    let mut listed: Vec<(String, Option<String>)> = run.json()["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                vari_core::project::normalize(p["name"].as_str().unwrap()),
                p["label"].as_str().map(str::to_owned),
            )
        })
        .collect();
    listed.sort();
    listed
}

fn stdout(run: &Run) -> String {
    run.stdout.clone()
}

#[test]
fn each_machine_class_gets_its_variant_and_only_cuda_machines_the_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = Fleet::new(dir.path());
    for class in ["cpu", "a100", "mi300"] {
        let scratch = dir.path().join(class);
        let venv = scratch.join("venv");
        bare_venv(&venv);
        let first = run(&mut sync(
            &scratch,
            &fleet.lock,
            &venv,
            fleet.profile(class),
        ))
        .expect_code(0);
        assert_eq!(
            listed(&venv),
            fleet::installed(class),
            "{class}: {}",
            stdout(&first)
        );
        let (demo, _, cuda) = fleet::expected(class);
        let out = stdout(&first);
        assert!(
            out.contains(&format!("installed vari-demo 1.0.0 variant {demo}")),
            "{out}"
        );
        assert_eq!(
            out.contains("the chosen variant of vari-demo requires it"),
            cuda,
            "{out}"
        );
        // Synced again: nothing to do, nothing fetched.
        let again = run(&mut sync(
            &scratch,
            &fleet.lock,
            &venv,
            fleet.profile(class),
        ))
        .expect_code(0);
        assert!(!stdout(&again).contains("installed "), "{}", stdout(&again));
        assert_eq!(listed(&venv), fleet::installed(class));
    }
    // The CPU machine's environment moved to the A100 class: the same version of vari-demo,
    // another build, replaced; the runtime comes with it.
    let cpu = dir.path().join("cpu");
    let moved = run(&mut sync(
        &cpu,
        &fleet.lock,
        &cpu.join("venv"),
        fleet.profile("a100"),
    ))
    .expect_code(0);
    assert!(
        moved
            .stdout
            .contains("installed vari-demo 1.0.0 variant cu128"),
        "{}",
        moved.stdout
    );
    assert_eq!(listed(&cpu.join("venv")), fleet::installed("a100"));
    // The CUDA runtime was installed without the variant markers pip and uv cannot read.
    let a100 = dir.path().join("a100/venv");
    let site = vari_test_support::venv::site_packages(&a100);
    let metadata =
        std::fs::read_to_string(site.join("vari_demo-1.0.0.dist-info/METADATA")).unwrap();
    assert!(!metadata.contains("variant_namespaces"), "{metadata}");
    assert!(metadata.contains("vari-demo-cuda-runtime"), "{metadata}");
}

#[test]
fn offline_from_a_wheelhouse_with_the_index_gone() {
    let dir = tempfile::tempdir().unwrap();
    let mut fleet = Fleet::new(dir.path());
    fleet.index = None; // the server stops
    let scratch = dir.path().join("a100");
    let venv = scratch.join("venv");
    bare_venv(&venv);
    // Offline without a wheelhouse: the first file that would need the network is named.
    run(sync(&scratch, &fleet.lock, &venv, fleet.profile("a100")).arg("--offline"))
        .expect_one_error(&["offline: it would be fetched from http://127.0.0.1:"]);
    assert_eq!(listed(&venv), []);
    let synced = run(sync(&scratch, &fleet.lock, &venv, fleet.profile("a100"))
        .arg("--offline")
        .arg("--find-links")
        .arg(&fleet.upstream))
    .expect_code(0);
    assert_eq!(listed(&venv), fleet::installed("a100"));
    // Fetching draws a bar on a terminal only: nothing of it on a pipe.
    assert!(!synced.stderr.contains("fetching "), "{}", synced.stderr);
}

#[test]
fn a_tampered_wheel_is_refused_and_nothing_is_installed() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = Fleet::new(dir.path());
    // The index now serves other bytes under the locked name (same size: the hash tells).
    let served = fleet
        .upstream
        .join("vari_demo-1.0.0-py3-none-any-cu128.whl");
    let mut bytes = std::fs::read(&served).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&served, &bytes).unwrap();
    let scratch = dir.path().join("a100");
    let venv = scratch.join("venv");
    bare_venv(&venv);
    run(&mut sync(
        &scratch,
        &fleet.lock,
        &venv,
        fleet.profile("a100"),
    ))
    .expect_one_error(&[
        "vari_demo-1.0.0-py3-none-any-cu128.whl (http://127.0.0.1:",
        "/files/vari_demo-1.0.0-py3-none-any-cu128.whl): sha256 is ",
        ", the lock says ",
        "nothing was installed",
    ]);
    assert_eq!(listed(&venv), []);
    // A file longer than the lock says is cut off at the lock's size.
    bytes.extend_from_slice(b"more");
    std::fs::write(&served, &bytes).unwrap();
    run(&mut sync(
        &scratch,
        &fleet.lock,
        &venv,
        fleet.profile("a100"),
    ))
    .expect_one_error(&["larger than the ", " bytes the lock says"]);
    assert_eq!(listed(&venv), []);
    // A machine whose files are intact is not held up by it.
    run(&mut sync(
        &scratch,
        &fleet.lock,
        &venv,
        fleet.profile("cpu"),
    ))
    .expect_code(0);
    assert_eq!(listed(&venv), fleet::installed("cpu"));
}

/// Issue 33, item 11: a locked wheel with two `.dist-info` directories (the lock's hash is its
/// own) is refused as it arrives, with the message every reader gives and where it came from,
/// and nothing is installed or kept in the store. Before, its matching hash let it into the
/// store, and a later read refused the store's copy (which stayed there).
#[test]
fn a_locked_wheel_with_two_dist_info_directories_is_refused_before_installing() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = Fleet::new(dir.path());
    let two = "idnalike-3.0-py3-none-any.whl";
    vari_test_support::wheels::add_second_dist_info(&fleet.upstream.join(two), None);
    let files = format!("{}/files/", fleet.index.as_ref().unwrap().server.base());
    let lock = fleet_lock(&fleet.upstream, &files);
    std::fs::write(&fleet.lock, vari_lock::write_lock(&lock).unwrap()).unwrap();
    let scratch = dir.path().join("cpu");
    let venv = scratch.join("venv");
    bare_venv(&venv);
    for _ in 0..2 {
        run(&mut sync(
            &scratch,
            &fleet.lock,
            &venv,
            fleet.profile("cpu"),
        ))
        .expect_one_error(&[
            &format!("{two} (http://127.0.0.1:"),
            "has more than one `.dist-info` directory (aaa-1.0.dist-info, idnalike-3.0.dist-info)",
            "nothing was installed",
        ]);
        assert_eq!(listed(&venv), []);
    }
    // `vari install -r` installs a lock the same way: the same refusal.
    let mut install = vari();
    install
        .env("VARI_CACHE_DIR", scratch.join("cache"))
        .env("UV_CACHE_DIR", scratch.join("uv-cache"))
        .env("UV_NO_CONFIG", "1")
        .args(["install", "-r"])
        .arg(&fleet.lock)
        .arg("--python")
        .arg(&venv)
        .arg("--profile")
        .arg(fleet.profile("cpu"))
        .arg("--installer")
        .arg(uv());
    run(&mut install).expect_one_error(&[
        &format!("{two} (http://127.0.0.1:"),
        "has more than one `.dist-info` directory (aaa-1.0.dist-info, idnalike-3.0.dist-info)",
    ]);
    assert_eq!(listed(&venv), []);
    let kept = files_and_times(&scratch.join("cache"));
    assert!(
        !kept.iter().any(|(path, _)| path.ends_with(two)),
        "{kept:?}"
    );
}

/// Rewrites one byte of `path` in place (same inode, same size), then puts its modification
/// time back, as `touch -r` would: only its change time tells.
pub(crate) fn tamper_in_place(path: &Path) {
    use std::io::{Seek, SeekFrom, Write};
    let before = std::fs::metadata(path).unwrap();
    let mut bytes = std::fs::read(path).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    let mut out = std::fs::File::options().write(true).open(path).unwrap();
    out.seek(SeekFrom::Start(middle as u64)).unwrap();
    out.write_all(&bytes[middle..=middle]).unwrap();
    out.set_modified(before.modified().unwrap()).unwrap();
    drop(out);
    let after = std::fs::metadata(path).unwrap();
    assert_eq!(after.len(), before.len());
    assert_eq!(after.modified().unwrap(), before.modified().unwrap());
    #[cfg(unix)]
    assert_eq!(
        std::os::unix::fs::MetadataExt::ino(&after),
        std::os::unix::fs::MetadataExt::ino(&before)
    );
}

/// Whether the store's record of `file` vouches for it without hashing (`settled`).
fn settled(file: &Path) -> bool {
    let record = std::fs::read(format!("{}.record.json", file.display())).unwrap();
    serde_json::from_slice::<serde_json::Value>(&record).unwrap()["settled"] == true
}

#[test]
fn a_store_file_changed_in_place_with_its_size_and_time_kept_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = Fleet::new(dir.path());
    let scratch = dir.path().join("a100");
    let venv = scratch.join("venv");
    let fresh_sync = |extra: &[&str]| {
        let _ = std::fs::remove_dir_all(&venv);
        bare_venv(&venv);
        run(sync(&scratch, &fleet.lock, &venv, fleet.profile("a100")).args(extra))
    };
    // Fetched, then hashed again on the next use: from then on its record vouches for it.
    fresh_sync(&[]).expect_code(0);
    fresh_sync(&[]).expect_code(0);
    let locked = "vari_demo-1.0.0-py3-none-any-cu128.whl";
    let sha256 =
        vari_test_support::wheels::sha256_hex(&std::fs::read(fleet.upstream.join(locked)).unwrap());
    let entry = scratch.join("cache/locked").join(&sha256);
    let original = entry.join("vari_demo-1.0.0-py3-none-any.whl");
    assert!(settled(&original), "the fast path is what is tested");
    // What the installer got: the copy with the variant markers evaluated, recorded too.
    let rewritten = std::fs::read_dir(&entry)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.is_dir())
        .unwrap()
        .join("vari_demo-1.0.0-py3-none-any.whl");
    let rewritten_bytes = std::fs::read(&rewritten).unwrap();
    assert!(settled(&rewritten));

    tamper_in_place(&original);
    // Offline: the store's copy is hashed, refused, and cannot be fetched again.
    fresh_sync(&["--offline"]).expect_one_error(&[
        &format!("{locked}: the store's copy {}", original.display()),
        "does not match the lock (sha256 is ",
        "offline: it would be fetched from http://127.0.0.1:",
    ]);
    assert_eq!(listed(&venv), [], "nothing installed");
    // Online: fetched again, the store's copy is the lock's again.
    fresh_sync(&[]).expect_code(0);
    assert_eq!(listed(&venv), fleet::installed("a100"));
    assert_eq!(
        vari_test_support::wheels::sha256_hex(&std::fs::read(&original).unwrap()),
        sha256
    );

    // The rewritten copy changed the same way is made again from the checked original.
    tamper_in_place(&rewritten);
    fresh_sync(&["--offline"]).expect_code(0);
    assert_eq!(listed(&venv), fleet::installed("a100"));
    assert_eq!(std::fs::read(&rewritten).unwrap(), rewritten_bytes);
}

/// Every file under `dir` with its modification time, sorted.
fn files_and_times(dir: &Path) -> Vec<(PathBuf, std::time::SystemTime)> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            match meta.is_dir() {
                true => stack.push(path),
                false => found.push((path, meta.modified().unwrap())),
            }
        }
    }
    found.sort();
    found
}

#[test]
fn the_installer_gets_the_same_files_on_every_run_and_its_cache_does_not_grow() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = Fleet::new(dir.path());
    let scratch = dir.path().join("a100");
    let venv = scratch.join("venv");
    let fresh_sync = || {
        let _ = std::fs::remove_dir_all(&venv);
        bare_venv(&venv);
        run(&mut sync(
            &scratch,
            &fleet.lock,
            &venv,
            fleet.profile("a100"),
        ))
        .expect_code(0);
    };
    fresh_sync();
    let wheels = |all: Vec<(PathBuf, std::time::SystemTime)>| -> Vec<_> {
        all.into_iter()
            .filter(|(p, _)| p.extension().is_some_and(|e| e == "whl"))
            .collect()
    };
    let store = wheels(files_and_times(&scratch.join("cache/locked")));
    let uv_cache = files_and_times(&scratch.join("uv-cache")).len();
    // Hashed again (its records written), then vouched for by them.
    fresh_sync();
    fresh_sync();
    assert_eq!(
        wheels(files_and_times(&scratch.join("cache/locked"))),
        store,
        "the same paths, never rewritten"
    );
    assert_eq!(
        files_and_times(&scratch.join("uv-cache")).len(),
        uv_cache,
        "uv unpacked nothing again"
    );
    assert_eq!(listed(&venv), fleet::installed("a100"));
}

#[test]
fn what_the_lock_does_not_list_is_removed_unless_inexact() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = Fleet::new(dir.path());
    let scratch = dir.path().join("cpu");
    let venv = scratch.join("venv");
    bare_venv(&venv);
    let profile = fleet.profile("cpu");
    run(sync(&scratch, &fleet.lock, &venv, profile).args(["--extra", "socks"])).expect_code(0);
    let mut with_socks = fleet::installed("cpu");
    with_socks.push(("sockslike".to_owned(), None));
    with_socks.sort();
    assert_eq!(listed(&venv), with_socks);
    // `install -r` and `--inexact` keep it.
    let mut install = vari();
    install
        .env("VARI_CACHE_DIR", scratch.join("cache"))
        .env("UV_CACHE_DIR", scratch.join("uv-cache"))
        .env("UV_NO_CONFIG", "1")
        .arg("install")
        .arg("-r")
        .arg(&fleet.lock)
        .arg("--python")
        .arg(&venv)
        .arg("--profile")
        .arg(profile)
        .arg("--installer")
        .arg(uv());
    run(&mut install).expect_code(0);
    run(sync(&scratch, &fleet.lock, &venv, profile).arg("--inexact")).expect_code(0);
    assert_eq!(listed(&venv), with_socks);
    let dry = run(sync(&scratch, &fleet.lock, &venv, profile).arg("--dry-run")).expect_code(0);
    assert!(
        dry.stdout
            .contains("would remove sockslike 1.0: the lock does not list it"),
        "{}",
        dry.stdout
    );
    assert_eq!(listed(&venv), with_socks);
    let json = run(sync(&scratch, &fleet.lock, &venv, profile).args(["--dry-run", "--json"]))
        .expect_code(0)
        .json();
    crate::common::assert_json_schema("sync", &json);
    assert_eq!(
        json["removed"],
        serde_json::json!([{"name": "sockslike", "version": "1.0"}])
    );
    let demo = json["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "vari-demo")
        .unwrap();
    assert_eq!(demo["label"], "null");
    assert_eq!(demo["action"], "unchanged");
    assert_eq!(demo["filename"], "vari_demo-1.0.0-py3-none-any-null.whl");
    let removed = run(&mut sync(&scratch, &fleet.lock, &venv, profile)).expect_code(0);
    assert!(
        removed.stdout.contains("removed sockslike 1.0"),
        "{}",
        removed.stdout
    );
    assert_eq!(listed(&venv), fleet::installed("cpu"));
}

#[test]
fn a_machine_no_locked_variant_serves_is_refused_with_the_select_explanation() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = Fleet::new(dir.path());
    // Only the CUDA builds of vari-demo are locked.
    let text = std::fs::read_to_string(&fleet.lock).unwrap();
    let mut lock = vari_lock::read_lock(&text).unwrap();
    let demo = lock
        .packages
        .iter_mut()
        .find(|p| p.name == "vari-demo")
        .unwrap();
    demo.wheels
        .retain(|w| w.url.as_deref().unwrap().contains("-cu1"));
    let cuda_only = dir.path().join("pylock.cuda.toml");
    std::fs::write(&cuda_only, vari_lock::write_lock(&lock).unwrap()).unwrap();
    let scratch = dir.path().join("cpu");
    let venv = scratch.join("venv");
    bare_venv(&venv);
    run(&mut sync(&scratch, &cuda_only, &venv, fleet.profile("cpu"))).expect_one_error(&[
        "pylock.cuda.toml: vari-demo 1.0.0 has no build for facts ",
        "builds for NVIDIA GPUs (cu126, cu128, cu130), which facts ",
    ]);
    assert_eq!(listed(&venv), []);
}

#[test]
fn pip_installs_the_same_files() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = Fleet::new(dir.path());
    let scratch = dir.path().join("a100");
    let venv = scratch.join("venv");
    vari_test_support::venv::run_ok(Command::new("python3").args(["-m", "venv"]).arg(&venv));
    let keep = |listed: Vec<(String, Option<String>)>| -> Vec<(String, Option<String>)> {
        listed
            .into_iter()
            .filter(|(n, _)| !vari_install::sync::PROTECTED.contains(&n.as_str()))
            .collect()
    };
    let pip = Path::new("pip");
    run(&mut sync_with(
        &scratch,
        &fleet.lock,
        &venv,
        fleet.profile("a100"),
        pip,
    ))
    .expect_code(0);
    assert_eq!(keep(listed(&venv)), fleet::installed("a100"));
    // The same environment moved to another class: the CUDA runtime goes, pip stays.
    run(&mut sync_with(
        &scratch,
        &fleet.lock,
        &venv,
        fleet.profile("mi300"),
        pip,
    ))
    .expect_code(0);
    let now = listed(&venv);
    assert!(now.iter().any(|(n, _)| n == "pip"), "{now:?}");
    assert_eq!(keep(now), fleet::installed("mi300"));
}

/// A lock that relabels the CUDA build (its `variants-json` gives `cu128` the properties of an
/// x86-64-v3 build, and lists neither the null variant nor the plain wheel) would get it chosen
/// on a CPU machine:
/// the wheel's own variant.json, hash-checked with it, decides, and the disagreement is one
/// error naming both. Nothing is installed.
#[test]
fn a_lock_that_relabels_a_cuda_build_is_refused_on_a_cpu_machine() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = Fleet::new(dir.path());
    let mut lock = vari_lock::read_lock(&std::fs::read_to_string(&fleet.lock).unwrap()).unwrap();
    let demo = lock
        .packages
        .iter_mut()
        .find(|p| p.name == "vari-demo")
        .unwrap();
    demo.wheels.retain(|w| {
        w.wheel_filename()
            .and_then(|f| f.label)
            .is_some_and(|l| !l.is_null())
    });
    // cu128 relabelled as an x86-64-v3 build, which the CPU machine can use.
    let fake = vari_core::metadata::read_json(
        r#"{"default-priorities": {"namespace": ["nvidia", "amd", "intel", "x86_64"]},
            "variants": {"cu128": {"x86_64": {"level": ["v3"]}}}}"#,
        vari_core::metadata::SourceKind::IndexFile,
    )
    .unwrap();
    let meta = demo.variants_json.as_mut().unwrap();
    meta.variants.retain(|label, _| !label.is_null());
    meta.priorities = fake.priorities;
    meta.variants.extend(fake.variants);
    std::fs::write(&fleet.lock, vari_lock::write_lock(&lock).unwrap()).unwrap();
    let scratch = dir.path().join("cpu");
    let venv = scratch.join("venv");
    bare_venv(&venv);
    run(&mut sync(
        &scratch,
        &fleet.lock,
        &venv,
        fleet.profile("cpu"),
    ))
    .expect_one_error(&[
        "vari_demo-1.0.0-py3-none-any-cu128.whl: the lock says variant cu128 has x86_64 :: level \
         :: v3",
        "the wheel's own variant.json says nvidia :: cuda_version_lower_bound :: 12.8",
        "nothing was installed",
    ]);
    assert_eq!(listed(&venv), []);
}

/// One environment, one writer: a sync started while another run holds the environment's
/// lock says so on stderr, installs nothing, and proceeds once the lock is released. (The
/// test holds the lock itself, so nothing depends on which of two syncs comes first.)
#[test]
fn a_sync_waits_for_the_run_that_holds_the_environment_with_a_note() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let fleet = Fleet::new(dir.path());
    let scratch = dir.path().join("a100");
    let venv = scratch.join("venv");
    bare_venv(&venv);
    let lock_file = venv.join(vari_install::sync::ENVIRONMENT_LOCK);
    let held = vari_fs::lock::lock_exclusive(&lock_file, || panic!("free")).unwrap();
    let mut child = sync(&scratch, &fleet.lock, &venv, fleet.profile("a100"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut note = String::new();
    stderr.read_line(&mut note).unwrap();
    assert_eq!(
        note,
        format!(
            "note: blocking: waiting for the lock {} (another vari run is changing this \
             environment)\n",
            lock_file.display()
        )
    );
    // Waiting: nothing installed while the other run holds the environment.
    assert_eq!(child.try_wait().unwrap(), None);
    assert_eq!(listed(&venv), []);
    drop(held);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}: {rest}");
    assert_eq!(listed(&venv), fleet::installed("a100"));
}

/// A lock whose wheel `path` names a FIFO (through a committed link, as a repository can hold
/// one) or a device: `vari sync` and `vari install -r` refuse it at once, naming the file, and
/// install nothing. Before the input rule the FIFO's open waited for a writer forever: the
/// runs are watched, and one still running after two minutes is killed and fails the test.
#[cfg(target_os = "linux")]
#[test]
fn a_fifo_or_a_device_at_a_lock_path_is_refused_without_hanging() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = Fleet::new(dir.path());
    let wheels = dir.path().join("wheels");
    std::fs::create_dir_all(&wheels).unwrap();
    let fifo = dir.path().join("a-fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let text = std::fs::read_to_string(&fleet.lock).unwrap();
    for (target, what) in [
        (fifo.as_path(), "is a FIFO, not a regular file"),
        (
            Path::new("/dev/zero"),
            "is a character device, not a regular file",
        ),
    ] {
        let mut lock = vari_lock::read_lock(&text).unwrap();
        // Every wheel is a path: whichever the machine installs first meets the link.
        for package in &mut lock.packages {
            for wheel in &mut package.wheels {
                let name = wheel
                    .url
                    .take()
                    .unwrap()
                    .rsplit('/')
                    .next()
                    .unwrap()
                    .to_owned();
                let link = wheels.join(&name);
                let _ = std::fs::remove_file(&link);
                std::os::unix::fs::symlink(target, &link).unwrap();
                wheel.path = Some(format!("wheels/{name}"));
            }
        }
        let hostile = dir.path().join("pylock.toml");
        std::fs::write(&hostile, vari_lock::write_lock(&lock).unwrap()).unwrap();
        let scratch = dir.path().join("cpu");
        let venv = scratch.join("venv");
        if !venv.exists() {
            bare_venv(&venv);
        }
        let (synced, _) =
            crate::common::measured(&mut sync(&scratch, &hostile, &venv, fleet.profile("cpu")));
        synced.expect_one_error(&["wheels/", what]);
        let mut install = vari();
        install
            .env("VARI_CACHE_DIR", scratch.join("cache"))
            .env("UV_CACHE_DIR", scratch.join("uv-cache"))
            .env("UV_NO_CONFIG", "1")
            .args(["install", "-r"])
            .arg(&hostile)
            .arg("--python")
            .arg(&venv)
            .arg("--profile")
            .arg(fleet.profile("cpu"))
            .arg("--installer")
            .arg(uv());
        let (installed, _) = crate::common::measured(&mut install);
        installed.expect_one_error(&["wheels/", what]);
        assert_eq!(listed(&venv), []);
    }
}

/// Issue 32: a lock entry without a `size` is bounded by `max-unsized-file-bytes`
/// (`VARI_MAX_UNSIZED_FILE_BYTES`), not by a fixed 64 GiB, so one such entry cannot fill the
/// cache's volume: past the ceiling the download stops, one error line names the wheel and the
/// setting, and nothing is installed.
#[test]
fn a_locked_file_without_a_size_is_bounded_by_the_setting() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = Fleet::new(dir.path());
    let mut lock = vari_lock::read_lock(&std::fs::read_to_string(&fleet.lock).unwrap()).unwrap();
    for package in &mut lock.packages {
        for wheel in &mut package.wheels {
            wheel.size = None;
        }
    }
    let sizeless = dir.path().join("unsized").join("pylock.toml");
    std::fs::create_dir_all(sizeless.parent().unwrap()).unwrap();
    std::fs::write(&sizeless, vari_lock::write_lock(&lock).unwrap()).unwrap();
    let scratch = dir.path().join("cpu");
    let venv = scratch.join("venv");
    bare_venv(&venv);
    let refused = run(sync(&scratch, &sizeless, &venv, fleet.profile("cpu"))
        .env("VARI_MAX_UNSIZED_FILE_BYTES", "64"));
    refused.expect_one_error(&[
        ".whl (http://127.0.0.1",
        "larger than 64 bytes",
        "VARI_MAX_UNSIZED_FILE_BYTES",
    ]);
    assert_eq!(listed(&venv), []);
    // Under the default ceiling the same lock installs.
    run(&mut sync(&scratch, &sizeless, &venv, fleet.profile("cpu"))).expect_code(0);
    assert!(!listed(&venv).is_empty());
}

/// Whether `text` shows a byte count with its total (`12.5 KiB/40.1 KiB`), not only a rate
/// (`12.5 KiB/s`).
fn shows_a_total(text: &str) -> bool {
    text.as_bytes()
        .windows(3)
        .any(|w| w[0] == b'B' && w[1] == b'/' && w[2].is_ascii_digit())
}

/// Issue 33, item 4: fetching a lock's files shows the bytes done of the lock's sizes on a
/// terminal (before, a spinner without a number); through a pipe, with `--quiet` or `--json`,
/// nothing of it. Without sizes in the lock, the bytes received alone (never `X/0 B`).
#[test]
fn fetching_shows_the_bytes_of_the_locks_sizes_on_a_terminal_only() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = Fleet::new(dir.path());
    let fresh = |name: &str| {
        let scratch = dir.path().join(name);
        let venv = scratch.join("venv");
        bare_venv(&venv);
        (scratch, venv)
    };
    let (scratch, venv) = fresh("pipe");
    let piped = run(&mut sync(
        &scratch,
        &fleet.lock,
        &venv,
        fleet.profile("cpu"),
    ))
    .expect_code(0);
    assert!(
        !piped.stderr.contains("fetching") && !piped.stderr.contains('\u{1b}'),
        "{}",
        piped.stderr
    );

    let (scratch, venv) = fresh("terminal");
    let Some((shown, code)) =
        on_terminal(&sync(&scratch, &fleet.lock, &venv, fleet.profile("cpu")))
    else {
        return;
    };
    assert_eq!(code, 0, "{shown}");
    assert!(
        shown.contains("fetching ") && shows_a_total(&shown),
        "{shown}"
    );
    assert_eq!(listed(&venv), fleet::installed("cpu"));

    let (scratch, venv) = fresh("quiet");
    let (quiet, code) =
        on_terminal(sync(&scratch, &fleet.lock, &venv, fleet.profile("cpu")).arg("--quiet"))
            .unwrap();
    assert_eq!(code, 0, "{quiet}");
    assert!(!quiet.contains("fetching "), "{quiet}");
    let (scratch, venv) = fresh("json");
    let (json, code) =
        on_terminal(sync(&scratch, &fleet.lock, &venv, fleet.profile("cpu")).arg("--json"))
            .unwrap();
    assert_eq!(code, 0, "{json}");
    assert!(!json.contains("fetching "), "{json}");

    // A lock without sizes: the bytes received, no total.
    let mut lock = vari_lock::read_lock(&std::fs::read_to_string(&fleet.lock).unwrap()).unwrap();
    for package in &mut lock.packages {
        for wheel in &mut package.wheels {
            wheel.size = None;
        }
    }
    let sizeless = dir.path().join("no_sizes").join("pylock.toml");
    std::fs::create_dir_all(sizeless.parent().unwrap()).unwrap();
    std::fs::write(&sizeless, vari_lock::write_lock(&lock).unwrap()).unwrap();
    let (scratch, venv) = fresh("no_sizes-terminal");
    let (no_sizes, code) =
        on_terminal(&sync(&scratch, &sizeless, &venv, fleet.profile("cpu"))).unwrap();
    assert_eq!(code, 0, "{no_sizes}");
    assert!(no_sizes.contains("fetching "), "{no_sizes}");
    assert!(
        !shows_a_total(&no_sizes) && !no_sizes.contains("/0 B"),
        "{no_sizes}"
    );
}
