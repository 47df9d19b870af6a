//! `vari lock`: the real binary resolving with the real uv through its proxy, against
//! `vari_test_support::fleet`'s upstream served on 127.0.0.1, for several machine classes.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{on_terminal, run, vari, Run};

use vari_test_support::fleet;
use vari_test_support::index::TestIndex;
use vari_test_support::venv;

/// The fleet's upstream, served; the profiles of its classes; a scratch directory.
struct Fleet {
    server: TestIndex,
    _runtime: tokio::runtime::Runtime,
    dir: tempfile::TempDir,
    profiles: Vec<(String, PathBuf)>,
}

impl Fleet {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        fleet::upstream(&dir.path().join("upstream"));
        let profiles = fleet::write_profiles(&dir.path().join("profiles"));
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let server = runtime.block_on(TestIndex::start(&dir.path().join("upstream")));
        Self {
            server,
            _runtime: runtime,
            dir,
            profiles,
        }
    }

    fn profile(&self, class: &str) -> &Path {
        &self.profiles.iter().find(|(n, _)| n == class).unwrap().1
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `vari lock` with the index, uv on PATH, in the scratch directory.
    fn lock(&self, classes: &[&str], args: &[&str]) -> Run {
        run(&mut self.command(classes, args))
    }

    fn command(&self, classes: &[&str], args: &[&str]) -> Command {
        let mut command = vari();
        command
            .current_dir(self.dir.path())
            .env("PATH", path_with_uv())
            .env("UV_CACHE_DIR", self.dir.path().join("uv-cache"))
            .args(["lock", "--index-url", &self.server.index_url()]);
        for class in classes {
            command.arg("--target").arg(self.profile(class));
        }
        command.args(args);
        command
    }
}

/// The test venv's bin directory (uv, python) before the system's.
fn path_with_uv() -> String {
    format!("{}:/usr/bin:/bin", venv::test_venv().join("bin").display())
}

fn read_lock(path: &Path) -> vari_lock::Lock {
    vari_lock::read_lock(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn package<'a>(lock: &'a vari_lock::Lock, name: &str) -> &'a vari_lock::Package {
    lock.packages
        .iter()
        .find(|p| p.name == name)
        .unwrap_or_else(|| panic!("{name} is not in the lock"))
}

/// The labels of a package's wheels (`plain` for a non-variant one), sorted.
fn labels(package: &vari_lock::Package) -> Vec<String> {
    let mut labels: Vec<String> = package
        .wheels
        .iter()
        .map(|w| {
            w.wheel_filename()
                .unwrap()
                .label
                .map_or("plain".to_owned(), |l| l.to_string())
        })
        .collect();
    labels.sort();
    labels
}

#[test]
fn one_lock_serves_three_machine_classes() {
    let fleet = Fleet::new();
    let result = fleet
        .lock(&["cpu", "a100", "cuda13"], &["app-like"])
        .expect_code(0);
    assert_eq!(
        result.stdout,
        "app-like 1.0: 1 wheel\n\
         idnalike 3.0: 1 wheel\n\
         numlike 2.3.4: 5 wheels (null, x86_64_v2, x86_64_v3, x86_64_v4, plain)\n\
         reqlike 1.1: 1 wheel\n\
         vari-demo 1.0.0: 5 wheels (cu126, cu128, cu130, null, plain)\n\
         vari-demo-cuda-runtime 1.0.0: 1 wheel, only with the variants that ask for it\n\
         locked 6 packages for 3 targets (cpu, a100, cuda13) in pylock.toml\n"
    );
    let path = fleet.path("pylock.toml");
    let first = std::fs::read(&path).unwrap();
    let lock = read_lock(&path);
    assert_eq!(lock.created_by, "vari");
    let info = lock.vari.as_ref().unwrap();
    let names: Vec<&str> = info.targets.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["cpu", "a100", "cuda13"]);
    let all: Vec<&str> = lock.packages.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        all,
        [
            "app-like",
            "idnalike",
            "numlike",
            "reqlike",
            "vari-demo",
            "vari-demo-cuda-runtime"
        ]
    );
    // Every variant some target can use, the null variant and the plain wheel; not the AMD
    // and Intel builds no target can select.
    let demo = package(&lock, "vari-demo");
    assert_eq!(labels(demo), ["cu126", "cu128", "cu130", "null", "plain"]);
    for wheel in &demo.wheels {
        assert!(wheel
            .url
            .as_deref()
            .unwrap()
            .starts_with("http://127.0.0.1:"));
        assert!(wheel.size.unwrap() > 0);
        assert_eq!(wheel.sha256().unwrap().len(), 64);
    }
    let variants: Vec<String> = demo
        .variants_json
        .as_ref()
        .unwrap()
        .variants
        .keys()
        .map(ToString::to_string)
        .collect();
    assert_eq!(variants, ["cu126", "cu128", "cu130", "null"]);
    let demo_info = demo.vari.as_ref().unwrap();
    assert!(!demo_info.through_variants);
    assert!(
        demo_info
            .variant_dependencies
            .iter()
            .any(|d| d.starts_with("vari-demo-cuda-runtime") && d.contains("variant_namespaces")),
        "{:?}",
        demo_info.variant_dependencies
    );
    let runtime = package(&lock, "vari-demo-cuda-runtime");
    let runtime_info = runtime.vari.as_ref().unwrap();
    assert!(runtime_info.through_variants);
    assert_eq!(runtime_info.targets, ["a100", "cuda13"]);
    // numlike: the x86-64 levels the three machines reach (v3, v4), the null and plain ones.
    assert_eq!(
        labels(package(&lock, "numlike")),
        ["null", "plain", "x86_64_v2", "x86_64_v3", "x86_64_v4"]
    );
    assert!(package(&lock, "app-like")
        .vari
        .as_ref()
        .unwrap()
        .variant_dependencies
        .is_empty());

    // packaging's PEP 751 reader (26.3) accepts the file once it can parse variant wheel names
    // (PEP 825 adds `-{label}` before `.whl`; packaging does not know it yet and refuses the
    // first variant wheel, which is the one thing it refuses).
    assert_eq!(
        pylock_validate(&path, false),
        Err("Invalid wheel filename 'numlike-2.3.4-py3-none-any-null.whl' in 'packages[2].wheels[0]'".to_owned())
    );
    assert_eq!(pylock_validate(&path, true), Ok("6".to_owned()));

    // The same inputs give the same bytes, and the lock is up to date with them.
    fleet
        .lock(&["cpu", "a100", "cuda13"], &["app-like"])
        .expect_code(0);
    assert_eq!(std::fs::read(&path).unwrap(), first);
    let check = fleet.lock(&["cpu", "a100", "cuda13"], &["app-like", "--check"]);
    check.expect_code(0);
    // Another requirement: out of date, one line saying what changed.
    let check = fleet.lock(
        &["cpu", "a100", "cuda13"],
        &["app-like", "idnalike", "--check"],
    );
    assert_eq!(check.code, 1, "{}", check.stderr);
    assert!(
        check
            .stderr
            .contains("out of date: the requirements changed"),
        "{}",
        check.stderr
    );
    // Another target: out of date too.
    let check = fleet.lock(&["cpu", "a100"], &["app-like", "--check"]);
    assert_eq!(check.code, 1, "{}", check.stderr);
    assert!(
        check.stderr.contains("the targets changed"),
        "{}",
        check.stderr
    );
}

/// Runs `packaging.pylock`'s reader and validator on `path`: the number of packages, or its
/// error's last line. With `variant_names`, wheel names with a variant label are parsed without
/// it (what a PEP 825 aware `parse_wheel_filename` does).
fn pylock_validate(path: &Path, variant_names: bool) -> Result<String, String> {
    let script = "import sys, tomllib, packaging.pylock as p\n\
        if sys.argv[2] == '1':\n\
        \x20   plain = p.parse_wheel_filename\n\
        \x20   def parse(name):\n\
        \x20       try:\n\
        \x20           return plain(name)\n\
        \x20       except Exception:\n\
        \x20           return plain(name[:-4].rsplit('-', 1)[0] + '.whl')\n\
        \x20   p.parse_wheel_filename = parse\n\
        try:\n\
        \x20   lock = p.Pylock.from_dict(tomllib.load(open(sys.argv[1], 'rb')))\n\
        \x20   lock.validate()\n\
        except p.PylockValidationError as e:\n\
        \x20   print(e)\n\
        \x20   sys.exit(1)\n\
        print(len(lock.packages))\n";
    let out = Command::new(venv::python())
        .arg("-c")
        .arg(script)
        .arg(path)
        .arg(if variant_names { "1" } else { "0" })
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    match out.status.success() {
        true => Ok(text),
        false => Err(format!(
            "{text}{}",
            String::from_utf8_lossy(&out.stderr).trim()
        )),
    }
}

/// The version of `name` in the lock at `path`.
fn locked_version(path: &Path, name: &str) -> String {
    package(&read_lock(path), name)
        .version
        .as_ref()
        .unwrap()
        .to_string()
}

#[test]
fn relocking_keeps_pins_unless_asked_to_upgrade() {
    let fleet = Fleet::new();
    let path = fleet.path("pylock.toml");
    fleet
        .lock(&["cpu", "a100"], &["app-like", "reqlike==1.0"])
        .expect_code(0);
    assert_eq!(locked_version(&path, "reqlike"), "1.0");
    // The pin is no longer asked for, but the lock's pin is preferred.
    fleet.lock(&["cpu", "a100"], &["app-like"]).expect_code(0);
    assert_eq!(locked_version(&path, "reqlike"), "1.0");
    // Upgrading another package leaves it.
    fleet
        .lock(
            &["cpu", "a100"],
            &["app-like", "--upgrade-package", "idnalike"],
        )
        .expect_code(0);
    assert_eq!(locked_version(&path, "reqlike"), "1.0");
    fleet
        .lock(
            &["cpu", "a100"],
            &["app-like", "--upgrade-package", "reqlike"],
        )
        .expect_code(0);
    assert_eq!(locked_version(&path, "reqlike"), "1.1");
    // And --upgrade drops every pin.
    fleet
        .lock(&["cpu", "a100"], &["app-like", "reqlike==1.0"])
        .expect_code(0);
    fleet
        .lock(&["cpu", "a100"], &["app-like", "--upgrade"])
        .expect_code(0);
    assert_eq!(locked_version(&path, "reqlike"), "1.1");
}

/// `gpuonly`: 2.0 built only for CUDA 12.8 (a variant wheel, no plain or null one), 1.0 plain.
fn add_gpu_only(fleet: &Fleet) {
    let upstream = fleet.path("upstream");
    let json = vari_test_support::wheels::variant_json(
        &["nvidia"],
        "cu128",
        &[("nvidia", "cuda_version_lower_bound", "12.8")],
    );
    vari_test_support::wheels::TestWheel::new("gpuonly-2.0-py3-none-any-cu128.whl")
        .variant_json(Some(&json))
        .write(&upstream);
    vari_test_support::wheels::TestWheel::new("gpuonly-1.0-py3-none-any.whl").write(&upstream);
}

/// Issue 33, item 4: on a terminal `vari lock` shows how far it is, each phase with its count
/// (the resolutions done of how many, then the releases whose files are listed of how many);
/// through a pipe nothing of it (stderr empty). Before, a spinner without a number.
#[test]
fn a_terminal_shows_how_far_locking_is() {
    let fleet = Fleet::new();
    let piped = fleet.lock(&["cpu", "a100"], &["app-like"]).expect_code(0);
    assert_eq!(piped.stderr, "");
    let Some((shown, code)) = on_terminal(&fleet.command(&["cpu", "a100"], &["app-like"])) else {
        return;
    };
    assert_eq!(code, 0, "{shown}");
    // Alike but for their hardware: one resolution for both.
    assert!(
        shown.contains("resolving with uv through vari's proxy 0/1"),
        "{shown}"
    );
    assert!(shown.contains("locked 6 packages for 2 targets"), "{shown}");
    // Each target on its own: two resolutions, then the files of the 6 pinned releases.
    let mut per_target = fleet.command(&["cpu", "a100"], &["app-like"]);
    per_target.env(vari_lockmaker::PER_TARGET_VARIABLE, "1");
    let (shown, code) = on_terminal(&per_target).unwrap();
    assert_eq!(code, 0, "{shown}");
    assert!(
        shown.contains("resolving with uv through vari's proxy 0/2"),
        "{shown}"
    );
    assert!(
        shown.contains("listing the files of each pinned release 0/6"),
        "{shown}"
    );
    assert!(shown.contains("locked 6 packages for 2 targets"), "{shown}");
}

#[test]
fn targets_that_cannot_agree_get_one_error_naming_them() {
    let fleet = Fleet::new();
    add_gpu_only(&fleet);
    // The A100 node resolves 2.0, the CPU machine only 1.0: one error, nothing written.
    fleet
        .lock(&["a100", "cpu"], &["gpuonly"])
        .expect_one_error(&["targets disagree on gpuonly", "2.0 (a100)", "1.0 (cpu)"]);
    assert!(!fleet.path("pylock.toml").exists());
    // A requirement only one target can meet: uv's reason, with the target named.
    fleet
        .lock(&["a100", "cpu"], &["gpuonly==2.0"])
        .expect_one_error(&["cannot resolve for target cpu", "gpuonly"]);
    assert!(!fleet.path("pylock.toml").exists());
    // Each alone is fine.
    fleet.lock(&["a100"], &["gpuonly"]).expect_code(0);
    assert_eq!(locked_version(&fleet.path("pylock.toml"), "gpuonly"), "2.0");
}

#[test]
fn without_targets_every_variant_is_listed_with_what_it_needs() {
    let fleet = Fleet::new();
    fleet.lock(&[], &["vari-demo"]).expect_code(0);
    let lock = read_lock(&fleet.path("pylock.toml"));
    let demo = package(&lock, "vari-demo");
    assert_eq!(
        labels(demo),
        ["cu126", "cu128", "cu130", "null", "plain", "rocm6.4", "xpu"]
    );
    // Whatever this machine has, the CUDA builds' runtime is in the lock, for them alone.
    let runtime = package(&lock, "vari-demo-cuda-runtime");
    assert!(runtime.vari.as_ref().unwrap().through_variants);
}

#[test]
fn a_project_with_an_extra_and_a_dependency_group() {
    let fleet = Fleet::new();
    let project = fleet.path("project");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(
        project.join("pyproject.toml"),
        r#"[project]
name = "service"
version = "0.1"
dependencies = ["reqlike"]

[project.optional-dependencies]
socks = ["reqlike[socks]"]

[dependency-groups]
dev = ["numlike"]
"#,
    )
    .unwrap();
    let project_arg = project.to_str().unwrap();
    fleet
        .lock(&["cpu"], &["--project", project_arg])
        .expect_code(0);
    let path = project.join("pylock.toml");
    let lock = read_lock(&path);
    assert_eq!(lock.extras, ["socks"]);
    assert_eq!(lock.dependency_groups, ["dev"]);
    assert_eq!(lock.default_groups, ["dev"]);
    assert_eq!(package(&lock, "reqlike").marker, None);
    assert_eq!(package(&lock, "idnalike").marker, None);
    assert_eq!(
        package(&lock, "sockslike").marker.as_deref(),
        Some("'socks' in extras")
    );
    assert_eq!(
        package(&lock, "numlike").marker.as_deref(),
        Some("'dev' in dependency_groups")
    );
    fleet
        .lock(&["cpu"], &["--project", project_arg, "--check"])
        .expect_code(0);
    // A change to the group makes the lock out of date.
    let text = std::fs::read_to_string(project.join("pyproject.toml")).unwrap();
    std::fs::write(
        project.join("pyproject.toml"),
        text.replace("dev = [\"numlike\"]", "dev = [\"numlike\", \"idnalike\"]"),
    )
    .unwrap();
    let check = fleet.lock(&["cpu"], &["--project", project_arg, "--check"]);
    assert_eq!(check.code, 1, "{}", check.stderr);
    assert!(check.stderr.contains("out of date"), "{}", check.stderr);
}

/// Targets alike but for their hardware are resolved once, through a proxy serving their
/// union (targets on two Pythons: once per Python): the lock written that way is byte for byte
/// the one resolving each target on its own writes (the targets of each package, the variants
/// kept, what they bring in).
#[test]
fn one_resolution_for_the_union_writes_what_one_per_target_writes() {
    let fleet = Fleet::new();
    let project = fleet.path("project");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(
        project.join("pyproject.toml"),
        "[project]\nname = \"service\"\nversion = \"0.1\"\ndependencies = [\"app-like\"]\n\
         [project.optional-dependencies]\nsocks = [\"reqlike[socks]\"]\n\
         [dependency-groups]\ndev = [\"vari-demo\"]\n",
    )
    .unwrap();
    let project = project.to_str().unwrap().to_owned();
    let pythons = ["--python-version", "3.10", "--python-version", "3.12"];
    let cases: [(&[&str], Vec<&str>); 4] = [
        (&["cpu", "a100", "cuda13"], vec!["app-like"]),
        (&["cpu", "mi300", "a100", "cuda13"], vec!["app-like"]),
        (&["mi300", "cuda13"], vec!["--project", &project]),
        // Two Pythons: one universal resolution for the four targets.
        (&["cpu", "a100"], [&["app-like"], &pythons[..]].concat()),
    ];
    for (classes, args) in cases {
        let output = |name: &str| {
            let mut args = args.clone();
            args.extend(["-o", name]);
            args.iter().map(|a| a.to_string()).collect::<Vec<_>>()
        };
        let union_args = output("union.toml");
        let args_ref: Vec<&str> = union_args.iter().map(String::as_str).collect();
        let union = fleet.lock(classes, &[&["-v"], args_ref.as_slice()].concat());
        let union = union.expect_code(0);
        assert!(
            union.stderr.contains("resolved once for the union of"),
            "{classes:?}: {}",
            union.stderr
        );
        let per_target_args = output("per-target.toml");
        let per_target = run(fleet
            .command(classes, &["-v"])
            .args(&per_target_args)
            .env(vari_lockmaker::PER_TARGET_VARIABLE, "1"))
        .expect_code(0);
        assert!(!per_target.stderr.contains("resolved once for the union"));
        let read = |name: &str| std::fs::read_to_string(fleet.path(name)).unwrap();
        assert_eq!(read("union.toml"), read("per-target.toml"), "{classes:?}");
    }
}

/// Targets on two Pythons whose newest versions differ (the newest `cutlike` requires Python
/// 3.11): one universal resolution for the four targets (one uv run, counted in its debug
/// lines), and the lock it writes is byte for byte the one the per-target path writes (where
/// the targets, each preferring the pins of those before it, agree on the older version).
#[test]
fn targets_on_two_pythons_are_resolved_once_and_pinned_as_one_per_target() {
    use vari_test_support::wheels::TestWheel;
    let fleet = Fleet::new();
    let upstream = fleet.path("upstream");
    TestWheel::new("cutlike-1.0-py3-none-any.whl")
        .requires_python(Some(">=3.8"))
        .requires(&["tomlilike ; python_version < '3.11'"])
        .write(&upstream);
    TestWheel::new("cutlike-2.0-py3-none-any.whl")
        .requires_python(Some(">=3.11"))
        .write(&upstream);
    TestWheel::new("tomlilike-1.0-py3-none-any.whl").write(&upstream);
    let args = [
        "app-like",
        "cutlike",
        "--python-version",
        "3.10",
        "--python-version",
        "3.12",
        "-v",
        "-o",
    ];
    // uv's own setting would stand if the environment asked for Python downloads.
    let universal = run(fleet
        .command(&["cpu", "a100"], &[&args[..], &["universal.toml"]].concat())
        .env_remove("UV_PYTHON_DOWNLOADS"))
    .expect_code(0);
    let uv_runs = |stderr: &str| stderr.matches("\"pip\" \"compile\"").count();
    assert_eq!(uv_runs(&universal.stderr), 1, "{}", universal.stderr);
    assert!(
        universal.stderr.contains("\"--universal\"")
            && universal.stderr.contains("\"--no-python-downloads\""),
        "{}",
        universal.stderr
    );
    let per_target = run(fleet
        .command(
            &["cpu", "a100"],
            &[&args[..], &["per-target.toml"]].concat(),
        )
        .env(vari_lockmaker::PER_TARGET_VARIABLE, "1"))
    .expect_code(0);
    // At once, then again one after another: the Pythons' newest versions differ. Each
    // target's proxy serves both of its runs: a page is built once per target, not per run.
    assert_eq!(uv_runs(&per_target.stderr), 8, "{}", per_target.stderr);
    let built = per_target.stderr.matches("cutlike: page built").count();
    assert_eq!(built, 4, "{}", per_target.stderr);
    let read = |name: &str| std::fs::read_to_string(fleet.path(name)).unwrap();
    assert_eq!(read("universal.toml"), read("per-target.toml"));
    let lock = read_lock(&fleet.path("universal.toml"));
    assert_eq!(
        locked_version(&fleet.path("universal.toml"), "cutlike"),
        "1.0"
    );
    assert_eq!(
        package(&lock, "tomlilike").marker.as_deref(),
        Some("python_full_version < '3.11'")
    );
    // The higher Python first: one after another, the per-target path pins 2.0 for 3.12 first
    // and cannot agree; the universal resolution pins what serves both whatever the order.
    let reversed = ["app-like", "cutlike", "--python-version", "3.12"];
    let reversed = [
        &reversed[..],
        &["--python-version", "3.10", "-o", "reversed.toml"],
    ]
    .concat();
    let per_target = run(fleet
        .command(&["cpu"], &reversed)
        .env(vari_lockmaker::PER_TARGET_VARIABLE, "1"))
    .expect_code(1);
    assert!(
        per_target.stderr.contains("targets disagree on cutlike"),
        "{}",
        per_target.stderr
    );
    fleet.lock(&["cpu"], &reversed).expect_code(0);
    assert_eq!(
        locked_version(&fleet.path("reversed.toml"), "cutlike"),
        "1.0"
    );
}

#[test]
fn bad_input_leaves_nothing_behind() {
    let fleet = Fleet::new();
    std::fs::write(fleet.path("bad.toml"), "[project\n").unwrap();
    let project = fleet.path("bad");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(
        project.join("pyproject.toml"),
        "[project]\ndependencies = [1]\n",
    )
    .unwrap();
    fleet
        .lock(&["cpu"], &["--project", project.to_str().unwrap()])
        .expect_one_error(&[
            "pyproject.toml",
            "project.dependencies[0]",
            "is not a string",
        ]);
    assert!(!project.join("pylock.toml").exists());
    fleet
        .lock(&["cpu"], &["--check", "app-like"])
        .expect_one_error(&["pylock.toml is missing"]);
}

/// What uv 0.13.9 does with a vari lock (`uv pip install -r pylock.toml`): with or without
/// `--preview-features wheel-variants`, it installs every entry (the CUDA runtime too, which
/// PEP 751 cannot mark as needed only by some variants) from its plain wheel, never a variant.
/// Recorded so that a uv that starts selecting variants from a lock is noticed.
#[test]
fn uv_installs_a_vari_lock_from_its_plain_wheels() {
    let fleet = Fleet::new();
    fleet
        .lock(&["cpu", "a100", "cuda13"], &["app-like"])
        .expect_code(0);
    for preview in [false, true] {
        let env = fleet.path(&format!("env-{preview}"));
        let python = venv::bare_venv(&env);
        let mut command = Command::new(venv::uv());
        command
            .args(["pip", "install", "--python"])
            .arg(&python)
            .arg("-r")
            .arg(fleet.path("pylock.toml"))
            .env("UV_CACHE_DIR", fleet.path(&format!("uv-cache-{preview}")));
        if preview {
            command.args(["--preview-features", "wheel-variants"]);
        }
        let out = command.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        for installed in [
            "app-like==1.0",
            "numlike==2.3.4",
            "vari-demo==1.0.0",
            "vari-demo-cuda-runtime==1.0.0",
        ] {
            assert!(stderr.contains(&format!("+ {installed}")), "{stderr}");
        }
        let site = venv::site_packages(&env);
        for dist_info in ["vari_demo-1.0.0.dist-info", "numlike-2.3.4.dist-info"] {
            assert!(site.join(dist_info).is_dir());
            assert!(
                !site.join(dist_info).join("variant.json").exists(),
                "uv (preview: {preview}) installed a variant of {dist_info}"
            );
        }
    }
}

#[test]
fn files_from_a_wheelhouse_are_named_by_paths_under_the_lock() {
    let fleet = Fleet::new();
    // The wheelhouse alone as the source, the lock run from `dir`.
    let lock_in = |dir: &Path| {
        let mut command = vari();
        command
            .current_dir(dir)
            .env("PATH", path_with_uv())
            .env("UV_CACHE_DIR", fleet.path("uv-cache"))
            .args(["lock", "--find-links"])
            .arg(fleet.path("upstream"))
            .arg("--target")
            .arg(fleet.profile("cpu"))
            .arg("idnalike");
        run(&mut command)
    };
    lock_in(fleet.dir.path()).expect_code(0);
    let lock = read_lock(&fleet.path("pylock.toml"));
    let wheel = &package(&lock, "idnalike").wheels[0];
    assert_eq!(
        wheel.path.as_deref(),
        Some("upstream/idnalike-3.0-py3-none-any.whl")
    );
    assert_eq!(wheel.url, None);
    // A lock elsewhere would name files outside its directory: refused, nothing written.
    let elsewhere = fleet.path("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    lock_in(&elsewhere).expect_one_error(&["outside the lock's directory"]);
    assert!(!elsewhere.join("pylock.toml").exists());
}

#[test]
fn a_cpu_only_lock_keeps_the_null_variant_with_valid_metadata() {
    let fleet = Fleet::new();
    fleet.lock(&["cpu"], &["vari-demo"]).expect_code(0);
    let lock = read_lock(&fleet.path("pylock.toml"));
    let demo = package(&lock, "vari-demo");
    assert_eq!(labels(demo), ["null", "plain"]);
    let meta = demo.variants_json.as_ref().unwrap();
    assert_eq!(meta.variants.len(), 1);
    assert_eq!(meta.priorities.namespace.len(), 1);
    // No target's variant asks for the CUDA runtime: not in the lock.
    assert!(!lock
        .packages
        .iter()
        .any(|p| p.name == "vari-demo-cuda-runtime"));
}

/// Targets on two Pythons: what only one of them needs is marked with where (the requirements'
/// own markers, combined along the way to it), and every installer of the lock — `vari export`
/// for each Python, `vari sync` and uv on a third one — installs exactly what that Python needs.
#[test]
fn a_package_only_one_python_needs_is_marked_for_it() {
    use vari_test_support::wheels::TestWheel;
    let fleet = Fleet::new();
    let upstream = fleet.path("upstream");
    TestWheel::new("envlike-1.0-py3-none-any.whl")
        .requires(&[
            "tomlilike>=1; python_version < \"3.11\"",
            "typinglike; python_version < \"3.13\"",
            "winlike; sys_platform == \"win32\"",
        ])
        .write(&upstream);
    TestWheel::new("tomlilike-2.0-py3-none-any.whl")
        .requires(&["sublike"])
        .write(&upstream);
    for name in ["typinglike-1.0", "sublike-1.0", "winlike-1.0"] {
        TestWheel::new(&format!("{name}-py3-none-any.whl")).write(&upstream);
    }
    let pythons = ["--python-version", "3.10", "--python-version", "3.12"];
    fleet
        .lock(&["cpu"], &[&["envlike"], pythons.as_slice()].concat())
        .expect_code(0);
    let path = fleet.path("pylock.toml");
    let lock = read_lock(&path);
    let names: Vec<&str> = lock.packages.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["envlike", "sublike", "tomlilike", "typinglike"]);
    let marker = |name: &str| package(&lock, name).marker.clone();
    for only_310 in ["tomlilike", "sublike"] {
        assert_eq!(
            marker(only_310).as_deref(),
            Some("python_full_version < '3.11'")
        );
    }
    assert_eq!(marker("typinglike"), None);
    assert_eq!(marker("envlike"), None);
    assert_eq!(pylock_validate(&path, true), Ok("4".to_owned()));

    // What each Python installs, as `vari export` plans it.
    let exported = |version: &str| {
        let run = run(vari()
            .arg("export")
            .arg(&path)
            .arg("--target")
            .arg(fleet.profile("cpu"))
            .args(["--python-version", version]))
        .expect_code(0);
        let mut names: Vec<String> = run
            .stdout
            .lines()
            .filter_map(|line| line.split(" @ ").next())
            .filter(|name| !name.is_empty() && !name.starts_with('#'))
            .map(str::to_owned)
            .collect();
        names.sort();
        names
    };
    assert_eq!(
        exported("3.10"),
        ["envlike", "sublike", "tomlilike", "typinglike"]
    );
    assert_eq!(exported("3.12"), ["envlike", "typinglike"]);

    // The test venv's Python (3.11 here; whichever it is, locked or not): vari sync and uv
    // install what the markers say for it.
    let venv = fleet.path("venv");
    let python = venv::bare_venv(&venv);
    let version = Command::new(&python)
        .args(["-c", "import sys; print(sys.version_info[1])"])
        .output()
        .unwrap();
    let minor: u32 = String::from_utf8_lossy(&version.stdout)
        .trim()
        .parse()
        .unwrap();
    let mut expected = vec!["envlike"];
    if minor < 11 {
        expected.extend(["sublike", "tomlilike"]);
    }
    expected.push("typinglike");
    run(&mut crate::sync::sync(
        fleet.dir.path(),
        &path,
        &venv,
        fleet.profile("cpu"),
    ))
    .expect_code(0);
    let installed: Vec<String> = crate::sync::listed(&venv)
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    assert_eq!(installed, expected, "Python 3.{minor}");
    let by_uv = fleet.path("by-uv");
    let python = venv::bare_venv(&by_uv);
    let out = Command::new(venv::uv())
        .args(["pip", "install", "--python"])
        .arg(&python)
        .arg("-r")
        .arg(&path)
        .env("UV_CACHE_DIR", fleet.path("uv-cache"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    for name in ["envlike", "sublike", "tomlilike", "typinglike"] {
        let line = format!("+ {name}==");
        assert_eq!(
            stderr.contains(&line),
            expected.contains(&name),
            "{name}, Python 3.{minor}: {stderr}"
        );
    }
}

/// A project directory locked once with its targets, then locked again and checked with no
/// arguments at all: the requirements from `pyproject.toml`, the targets (profiles relative to
/// the lock, each Python) and the index from the lock. The order of `--target` and
/// `--python-version` flags changes nothing; a profile outside the project is recorded by its
/// hash and name only, and locking again without it is one error naming the target.
#[test]
fn a_project_directory_is_locked_again_and_checked_with_no_arguments() {
    let fleet = Fleet::new();
    let project = fleet.path("project");
    std::fs::create_dir_all(project.join("ci")).unwrap();
    std::fs::write(
        project.join("pyproject.toml"),
        "[project]\nname = \"service\"\nversion = \"0.1\"\ndependencies = [\"reqlike\"]\n",
    )
    .unwrap();
    for class in ["cpu", "a100"] {
        std::fs::copy(
            fleet.profile(class),
            project.join(format!("ci/{class}.toml")),
        )
        .unwrap();
    }
    // In the project, as a user types it: no --project, relative profiles.
    let in_project = |args: &[&str]| {
        let mut command = vari();
        command
            .current_dir(&project)
            .env("PATH", path_with_uv())
            .env("UV_CACHE_DIR", fleet.path("uv-cache"))
            .arg("lock")
            .args(args);
        run(&mut command)
    };
    let index = fleet.server.index_url();
    let first = [
        "--index-url",
        &index,
        "--target",
        "ci/cpu.toml",
        "--target",
        "ci/a100.toml",
        "--python-version",
        "3.11",
        "--python-version",
        "3.12",
    ];
    in_project(&first).expect_code(0);
    let path = project.join("pylock.toml");
    let lock = read_lock(&path);
    let info = lock.vari.as_ref().unwrap();
    let recorded: Vec<(&str, Option<&str>)> = info
        .targets
        .iter()
        .map(|t| (t.name.as_str(), t.profile.as_deref()))
        .collect();
    assert_eq!(
        recorded,
        [
            ("cpu-py3.11", Some("ci/cpu.toml")),
            ("cpu-py3.12", Some("ci/cpu.toml")),
            ("a100-py3.11", Some("ci/a100.toml")),
            ("a100-py3.12", Some("ci/a100.toml")),
        ]
    );
    assert_eq!(info.indexes, std::slice::from_ref(&index));
    locked_version(&path, "reqlike");

    // The same inputs in another order: up to date.
    let reordered = [
        "--index-url",
        &index,
        "--target",
        "ci/a100.toml",
        "--target",
        "ci/cpu.toml",
        "--python-version",
        "3.12",
        "--python-version",
        "3.11",
        "--check",
    ];
    let check = in_project(&reordered);
    assert_eq!(check.code, 0, "{}", check.stderr);
    // No arguments: everything from the project and its lock.
    let check = in_project(&["--check"]);
    assert_eq!(check.code, 0, "{}", check.stderr);
    assert_eq!(check.stdout, "pylock.toml is up to date\n");

    // A new dependency: out of date; `vari lock` alone locks it for the same targets.
    std::fs::write(
        project.join("pyproject.toml"),
        "[project]\nname = \"service\"\nversion = \"0.1\"\n\
         dependencies = [\"reqlike\", \"numlike\"]\n",
    )
    .unwrap();
    let check = in_project(&["--check"]);
    assert_eq!(check.code, 1, "{}", check.stderr);
    assert!(
        check.stderr.contains("the requirements changed"),
        "{}",
        check.stderr
    );
    let relocked = in_project(&[]).expect_code(0);
    assert!(
        relocked.stdout.ends_with(
            "locked 3 packages for 4 targets (cpu-py3.11, cpu-py3.12, a100-py3.11, \
             a100-py3.12) in pylock.toml\n"
        ),
        "{}",
        relocked.stdout
    );
    assert_eq!(read_lock(&path).vari.unwrap().targets, info.targets);
    locked_version(&path, "numlike");
    in_project(&["--check"]).expect_code(0);

    // A profile outside the project: the lock keeps its hash, not this machine's path.
    let outside = fleet.profile("cuda13").to_str().unwrap().to_owned();
    in_project(&[
        "--index-url",
        &index,
        "-o",
        "gpu.toml",
        "--target",
        &outside,
    ])
    .expect_code(0);
    let gpu = read_lock(&project.join("gpu.toml"));
    let target = &gpu.vari.as_ref().unwrap().targets[0];
    assert_eq!(
        (target.name.as_str(), target.profile.as_deref()),
        ("cuda13", None)
    );
    assert!(target
        .profile_hash
        .as_deref()
        .unwrap()
        .starts_with("sha256:"));
    assert!(!std::fs::read_to_string(project.join("gpu.toml"))
        .unwrap()
        .contains(&*fleet.dir.path().to_string_lossy()));
    // This machine kept a copy in vari's cache: the lock is checked and made again from the
    // lock alone, the profile found by its hash.
    let cache = fleet.path("author-cache");
    let with_cache = |args: &[&str]| {
        let mut command = vari();
        command
            .current_dir(&project)
            .env("VARI_CACHE_DIR", &cache)
            .env("PATH", path_with_uv())
            .env("UV_CACHE_DIR", fleet.path("uv-cache"))
            .args(args);
        run(&mut command)
    };
    let lock_gpu = ["lock", "--index-url", &index, "-o", "gpu.toml", "--target"];
    with_cache(&[&lock_gpu[..], &[outside.as_str()]].concat()).expect_code(0);
    let check = with_cache(&["lock", "-o", "gpu.toml", "--check"]);
    assert_eq!(check.code, 0, "{}", check.stderr);
    let before = std::fs::read_to_string(project.join("gpu.toml")).unwrap();
    with_cache(&["lock", "-o", "gpu.toml"]).expect_code(0);
    assert_eq!(
        std::fs::read_to_string(project.join("gpu.toml")).unwrap(),
        before
    );
    // `vari cache` counts the copy as the `profiles` area and removes it.
    let info = with_cache(&["cache", "info", "--json"]).expect_code(0);
    let info: serde_json::Value = serde_json::from_str(&info.stdout).unwrap();
    let areas = info["areas"].as_array().unwrap();
    let profiles = areas.iter().find(|a| a["area"] == "profiles").unwrap();
    assert_eq!(profiles["entries"], 1, "{info}");
    with_cache(&["cache", "clean", "profiles"]).expect_code(0);
    // Without the copy (another machine, or a cleaned cache): one error naming the target.
    for checking in [
        &["lock", "-o", "gpu.toml", "--check"][..],
        &["lock", "-o", "gpu.toml"],
    ] {
        with_cache(checking).expect_one_error(&[
            "gpu.toml",
            "cuda13",
            "outside the lock's directory",
            "--target",
        ]);
    }
    assert_eq!(
        std::fs::read_to_string(project.join("gpu.toml")).unwrap(),
        before
    );
    // Given again, it is the same target.
    with_cache(&[&lock_gpu[..], &[outside.as_str(), "--check"]].concat()).expect_code(0);
}

/// A lock made from a wheelhouse (`--find-links`, relative to the lock) with `--pre` records
/// both, so `vari lock --check` and `vari lock` with no arguments use them again; a wheelhouse
/// that is not there any more is one error naming the lock's key.
#[test]
fn a_wheelhouse_lock_with_pre_is_checked_and_locked_again_with_no_arguments() {
    use vari_test_support::wheels::TestWheel;
    let fleet = Fleet::new();
    let upstream = fleet.path("upstream");
    TestWheel::new("prelike-1.0-py3-none-any.whl").write(&upstream);
    TestWheel::new("prelike-2.0b1-py3-none-any.whl").write(&upstream);
    let here = |args: &[&str]| {
        let mut command = vari();
        command
            .current_dir(fleet.dir.path())
            .env("PATH", path_with_uv())
            .env("UV_CACHE_DIR", fleet.path("uv-cache"))
            .arg("lock")
            .args(args);
        run(&mut command)
    };
    let first = [
        "--find-links",
        "upstream",
        "--pre",
        "--target",
        "profiles/cpu.toml",
        "prelike",
    ];
    here(&first).expect_code(0);
    let path = fleet.path("pylock.toml");
    let lock = read_lock(&path);
    let info = lock.vari.as_ref().unwrap();
    assert_eq!(info.find_links, ["upstream"]);
    assert!(info.pre);
    assert_eq!(
        package(&lock, "prelike")
            .version
            .as_ref()
            .map(ToString::to_string),
        Some("2.0b1".to_owned())
    );
    // No arguments: the wheelhouse and --pre come from the lock.
    let check = here(&["--check"]);
    assert_eq!(check.code, 0, "{}", check.stderr);
    assert_eq!(check.stdout, "pylock.toml is up to date\n");
    let before = std::fs::read_to_string(&path).unwrap();
    here(&[]).expect_code(0);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
    // Given the same wheelhouse by an absolute path: the same lock, up to date.
    let absolute = upstream.to_str().unwrap();
    let check = here(&["--check", "-f", absolute, "--pre"]);
    assert_eq!(check.code, 0, "{}", check.stderr);
    // The wheelhouse gone: one error naming the key, the lock unchanged.
    std::fs::rename(&upstream, fleet.path("moved")).unwrap();
    here(&["--check"]).expect_one_error(&["tool.vari.find-links[0]", "--find-links"]);
    here(&[]).expect_one_error(&["tool.vari.find-links[0]", "--find-links"]);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
}

/// A directory holding a stand-in `uv` (a shell script with `body`), first on PATH: a broken
/// or hung installer is hostile input to `vari lock` like any other, and no real uv can be
/// made to misbehave on purpose.
fn stand_in_uv(fleet: &Fleet, body: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let bin = fleet.path("stand-in-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let uv = bin.join("uv");
    std::fs::write(&uv, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&uv, std::fs::Permissions::from_mode(0o755)).unwrap();
    format!("{}:/usr/bin:/bin", bin.display())
}

/// uv that exits 0 but writes no pins (or leaves a requirement out): no lock is written, and
/// the error names the target and the requirement.
#[test]
fn a_resolution_that_pins_nothing_writes_no_lock() {
    let fleet = Fleet::new();
    // One target: the per-target path (uv's output file left as vari wrote it, empty). Two
    // targets alike but for their hardware: the union path (uv's standard output empty).
    for (classes, body) in [
        (&["cpu"][..], "exit 0"),
        (&["cpu", "a100"][..], "cat >/dev/null; exit 0"),
    ] {
        let path = stand_in_uv(&fleet, body);
        run(fleet.command(classes, &["app-like"]).env("PATH", &path))
            .expect_one_error(&["pinned nothing for `app-like`", "no lock is written"]);
        assert!(!fleet.path("pylock.toml").exists());
    }
    // uv that pins one requirement and leaves the other out.
    let path = stand_in_uv(&fleet, "cat >/dev/null; echo 'idnalike==1.0'; exit 0");
    run(fleet
        .command(&["cpu", "a100"], &["idnalike", "app-like"])
        .env("PATH", &path))
    .expect_one_error(&["pinned nothing for `app-like`"]);
    assert!(!fleet.path("pylock.toml").exists());
}

/// A uv that never finishes is stopped at the deadline `VARI_RESOLVE_TIMEOUT` sets, and
/// reported; no lock is written.
#[test]
fn a_hung_uv_is_stopped_and_reported() {
    let fleet = Fleet::new();
    let pid_file = fleet.path("uv.pid");
    let path = stand_in_uv(
        &fleet,
        &format!("echo $$ > {}; exec sleep 600", pid_file.display()),
    );
    run(fleet
        .command(&["cpu"], &["app-like"])
        .env("PATH", &path)
        .env("VARI_RESOLVE_TIMEOUT", "0.5"))
    .expect_one_error(&[
        "did not finish within 0.5 s and was stopped",
        "VARI_RESOLVE_TIMEOUT",
    ]);
    assert!(!fleet.path("pylock.toml").exists());
    // It is gone, not left running.
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    let alive = Command::new("kill")
        .args(["-0", pid.trim()])
        .status()
        .unwrap()
        .success();
    assert!(!alive, "the stand-in uv {pid} still runs");
    run(fleet
        .command(&["cpu"], &["app-like"])
        .env("PATH", &path)
        .env("VARI_RESOLVE_TIMEOUT", "soon"))
    .expect_one_error(&["VARI_RESOLVE_TIMEOUT=\"soon\""]);
}

/// An index that answers a second request of a page with other hashes: the lock names the
/// files and hashes of the first answer, the one the resolution saw, for every class
/// (each page is read once for the whole run).
#[test]
fn a_page_answered_otherwise_the_second_time_does_not_reach_the_lock() {
    let fleet = Fleet::new();
    fleet
        .server
        .set(|knobs| knobs.other_hashes_after_pages = Some(1));
    fleet
        .lock(&["cpu", "a100", "cuda13"], &["app-like"])
        .expect_code(0);
    let lock = read_lock(&fleet.path("pylock.toml"));
    let upstream = fleet.path("upstream");
    let mut checked = 0;
    for package in &lock.packages {
        for wheel in &package.wheels {
            let name = wheel.file_name().unwrap();
            let bytes = std::fs::read(upstream.join(&name)).unwrap();
            assert_eq!(
                wheel.sha256(),
                Some(vari_test_support::wheels::sha256_hex(&bytes).as_str()),
                "{name}"
            );
            checked += 1;
        }
    }
    assert!(checked >= 4, "{checked} wheels locked");
    // Every page was asked for once.
    let mut pages: Vec<String> = fleet
        .server
        .seen()
        .into_iter()
        .filter(|s| s.path.starts_with("/simple/"))
        .map(|s| s.path)
        .collect();
    let asked = pages.len();
    pages.sort();
    pages.dedup();
    assert_eq!(asked, pages.len(), "{pages:?}");
}

/// Gives every wheel of `fleet`'s upstream whose name starts with `prefix` a PEP 658
/// `.metadata` file (its real METADATA) advertised under a SHA-256 it does not have.
fn lie_about_metadata(fleet: &Fleet, prefix: &str) {
    let upstream = fleet.path("upstream");
    for entry in std::fs::read_dir(&upstream).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if !name.starts_with(prefix) || !name.ends_with(".whl") {
            continue;
        }
        let bytes = std::fs::read(upstream.join(&name)).unwrap();
        let metadata = vari_test_support::wheels::member_text(&bytes, ".dist-info/METADATA");
        std::fs::write(upstream.join(format!("{name}.metadata")), metadata).unwrap();
        fleet.server.attrs(
            &name,
            vari_test_support::index::FileAttrs {
                core_metadata: Some(vari_test_support::index::MetadataSpelling::Core),
                wrong_metadata_sha256: true,
                ..Default::default()
            },
        );
    }
}

/// An index whose PEP 658 `.metadata` files do not match the hashes it advertises for them
/// (issue 32, item 9), through `vari lock`: refused, with one line naming the file, and no
/// lock written. For a release with variants the lock's listing reads the METADATA through
/// the client's PEP 658 rule, which refuses the mismatch (naming both digests); for one
/// without, the proxy passes the index's promise on and uv refuses the metadata.
#[test]
fn metadata_that_does_not_match_its_hash_is_refused_in_one_line() {
    let fleet = Fleet::new();
    for (prefix, said) in [
        ("numlike-", "numlike-2.3.4-py3-none-any"),
        ("app_like-", "app_like-1.0-py3-none-any.whl.metadata"),
    ] {
        lie_about_metadata(&fleet, prefix);
        let refused = fleet
            .lock(&["cpu", "a100", "cuda13"], &["app-like"])
            .expect_code(1);
        let lines: Vec<&str> = refused.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{}", refused.stderr);
        assert!(
            lines[0].starts_with("error: ")
                && lines[0].contains(said)
                && (lines[0].contains("but the index says") || lines[0].contains("Hash mismatch")),
            "{}",
            refused.stderr
        );
        assert!(!fleet.path("pylock.toml").exists());
    }
}
