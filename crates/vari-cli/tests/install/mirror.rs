//! `vari mirror`: a fleet's lock mirrored from a local upstream built like the real indexes
//! (`vari_test_support::fleet`), then installed from with the upstream stopped; incremental
//! runs counted on the upstream's request log; an interrupted run; a file that does not match
//! its hash.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Stdio;

use vari_core::metadata::{read_json, SourceKind};
use vari_lock::{Artifact, Lock, Package, PackageInfo};
use vari_test_support::fleet;
use vari_test_support::index::TestIndex;
use vari_test_support::installers::{install_into_target, Installer};
use vari_test_support::paths::files_under;
use vari_test_support::site::{SiteOptions, StaticSite};
use vari_test_support::venv::{bare_venv, python, test_venv, uv};
use vari_test_support::wheels::sha256_hex;

use crate::common::{files_in, run, vari};
use crate::sync::{listed, sync, tamper_in_place};

/// The upstream served on 127.0.0.1, with the runtime that keeps it serving (dropping it stops
/// the upstream).
pub(super) struct Upstream {
    pub(super) server: TestIndex,
    pub(super) runtime: tokio::runtime::Runtime,
    pub(super) dir: PathBuf,
}

pub(super) fn upstream(dir: &Path) -> Upstream {
    let dir = fleet::upstream(&dir.join("upstream"));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let server = runtime.block_on(TestIndex::start(&dir));
    Upstream {
        server,
        runtime,
        dir,
    }
}

impl Upstream {
    /// The file names downloaded from `/files/` so far (each request once per name), sorted.
    pub(super) fn downloads(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .server
            .seen()
            .into_iter()
            .filter_map(|seen| seen.path.strip_prefix("/files/").map(str::to_owned))
            .map(|name| name.replace("%2B", "+"))
            .collect();
        names.sort();
        names
    }
}

/// One lock entry for `name==version` listing `files` of the upstream (with their SHA-256,
/// size and URL on the upstream).
fn entry(up: &Upstream, name: &str, version: &str, files: &[String]) -> Package {
    let wheels = files
        .iter()
        .map(|file| {
            let bytes = std::fs::read(up.dir.join(file)).unwrap();
            Artifact {
                name: Some(file.clone()),
                url: Some(format!("{}/files/{file}", up.server.base())),
                path: None,
                size: Some(bytes.len() as u64),
                upload_time: None,
                hashes: BTreeMap::from([("sha256".to_owned(), sha256_hex(&bytes))]),
            }
        })
        .collect();
    let variants_json = files.iter().any(|f| f.ends_with("-null.whl")).then(|| {
        let stem = files[0].split('-').next().unwrap();
        let text = std::fs::read_to_string(up.dir.join(format!("{stem}-{version}-variants.json")))
            .unwrap();
        read_json(&text, SourceKind::IndexFile).unwrap()
    });
    Package {
        name: name.to_owned(),
        version: Some(version.parse().unwrap()),
        marker: None,
        requires_python: None,
        dependencies: Vec::new(),
        index: Some(up.server.index_url()),
        sdist: None,
        wheels,
        variants_json,
        vari: None,
        other: BTreeMap::new(),
    }
}

/// The upstream's files whose names start with `prefix`, sorted.
fn upstream_files(up: &Upstream, prefix: &str) -> Vec<String> {
    files_in(&up.dir)
        .into_iter()
        .filter(|f| f.starts_with(prefix) && f.ends_with(".whl"))
        .collect()
}

/// The fleet's lock as `vari lock` makes it for `app-like`: every release's wheels listed,
/// the CUDA runtime reached only through `vari-demo`'s variants.
pub(super) fn fleet_lock(up: &Upstream) -> Lock {
    let mut demo = entry(up, "vari-demo", "1.0.0", &upstream_files(up, "vari_demo-"));
    demo.vari = Some(PackageInfo {
        variant_dependencies: vec![
            "vari-demo-cuda-runtime==1.0.0; \"nvidia\" in variant_namespaces".to_owned(),
        ],
        ..PackageInfo::default()
    });
    let mut runtime = entry(
        up,
        "vari-demo-cuda-runtime",
        "1.0.0",
        &upstream_files(up, "vari_demo_cuda_runtime-"),
    );
    runtime.vari = Some(PackageInfo {
        through_variants: true,
        ..PackageInfo::default()
    });
    let mut app = entry(up, "app-like", "1.0", &upstream_files(up, "app_like-"));
    let mut reqlike = entry(
        up,
        "reqlike",
        "1.1",
        &["reqlike-1.1-py3-none-any.whl".to_owned()],
    );
    let idna = entry(up, "idnalike", "3.0", &upstream_files(up, "idnalike-"));
    let numlike = entry(up, "numlike", "2.3.4", &upstream_files(up, "numlike-"));
    let dep = |name: &str| vari_lock::DependencyRef {
        name: name.to_owned(),
        version: None,
    };
    app.dependencies = vec![dep("numlike"), dep("reqlike"), dep("vari-demo")];
    reqlike.dependencies = vec![dep("idnalike")];
    Lock {
        lock_version: vari_lock::LOCK_VERSION.to_owned(),
        environments: Vec::new(),
        requires_python: None,
        extras: Vec::new(),
        dependency_groups: Vec::new(),
        default_groups: Vec::new(),
        created_by: "vari tests".to_owned(),
        packages: vec![app, idna, numlike, reqlike, demo, runtime],
        vari: None,
        other_tools: BTreeMap::new(),
    }
}

/// Writes `lock` as `dir/pylock.toml`.
pub(super) fn write_lock(dir: &Path, lock: &Lock) -> PathBuf {
    let path = dir.join("pylock.toml");
    std::fs::write(&path, vari_lock::write_lock(lock).unwrap()).unwrap();
    path
}

/// `vari mirror --lock LOCK --target NAME=PROFILE… -o SITE` for `classes`, with the test
/// venv's Python as the targets' Python.
pub(super) fn mirror_command(
    dir: &Path,
    lock: &Path,
    site: &Path,
    classes: &[&str],
) -> std::process::Command {
    let profiles = fleet::write_profiles(&dir.join("profiles"));
    let mut command = vari();
    command.arg("mirror").arg("--lock").arg(lock);
    for class in classes {
        let (_, path) = profiles.iter().find(|(name, _)| name == class).unwrap();
        command
            .arg("--target")
            .arg(format!("{class}={}", path.display()));
    }
    command.arg("-o").arg(site).env("VARI_PYTHON", python());
    command
}

/// The distribution files the site publishes (its `files/`, without `.metadata` and
/// `*-variants.json`).
fn published(site: &Path) -> BTreeSet<String> {
    files_in(&site.join("files"))
        .into_iter()
        .filter(|f| !f.ends_with(".metadata") && !f.ends_with("-variants.json"))
        .collect()
}

/// The labels a site's `*-variants.json` keeps.
fn kept_labels(site: &Path, file: &str) -> Vec<String> {
    let text = std::fs::read_to_string(site.join("files").join(file)).unwrap();
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    value["variants"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect()
}

pub(super) fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|n| (*n).to_owned()).collect()
}

/// What the cpu class needs (x86-64-v3 machine: demo's null variant, numlike's v3) with the
/// fallbacks, and the plain tree.
pub(super) const CPU_FILES: [&str; 8] = [
    "app_like-1.0-py3-none-any.whl",
    "idnalike-3.0-py3-none-any.whl",
    "numlike-2.3.4-py3-none-any-null.whl",
    "numlike-2.3.4-py3-none-any-x86_64_v3.whl",
    "numlike-2.3.4-py3-none-any.whl",
    "reqlike-1.1-py3-none-any.whl",
    "vari_demo-1.0.0-py3-none-any-null.whl",
    "vari_demo-1.0.0-py3-none-any.whl",
];

/// What the a100 class adds: demo's cu128 build and the CUDA runtime its variant asks for.
pub(super) const A100_EXTRA: [&str; 2] = [
    "vari_demo-1.0.0-py3-none-any-cu128.whl",
    "vari_demo_cuda_runtime-1.0.0-py3-none-any.whl",
];

fn validate(site: &Path) {
    run(vari().args(["index", "validate"]).arg(site)).expect_code(0);
}

#[test]
fn mirrors_two_classes_and_installers_choose_from_it_as_from_the_upstream() {
    let dir = tempfile::tempdir().unwrap();
    let up = upstream(dir.path());
    let lock = write_lock(dir.path(), &fleet_lock(&up));
    let site = dir.path().join("site");
    let first = run(&mut mirror_command(
        dir.path(),
        &lock,
        &site,
        &["cpu", "a100"],
    ))
    .expect_code(0);
    let mut expected = set(&CPU_FILES);
    expected.extend(set(&A100_EXTRA));
    assert_eq!(published(&site), expected);
    // 10 of the 16 files the lock lists for these releases.
    assert!(
        first.stdout.starts_with("mirrored 10 files (")
            && first
                .stdout
                .contains(" for 2 targets; every variant of these releases would be 16 files (")
            && first.stdout.contains("saved 6 files, "),
        "{}",
        first.stdout
    );
    assert_eq!(
        kept_labels(&site, "vari_demo-1.0.0-variants.json"),
        ["cu128", "null"]
    );
    assert_eq!(
        kept_labels(&site, "numlike-2.3.4-variants.json"),
        ["null", "x86_64_v3"]
    );
    validate(&site);
    // Each class's own index lists its files only, linked in the site's one `files/`.
    let class_page = |class: &str, project: &str| {
        std::fs::read_to_string(site.join(format!("t/{class}/simple/{project}/index.html")))
            .unwrap()
    };
    let cpu_demo = class_page("cpu", "vari-demo");
    assert!(
        cpu_demo.contains("../../../../files/vari_demo-1.0.0-py3-none-any-null.whl")
            && !cpu_demo.contains("cu128"),
        "{cpu_demo}"
    );
    assert!(!site.join("t/cpu/simple/vari-demo-cuda-runtime").exists());
    assert!(class_page("a100", "vari-demo").contains("-cu128.whl"));
    assert!(class_page("a100", "vari-demo-cuda-runtime").contains("vari_demo_cuda_runtime-"));
    // Each class's page links its own `*-variants.json`, listing only the labels it carries.
    assert_eq!(
        kept_labels(&site.join("t/cpu"), "vari_demo-1.0.0-variants.json"),
        ["null"]
    );
    assert!(
        kept_labels(&site.join("t/a100"), "vari_demo-1.0.0-variants.json")
            .contains(&"cu128".to_owned())
    );
    assert!(cpu_demo.contains("href=\"../../files/vari_demo-1.0.0-variants.json#sha256="));

    // The upstream stops; everything below reads the mirror only.
    drop(up.runtime);
    let host = StaticSite::serve(&site, SiteOptions::default());
    let mirror = format!("{}/simple/", host.base);
    let profiles = fleet::write_profiles(&dir.path().join("profiles"));
    for (class, profile) in profiles.iter().filter(|(c, _)| c == "cpu" || c == "a100") {
        let (demo_label, numlike_label, _) = fleet::expected(class);
        // vari itself chooses from the mirror as from the upstream.
        let chosen = run(vari()
            .args([
                "select",
                "--json",
                "vari-demo",
                "numlike",
                "--index-url",
                &mirror,
            ])
            .arg("--profile")
            .arg(profile)
            .env("VARI_PYTHON", python()))
        .expect_code(0)
        .json();
        let labels: Vec<&str> = chosen["selections"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["label"].as_str().unwrap_or("-"))
            .collect();
        assert_eq!(labels, [demo_label, numlike_label], "{class}: {chosen}");
        // pip and uv through `vari install` install the class's variants, and the CUDA
        // runtime only where the variant asks for it.
        for installer in ["pip", "uv"] {
            let venv = dir.path().join(format!("venv-{class}-{installer}"));
            assert_eq!(
                install_from(&mirror, installer, profile, &venv),
                fleet::installed(class),
                "{class} {installer}"
            );
        }
    }
    // Plain pip and uv, which know no variants, install the plain wheels, as from the upstream
    // (from the site's index, and from a class's own).
    for installer in [Installer::NewestPip, Installer::Uv] {
        assert_plain_install(installer, &mirror);
    }
    assert_plain_install(Installer::Uv, &format!("{}/t/a100/simple/", host.base));

    // `vari index validate` checks each class's index too, and names the class at fault.
    std::fs::write(site.join("t/cpu/files/vari_demo-1.0.0-variants.json"), "{}").unwrap();
    let failed = run(vari().args(["index", "validate"]).arg(&site)).expect_code(1);
    assert!(
        failed.stderr.contains("vari_demo-1.0.0-variants.json: ")
            && failed.stderr.contains("(linked by class cpu's index)")
            && !failed.stderr.contains("class a100"),
        "{}",
        failed.stderr
    );
}

#[test]
fn a_class_added_later_downloads_only_its_new_files_and_one_dropped_is_removed() {
    let dir = tempfile::tempdir().unwrap();
    let up = upstream(dir.path());
    let lock = write_lock(dir.path(), &fleet_lock(&up));
    let site = dir.path().join("site");
    run(&mut mirror_command(dir.path(), &lock, &site, &["cpu"])).expect_code(0);
    assert_eq!(up.downloads(), CPU_FILES);
    assert_eq!(published(&site), set(&CPU_FILES));

    up.server.clear_seen();
    let again = run(&mut mirror_command(
        dir.path(),
        &lock,
        &site,
        &["cpu", "a100"],
    ))
    .expect_code(0);
    assert_eq!(up.downloads(), A100_EXTRA, "only the new class's files");
    assert!(
        again.stdout.contains("downloaded 2 file(s)"),
        "{}",
        again.stdout
    );

    up.server.clear_seen();
    let unchanged = run(&mut mirror_command(
        dir.path(),
        &lock,
        &site,
        &["cpu", "a100"],
    ))
    .expect_code(0);
    assert!(
        up.downloads().is_empty(),
        "nothing changed, nothing fetched"
    );
    assert!(
        unchanged
            .stdout
            .contains("downloaded 0 file(s) (0 B); published 0 new or changed site file(s)"),
        "{}",
        unchanged.stdout
    );

    // --keep keeps the a100 files published when the class is dropped; without it they go.
    let kept = run(mirror_command(dir.path(), &lock, &site, &["cpu"]).arg("--keep")).expect_code(0);
    assert!(kept.stdout.contains("kept 2 file(s)"), "{}", kept.stdout);
    assert_eq!(published(&site).len(), CPU_FILES.len() + A100_EXTRA.len());
    let dropped = run(&mut mirror_command(dir.path(), &lock, &site, &["cpu"])).expect_code(0);
    assert!(
        dropped.stdout.contains("removed 2 file(s)"),
        "{}",
        dropped.stdout
    );
    assert_eq!(published(&site), set(&CPU_FILES));
    assert_eq!(
        kept_labels(&site, "vari_demo-1.0.0-variants.json"),
        ["null"]
    );
    let page = std::fs::read_to_string(site.join("simple/vari-demo/index.html")).unwrap();
    assert!(!page.contains("cu128"), "{page}");
    assert!(!site.join("simple/vari-demo-cuda-runtime").exists());
    validate(&site);
}

#[test]
fn an_interrupted_run_leaves_a_site_that_validates() {
    let dir = tempfile::tempdir().unwrap();
    let up = upstream(dir.path());
    let lock = write_lock(dir.path(), &fleet_lock(&up));
    let site = dir.path().join("site");
    run(&mut mirror_command(dir.path(), &lock, &site, &["cpu"])).expect_code(0);
    let before = std::fs::read(site.join("simple/vari-demo/index.html")).unwrap();

    // The upstream stops answering: the run is killed while its downloads are under way.
    up.server.clear_seen();
    up.server.set(|knobs| knobs.hang = true);
    let mut child = mirror_command(dir.path(), &lock, &site, &["cpu", "a100"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while up.downloads().is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the mirror never asked for a file"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    validate(&site);
    assert_eq!(
        std::fs::read(site.join("simple/vari-demo/index.html")).unwrap(),
        before,
        "the pages are the last complete run's"
    );

    // The next run completes the job.
    up.server.set(|knobs| knobs.hang = false);
    run(&mut mirror_command(
        dir.path(),
        &lock,
        &site,
        &["cpu", "a100"],
    ))
    .expect_code(0);
    assert!(published(&site).contains(A100_EXTRA[0]));
    validate(&site);
}

#[test]
fn a_store_file_changed_in_place_with_its_size_and_time_kept_is_downloaded_again() {
    let dir = tempfile::tempdir().unwrap();
    let up = upstream(dir.path());
    let lock = write_lock(dir.path(), &fleet_lock(&up));
    let site = dir.path().join("site");
    // Downloaded, then trusted by the store's state on the next run.
    run(&mut mirror_command(dir.path(), &lock, &site, &["cpu"])).expect_code(0);
    run(&mut mirror_command(dir.path(), &lock, &site, &["cpu"])).expect_code(0);
    let name = CPU_FILES[0];
    let stored = site.join(".vari-mirror/files").join(name);
    let state: serde_json::Value =
        serde_json::from_slice(&std::fs::read(site.join(".vari-mirror/state.json")).unwrap())
            .unwrap();
    assert_eq!(
        state["files"][name]["settled"], true,
        "the fast path is what is tested"
    );
    #[cfg(unix)]
    {
        // And it vouches for the file as it is (a re-run links nothing again).
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(&stored).unwrap();
        let ctime_ns = meta.ctime() * 1_000_000_000 + meta.ctime_nsec();
        assert_eq!(state["files"][name]["fingerprint"]["ctime_ns"], ctime_ns);
    }

    tamper_in_place(&stored);
    up.server.clear_seen();
    let again = run(&mut mirror_command(dir.path(), &lock, &site, &["cpu"])).expect_code(0);
    assert_eq!(up.downloads(), [name], "{}", again.stdout);
    let upstream_bytes = std::fs::read(up.dir.join(name)).unwrap();
    assert_eq!(std::fs::read(&stored).unwrap(), upstream_bytes);
    assert_eq!(
        std::fs::read(site.join("files").join(name)).unwrap(),
        upstream_bytes
    );
    validate(&site);
}

#[test]
fn a_file_that_does_not_match_its_hash_is_refused_and_nothing_is_published() {
    let dir = tempfile::tempdir().unwrap();
    let up = upstream(dir.path());
    let lock = write_lock(dir.path(), &fleet_lock(&up));
    let site = dir.path().join("site");
    run(&mut mirror_command(dir.path(), &lock, &site, &["cpu"])).expect_code(0);

    // The upstream now serves other bytes under the name the lock pins for a100.
    let tampered = A100_EXTRA[0];
    std::fs::write(up.dir.join(tampered), b"not the wheel the lock pins").unwrap();
    let refused = run(&mut mirror_command(
        dir.path(),
        &lock,
        &site,
        &["cpu", "a100"],
    ))
    .expect_code(1);
    let url = format!("{}/files/{tampered}", up.server.base());
    let lines: Vec<&str> = refused
        .stderr
        .lines()
        .filter(|l| l.starts_with("error: "))
        .collect();
    assert!(
        lines[0].starts_with(&format!(
            "error: {tampered} ({url}): refused: its sha256 is "
        )),
        "{}",
        refused.stderr
    );
    assert!(
        lines.iter().all(|l| !l.contains(A100_EXTRA[1])),
        "{}",
        refused.stderr
    );
    assert_eq!(
        published(&site),
        set(&CPU_FILES),
        "nothing of this run is published"
    );
    assert!(!site.join(".vari-mirror/files").join(tampered).exists());
    validate(&site);
}

#[test]
fn without_target_flags_the_lock_s_own_targets_are_mirrored() {
    let dir = tempfile::tempdir().unwrap();
    let up = upstream(dir.path());
    let mut lock = fleet_lock(&up);
    let site = dir.path().join("site");
    let lock_path = write_lock(dir.path(), &lock);
    let bare = |lock_path: &Path| {
        let mut command = vari();
        command
            .arg("mirror")
            .arg("--lock")
            .arg(lock_path)
            .arg("-o")
            .arg(&site)
            .env("VARI_PYTHON", python());
        command
    };
    run(&mut bare(&lock_path)).expect_one_error(&["names no target profile", "--target"]);
    assert!(!site.exists(), "nothing is written");
    // The profiles the lock names are read relative to the lock.
    fleet::write_profiles(&dir.path().join("profiles"));
    lock.vari = Some(vari_lock::LockInfo {
        targets: vec![vari_lock::LockTarget {
            name: "cpu".to_owned(),
            profile: Some("profiles/cpu.toml".to_owned()),
            ..vari_lock::LockTarget::default()
        }],
        ..vari_lock::LockInfo::default()
    });
    let lock_path = write_lock(dir.path(), &lock);
    let mirrored = run(&mut bare(&lock_path)).expect_code(0);
    assert!(
        mirrored.stdout.contains(" for 1 target;"),
        "{}",
        mirrored.stdout
    );
    assert_eq!(published(&site), set(&CPU_FILES));

    // A profile the lock names outside its directory is not read: one line naming the key.
    let outside = dir.path().join("outside");
    fleet::write_profiles(&outside);
    let lock_dir = dir.path().join("locks");
    std::fs::create_dir_all(&lock_dir).unwrap();
    let absolute = outside.join("cpu.toml").display().to_string();
    for profile in ["../outside/cpu.toml", absolute.as_str()] {
        lock.vari = Some(vari_lock::LockInfo {
            targets: vec![vari_lock::LockTarget {
                name: "cpu".to_owned(),
                profile: Some(profile.to_owned()),
                ..vari_lock::LockTarget::default()
            }],
            ..vari_lock::LockInfo::default()
        });
        let lock_path = write_lock(&lock_dir, &lock);
        run(&mut bare(&lock_path)).expect_one_error(&[
            "tool.vari.targets.cpu.profile",
            "outside the lock's directory",
            "--target",
        ]);
    }
}

/// The test venv's bin directory (uv, python) before the system's: requirements are resolved
/// with the uv on PATH.
fn path_with_uv() -> String {
    format!("{}:/usr/bin:/bin", test_venv().join("bin").display())
}

/// `vari mirror ARGS… --index-url UPSTREAM --target NAME=PROFILE… -o SITE` in `dir`, uv on PATH:
/// the requirements in ARGS resolved for `classes`.
fn requirements_command(
    dir: &Path,
    up: &Upstream,
    site: &Path,
    classes: &[&str],
    args: &[&str],
) -> std::process::Command {
    let profiles = fleet::write_profiles(&dir.join("profiles"));
    let mut command = vari();
    command
        .current_dir(dir)
        .env("PATH", path_with_uv())
        .env("UV_CACHE_DIR", dir.join("uv-cache"))
        .env("VARI_PYTHON", python())
        .arg("mirror")
        .args(args)
        .args(["--index-url", &up.server.index_url()]);
    for class in classes {
        let (_, path) = profiles.iter().find(|(name, _)| name == class).unwrap();
        command
            .arg("--target")
            .arg(format!("{class}={}", path.display()));
    }
    command.arg("-o").arg(site);
    command
}

/// `vari install app-like` from `index` with `installer` (`pip` or `uv`) for `profile` into a
/// new environment at `venv_dir`; what `vari list` then says is installed (name, label).
fn install_from(
    index: &str,
    installer: &str,
    profile: &Path,
    venv_dir: &Path,
) -> Vec<(String, Option<String>)> {
    // pip installs into an environment that has it (the machine's bundled pip); uv into a
    // bare one.
    let (venv_python, installer_arg) = if installer == "pip" {
        let status = std::process::Command::new("python3")
            .args(["-m", "venv"])
            .arg(venv_dir)
            .status()
            .unwrap();
        assert!(status.success());
        (venv_dir.join("bin/python"), std::ffi::OsString::from("pip"))
    } else {
        (bare_venv(venv_dir), uv().into_os_string())
    };
    run(vari()
        .args(["install", "app-like", "--index-url", index, "--installer"])
        .arg(installer_arg)
        .arg("--python")
        .arg(&venv_python)
        .arg("--profile")
        .arg(profile))
    .expect_code(0);
    // pip's own packages are not the mirror's.
    listed(&venv_python)
        .into_iter()
        .filter(|(name, _)| name != "pip" && name != "setuptools")
        .collect()
}

#[test]
fn requirements_are_resolved_for_two_classes_and_each_installs_its_own_from_the_mirror() {
    let dir = tempfile::tempdir().unwrap();
    let up = upstream(dir.path());
    let site = dir.path().join("site");
    let lock = dir.path().join("mirrored.toml");
    let lock_arg = lock.to_str().unwrap();
    let mirrored = run(&mut requirements_command(
        dir.path(),
        &up,
        &site,
        &["cpu", "a100"],
        &["app-like", "--lock-output", lock_arg],
    ))
    .expect_code(0);
    let mut expected = set(&CPU_FILES);
    expected.extend(set(&A100_EXTRA));
    assert_eq!(published(&site), expected);
    // Against every variant the upstream has of these releases (the resolved lock lists only
    // those the two classes can use: 12 files).
    assert!(
        mirrored.stdout.starts_with("mirrored 10 files (")
            && mirrored
                .stdout
                .contains(" for 2 targets; every variant of these releases would be 16 files (")
            && mirrored.stdout.contains("saved 6 files, "),
        "{}",
        mirrored.stdout
    );
    assert_eq!(
        kept_labels(&site, "vari_demo-1.0.0-variants.json"),
        ["cu128", "null"]
    );
    validate(&site);

    // The upstream stops; everything below reads the mirror only.
    drop(up.runtime);
    let host = StaticSite::serve(&site, SiteOptions::default());
    let index = format!("{}/simple/", host.base);
    let profiles = fleet::write_profiles(&dir.path().join("profiles"));
    for (class, profile) in profiles.iter().filter(|(c, _)| c == "cpu" || c == "a100") {
        for installer in ["pip", "uv"] {
            let venv = dir.path().join(format!("venv-{class}-{installer}"));
            assert_eq!(
                install_from(&index, installer, profile, &venv),
                fleet::installed(class),
                "{class} {installer}"
            );
        }
        // The lock the mirror was made from, synced from the mirror's files alone.
        let scratch = dir.path().join(format!("sync-{class}"));
        let venv = scratch.join("venv");
        bare_venv(&venv);
        let mut command = sync(&scratch, &lock, &venv, profile);
        command
            .arg("--offline")
            .arg("--find-links")
            .arg(site.join("files"));
        run(&mut command).expect_code(0);
        assert_eq!(listed(&venv), fleet::installed(class), "{class} vari sync");
    }
}

#[test]
fn requirements_from_a_file_mirror_what_their_lock_from_vari_lock_mirrors() {
    let dir = tempfile::tempdir().unwrap();
    let up = upstream(dir.path());
    let profiles = fleet::write_profiles(&dir.path().join("profiles"));
    let profile = |class: &str| profiles.iter().find(|(n, _)| n == class).unwrap().1.clone();
    let requirements = dir.path().join("requirements.txt");
    std::fs::write(&requirements, "app-like\n").unwrap();
    let lock_command = |extra: &[&str]| {
        let mut command = vari();
        command
            .current_dir(dir.path())
            .env("PATH", path_with_uv())
            .env("UV_CACHE_DIR", dir.path().join("uv-cache"))
            .env("VARI_PYTHON", python())
            .args(["lock", "-r", requirements.to_str().unwrap()])
            .args(["--index-url", &up.server.index_url()])
            .arg("--target")
            .arg(profile("cpu"))
            .arg("--target")
            .arg(profile("a100"))
            .args(extra);
        command
    };
    run(&mut lock_command(&[])).expect_code(0);
    let from_lock = dir.path().join("site-from-lock");
    run(&mut mirror_command(
        dir.path(),
        &dir.path().join("pylock.toml"),
        &from_lock,
        &["cpu", "a100"],
    ))
    .expect_code(0);

    let from_requirements = dir.path().join("site-from-requirements");
    let written = dir.path().join("written.toml");
    run(&mut requirements_command(
        dir.path(),
        &up,
        &from_requirements,
        &["cpu", "a100"],
        &[
            "-r",
            requirements.to_str().unwrap(),
            "--lock-output",
            written.to_str().unwrap(),
        ],
    ))
    .expect_code(0);
    // The published site (its pages, metadata and files; not the store's own state).
    let site_files = |site: &Path| -> Vec<(String, Vec<u8>)> {
        files_under(site)
            .into_iter()
            .filter(|(name, _)| !name.starts_with('.'))
            .collect()
    };
    let (ours, theirs) = (site_files(&from_requirements), site_files(&from_lock));
    let names = |files: &[(String, Vec<u8>)]| -> Vec<String> {
        files.iter().map(|(name, _)| name.clone()).collect()
    };
    assert_eq!(names(&ours), names(&theirs));
    for ((name, bytes), (_, expected)) in ours.iter().zip(&theirs) {
        assert!(bytes == expected, "{name} differs");
    }
    // The lock it wrote is the one `vari lock` writes for the same inputs.
    assert_eq!(
        std::fs::read_to_string(&written).unwrap(),
        std::fs::read_to_string(dir.path().join("pylock.toml")).unwrap()
    );
    let check = run(&mut lock_command(&[
        "-o",
        written.to_str().unwrap(),
        "--check",
    ]));
    assert_eq!(check.code, 0, "{}", check.stderr);
}

#[test]
fn requirements_that_cannot_be_mirrored_are_one_error_and_leave_the_site_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let up = upstream(dir.path());
    let site = dir.path().join("site");
    let lock = dir.path().join("mirrored.toml");
    let lock_arg = lock.to_str().unwrap();
    run(&mut requirements_command(
        dir.path(),
        &up,
        &site,
        &["cpu"],
        &["app-like"],
    ))
    .expect_code(0);
    let before = files_under(&site);

    // No release of it: uv's reason, the target named, nothing mirrored or written.
    run(&mut requirements_command(
        dir.path(),
        &up,
        &site,
        &["cpu", "a100"],
        &["app-like", "no-such-project", "--lock-output", lock_arg],
    ))
    .expect_one_error(&["cannot resolve for target", "no-such-project"]);
    assert!(files_under(&site) == before, "the site changed");
    assert!(!lock.exists());
    // Targets that cannot agree on a version.
    let json = vari_test_support::wheels::variant_json(
        &["nvidia"],
        "cu128",
        &[("nvidia", "cuda_version_lower_bound", "12.8")],
    );
    vari_test_support::wheels::TestWheel::new("gpuonly-2.0-py3-none-any-cu128.whl")
        .variant_json(Some(&json))
        .write(&up.dir);
    vari_test_support::wheels::TestWheel::new("gpuonly-1.0-py3-none-any.whl").write(&up.dir);
    run(&mut requirements_command(
        dir.path(),
        &up,
        &site,
        &["a100", "cpu"],
        &["gpuonly"],
    ))
    .expect_one_error(&["targets disagree on gpuonly", "2.0 (a100)", "1.0 (cpu)"]);
    assert!(files_under(&site) == before, "the site changed");

    // Resolving needs uv; requirements need the classes to mirror for. A new destination is
    // not even created.
    let fresh = dir.path().join("fresh");
    let mut without_uv = requirements_command(dir.path(), &up, &fresh, &["cpu"], &["app-like"]);
    without_uv.env("PATH", "/nonexistent");
    let no_uv = run(&mut without_uv).expect_one_error(&["needs uv", "not on PATH"]);
    assert!(!no_uv.stderr.contains("--installer"), "{}", no_uv.stderr);
    run(&mut requirements_command(
        dir.path(),
        &up,
        &fresh,
        &[],
        &["app-like"],
    ))
    .expect_one_error(&["needs the machine classes", "--target"]);
    run(&mut requirements_command(
        dir.path(),
        &up,
        &fresh,
        &["cpu", "cpu"],
        &["app-like"],
    ))
    .expect_one_error(&["another target is already named `cpu`"]);
    assert!(!fresh.exists());
    // A lock and requirements at once is a usage error.
    let both = run(&mut requirements_command(
        dir.path(),
        &up,
        &fresh,
        &["cpu"],
        &["app-like", "--lock", lock_arg],
    ));
    assert_eq!(both.code, 2, "{}", both.stderr);
    assert!(!fresh.exists());
}

#[test]
fn a_project_is_mirrored_with_every_extra_and_dependency_group() {
    let dir = tempfile::tempdir().unwrap();
    let up = upstream(dir.path());
    let project = dir.path().join("project");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(
        project.join("pyproject.toml"),
        "[project]\nname = \"service\"\nversion = \"0.1\"\ndependencies = [\"reqlike\"]\n\n\
         [project.optional-dependencies]\nsocks = [\"reqlike[socks]\"]\n\n\
         [dependency-groups]\ndev = [\"numlike\"]\n",
    )
    .unwrap();
    let site = dir.path().join("site");
    run(&mut requirements_command(
        dir.path(),
        &up,
        &site,
        &["cpu"],
        &["--project", project.to_str().unwrap()],
    ))
    .expect_code(0);
    // Whatever extra or group a machine installs, the mirror has it.
    assert_eq!(
        published(&site),
        set(&[
            "idnalike-3.0-py3-none-any.whl",
            "numlike-2.3.4-py3-none-any-null.whl",
            "numlike-2.3.4-py3-none-any-x86_64_v3.whl",
            "numlike-2.3.4-py3-none-any.whl",
            "reqlike-1.1-py3-none-any.whl",
            "sockslike-1.0-py3-none-any.whl",
        ])
    );
    validate(&site);
}

/// `installer` without variant support installs app-like's plain wheels from `index`, as it
/// would from the upstream: no variant label on the demo release.
pub(super) fn assert_plain_install(installer: Installer, index: &str) {
    let installed = install_into_target(
        installer,
        Path::new(env!("CARGO_TARGET_TMPDIR")),
        index,
        &["app-like".to_owned()],
        None,
    );
    installed.assert_installed(&[
        "app_like-1.0",
        "idnalike-3.0",
        "numlike-2.3.4",
        "reqlike-1.1",
        "vari_demo-1.0.0",
    ]);
    assert_eq!(installed.label("vari_demo-1.0.0.dist-info"), None);
}

/// A class whose profile names no platform (its Python and platform come from the flags).
const NODE_PROFILE: &str = "schema = \"vari-facts/1\"\n";

/// `taglike`'s stand-in wheels, one per tag: CPython 3.11 and 3.12 on x86_64 and aarch64,
/// and one for 3.13 no target needs; `purelike`, which every target needs.
const TAGGED: [&str; 5] = [
    "taglike-1.0-cp311-cp311-manylinux_2_28_aarch64.whl",
    "taglike-1.0-cp311-cp311-manylinux_2_28_x86_64.whl",
    "taglike-1.0-cp312-cp312-manylinux_2_28_aarch64.whl",
    "taglike-1.0-cp312-cp312-manylinux_2_28_x86_64.whl",
    "taglike-1.0-cp313-cp313-manylinux_2_28_x86_64.whl",
];

/// Two Pythons by two platforms in one run: the mirror holds exactly the files each of the
/// four targets needs (not the 3.13 wheel), from requirements and again from the lock they
/// were written to (each of its targets with its own Python and platform), and the saved line
/// counts none of them as saved.
#[test]
fn two_pythons_by_two_platforms_are_mirrored_in_one_run() {
    use vari_test_support::wheels::TestWheel;
    let dir = tempfile::tempdir().unwrap();
    let upstream = dir.path().join("upstream");
    std::fs::create_dir(&upstream).unwrap();
    for name in TAGGED {
        TestWheel::new(name)
            .requires(&["purelike"])
            .write(&upstream);
    }
    TestWheel::new("purelike-1.0-py3-none-any.whl").write(&upstream);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let server = runtime.block_on(TestIndex::start(&upstream));
    let profile = dir.path().join("node.toml");
    std::fs::write(&profile, NODE_PROFILE).unwrap();
    let matrix = [
        "--python-version",
        "3.12",
        "--python-version",
        "3.11",
        "--python-platform",
        "x86_64-manylinux_2_28",
        "--python-platform",
        "aarch64-manylinux_2_28",
    ];
    let site = dir.path().join("site");
    let mirrored = run(vari()
        .current_dir(dir.path())
        .env("PATH", path_with_uv())
        .env("UV_CACHE_DIR", dir.path().join("uv-cache"))
        .args(["mirror", "taglike", "--index-url", &server.index_url()])
        .args(["--target", "node=node.toml"])
        .args(matrix)
        .args(["--lock-output", "fleet.toml", "-o"])
        .arg(&site))
    .expect_code(0);
    let mut needed: BTreeSet<String> = TAGGED[..4].iter().map(|n| (*n).to_owned()).collect();
    needed.insert("purelike-1.0-py3-none-any.whl".to_owned());
    assert_eq!(published(&site), needed);
    assert!(
        mirrored.stdout.starts_with("mirrored 5 files (")
            && mirrored.stdout.contains(" for 4 targets;"),
        "{}",
        mirrored.stdout
    );
    // Every file the targets' Pythons and platforms can install is one a target needs: nothing
    // is counted as saved (the 3.13 wheel is no target's, so not counted at all).
    assert!(
        mirrored.stdout.contains("would be 5 files (")
            && mirrored.stdout.contains(": saved 0 files, 0 B (0 %)"),
        "{}",
        mirrored.stdout
    );
    // The class's four targets share its one index, which lists what any of them installs.
    assert!(
        mirrored.stdout.contains("\n  node: t/node/simple/\n"),
        "{}",
        mirrored.stdout
    );
    let class_page =
        std::fs::read_to_string(site.join("t/node/simple/taglike/index.html")).unwrap();
    for name in TAGGED {
        assert_eq!(
            class_page.contains(name),
            name != TAGGED[4],
            "{name}: {class_page}"
        );
    }
    let lock =
        vari_lock::read_lock(&std::fs::read_to_string(dir.path().join("fleet.toml")).unwrap())
            .unwrap();
    let targets = &lock.vari.as_ref().unwrap().targets;
    assert_eq!(targets.len(), 4);
    assert!(targets
        .iter()
        .all(|t| t.profile.as_deref() == Some("node.toml")));

    // The lock, mirrored for its own targets: the same files, none counted as saved.
    let from_lock = dir.path().join("from-lock");
    let again = run(vari()
        .current_dir(dir.path())
        .args(["mirror", "--lock", "fleet.toml", "-o"])
        .arg(&from_lock))
    .expect_code(0);
    assert_eq!(published(&from_lock), needed);
    assert!(
        again.stdout.contains(" for 4 targets;") && again.stdout.contains(": saved 0 files, "),
        "{}",
        again.stdout
    );
    // The lock's own targets (`node-py3.12-x86_64-manylinux_2_28`…) are no class names: no
    // class index, only the site's.
    assert!(!from_lock.join("t").exists());
    // Python flags without classes would say nothing about whose they are.
    run(vari()
        .current_dir(dir.path())
        .args(["mirror", "--lock", "fleet.toml", "--python-version", "3.11"])
        .arg("-o")
        .arg(dir.path().join("unused")))
    .expect_one_error(&["need --target"]);
}

/// A local wheelhouse named on the command line is a source like any other: mirrored from
/// requirements (run from elsewhere), and from a lock naming its files by `path`; pip and uv
/// then install from the mirror alone.
#[test]
fn a_local_wheelhouse_is_mirrored_and_installed_from_offline() {
    let dir = tempfile::tempdir().unwrap();
    let wheelhouse = fleet::upstream(&dir.path().join("wheelhouse"));
    let profiles = fleet::write_profiles(&dir.path().join("profiles"));
    let cpu = profiles.iter().find(|(n, _)| n == "cpu").unwrap().1.clone();
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let site = dir.path().join("site");
    run(vari()
        .current_dir(&elsewhere)
        .env("PATH", path_with_uv())
        .env("UV_CACHE_DIR", dir.path().join("uv-cache"))
        .env("VARI_PYTHON", python())
        .args(["mirror", "app-like", "--find-links"])
        .arg(&wheelhouse)
        .arg("--target")
        .arg(format!("cpu={}", cpu.display()))
        .arg("-o")
        .arg(&site))
    .expect_code(0);
    assert_eq!(published(&site), set(&CPU_FILES));
    validate(&site);

    // A lock of the wheelhouse names its files by path; mirrored, they are read from there.
    run(vari()
        .current_dir(dir.path())
        .env("PATH", path_with_uv())
        .env("UV_CACHE_DIR", dir.path().join("uv-cache"))
        .env("VARI_PYTHON", python())
        .args(["lock", "app-like", "--find-links"])
        .arg(&wheelhouse)
        .arg("--target")
        .arg(&cpu))
    .expect_code(0);
    let from_lock = dir.path().join("site-from-lock");
    run(vari()
        .current_dir(&elsewhere)
        .env("VARI_PYTHON", python())
        .arg("mirror")
        .arg("--lock")
        .arg(dir.path().join("pylock.toml"))
        .arg("-o")
        .arg(&from_lock))
    .expect_code(0);
    assert_eq!(published(&from_lock), set(&CPU_FILES));

    // Nothing but the mirror: pip and uv install the cpu class's build from it.
    let host = StaticSite::serve(&site, SiteOptions::default());
    let index = format!("{}/simple/", host.base);
    for installer in ["pip", "uv"] {
        let venv = dir.path().join(format!("venv-{installer}"));
        assert_eq!(
            install_from(&index, installer, &cpu, &venv),
            fleet::installed("cpu"),
            "{installer}"
        );
    }
}

/// An index that lies about a file's size (its hash is right): the mirror fails naming the
/// file, its URL and both sizes, publishes nothing and writes no lock; before, it succeeded and
/// every node's `sync` from it then failed on the size the lock recorded.
#[test]
fn an_index_that_lies_about_a_size_fails_the_mirror() {
    let dir = tempfile::tempdir().unwrap();
    let up = upstream(dir.path());
    let lied = "idnalike-3.0-py3-none-any.whl";
    let real = std::fs::metadata(up.dir.join(lied)).unwrap().len();
    for declared in [real + 1000, real - 10] {
        up.server.attrs(
            lied,
            vari_test_support::index::FileAttrs {
                declared_size: Some(declared),
                ..Default::default()
            },
        );
        let site = dir.path().join(format!("site-{declared}"));
        let lock = dir.path().join(format!("mirrored-{declared}.toml"));
        let refused = run(&mut requirements_command(
            dir.path(),
            &up,
            &site,
            &["cpu"],
            &["app-like", "--lock-output", lock.to_str().unwrap()],
        ))
        .expect_code(1);
        let url = format!("{}/files/{lied}", up.server.base());
        assert!(
            refused
                .stderr
                .lines()
                .any(|l| l.starts_with(&format!("error: {lied} ({url}): "))
                    && l.contains(&format!("the index declares {declared}"))),
            "{}",
            refused.stderr
        );
        assert!(!site.join("files").exists() || published(&site).is_empty());
        assert!(!lock.exists());
    }
}
