//! `vari install` and `vari proxy` end to end: the demo release (`examples/demo`) installed by
//! the real pip (the machine's, from `python3 -m venv`, and the newest, from the test venv) and
//! the real uv into fresh environments, for targets given by override variables, profiles and
//! lasting preferences; the installed label read back with `vari list --json` and from the
//! installed module itself. Also: the demo's generator is deterministic, `scripts/demo` runs
//! what the test runs.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::common::{run, vari, Run};

use vari_test_support::paths::{demo, root};
use vari_test_support::venv::{run_ok, test_venv, uv};

fn check(command: &mut Command) -> String {
    String::from_utf8(run_ok(command).stdout).unwrap()
}

/// An environment without pip (made by the test venv's Python: fast).
fn bare_venv(dir: &Path) -> PathBuf {
    let venv = dir.join("venv");
    vari_test_support::venv::bare_venv(&venv);
    venv
}

/// An environment with the machine's pip (`python3 -m venv`: ensurepip, offline).
fn machine_venv(dir: &Path) -> PathBuf {
    let venv = dir.join("venv");
    check(Command::new("python3").args(["-m", "venv"]).arg(&venv));
    venv
}

/// `vari …` with hermetic installers: none of the caller's pip/uv variables or files, caches
/// and home in `scratch`, uv not on PATH unless a test puts it there.
fn hermetic(scratch: &Path) -> Command {
    let mut command = vari();
    for (key, _) in std::env::vars() {
        if key.starts_with("PIP_") || key.starts_with("UV_") {
            command.env_remove(key);
        }
    }
    let home = scratch.join("home");
    std::fs::create_dir_all(&home).unwrap();
    command
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("PIP_CONFIG_FILE", "/dev/null")
        .env("PIP_CACHE_DIR", scratch.join("pip-cache"))
        .env("UV_CACHE_DIR", scratch.join("uv-cache"))
        .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
        .env("PIP_NO_INPUT", "1")
        .env("VARI_CACHE_DIR", scratch.join("vari-cache"))
        .env("PATH", "/usr/bin:/bin")
        // uv looks for a project's uv.toml or pyproject.toml from here up.
        .current_dir(scratch);
    command
}

/// `vari install --python VENV --find-links examples/demo vari-demo ARGS…`.
fn install(scratch: &Path, venv: &Path, args: &[&str]) -> Command {
    let mut command = hermetic(scratch);
    command
        .arg("install")
        .arg("--python")
        .arg(venv)
        .arg("--find-links")
        .arg(demo())
        .arg("vari-demo")
        .args(args);
    command
}

/// name → label of what `venv` holds (`vari list --json`), without pip and its kin.
fn listed(venv: &Path) -> Vec<(String, Option<String>)> {
    let run = run(vari().arg("list").arg("--json").arg("--python").arg(venv)).expect_code(0);
    run.json()["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["name"].as_str().unwrap().to_owned(),
                p["label"].as_str().map(str::to_owned),
            )
        })
        .filter(|(name, _)| name.starts_with("vari-demo"))
        .collect()
}

/// The site-packages directory of `venv`.
fn site_packages(venv: &Path) -> PathBuf {
    std::fs::read_dir(venv.join("lib"))
        .unwrap()
        .flatten()
        .map(|e| e.path().join("site-packages"))
        .find(|p| p.is_dir())
        .unwrap()
}

/// The label the installed module says it was built for (`None`: the plain wheel).
fn module_label(venv: &Path) -> Option<String> {
    let site = site_packages(venv);
    let text = std::fs::read_to_string(site.join("vari_demo/__init__.py")).unwrap();
    let line = text.lines().find(|l| l.starts_with("LABEL = ")).unwrap();
    match line.trim_start_matches("LABEL = ") {
        "None" => None,
        quoted => Some(quoted.trim_matches('\'').to_owned()),
    }
}

/// Checks what was installed: `label` (`None`: the plain wheel) and whether the CUDA runtime
/// dependency came with it.
fn assert_installed(run: &Run, venv: &Path, label: Option<&str>, runtime: bool, case: &str) {
    let mut expected = vec![("vari-demo".to_owned(), label.map(str::to_owned))];
    if runtime {
        expected.push(("vari-demo-cuda-runtime".to_owned(), None));
    }
    assert_eq!(
        listed(venv),
        expected,
        "{case}\n{}{}",
        run.stdout,
        run.stderr
    );
    assert_eq!(module_label(venv).as_deref(), label, "{case}");
    let line = run
        .stdout
        .lines()
        .find(|l| l.starts_with("installed "))
        .map(str::to_owned);
    match label {
        Some(label) => {
            let line =
                line.unwrap_or_else(|| panic!("{case}: no `installed` line\n{}", run.stdout));
            assert!(
                line.starts_with(&format!("installed vari-demo 1.0.0 variant {label} (")),
                "{case}: {line}"
            );
        }
        None => assert_eq!(line, None, "{case}"),
    }
}

const CPU_FACTS: &str = "schema = \"vari-facts/1\"\n";

fn facts(scratch: &Path, name: &str, text: &str) -> PathBuf {
    let path = scratch.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// Override variables, options, the label installed, whether the CUDA runtime came with it.
type Case<'a> = (Vec<(&'a str, &'a str)>, Vec<&'a str>, Option<&'a str>, bool);

#[test]
fn uv_installs_the_variant_each_target_gets_and_the_dependency_only_for_cuda() {
    let dir = tempfile::tempdir().unwrap();
    let cpu = facts(dir.path(), "cpu.toml", CPU_FACTS);
    let cpu = cpu.to_str().unwrap();
    let gpu_node = root().join("examples/profiles/gpu-node.toml");
    let gpu_node = gpu_node.to_str().unwrap();
    let cases: Vec<Case> = vec![
        (vec![], vec!["--profile", cpu], Some("null"), false),
        (
            vec![("NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION", "12.6")],
            vec![],
            Some("cu126"),
            true,
        ),
        (
            vec![("NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION", "12.8")],
            vec![],
            Some("cu128"),
            true,
        ),
        (
            vec![("NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION", "13.0")],
            vec![],
            Some("cu130"),
            true,
        ),
        (
            vec![
                ("AMD_VARIANT_PROVIDER_FORCE_ROCM_VERSION", "6.4.1"),
                ("AMD_VARIANT_PROVIDER_FORCE_GFX_ARCH", "gfx942"),
            ],
            vec![],
            Some("rocm6.4"),
            false,
        ),
        (
            vec![("INTEL_VARIANT_PROVIDER_FORCE_DEVICE_IP", "12.60.7")],
            vec![],
            Some("xpu"),
            false,
        ),
        (vec![], vec!["--profile", gpu_node], Some("cu128"), true),
        (vec![], vec!["--profile", cpu, "--no-variants"], None, false),
        // `-- ARGS` reach the installer: without dependencies, no CUDA runtime.
        (
            vec![("NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION", "12.8")],
            vec!["--", "--no-deps"],
            Some("cu128"),
            false,
        ),
    ];
    for (i, (vars, options, label, runtime)) in cases.into_iter().enumerate() {
        let scratch = dir.path().join(format!("case{i}"));
        let venv = bare_venv(&scratch);
        let mut command = install(&scratch, &venv, &["--installer"]);
        command.arg(uv()).args(&options).envs(vars.iter().copied());
        let run = run(&mut command).expect_code(0);
        assert_installed(
            &run,
            &venv,
            label,
            runtime,
            &format!("{vars:?} {options:?}"),
        );
    }
}

#[test]
fn the_machines_pip_and_the_newest_pip_install_the_same_choices() {
    let dir = tempfile::tempdir().unwrap();
    let cpu = facts(dir.path(), "cpu.toml", CPU_FACTS);
    let gpu_node = root().join("examples/profiles/gpu-node.toml");

    // The machine's pip: `python3 -m venv` and `--installer pip` (the environment's own).
    let scratch = dir.path().join("machine");
    let venv = machine_venv(&scratch);
    let machine = run(install(&scratch, &venv, &["--installer", "pip"])
        .env("NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION", "12.8"))
    .expect_code(0);
    assert!(
        machine.stdout.contains("Successfully installed"),
        "{}",
        machine.stdout
    );
    assert_installed(&machine, &venv, Some("cu128"), true, "machine's pip");

    // The newest pip, from the test venv, installing into an environment without pip.
    for (profile, label, runtime) in [(&gpu_node, "cu128", true), (&cpu, "null", false)] {
        let scratch = dir.path().join(label);
        let venv = bare_venv(&scratch);
        let mut command = install(&scratch, &venv, &["--installer"]);
        command
            .arg(test_venv().join("bin/pip"))
            .arg("--profile")
            .arg(profile);
        let run = run(&mut command).expect_code(0);
        assert_installed(&run, &venv, Some(label), runtime, "newest pip");
    }
}

/// The test `scripts/demo` stands for: a fresh `python3 -m venv`, the machine's pip (uv is not
/// on PATH), the demo directory as the only source, this machine's hardware. The expected
/// label and reason are `vari select`'s on the same machine (the null variant on one without a
/// GPU).
#[test]
fn the_demo_installs_what_select_chooses_for_this_machine_with_a_one_line_reason() {
    let script = std::fs::read_to_string(root().join("scripts/demo")).unwrap();
    assert!(
        script.contains(
            "target/release/vari install --python .demo/venv --find-links examples/demo vari-demo"
        ),
        "scripts/demo no longer runs what this test runs"
    );
    let dir = tempfile::tempdir().unwrap();
    let venv = machine_venv(dir.path());
    let select = run(hermetic(dir.path())
        .args(["select", "--json", "--no-deps", "vari-demo", "--find-links"])
        .arg(demo())
        .arg("--python")
        .arg(&venv))
    .expect_code(0);
    let selection = &select.json()["selections"][0];
    let label = selection["label"].as_str().unwrap().to_owned();
    let reason = selection["reason"].as_str().unwrap().to_owned();

    let run = run(&mut install(dir.path(), &venv, &[])).expect_code(0);
    // pip, not uv: uv is not on PATH.
    assert!(
        run.stdout.contains("Successfully installed"),
        "{}",
        run.stdout
    );
    let cuda = label.starts_with("cu");
    assert_installed(&run, &venv, Some(&label), cuda, "scripts/demo");
    let line = run.stdout.lines().last().unwrap();
    assert!(line.ends_with(&format!("): {reason}")), "{line}");
    if label == "null" {
        assert!(
            line.starts_with("installed vari-demo 1.0.0 variant null (no properties): the null variant: builds for NVIDIA GPUs (cu126, cu128, cu130)"),
            "{line}"
        );
    }
}

/// `vari install` selects once per package: the proxy's choice is journalled with its reason
/// as data, and the line printed after installing words it as `vari select` does without
/// selecting again (each selection emits one `vari_select::selection` event, counted here).
#[test]
fn install_selects_once_per_package_and_words_the_choice_as_select_does() {
    let dir = tempfile::tempdir().unwrap();
    let venv = bare_venv(dir.path());
    let cuda = ("NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION", "12.8");
    let select = run(hermetic(dir.path())
        .args(["select", "--json", "--no-deps", "vari-demo", "--find-links"])
        .arg(demo())
        .arg("--python")
        .arg(&venv)
        .env(cuda.0, cuda.1))
    .expect_code(0);
    let reason = select.json()["selections"][0]["reason"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut command = install(dir.path(), &venv, &["--installer"]);
    command
        .arg(uv())
        .env(cuda.0, cuda.1)
        .env("RUST_LOG", "warn,vari_select::selection=debug");
    let installed = run(&mut command).expect_code(0);
    // One event per selection, naming the project: `… selecting NAME project=NAME`.
    let mut selected: Vec<&str> = installed
        .stderr
        .lines()
        .filter(|l| l.contains("vari_select::selection"))
        .filter_map(|l| {
            l.rsplit_once(" project=")
                .map(|(_, project)| project.trim())
        })
        .collect();
    selected.sort_unstable();
    // The demo and, for CUDA, its runtime dependency: each selected once.
    assert_eq!(
        selected,
        ["vari-demo", "vari-demo-cuda-runtime"],
        "{}",
        installed.stderr
    );
    let line = installed.stdout.lines().last().unwrap();
    assert!(
        line.starts_with("installed vari-demo 1.0.0 variant cu128 (")
            && line.ends_with(&format!("): {reason}")),
        "{line}"
    );
}

#[test]
fn uv_is_the_default_when_it_is_on_path() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::os::unix::fs::symlink(uv(), bin.join("uv")).unwrap();
    let venv = bare_venv(dir.path());
    let cpu = facts(dir.path(), "cpu.toml", CPU_FACTS);
    let mut command = install(dir.path(), &venv, &[]);
    command.arg("--profile").arg(&cpu).env("PATH", &bin);
    let with_uv = run(&mut command).expect_code(0);
    // uv's report, not pip's; the environment has no pip that could have run.
    assert!(
        with_uv.stderr.contains("Installed 1 package"),
        "{}",
        with_uv.stderr
    );
    assert_installed(&with_uv, &venv, Some("null"), false, "default installer");

    // Without uv on PATH and without pip in the environment: a clear error before anything runs.
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let venv2 = bare_venv(&dir.path().join("second"));
    let mut command = install(dir.path(), &venv2, &[]);
    command.env("PATH", &empty);
    run(&mut command).expect_one_error(&["has no pip", "ensurepip", "--installer uv"]);
}

/// Installers compare versions, not variants: a plain wheel of the same version already there is
/// kept, and vari says so and how to replace it.
#[test]
fn a_version_already_installed_as_another_variant_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let venv = bare_venv(dir.path());
    let cuda = ("NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION", "12.8");
    let mut command = install(dir.path(), &venv, &["--no-variants", "--installer"]);
    command.arg(uv());
    run(&mut command).expect_code(0);
    let mut command = install(dir.path(), &venv, &["--installer"]);
    command.arg(uv()).env(cuda.0, cuda.1);
    let again = run(&mut command).expect_code(0);
    assert!(
        again.stderr.lines().any(|l| l
            == "warning: vari-demo 1.0.0 was already installed as the plain wheel (no variant), \
                and the installer kept it; the choice for this target is variant cu128: to \
                replace it, give uv --reinstall (after `--`)"),
        "{}",
        again.stderr
    );
    assert_eq!(listed(&venv), [("vari-demo".to_owned(), None)]);
    let mut command = install(dir.path(), &venv, &["--installer"]);
    command
        .arg(uv())
        .args(["--", "--reinstall"])
        .env(cuda.0, cuda.1);
    let replaced = run(&mut command).expect_code(0);
    assert_installed(&replaced, &venv, Some("cu128"), true, "--reinstall");
    assert!(!replaced.stderr.contains("warning:"), "{}", replaced.stderr);
}

#[test]
fn dry_run_shows_the_choice_and_installs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let venv = bare_venv(dir.path());
    let gpu_node = root().join("examples/profiles/gpu-node.toml");
    let mut command = install(dir.path(), &venv, &["--dry-run", "--profile"]);
    command.arg(&gpu_node);
    let run = run(&mut command).expect_code(0);
    assert_eq!(
        run.stdout,
        format!(
            "would install vari-demo 1.0.0 variant cu128: the best of 3 variants that fit facts {}\n",
            gpu_node.display()
        )
    );
    assert_eq!(listed(&venv), []);
}

/// uv's own configuration files name where packages come from: the proxy reads them, and uv
/// is given its settings without them, so it installs what vari chose rather than reading the
/// demo directory itself (where it would take the plain wheel, `--no-variants`'s answer).
#[test]
fn uvs_project_configuration_is_the_proxys_source_and_hidden_from_uv() {
    let dir = tempfile::tempdir().unwrap();
    let venv = bare_venv(dir.path());
    let project = dir.path().join("project");
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::write(
        project.join("pyproject.toml"),
        format!(
            "[project]\nname = 'app'\nversion = '1'\n\n[tool.uv]\nno-index = true\n\
             find-links = [{:?}]\n\n[tool.uv.pip]\ncompile-bytecode = true\n",
            demo().display().to_string()
        ),
    )
    .unwrap();
    let mut command = hermetic(dir.path());
    command
        .current_dir(project.join("src"))
        .args(["-v", "install", "--installer"])
        .arg(uv())
        .arg("--python")
        .arg(&venv)
        .arg("vari-demo")
        .env("NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION", "12.8");
    let run = run(&mut command).expect_code(0);
    assert!(
        run.stderr.contains(&format!(
            "installing from {} ({}: find-links)",
            demo().display(),
            project.join("pyproject.toml").display()
        )),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(&format!(
            "uv's configuration files: {}",
            project.join("pyproject.toml").display()
        )),
        "{}",
        run.stderr
    );
    assert_installed(&run, &venv, Some("cu128"), true, "uv's pyproject.toml");
    // uv's other settings still applied: `compile-bytecode` from [tool.uv.pip].
    let compiled = std::fs::read_dir(site_packages(&venv).join("vari_demo/__pycache__"));
    assert!(
        compiled.is_ok_and(|mut d| d.next().is_some()),
        "no bytecode compiled"
    );
}

/// A release of CUDA builds only: on a CPU target nothing fits.
fn cuda_only(scratch: &Path) -> PathBuf {
    let dir = scratch.join("cuda-only");
    std::fs::create_dir_all(&dir).unwrap();
    for name in [
        "vari_demo-1.0.0-py3-none-any-cu128.whl",
        "vari_demo-1.0.0-variants.json",
        "vari_demo_cuda_runtime-1.0.0-py3-none-any.whl",
    ] {
        std::fs::copy(demo().join(name), dir.join(name)).unwrap();
    }
    dir
}

#[test]
fn when_nothing_fits_the_error_names_the_hardware_that_would() {
    let dir = tempfile::tempdir().unwrap();
    let cpu = facts(dir.path(), "cpu.toml", CPU_FACTS);
    let source = cuda_only(dir.path());
    let expected = format!(
        "error: vari-demo 1.0.0 has no build for facts {cpu}: builds for NVIDIA GPUs (cu128), which \
         facts {cpu} does not list",
        cpu = cpu.display()
    );
    for installer in [uv(), test_venv().join("bin/pip")] {
        let scratch = dir.path().join(installer.file_name().unwrap());
        let venv = bare_venv(&scratch);
        let mut command = hermetic(&scratch);
        command
            .args(["install", "vari-demo", "--installer"])
            .arg(&installer)
            .arg("--python")
            .arg(&venv)
            .arg("--find-links")
            .arg(&source)
            .arg("--profile")
            .arg(&cpu);
        // The installer's own exit status (1 for both), its own message, then vari's.
        let run = run(&mut command).expect_code(1);
        assert!(
            run.stderr.lines().any(|l| l == expected),
            "{}:\n{}",
            installer.display(),
            run.stderr
        );
        assert_eq!(listed(&venv), []);
    }
    // --dry-run says the same as its one error line.
    let scratch = dir.path().join("dry");
    let venv = bare_venv(&scratch);
    let mut command = hermetic(&scratch);
    command
        .args(["install", "--dry-run", "vari-demo", "--python"])
        .arg(&venv)
        .arg("--find-links")
        .arg(&source)
        .arg("--profile")
        .arg(&cpu);
    let run = run(&mut command);
    run.expect_one_error(&[expected.trim_start_matches("error: ")]);
}

#[test]
fn an_upstream_that_is_down_fails_the_installer_and_the_log_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let venv = bare_venv(dir.path());
    // A port nothing listens on.
    let address = free_loopback_address();
    let index = format!("http://{address}/simple/");
    let mut command = hermetic(dir.path());
    command
        .args(["install", "vari-demo", "--installer"])
        .arg(uv())
        .arg("--python")
        .arg(&venv)
        .args(["--index-url", &index])
        // uv would ask the proxy again three times, each time after a longer pause.
        .env("UV_HTTP_RETRIES", "0");
    let run = run(&mut command);
    assert_ne!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr
            .lines()
            .any(|l| l.contains("WARN") && l.contains(&address)),
        "{}",
        run.stderr
    );
    assert_upstream_named(&run, &address);
}

/// vari's own last word on an index that could not be read: an `error:` line naming the
/// project's URL on that index, after the installer's "no matching distribution".
fn assert_upstream_named(run: &Run, address: &str) {
    let named = format!("http://{address}/simple/vari-demo/: ");
    assert!(
        run.stderr.lines().any(|l| l.starts_with(
            "error: the installer failed: cannot read the package index for vari-demo: "
        ) && l.contains(&named)),
        "{}",
        run.stderr
    );
}

/// `vari install --index-url INDEX --installer INSTALLER vari-demo EXTRA…` for a machine with
/// a CUDA 12.8 driver (the cu128 variant, and its CUDA runtime dependency).
fn install_from(
    scratch: &Path,
    venv: &Path,
    index: &str,
    installer: &Path,
    extra: &[&str],
) -> Command {
    let mut command = hermetic(scratch);
    command
        .arg("install")
        .arg("--python")
        .arg(venv)
        .args(["--index-url", index, "--installer"])
        .arg(installer)
        .arg("vari-demo")
        .args(extra)
        .env("NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION", "12.8")
        .env("UV_HTTP_RETRIES", "0");
    command
}

/// pip through vari against an index on a closed port: pip says only "no matching
/// distribution"; vari's `error:` line names the index and what failed.
#[test]
fn an_unreachable_index_is_named_in_vari_s_own_error_line_with_pip() {
    let dir = tempfile::tempdir().unwrap();
    let venv = bare_venv(dir.path());
    let address = free_loopback_address();
    let index = format!("http://{address}/simple/");
    let pip = test_venv().join("bin/pip");
    // pip would ask the proxy five more times (it retries a 502), each after a longer pause.
    let run = run(&mut install_from(
        dir.path(),
        &venv,
        &index,
        &pip,
        &["--", "--retries", "0"],
    ));
    assert_ne!(run.code, 0, "{}", run.stderr);
    assert_upstream_named(&run, &address);
    assert!(!run.stdout.contains("installed "), "{}", run.stdout);
}

/// uv keeps what it reads from an index under the index URL: `vari install` gives it the same
/// URL for the same configuration, so a second install (into another environment, with the
/// same uv cache) downloads no wheel at all, and vari still reports what uv installed.
#[test]
fn a_second_install_with_uv_reuses_uvs_cache_and_downloads_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let index = crate::counting_index::CountingIndex::start(&demo());
    let first_venv = bare_venv(&dir.path().join("first"));
    let first = run(&mut install_from(
        dir.path(),
        &first_venv,
        &index.url,
        &uv(),
        &[],
    ))
    .expect_code(0);
    assert_installed(&first, &first_venv, Some("cu128"), true, "first install");
    let downloads = index.wheel_downloads();
    assert!(downloads > 0, "{}", first.stderr);
    let second_venv = bare_venv(&dir.path().join("second"));
    let second = run(&mut install_from(
        dir.path(),
        &second_venv,
        &index.url,
        &uv(),
        &[],
    ))
    .expect_code(0);
    assert_installed(
        &second,
        &second_venv,
        Some("cu128"),
        true,
        "from uv's cache",
    );
    assert_eq!(
        index.wheel_downloads(),
        downloads,
        "the second install downloaded wheels again\n{}",
        second.stderr
    );
    // uv says "Prepared N packages" when it downloaded or unpacked something.
    assert!(!second.stderr.contains("Prepared"), "{}", second.stderr);
}

/// The same with environments that hold a distribution already, so that the target's profile
/// has an `abi_dependency` namespace whose source is each environment's site-packages path
/// (every CI job's fresh venv): the proxy's URL must not change with that path, or uv unpacks
/// and caches every wheel again.
#[test]
fn two_fresh_environments_at_different_paths_share_uvs_cache() {
    let dir = tempfile::tempdir().unwrap();
    let index = crate::counting_index::CountingIndex::start(&demo());
    let mut runs = Vec::new();
    for name in ["ci-job-1", "ci-job-2"] {
        let venv = bare_venv(&dir.path().join(name));
        let dist_info = vari_test_support::venv::site_packages(&venv).join("basepkg-1.0.dist-info");
        std::fs::create_dir_all(&dist_info).unwrap();
        std::fs::write(
            dist_info.join("METADATA"),
            "Metadata-Version: 2.1\nName: basepkg\nVersion: 1.0\n",
        )
        .unwrap();
        let installed =
            run(&mut install_from(dir.path(), &venv, &index.url, &uv(), &[])).expect_code(0);
        assert_installed(&installed, &venv, Some("cu128"), true, name);
        runs.push((index.wheel_downloads(), installed.stderr));
    }
    assert!(runs[0].0 > 0, "{}", runs[0].1);
    assert_eq!(
        runs[1].0, runs[0].0,
        "the second environment's install downloaded wheels again\n{}",
        runs[1].1
    );
    assert!(!runs[1].1.contains("Prepared"), "{}", runs[1].1);
}

/// An earlier install of the same version is in place and the installer fails this time: vari
/// reports nothing as installed, and exits with the installer's failure.
#[test]
fn a_failed_install_over_an_earlier_one_reports_nothing_installed() {
    let dir = tempfile::tempdir().unwrap();
    let index = crate::counting_index::CountingIndex::start(&demo());
    let venv = bare_venv(dir.path());
    let pip = test_venv().join("bin/pip");
    let first = run(&mut install_from(dir.path(), &venv, &index.url, &pip, &[])).expect_code(0);
    assert_installed(&first, &venv, Some("cu128"), true, "first install");
    // pip resolves (pages and metadata answer), then cannot download the CUDA runtime.
    index.refuse_wheels();
    let failed = run(&mut install_from(
        dir.path(),
        &venv,
        &index.url,
        &pip,
        &["--", "--force-reinstall", "--no-cache-dir"],
    ));
    assert_ne!(failed.code, 0, "{}", failed.stderr);
    assert!(
        !failed.stdout.lines().any(|l| l.starts_with("installed ")),
        "{}\n{}",
        failed.stdout,
        failed.stderr
    );
    assert!(!failed.stderr.contains("warning:"), "{}", failed.stderr);
    // What the first install put there is still there.
    assert_eq!(module_label(&venv).as_deref(), Some("cu128"));
}

#[test]
fn preferences_from_every_config_layer_change_the_installed_variant() {
    let dir = tempfile::tempdir().unwrap();
    let all = facts(
        dir.path(),
        "all.toml",
        "[nvidia]\ncuda_version = \"13.0\"\n[amd]\ngfx_arch = [\"gfx942\"]\nrocm_version = \
         \"6.4\"\n[intel]\ndevice_ip = [\"12.60.7\"]\n",
    );
    let project = dir.path().join("project");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    let user_config = dir.path().join("user/vari/vari.toml");
    std::fs::create_dir_all(user_config.parent().unwrap()).unwrap();
    let vari_config = dir.path().join("vari-config.toml");
    // Each step adds one layer over the ones before; the command line wins over all.
    let steps = [
        ("no configuration: the release's namespace order", "cu130"),
        ("user vari.toml: prefer amd", "rocm6.4"),
        ("[tool.vari] of the project: prefer intel", "xpu"),
        ("VARI_CONFIG: prefer a CUDA version", "cu128"),
        ("the command line: --prefer amd", "rocm6.4"),
    ];
    for (i, (step, label)) in steps.into_iter().enumerate() {
        match i {
            1 => std::fs::write(&user_config, "prefer = [\"amd\"]\n").unwrap(),
            2 => std::fs::write(
                project.join("pyproject.toml"),
                "[project]\nname = \"app\"\n\n[tool.vari]\nprefer = [\"intel\"]\n",
            )
            .unwrap(),
            3 => std::fs::write(
                &vari_config,
                "prefer = [\"nvidia::cuda_version_lower_bound::12.8\"]\n",
            )
            .unwrap(),
            _ => {}
        }
        let scratch = dir.path().join(format!("step{i}"));
        let venv = bare_venv(&scratch);
        let mut command = install(&scratch, &venv, &["--installer"]);
        command
            .arg(uv())
            .arg("--profile")
            .arg(&all)
            .current_dir(&project)
            .env_remove("VARI_NO_CONFIG")
            .env("XDG_CONFIG_HOME", dir.path().join("user"));
        if i >= 3 {
            command.env("VARI_CONFIG", &vari_config);
        }
        if i == 4 {
            command.args(["--prefer", "amd"]);
        }
        let run = run(&mut command).expect_code(0);
        assert_installed(
            &run,
            &venv,
            Some(label),
            label.starts_with("cu"),
            &format!("step {i}: {step}"),
        );
    }
}

/// `vari proxy` in the background: its URL line, and the process to stop.
struct Proxy {
    child: std::process::Child,
    /// The target's own URL, for uv.
    url: String,
    /// The `/simple/` alias, for pip.
    alias: String,
}

impl Proxy {
    fn start(scratch: &Path, args: &[&str]) -> Self {
        let mut child = hermetic(scratch)
            .args(["proxy", "--find-links"])
            .arg(demo())
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let line = crate::common::first_stdout_line(&mut child);
        let (alias, url) = crate::common::proxy_urls(&line);
        assert_eq!(
            line.trim_end(),
            format!("PIP_INDEX_URL={alias} UV_DEFAULT_INDEX={url}")
        );
        // pip gets the alias, uv the URL that names the target: `…/t/{12 hex digits}/simple/`.
        let base = alias
            .strip_suffix("/simple/")
            .expect("the alias is /simple/");
        let fingerprint = url
            .strip_prefix(&format!("{base}/t/"))
            .and_then(|rest| rest.strip_suffix("/simple/"))
            .unwrap_or_else(|| panic!("{url} is not {base}/t/…/simple/"));
        assert!(
            fingerprint.len() == 12 && fingerprint.bytes().all(|b| b.is_ascii_hexdigit()),
            "{url}"
        );
        Self { child, url, alias }
    }

    /// `signal` (`INT`, `TERM`), then the exit status and the log.
    fn stop_with(self, signal: &str) -> (i32, String) {
        check(Command::new("kill").args([&format!("-{signal}"), &self.child.id().to_string()]));
        let output = self.child.wait_with_output().unwrap();
        (
            output
                .status
                .code()
                .unwrap_or_else(|| panic!("ended by a signal, not by itself: {output:?}")),
            String::from_utf8(output.stderr).unwrap(),
        )
    }

    /// Ctrl-C, then the exit status and the log.
    fn stop(self) -> (i32, String) {
        self.stop_with("INT")
    }
}

fn uv_install(scratch: &Path, index: &str, extra: &[&str]) -> PathBuf {
    let venv = bare_venv(scratch);
    check(
        Command::new(uv())
            .args(["pip", "install", "--python"])
            .arg(&venv)
            .args(["--index-url", index])
            .args(extra)
            .arg("vari-demo")
            .env("UV_CACHE_DIR", scratch.parent().unwrap().join("uv-cache"))
            .env("UV_NO_CONFIG", "1")
            .env("UV_HTTP_RETRIES", "0"),
    );
    venv
}

#[test]
fn the_proxy_serves_the_targets_choice_to_uv_logs_it_and_stops_on_ctrl_c() {
    let dir = tempfile::tempdir().unwrap();
    let gpu_node = root().join("examples/profiles/gpu-node.toml");
    let proxy = Proxy::start(
        dir.path(),
        &[
            "--bind",
            "127.0.0.1:0",
            "--profile",
            gpu_node.to_str().unwrap(),
        ],
    );
    assert!(proxy.url.starts_with("http://127.0.0.1:"), "{}", proxy.url);
    let venv = uv_install(&dir.path().join("a"), &proxy.url, &[]);
    let (code, log) = proxy.stop();
    assert_eq!(code, 0, "{log}");
    assert_eq!(
        listed(&venv),
        [
            ("vari-demo".to_owned(), Some("cu128".to_owned())),
            ("vari-demo-cuda-runtime".to_owned(), None)
        ]
    );
    // The choice is logged at the default level, with its reason.
    assert!(
        log.lines()
            .any(|l| l.contains("INFO") && l.contains("vari-demo 1.0.0") && l.contains("cu128")),
        "{log}"
    );
}

/// `127.0.0.1:PORT` with a port free a moment ago: nothing listens there (yet).
fn free_loopback_address() -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    format!("127.0.0.1:{port}")
}

/// uv keeps wheels under the index URL and the file name, and reuses them without comparing
/// hashes: after the proxy's target changes on the same port, uv with the same cache (no
/// `--refresh`) gets the new choice because the URL it is given names the target.
#[test]
fn after_a_target_change_on_the_same_port_uv_and_its_cache_get_the_new_choice() {
    let dir = tempfile::tempdir().unwrap();
    let bind = free_loopback_address();
    let cpu = facts(dir.path(), "cpu.toml", CPU_FACTS);
    let gpu_node = root().join("examples/profiles/gpu-node.toml");
    let proxy = Proxy::start(
        dir.path(),
        &["--bind", &bind, "--profile", gpu_node.to_str().unwrap()],
    );
    let first = uv_install(&dir.path().join("first"), &proxy.url, &[]);
    let (first_url, first_alias) = (proxy.url.clone(), proxy.alias.clone());
    assert_eq!(proxy.stop().0, 0);
    assert_eq!(module_label(&first).as_deref(), Some("cu128"));
    let proxy = Proxy::start(
        dir.path(),
        &["--bind", &bind, "--profile", cpu.to_str().unwrap()],
    );
    // Another target, another URL for uv; the same alias for pip.
    assert_ne!(proxy.url, first_url);
    assert_eq!(proxy.alias, first_alias);
    let second = uv_install(&dir.path().join("second"), &proxy.url, &[]);
    let url = proxy.url.clone();
    let (code, log) = proxy.stop();
    assert_eq!(code, 0);
    assert_eq!(module_label(&second).as_deref(), Some("null"));
    // The note says which URL is uv's.
    assert!(
        log.contains(&format!("note: give uv {url}: it names this target")),
        "{log}"
    );
    // The fallback to the null variant is logged with the facts `vari select` gives: which
    // hardware the other variants are built for, and why this target lacks it.
    let select = run(hermetic(dir.path())
        .args(["select", "--json", "--find-links"])
        .arg(demo())
        .args(["--profile", cpu.to_str().unwrap(), "vari-demo"]))
    .expect_code(0);
    let reason = select.json()["selections"][0]["reason"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        reason.starts_with("the null variant: builds for NVIDIA GPUs ("),
        "{reason}"
    );
    assert!(
        log.lines()
            .any(|l| l.contains("serving label null") && l.contains(&format!("({reason}"))),
        "{reason}\n{log}"
    );
}

/// `docker stop` sends SIGTERM: a graceful stop with status 0, the port free again; even right
/// after the URL was announced.
#[test]
fn the_proxy_stops_on_sigterm_with_status_0_and_frees_its_port() {
    let dir = tempfile::tempdir().unwrap();
    let bind = free_loopback_address();
    let cpu = facts(dir.path(), "cpu.toml", CPU_FACTS);
    for signal in ["TERM", "INT"] {
        let proxy = Proxy::start(
            dir.path(),
            &["--bind", &bind, "--profile", cpu.to_str().unwrap()],
        );
        let (code, log) = proxy.stop_with(signal);
        assert_eq!(code, 0, "SIG{signal}: {log}");
        assert!(
            log.contains(&format!("SIG{signal}: stopping the proxy")),
            "{log}"
        );
        std::net::TcpListener::bind(&bind)
            .unwrap_or_else(|e| panic!("{bind} is still taken after SIG{signal}: {e}"));
    }
}

/// `vari install` without index options reads the indexes the installer would use, not the
/// ones `vari select` reads: its help says so, and `vari select`'s keeps its own default.
#[test]
fn install_help_gives_the_installers_default_indexes() {
    let dir = tempfile::tempdir().unwrap();
    let help = |command: &str| -> String {
        let text = run(hermetic(dir.path()).args([command, "--help"]))
            .expect_code(0)
            .stdout;
        // One line per option: clap wraps the help to the terminal's width.
        let start = text.find("--index-url <URL>").unwrap();
        let end = text[start..].find("--extra-index-url").unwrap();
        text[start..start + end]
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    let install = help("install");
    assert!(
        install.contains(
            "[default: `index-url` from vari.toml, else the indexes the installer would use: \
             PIP_INDEX_URL and pip's configuration files for pip, UV_DEFAULT_INDEX or \
             UV_INDEX_URL and uv.toml or [tool.uv] for uv, else PyPI]"
        ),
        "{install}"
    );
    let select = help("select");
    assert!(
        select.contains(
            "else `UV_DEFAULT_INDEX`, `UV_INDEX_URL` or `PIP_INDEX_URL`, else PyPI, \
             `https://pypi.org/simple/`]"
        ),
        "{select}"
    );
}

#[test]
fn the_proxy_refuses_remote_and_self_pointing_addresses() {
    let dir = tempfile::tempdir().unwrap();
    run(hermetic(dir.path())
        .args(["proxy", "--bind", "0.0.0.0:0", "--find-links"])
        .arg(demo()))
    .expect_one_error(&["refusing to listen on 0.0.0.0:0", "--allow-remote"]);
    run(hermetic(dir.path())
        .args(["proxy"])
        .env("PIP_INDEX_URL", "http://localhost:3141/simple/"))
    .expect_one_error(&["http://localhost:3141/simple/", "this proxy's own address"]);
}

/// The committed demo release is what its generator writes, byte for byte.
#[test]
fn regenerating_the_demo_gives_the_committed_files() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("demo");
    check(
        Command::new(demo().join("generate"))
            .arg("--out")
            .arg(&out)
            .arg("--vari")
            .arg(env!("CARGO_BIN_EXE_vari"))
            .env("VARI_CACHE_DIR", dir.path().join("cache")),
    );
    let release = |dir: &Path| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".whl") || n.ends_with("-variants.json"))
            .collect();
        names.sort();
        names
    };
    let names = release(&out);
    assert_eq!(names, release(&demo()));
    assert_eq!(names.len(), 9, "{names:?}");
    for name in names {
        assert!(
            std::fs::read(out.join(&name)).unwrap() == std::fs::read(demo().join(&name)).unwrap(),
            "{name} differs from what examples/demo/generate writes: run it and commit the result"
        );
    }
}

/// uv reuses a cached wheel by index URL and file name without comparing hashes, and the proxy
/// shows every variant under the plain name: when the index gains a better variant of a version
/// uv cached, uv installs the cached one. vari says so, and how to get the choice.
#[test]
fn a_variant_uv_took_from_its_cache_instead_of_the_choice_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let files = dir.path().join("files");
    std::fs::create_dir(&files).unwrap();
    for entry in std::fs::read_dir(demo()).unwrap().flatten() {
        let name = entry.file_name().into_string().unwrap();
        if name.ends_with(".whl") && !name.contains("-cu128") || name.ends_with(".json") {
            std::fs::copy(entry.path(), files.join(&name)).unwrap();
        }
    }
    let index = crate::counting_index::CountingIndex::start(&files);
    let first_venv = bare_venv(&dir.path().join("first"));
    let first = run(&mut install_from(
        dir.path(),
        &first_venv,
        &index.url,
        &uv(),
        &[],
    ))
    .expect_code(0);
    assert_installed(&first, &first_venv, Some("cu126"), true, "without cu128");
    // The better build is published.
    let cu128 = "vari_demo-1.0.0-py3-none-any-cu128.whl";
    std::fs::copy(demo().join(cu128), files.join(cu128)).unwrap();
    let second_venv = bare_venv(&dir.path().join("second"));
    let second = run(&mut install_from(
        dir.path(),
        &second_venv,
        &index.url,
        &uv(),
        &[],
    ))
    .expect_code(0);
    assert_eq!(module_label(&second_venv).as_deref(), Some("cu126"));
    assert!(
        second.stderr.lines().any(|l| l
            == "warning: vari-demo 1.0.0 was installed as variant cu126 from uv's cache (kept \
                from an earlier run, when the index offered other files); the choice for this \
                target is now variant cu128: to get it, give uv --refresh-package vari-demo \
                (after `--`)"),
        "{}",
        second.stderr
    );
    assert!(
        !second.stdout.contains("installed vari-demo"),
        "{}",
        second.stdout
    );
    // The advice works.
    let third_venv = bare_venv(&dir.path().join("third"));
    let third = run(&mut install_from(
        dir.path(),
        &third_venv,
        &index.url,
        &uv(),
        &["--", "--refresh-package", "vari-demo"],
    ))
    .expect_code(0);
    assert_installed(&third, &third_venv, Some("cu128"), true, "refreshed");
}

/// Requirements from `-r` files (nested, relative to the file naming them) are judged as those
/// on the command line are: a dry run gives each its line and fails when one fails, and a
/// failed install explains the one nothing fits.
#[test]
fn requirements_files_get_a_line_each_and_their_explanation() {
    let dir = tempfile::tempdir().unwrap();
    let cpu = facts(dir.path(), "cpu.toml", CPU_FACTS);
    let source = cuda_only(dir.path());
    std::fs::create_dir_all(dir.path().join("reqs")).unwrap();
    std::fs::write(
        dir.path().join("reqs/req.txt"),
        "# the runtime fits any machine\nvari-demo-cuda-runtime\n-r more.txt\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("reqs/more.txt"),
        "vari-demo  # CUDA builds only\n",
    )
    .unwrap();
    let expected = format!(
        "error: vari-demo 1.0.0 has no build for facts {cpu}: builds for NVIDIA GPUs (cu128), which \
         facts {cpu} does not list",
        cpu = cpu.display()
    );
    let venv = bare_venv(dir.path());
    let command = |extra: &[&str]| {
        let mut command = hermetic(dir.path());
        command
            .current_dir(dir.path())
            .arg("install")
            .args(extra)
            .arg("--python")
            .arg(&venv)
            .arg("--find-links")
            .arg(&source)
            .arg("--profile")
            .arg(&cpu)
            .args(["--", "-r", "reqs/req.txt"]);
        command
    };
    let dry = run(&mut command(&["--dry-run"])).expect_code(1);
    assert_eq!(
        dry.stdout,
        "would install vari-demo-cuda-runtime 1.0.0 (no variant): the non-variant wheel (no \
         variant wheel for this Python and platform)\n"
    );
    assert_eq!(dry.stderr, format!("{expected}\n"));
    let json = run(&mut command(&["--dry-run", "--json"])).expect_code(1);
    crate::common::assert_json_schema("install", &json.json());
    let selections = &json.json()["selections"];
    assert_eq!(selections[0]["name"], "vari-demo-cuda-runtime");
    assert_eq!(
        selections[1]["error"].as_str(),
        expected.strip_prefix("error: ")
    );
    // Installing: the installer fails, and vari explains the requirement from the file.
    let installed = run(&mut command(&["--installer", uv().to_str().unwrap()])).expect_code(1);
    assert!(
        installed.stderr.lines().any(|l| l == expected),
        "{}",
        installed.stderr
    );
    assert_eq!(listed(&venv), []);
}

/// One environment, one writer, as for `vari sync`: `vari install` started while another run
/// holds the environment's lock says so, installs nothing, and proceeds once it is released.
#[test]
fn install_waits_for_the_run_that_holds_the_environment_with_a_note() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let venv = bare_venv(dir.path());
    let cpu = facts(dir.path(), "cpu.toml", CPU_FACTS);
    let lock_file = venv.join(vari_install::sync::ENVIRONMENT_LOCK);
    let held = vari_fs::lock::lock_exclusive(&lock_file, || panic!("free")).unwrap();
    let mut command = install(dir.path(), &venv, &["--installer"]);
    let mut child = command
        .arg(uv())
        .arg("--profile")
        .arg(&cpu)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    // The environment is named first (the environment rule), then the wait.
    let mut note = String::new();
    stderr.read_line(&mut note).unwrap();
    if note.starts_with("note: Using ") {
        note.clear();
        stderr.read_line(&mut note).unwrap();
    }
    assert_eq!(
        note,
        format!(
            "note: blocking: waiting for the lock {} (another vari run is changing this \
             environment)\n",
            lock_file.display()
        )
    );
    assert_eq!(child.try_wait().unwrap(), None);
    assert_eq!(listed(&venv), []);
    drop(held);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}: {rest}");
    assert_eq!(
        listed(&venv),
        [("vari-demo".to_owned(), Some("null".to_owned()))]
    );
}
