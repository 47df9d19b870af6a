//! A lock of a build family (torch from its CPU, CUDA 12.8 and CUDA 13.0 builds, each CUDA
//! build with its own CUDA library) synced by the real uv and pip on simulated machines: each
//! takes its build and only that build's libraries; a machine no locked build fits gets one
//! error; `vari export` narrows the lock to one build for plain uv and pip.
//!
//! Stand-in wheels on a 127.0.0.1 index; the lock is written here in the agreed format
//! (`[[tool.vari.families]]`, `[packages.tool.vari] builds`) from the served files' sizes and
//! SHA-256.

use std::path::{Path, PathBuf};
use std::process::Command;

use vari_test_support::fleet;
use vari_test_support::venv::{bare_venv, python, run_ok, uv};
use vari_test_support::wheels::{sha256_hex, wheel};

use crate::common::{assert_json_schema, run, vari};
use crate::sync::{serve, sync, sync_with, Index};

/// A CUDA 11.8 machine: none of the locked CUDA builds fits it.
const CUDA11: &str = "schema = \"vari-facts/1\"\n[platform]\nsystem = \"Linux\"\nmachine = \"x86_64\"\nlibc = \"glibc 2.36\"\n[nvidia]\ncuda_version = \"11.8\"\ncompute_capability = \"8.0\"\n[x86_64]\nlevel = 3\n";

/// The wheels served: (file name, requirements, the builds that bring it in).
const WHEELS: &[(&str, &[&str], &[&str])] = &[
    ("filelock-3.0-py3-none-any.whl", &[], &[]),
    ("nvidia_cublas-13.0.1-py3-none-any.whl", &[], &["cu130"]),
    (
        "nvidia_cublas_cu12-12.8.4-py3-none-any.whl",
        &[],
        &["cu128"],
    ),
    ("torch-2.9.0+cpu-py3-none-any.whl", &["filelock"], &["cpu"]),
    (
        "torch-2.9.0+cu128-py3-none-any.whl",
        &["filelock", "nvidia-cublas-cu12==12.8.4"],
        &["cu128"],
    ),
    (
        "torch-2.9.0+cu130-py3-none-any.whl",
        &["filelock", "nvidia-cublas==13.0.1"],
        &["cu130"],
    ),
];

/// The stand-in index, the profiles (the fleet's and a CUDA 11 one) and the lock.
struct FamilyLock {
    dir: tempfile::TempDir,
    index: Option<Index>,
    lock: PathBuf,
}

impl FamilyLock {
    /// The lock with the CPU build (`cpu`) or without it.
    fn new(cpu: bool) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let upstream = dir.path().join("upstream");
        std::fs::create_dir_all(&upstream).unwrap();
        for (name, requires, _) in WHEELS {
            wheel(&upstream, name, None, requires);
        }
        fleet::write_profiles(&dir.path().join("profiles"));
        std::fs::write(dir.path().join("profiles/cuda11.toml"), CUDA11).unwrap();
        let index = serve(&upstream);
        let files = format!("{}/files/", index.server.base());
        let text = lock_text(&upstream, &files, cpu);
        // The format's own reader accepts it, as `vari lock` will write it.
        vari_lock::read_lock(&text).unwrap();
        let lock = dir.path().join("pylock.toml");
        std::fs::write(&lock, text).unwrap();
        Self {
            dir,
            index: Some(index),
            lock,
        }
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    fn profile(&self, class: &str) -> PathBuf {
        self.path(&format!("profiles/{class}.toml"))
    }
}

fn lock_text(upstream: &Path, files: &str, cpu: bool) -> String {
    let mut text = String::from(
        "lock-version = \"1.0\"\nrequires-python = \">=3.9\"\ncreated-by = \"vari tests\"\n",
    );
    for (name, _, builds) in WHEELS {
        if !cpu && builds.contains(&"cpu") {
            continue;
        }
        let parsed = vari_core::filename::WheelFilename::parse(name).unwrap();
        let bytes = std::fs::read(upstream.join(name)).unwrap();
        text.push_str(&format!(
            "\n[[packages]]\nname = \"{}\"\nversion = \"{}\"\nwheels = [\n    {{ url = \"{files}{}\", size = {}, hashes = {{ sha256 = \"{}\" }} }},\n]\n",
            vari_core::project::normalize(parsed.name.as_ref()),
            parsed.version,
            name.replace('+', "%2B"),
            bytes.len(),
            sha256_hex(&bytes)
        ));
        if !builds.is_empty() {
            let refs: Vec<String> = builds
                .iter()
                .map(|b| format!("{{ family = \"torch\", build = \"{b}\" }}"))
                .collect();
            text.push_str(&format!(
                "\n[packages.tool.vari]\nbuilds = [{}]\n",
                refs.join(", ")
            ));
        }
    }
    text.push_str(
        "\n[tool.vari]\nrequirements = [\"torch\"]\ntargets = [\n    { name = \"cpu\" },\n    { name = \"a100\" },\n    { name = \"cuda13\" },\n]\n\n[[tool.vari.families]]\nname = \"torch\"\ngroup = \"pytorch\"\n\n[[tool.vari.families.builds]]\nname = \"cu130\"\ndistribution = \"torch\"\nrequires = [\"nvidia :: cuda_version_lower_bound :: 13.0\"]\nclasses = [\"cuda13\"]\n\n[[tool.vari.families.builds]]\nname = \"cu128\"\ndistribution = \"torch\"\nrequires = [\"nvidia :: cuda_version_lower_bound :: 12.8\"]\nclasses = [\"a100\"]\n",
    );
    if cpu {
        text.push_str("\n[[tool.vari.families.builds]]\nname = \"cpu\"\ndistribution = \"torch\"\nnull = true\nclasses = [\"cpu\"]\n");
    }
    text
}

/// `name version` of everything `venv` holds (`vari list --json`), sorted.
fn versions(venv: &Path) -> Vec<String> {
    let run = run(vari().arg("list").arg("--json").arg("--python").arg(venv)).expect_code(0);
    let mut listed: Vec<String> = run.json()["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            format!(
                "{} {}",
                vari_core::project::normalize(p["name"].as_str().unwrap()),
                p["version"].as_str().unwrap()
            )
        })
        .collect();
    listed.sort();
    listed
}

#[test]
fn each_machine_takes_its_build_and_only_that_builds_cuda_libraries() {
    let family = FamilyLock::new(true);
    let expected: [(&str, &[&str], &str); 2] = [
        (
            "cpu",
            &["filelock 3.0", "torch 2.9.0+cpu"],
            "torch: build cpu, the null (CPU) build: no other locked build fits this machine",
        ),
        (
            "a100",
            &[
                "filelock 3.0",
                "nvidia-cublas-cu12 12.8.4",
                "torch 2.9.0+cu128",
            ],
            "torch: build cu128, the best locked build that fits this machine",
        ),
    ];
    for (class, installed, said) in expected {
        let scratch = family.path(class);
        let venv = scratch.join("venv");
        bare_venv(&venv);
        let synced = run(&mut sync(
            &scratch,
            &family.lock,
            &venv,
            &family.profile(class),
        ))
        .expect_code(0);
        assert_eq!(versions(&venv), installed, "{class}: {}", synced.stdout);
        assert!(synced.stdout.starts_with(said), "{}", synced.stdout);
    }
    // The CPU machine's environment synced for the A100 class: torch +cpu is replaced by
    // +cu128 (same release, another build) and the CUDA library comes with it.
    let cpu = family.path("cpu");
    let moved = run(&mut sync(
        &cpu,
        &family.lock,
        &cpu.join("venv"),
        &family.profile("a100"),
    ))
    .expect_code(0);
    assert_eq!(
        versions(&cpu.join("venv")),
        [
            "filelock 3.0",
            "nvidia-cublas-cu12 12.8.4",
            "torch 2.9.0+cu128"
        ],
        "{}",
        moved.stdout
    );
    assert!(
        moved.stdout.contains("installed torch 2.9.0+cu128")
            && !moved.stdout.contains("installed filelock"),
        "{}",
        moved.stdout
    );
    // pip installs the same build (a venv with pip of its own).
    let scratch = family.path("a100-pip");
    let venv = scratch.join("venv");
    run_ok(Command::new(python()).args(["-m", "venv"]).arg(&venv));
    run(&mut sync_with(
        &scratch,
        &family.lock,
        &venv,
        &family.profile("a100"),
        Path::new("pip"),
    ))
    .expect_code(0);
    // (pip and setuptools came with the venv; sync keeps them, as `uv pip sync` does.)
    let kept = |line: &String| !line.starts_with("pip ") && !line.starts_with("setuptools ");
    let with_pip: Vec<String> = versions(&venv).into_iter().filter(kept).collect();
    assert_eq!(
        with_pip,
        [
            "filelock 3.0",
            "nvidia-cublas-cu12 12.8.4",
            "torch 2.9.0+cu128"
        ]
    );
    // --json says which build the family took; the CUDA 13 machine takes cu130.
    let scratch = family.path("cuda13");
    let venv = scratch.join("venv");
    bare_venv(&venv);
    let dry = run(
        sync(&scratch, &family.lock, &venv, &family.profile("cuda13"))
            .args(["--dry-run", "--json"]),
    )
    .expect_code(0);
    let json = dry.json();
    assert_json_schema("sync", &json);
    assert_eq!(json["families"][0]["family"], "torch");
    assert_eq!(json["families"][0]["build"], "cu130");
    assert_eq!(json["families"][0]["null"], false);
    let names: Vec<&str> = json["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["filelock", "nvidia-cublas", "torch"]);
    assert_eq!(json["packages"][2]["version"], "2.9.0+cu130");
}

#[test]
fn a_machine_no_locked_build_fits_gets_one_error_naming_each_build() {
    let family = FamilyLock::new(false);
    let scratch = family.path("cuda11");
    let venv = scratch.join("venv");
    bare_venv(&venv);
    run(&mut sync(
        &scratch,
        &family.lock,
        &venv,
        &family.profile("cuda11"),
    ))
    .expect_one_error(&[
        "pylock.toml: family torch: no build of torch fits: cu130 (torch): no supported value \
         for `nvidia :: cuda_version_lower_bound`: the wheel has 13.0; the target supports 11.8",
        "; cu128 (torch): no supported value for `nvidia :: cuda_version_lower_bound`: the wheel \
         has 12.8;",
    ]);
    assert!(versions(&venv).is_empty());
    // The CPU machine fits none either, with no CPU build locked.
    run(&mut sync(
        &scratch,
        &family.lock,
        &venv,
        &family.profile("cpu"),
    ))
    .expect_one_error(&["no build of torch fits"]);
}

fn export(family: &FamilyLock, class: &str) -> Command {
    let mut command = vari();
    command
        .env("VARI_CACHE_DIR", family.path("export-cache"))
        .arg("export")
        .arg(&family.lock)
        .arg("--profile")
        .arg(family.profile(class))
        .args([
            "--python-version",
            "3.12",
            "--python-platform",
            "x86_64-manylinux_2_28",
        ]);
    command
}

#[test]
fn an_export_narrows_a_family_lock_to_one_build_for_plain_uv_and_pip() {
    let mut family = FamilyLock::new(true);
    // Plain uv 0.13.9 refuses the whole family lock (it does not read `[tool.vari]` and sees
    // two torch entries) and installs nothing: recorded, so that a uv that changes is noticed.
    let whole = family.path("whole-venv");
    bare_venv(&whole);
    let out = Command::new(uv())
        .args(["pip", "install", "--no-config", "--python"])
        .arg(&whole)
        .arg("-r")
        .arg(&family.lock)
        .env("UV_CACHE_DIR", family.path("uv-cache"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("Multiple active package entries found for `torch`"),
        "{stderr}"
    );
    assert!(versions(&whole).is_empty());
    // As a pylock.toml: one torch entry, no family left, which plain uv installs.
    let narrowed = family.path("pylock.a100.toml");
    run(export(&family, "a100")
        .args(["--format", "pylock", "-o"])
        .arg(&narrowed))
    .expect_code(0);
    let text = std::fs::read_to_string(&narrowed).unwrap();
    let lock = vari_lock::read_lock(&text).unwrap();
    let names: Vec<String> = lock
        .packages
        .iter()
        .map(|p| format!("{} {}", p.name, p.version.as_ref().unwrap()))
        .collect();
    assert_eq!(
        names,
        [
            "filelock 3.0",
            "nvidia-cublas-cu12 12.8.4",
            "torch 2.9.0+cu128"
        ]
    );
    assert!(
        !text.contains("families") && !text.contains("builds"),
        "{text}"
    );
    let uv_venv = family.path("uv-venv");
    bare_venv(&uv_venv);
    run_ok(
        Command::new(uv())
            .args(["pip", "install", "--no-config", "--python"])
            .arg(&uv_venv)
            .arg("-r")
            .arg(&narrowed)
            .env("UV_CACHE_DIR", family.path("uv-cache")),
    );
    assert_eq!(
        versions(&uv_venv),
        [
            "filelock 3.0",
            "nvidia-cublas-cu12 12.8.4",
            "torch 2.9.0+cu128"
        ]
    );

    // A requirements file with the checked files in a wheelhouse: plain pip installs it with
    // the index gone, and its header says which build the family took.
    let out = family.path("docker");
    std::fs::create_dir_all(&out).unwrap();
    run(export(&family, "cpu")
        .arg("--wheelhouse")
        .arg(out.join("wheels"))
        .arg("-o")
        .arg(out.join("requirements.txt")))
    .expect_code(0);
    family.index = None;
    let requirements = std::fs::read_to_string(out.join("requirements.txt")).unwrap();
    assert!(
        requirements.contains(
            "# torch: build cpu, the null (CPU) build: no other locked build fits this machine\n"
        ),
        "{requirements}"
    );
    assert!(!requirements.contains("cublas"), "{requirements}");
    let pip_venv = family.path("pip-venv");
    bare_venv(&pip_venv);
    run_ok(
        Command::new(python())
            .args(["-m", "pip", "--python"])
            .arg(&pip_venv)
            .args([
                "install",
                "--no-index",
                "--require-hashes",
                "-r",
                "requirements.txt",
            ])
            .args(["--disable-pip-version-check", "--no-cache-dir"])
            .env("PIP_CONFIG_FILE", "/dev/null")
            .env_remove("PIP_FIND_LINKS")
            .current_dir(&out),
    );
    assert_eq!(versions(&pip_venv), ["filelock 3.0", "torch 2.9.0+cpu"]);
}
