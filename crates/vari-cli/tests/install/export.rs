//! `vari export` end to end: what one machine class installs from a lock of the fleet
//! upstream, written as a requirements file (pinned files with hashes) that plain pip and
//! plain uv install with hash checking, or as a pylock.toml with only the class's files.

use std::path::Path;
use std::process::Command;

use vari_test_support::fleet;
use vari_test_support::venv::{bare_venv, python, run_ok, uv};

use crate::common::{run, vari};
use crate::sync::{listed, Fleet};

fn export(scratch: &Path, fleet: &Fleet, class: &str) -> Command {
    let mut command = vari();
    command
        .env("VARI_CACHE_DIR", scratch.join("cache"))
        .arg("export")
        .arg(&fleet.lock)
        .arg("--target")
        .arg(fleet.profile(class))
        .args([
            "--python-version",
            "3.12",
            "--python-platform",
            "x86_64-manylinux_2_28",
        ]);
    command
}

#[test]
fn the_export_installs_with_plain_pip_and_plain_uv_checking_hashes() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = Fleet::new(dir.path());
    let out = dir.path().join("docker");
    std::fs::create_dir_all(&out).unwrap();
    let requirements = out.join("requirements.txt");
    run(export(dir.path(), &fleet, "a100")
        .arg("--wheelhouse")
        .arg(out.join("wheels"))
        .arg("-o")
        .arg(&requirements))
    .expect_code(0);
    let text = std::fs::read_to_string(&requirements).unwrap();
    assert!(
        text.contains("./wheels/vari_demo-1.0.0-py3-none-any.whl --hash=sha256:"),
        "{text}"
    );
    assert!(text.contains("vari_demo_cuda_runtime"), "{text}");
    // pip (the test venv's, for another environment) and uv, neither told about variants.
    let pip_venv = dir.path().join("pip-venv");
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
    assert_eq!(listed(&pip_venv), fleet::installed("a100"));
    let uv_venv = dir.path().join("uv-venv");
    bare_venv(&uv_venv);
    run_ok(
        Command::new(uv())
            .args(["pip", "install", "--no-config", "--python"])
            .arg(&uv_venv)
            .args(["--no-index", "--require-hashes", "-r", "requirements.txt"])
            .env("UV_CACHE_DIR", dir.path().join("uv-cache"))
            .current_dir(&out),
    );
    assert_eq!(listed(&uv_venv), fleet::installed("a100"));
}

#[test]
fn the_export_is_deterministic_and_names_only_the_class_files() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = Fleet::new(dir.path());
    // By default a variant wheel is not named by URL (plain pip refuses the name): refused
    // before anything is written, with the ways out.
    let output = dir.path().join("cpu.txt");
    let refused = run(export(dir.path(), &fleet, "cpu").arg("-o").arg(&output));
    assert_eq!(refused.code, 1, "{}", refused.stderr);
    assert!(
        refused.stderr.contains(" variant wheel(s) (")
            && refused.stderr.contains("-null.whl")
            && refused.stderr.contains("--wheelhouse DIR")
            && refused.stderr.contains("--variant-urls"),
        "{}",
        refused.stderr
    );
    assert!(!output.exists());
    let first = run(export(dir.path(), &fleet, "cpu").arg("--variant-urls")).expect_code(0);
    let again = run(export(dir.path(), &fleet, "cpu").arg("--variant-urls")).expect_code(0);
    assert_eq!(first.stdout, again.stdout);
    let lock = vari_lock::read_lock(&std::fs::read_to_string(&fleet.lock).unwrap()).unwrap();
    let demo = lock
        .packages
        .iter()
        .find(|p| p.name == "vari-demo")
        .unwrap();
    let null = demo
        .wheels
        .iter()
        .find(|w| w.url.as_deref().unwrap().ends_with("-null.whl"))
        .unwrap();
    let line = format!(
        "vari-demo @ {} --hash=sha256:{}\n",
        null.url.as_deref().unwrap(),
        null.sha256().unwrap()
    );
    assert!(first.stdout.contains(&line), "{}", first.stdout);
    assert!(!first.stdout.contains("cuda_runtime"), "{}", first.stdout);
    let lines = first.stdout.lines().filter(|l| !l.starts_with('#')).count();
    assert_eq!(lines, 5, "{}", first.stdout);

    // As a pylock.toml: the class's entries, one file each, nothing left to choose.
    let narrowed =
        run(export(dir.path(), &fleet, "a100").args(["--format", "pylock"])).expect_code(0);
    let narrowed = vari_lock::read_lock(&narrowed.stdout).unwrap();
    let names: Vec<&str> = narrowed.packages.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "app-like",
            "idnalike",
            "numlike",
            "reqlike",
            "vari-demo",
            "vari-demo-cuda-runtime"
        ]
    );
    assert!(narrowed
        .packages
        .iter()
        .all(|p| p.wheels.len() == 1 && p.marker.is_none()));
    let demo = narrowed
        .packages
        .iter()
        .find(|p| p.name == "vari-demo")
        .unwrap();
    assert!(demo.wheels[0]
        .url
        .as_deref()
        .unwrap()
        .ends_with("-cu128.whl"));
    assert_eq!(demo.variants_json.as_ref().unwrap().variants.len(), 1);
}

/// A lock from a pull request whose file `path` holds a line break (here U+2028, where pip's
/// parser ends a line) would add `--index-url` to the export: the lock is refused when read,
/// with one line naming the key, and no file is written. A path the reader allows but a
/// requirements file cannot say plainly (a non-ASCII letter) is written as a percent-encoded
/// `file:` URL that no rule of the file can split.
#[test]
fn a_hostile_lock_is_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = Fleet::new(dir.path());
    let lock_text = std::fs::read_to_string(&fleet.lock).unwrap();
    let packages = vari_lock::read_lock(&lock_text).unwrap().packages.len();
    let entry = |path: &str| {
        format!(
            "\n[[packages]]\nname = \"evil\"\nversion = \"1.0\"\nwheels = [{{ name = \
             \"evil-1.0-py3-none-any.whl\", path = \"{path}\", hashes = {{ sha256 = \"{}\" }} }}]\n",
            "0".repeat(64)
        )
    };
    let out = dir.path().join("requirements.txt");
    std::fs::write(
        &fleet.lock,
        format!(
            "{lock_text}{}",
            entry("w/evil-1.0-py3-none-any.whl\\u2028--index-url=https://evil.example/simple/")
        ),
    )
    .unwrap();
    run(export(dir.path(), &fleet, "cpu").arg("-o").arg(&out)).expect_one_error(&[
        "pylock.toml",
        &format!("packages[{packages}].wheels[0].path"),
        "\\u{2028}",
    ]);
    assert!(!out.exists());

    std::fs::write(
        &fleet.lock,
        format!("{lock_text}{}", entry("w/é/evil-1.0-py3-none-any.whl")),
    )
    .unwrap();
    // (--variant-urls names the variant wheels by URL: the path is what is tested here.)
    run(export(dir.path(), &fleet, "cpu")
        .arg("--variant-urls")
        .arg("-o")
        .arg(&out))
    .expect_code(0);
    let written = std::fs::read_to_string(&out).unwrap();
    let line = written
        .lines()
        .find(|l| l.starts_with("evil @ file:///"))
        .unwrap_or_else(|| panic!("{written}"));
    assert!(
        line.contains("/w/%C3%A9/evil-1.0-py3-none-any.whl --hash=sha256:"),
        "{line}"
    );
    assert!(!line.contains('é') && !line.contains(" #"), "{line}");
}
