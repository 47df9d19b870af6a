//! `vari mirror` over build families (issue 35): a family lock written by hand in the lock's
//! format (torch's `cu130`, `cu128` and CPU builds, each its own `torch` entry with the CUDA
//! libraries it brings in) over stand-in wheels served on 127.0.0.1, mirrored for a CPU class
//! and an A100 class. The site holds only the builds those classes install; then, the upstream
//! stopped, each class installs its build from the mirror alone: `vari sync --offline` from the
//! lock, and plain pip and plain uv from the class's own index `t/CLASS/simple/`.

use std::collections::BTreeSet;
use std::path::Path;

use vari_test_support::fleet;
use vari_test_support::index::TestIndex;
use vari_test_support::installers::{install_into_target, Installer};
use vari_test_support::site::{SiteOptions, StaticSite};
use vari_test_support::venv::bare_venv;
use vari_test_support::wheels::{sha256_hex, TestWheel};

use crate::common::{files_in, run, vari};
use crate::mirror::{mirror_command, set};
use crate::sync::sync;

/// One stand-in wheel: its file name, its requirements, and the build of the `torch` family
/// whose entries bring it in (`None`: every build needs it).
struct StandIn {
    file: &'static str,
    requires: &'static [&'static str],
    build: Option<&'static str>,
}

/// The upstream: three torch builds (as download.pytorch.org publishes them, one local version
/// per build), the CUDA 12 and 13 libraries of the two GPU builds, and a dependency of all.
const STAND_INS: [StandIn; 7] = [
    StandIn {
        file: "torch-2.9.0+cu130-py3-none-any.whl",
        requires: &["typelike>=4", "nvidia-cublas==13.0.0"],
        build: Some("cu130"),
    },
    StandIn {
        file: "nvidia_cublas-13.0.0-py3-none-any.whl",
        requires: &[],
        build: Some("cu130"),
    },
    StandIn {
        file: "torch-2.9.0+cu128-py3-none-any.whl",
        requires: &[
            "typelike>=4",
            "nvidia-cublas-cu12==12.8.4.1",
            "nvidia-cuda-runtime-cu12==12.8.90",
        ],
        build: Some("cu128"),
    },
    StandIn {
        file: "nvidia_cublas_cu12-12.8.4.1-py3-none-any.whl",
        requires: &[],
        build: Some("cu128"),
    },
    StandIn {
        file: "nvidia_cuda_runtime_cu12-12.8.90-py3-none-any.whl",
        requires: &[],
        build: Some("cu128"),
    },
    StandIn {
        file: "torch-2.9.0+cpu-py3-none-any.whl",
        requires: &["typelike>=4"],
        build: Some("cpu"),
    },
    StandIn {
        file: "typelike-4.15.0-py3-none-any.whl",
        requires: &[],
        build: None,
    },
];

/// The family as the lock records it: builds best first, the CPU build the null one.
const FAMILIES: &str = r#"
[tool.vari]

[[tool.vari.families]]
name = "torch"
group = "pytorch"

[[tool.vari.families.builds]]
name = "cu130"
distribution = "torch"
requires = ["nvidia :: cuda_version_lower_bound :: 13.0"]

[[tool.vari.families.builds]]
name = "cu128"
distribution = "torch"
requires = ["nvidia :: cuda_version_lower_bound :: 12.8"]

[[tool.vari.families.builds]]
name = "cpu"
distribution = "torch"
null = true
"#;

/// `name` and `version` of a wheel file name (the version with its local part).
fn name_version(file: &str) -> (String, String) {
    let mut parts = file.split('-');
    let name = parts.next().unwrap().replace('_', "-");
    (name, parts.next().unwrap().to_owned())
}

/// Writes the stand-in wheels into `dir` and the family lock naming them on `base` (their
/// URLs, sizes and SHA-256) as `lock_dir/pylock.toml`; returns the lock's path.
fn family_lock(dir: &Path, base: &str, lock_dir: &Path) -> std::path::PathBuf {
    family_lock_of(dir, base, lock_dir, &["cu130", "cu128", "cpu"])
}

/// [`family_lock`] holding only `builds` of the family (and their entries).
fn family_lock_of(dir: &Path, base: &str, lock_dir: &Path, builds: &[&str]) -> std::path::PathBuf {
    let mut text = String::from("lock-version = \"1.0\"\ncreated-by = \"vari tests\"\n");
    let kept = STAND_INS
        .iter()
        .filter(|s| s.build.is_none_or(|build| builds.contains(&build)));
    for stand_in in kept {
        let bytes = std::fs::read(
            TestWheel::new(stand_in.file)
                .requires(stand_in.requires)
                .write(dir),
        )
        .unwrap();
        let (name, version) = name_version(stand_in.file);
        text.push_str(&format!(
            "\n[[packages]]\nname = \"{name}\"\nversion = \"{version}\"\n"
        ));
        let dependencies: Vec<String> = stand_in
            .requires
            .iter()
            .map(|r| {
                let name = r.split(['>', '=']).next().unwrap();
                format!("{{ name = \"{name}\" }}")
            })
            .collect();
        if !dependencies.is_empty() {
            text.push_str(&format!("dependencies = [{}]\n", dependencies.join(", ")));
        }
        text.push_str(&format!(
            "wheels = [{{ url = \"{base}/files/{}\", size = {}, hashes = {{ sha256 = \"{}\" }} }}]\n",
            stand_in.file.replace('+', "%2B"),
            bytes.len(),
            sha256_hex(&bytes)
        ));
        if let Some(build) = stand_in.build {
            text.push_str(&format!(
                "\n[packages.tool.vari]\nbuilds = [{{ family = \"torch\", build = \"{build}\" }}]\n"
            ));
        }
    }
    // The family's builds, each with its table (the tables are separated by blank lines).
    let mut families = String::new();
    for table in FAMILIES.split("\n\n") {
        let name = table
            .lines()
            .find_map(|line| line.strip_prefix("name = \""))
            .map(|rest| rest.trim_end_matches('"'));
        let is_build = table.contains("[[tool.vari.families.builds]]");
        if !is_build || name.is_some_and(|name| builds.contains(&name)) {
            families.push_str(table);
            families.push_str("\n\n");
        }
    }
    text.push_str(&families);
    let path = lock_dir.join("pylock.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// The distribution files the site publishes under `files/`.
fn published(site: &Path) -> BTreeSet<String> {
    files_in(&site.join("files"))
        .into_iter()
        .filter(|f| !f.ends_with(".metadata") && !f.ends_with("-variants.json"))
        .collect()
}

/// What each class installs: the CPU build alone; the cu128 build with its CUDA 12 libraries.
const CPU_FILES: [&str; 2] = [
    "torch-2.9.0+cpu-py3-none-any.whl",
    "typelike-4.15.0-py3-none-any.whl",
];
const A100_FILES: [&str; 4] = [
    "nvidia_cublas_cu12-12.8.4.1-py3-none-any.whl",
    "nvidia_cuda_runtime_cu12-12.8.90-py3-none-any.whl",
    "torch-2.9.0+cu128-py3-none-any.whl",
    "typelike-4.15.0-py3-none-any.whl",
];

/// The distributions (`name-version` of each `.dist-info`) each class ends up with.
fn installed(class: &str) -> Vec<&'static str> {
    match class {
        "cpu" => vec!["torch-2.9.0+cpu", "typelike-4.15.0"],
        "a100" => vec![
            "nvidia_cublas_cu12-12.8.4.1",
            "nvidia_cuda_runtime_cu12-12.8.90",
            "torch-2.9.0+cu128",
            "typelike-4.15.0",
        ],
        other => panic!("no class {other}"),
    }
}

/// The `name-version` of each distribution installed in `venv`, sorted.
fn installed_in(venv: &Path) -> Vec<String> {
    let listed = run(vari().arg("list").arg("--json").arg("--python").arg(venv))
        .expect_code(0)
        .json();
    let mut names: Vec<String> = listed["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            format!(
                "{}-{}",
                p["name"].as_str().unwrap().replace('-', "_"),
                p["version"].as_str().unwrap()
            )
        })
        .collect();
    names.sort();
    names
}

#[test]
fn a_family_lock_is_mirrored_with_only_the_builds_its_classes_install() {
    let dir = tempfile::tempdir().unwrap();
    let wheels = dir.path().join("upstream");
    std::fs::create_dir_all(&wheels).unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    // The upstream reads its directory at each request: the wheels are written after it starts,
    // with the lock that names them at its address.
    let server = runtime.block_on(TestIndex::start(&wheels));
    let lock = family_lock(&wheels, &server.base(), dir.path());
    let site = dir.path().join("site");
    let out = run(&mut mirror_command(
        dir.path(),
        &lock,
        &site,
        &["cpu", "a100"],
    ))
    .expect_code(0);

    // Only the builds the two classes install: not cu130, nor the CUDA 13 library it brings.
    let mut expected = set(&CPU_FILES);
    expected.extend(set(&A100_FILES));
    assert_eq!(published(&site), expected);
    // The saved line counts the builds left out.
    assert!(
        out.stdout.starts_with("mirrored 5 files (")
            && out
                .stdout
                .contains(" for 2 targets; every variant of these releases would be 7 files (")
            && out.stdout.contains("saved 2 files, "),
        "{}",
        out.stdout
    );
    // Each class's index, and the build it took.
    assert!(
        out.stdout
            .contains("\n  cpu: t/cpu/simple/ (torch build cpu)\n  a100: t/a100/simple/ (torch build cu128)\n"),
        "{}",
        out.stdout
    );
    run(vari().args(["index", "validate"]).arg(&site)).expect_code(0);

    // The site's own index lists both torch builds (a lock chooses between them); each class's
    // index lists its own only.
    let page = |path: &str| std::fs::read_to_string(site.join(path)).unwrap();
    let flat = page("simple/torch/index.html");
    assert!(
        flat.contains("2.9.0%2Bcpu") && flat.contains("2.9.0%2Bcu128"),
        "{flat}"
    );
    let cpu_page = page("t/cpu/simple/torch/index.html");
    assert!(
        cpu_page.contains("../../../../files/torch-2.9.0%2Bcpu-") && !cpu_page.contains("cu128"),
        "{cpu_page}"
    );
    assert!(!site.join("t/cpu/simple/nvidia-cublas-cu12").exists());
    let a100_page = page("t/a100/simple/torch/index.html");
    assert!(
        a100_page.contains("2.9.0%2Bcu128") && !a100_page.contains("%2Bcpu"),
        "{a100_page}"
    );

    // The upstream stops; everything below reads the mirror only.
    drop(server);
    drop(runtime);
    let host = StaticSite::serve(&site, SiteOptions::default());
    // From the site's own index, which lists both builds, plain pip takes the highest local
    // version on any machine (`+cu128` sorts above `+cpu`): why each class has its own.
    install_into_target(
        Installer::NewestPip,
        Path::new(env!("CARGO_TARGET_TMPDIR")),
        &format!("{}/simple/", host.base),
        &["torch".to_owned()],
        None,
    )
    .assert_installed(&installed("a100"));
    let profiles = fleet::write_profiles(&dir.path().join("profiles"));
    for class in ["cpu", "a100"] {
        let profile = &profiles.iter().find(|(name, _)| name == class).unwrap().1;
        // `vari sync` from the lock, offline, with the mirror's files as the only source.
        let scratch = dir.path().join(class);
        let venv = scratch.join("venv");
        bare_venv(&venv);
        run(sync(&scratch, &lock, &venv, profile)
            .arg("--offline")
            .arg("--find-links")
            .arg(site.join("files")))
        .expect_code(0);
        assert_eq!(installed_in(&venv), installed(class), "{class}: vari sync");

        // Plain pip and uv, with the class's own index as their only index.
        let index = format!("{}/t/{class}/simple/", host.base);
        for installer in [Installer::NewestPip, Installer::Uv] {
            install_into_target(
                installer,
                Path::new(env!("CARGO_TARGET_TMPDIR")),
                &index,
                &["torch".to_owned()],
                None,
            )
            .assert_installed(&installed(class));
        }
    }
}

/// A class that no locked build fits, in a lock without the CPU build: one error naming the
/// target, the family and why each build does not fit, and nothing published.
#[test]
fn a_class_no_locked_build_fits_is_one_error_and_nothing_is_mirrored() {
    let dir = tempfile::tempdir().unwrap();
    let wheels = dir.path().join("upstream");
    std::fs::create_dir_all(&wheels).unwrap();
    // Nothing is downloaded: the plan fails first, so no server is needed.
    let lock = family_lock_of(
        &wheels,
        "http://127.0.0.1:9",
        dir.path(),
        &["cu130", "cu128"],
    );
    let site = dir.path().join("site");
    let out = run(&mut mirror_command(
        dir.path(),
        &lock,
        &site,
        &["a100", "cpu"],
    ))
    .expect_one_error(&[
        "pylock.toml: target `cpu`: family torch: no build of torch fits: ",
        "cu130 (torch): namespace `nvidia` is not supported by the target",
        "cu128 (torch): ",
    ]);
    assert!(!out.stderr.contains("a100"), "{}", out.stderr);
    assert!(!site.join("simple").exists());
}
