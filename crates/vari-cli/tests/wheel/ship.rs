//! Getting vari without Rust: the wheel (maturin, zig, manylinux2014) installed offline by pip,
//! uv and pipx into fresh environments; `python -m vari`; the wheel's tags (`auditwheel show`)
//! and metadata; the standalone binary and the install script with a right and a wrong SHA-256;
//! the sdist; SHA256SUMS; the release workflow's schema and its rule that every step is a script
//! of the repository; `vari --version` and its JSON form.
//!
//! The wheel is built once per test run by `scripts/build-wheel --profile wheel-test` (the
//! release profile without LTO, see Cargo.toml) and shared by the tests below. The scripts run
//! with the test venv's `bin/` first on PATH: maturin, ziglang, auditwheel, check-jsonschema
//! and pipx come from there (scripts/test-requirements.txt).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use sha2::{Digest, Sha256};

use crate::common::{run, vari, vari_run};

const TARGET: &str = "x86_64-unknown-linux-gnu";
const VERSION: &str = env!("CARGO_PKG_VERSION");

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn venv_bin() -> PathBuf {
    crate::common::test_python().parent().unwrap().to_path_buf()
}

/// A scratch directory under the target directory's tmp (kept small: removed by `TempDir`).
fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("ship-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap()
}

/// PATH with the test venv's tools first (maturin, zig, auditwheel, check-jsonschema, pipx).
fn tool_path() -> std::ffi::OsString {
    let mut paths = vec![venv_bin()];
    paths.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(paths).unwrap()
}

/// A repository script with the tools on PATH and no caller's Python environment.
fn script(name: &str) -> Command {
    let mut command = Command::new(root().join("scripts").join(name));
    command
        .current_dir(root())
        .env("PATH", tool_path())
        .env("PYTHON", crate::common::test_python())
        .env_remove("VIRTUAL_ENV")
        .env_remove("CONDA_PREFIX");
    command
}

fn output_text(output: &Output) -> String {
    format!(
        "--- stdout\n{}\n--- stderr\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Runs `command`, panics with its output unless it succeeds, returns stdout.
fn check(command: &mut Command) -> String {
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "{command:?} failed\n{}",
        output_text(&output)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// Runs `command`, panics unless it fails, returns stderr.
fn check_fails(command: &mut Command) -> String {
    let output = command.output().unwrap();
    assert!(
        !output.status.success(),
        "{command:?} succeeded\n{}",
        output_text(&output)
    );
    String::from_utf8(output.stderr).unwrap()
}

/// The commands an installed `vari` is checked with: hermetic (no config, private cache).
fn installed_vari(binary: &Path, cache: &Path) -> Command {
    let mut command = Command::new(binary);
    command
        .env("NO_COLOR", "1")
        .env("VARI_NO_CONFIG", "1")
        .env("VARI_CACHE_DIR", cache);
    command
}

/// `vari --version` and `vari detect --json` from an installed binary: the facts of this build.
fn assert_installed_vari_works(binary: &Path, cache: &Path) {
    let line = check(installed_vari(binary, cache).arg("--version"));
    assert!(
        line.starts_with(&format!("vari {VERSION} (commit ")) && line.contains(TARGET),
        "{line}"
    );
    let detected = check(installed_vari(binary, cache).args(["detect", "--json"]));
    let detected: serde_json::Value = serde_json::from_str(&detected).unwrap();
    assert!(detected.is_object(), "{detected}");
}

/// The wheel `scripts/build-wheel` makes, built once and shared.
struct Built {
    _dir: tempfile::TempDir,
    dist: PathBuf,
    wheel: PathBuf,
}

fn built() -> &'static Built {
    static BUILT: OnceLock<Built> = OnceLock::new();
    BUILT.get_or_init(|| {
        let dir = scratch();
        let dist = dir.path().join("dist");
        check(
            script("build-wheel")
                .args(["--profile", "wheel-test", "--target", TARGET, "--out"])
                .arg(&dist)
                // An optimised build: incremental state would only add to it.
                .env("CARGO_INCREMENTAL", "0"),
        );
        let wheels: Vec<PathBuf> = std::fs::read_dir(&dist)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.extension().is_some_and(|e| e == "whl"))
            .collect();
        assert_eq!(wheels.len(), 1, "{wheels:?}");
        let wheel = wheels[0].clone();
        Built {
            _dir: dir,
            dist,
            wheel,
        }
    })
}

fn wheel_member(wheel: &Path, name: &str) -> String {
    let mut archive = zip::ZipArchive::new(std::fs::File::open(wheel).unwrap()).unwrap();
    let mut text = String::new();
    archive
        .by_name(name)
        .unwrap_or_else(|e| panic!("{name} in {}: {e}", wheel.display()))
        .read_to_string(&mut text)
        .unwrap();
    text
}

fn wheel_names(wheel: &Path) -> Vec<String> {
    let archive = zip::ZipArchive::new(std::fs::File::open(wheel).unwrap()).unwrap();
    archive.file_names().map(str::to_owned).collect()
}

fn sha256_hex(path: &Path) -> String {
    let digest = Sha256::digest(std::fs::read(path).unwrap());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn version_prints_version_commit_and_target() {
    let line = vari_run(["--version"]).expect_code(0).stdout;
    let short = vari_run(["-V"]).expect_code(0).stdout;
    assert_eq!(line, short);
    let json = vari_run(["--version", "--json"]).expect_code(0).json();
    assert_eq!(json["name"], "vari");
    assert_eq!(json["version"], VERSION);
    assert_eq!(json["target"], TARGET);
    let commit = json["commit"].as_str().unwrap();
    // Built from this checkout: the commit is HEAD's (unless git is missing here).
    if let Ok(head) = Command::new("git")
        .args(["rev-parse", "--short=10", "HEAD"])
        .current_dir(root())
        .output()
    {
        if head.status.success() {
            assert_eq!(commit, String::from_utf8(head.stdout).unwrap().trim());
        }
    }
    assert_eq!(
        line,
        format!("vari {VERSION} (commit {commit}, {TARGET})\n")
    );

    // `--json` belongs to `--version` here; a command is still required otherwise.
    let alone = vari_run(["--json"]).expect_code(2);
    assert!(alone.stderr.contains("--version"), "{}", alone.stderr);
    let nothing = run(&mut vari()).expect_code(2);
    assert!(nothing.stdout.is_empty());
    assert!(
        nothing.stderr.contains("a command is required"),
        "{}",
        nothing.stderr
    );
}

#[test]
fn wheel_is_tagged_manylinux2014_and_its_metadata_is_complete() {
    let wheel = &built().wheel;
    let name = wheel.file_name().unwrap().to_str().unwrap();
    assert_eq!(
        name,
        format!("vari_cli-{VERSION}-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl")
    );
    let dist_info = format!("vari_cli-{VERSION}.dist-info");
    let wheel_file = wheel_member(wheel, &format!("{dist_info}/WHEEL"));
    assert!(
        wheel_file.contains("Root-Is-Purelib: false"),
        "{wheel_file}"
    );
    let tags: Vec<&str> = wheel_file
        .lines()
        .filter_map(|line| line.strip_prefix("Tag: "))
        .collect();
    assert_eq!(
        tags,
        [
            "py3-none-manylinux2014_x86_64",
            "py3-none-manylinux_2_17_x86_64"
        ]
    );

    let metadata = wheel_member(wheel, &format!("{dist_info}/METADATA"));
    let headers: Vec<(&str, &str)> = metadata
        .split("\n\n")
        .next()
        .unwrap()
        .lines()
        .filter_map(|line| line.split_once(": "))
        .collect();
    let values = |key: &str| -> Vec<&str> {
        headers
            .iter()
            .filter(|(k, _)| *k == key)
            .map(|(_, v)| *v)
            .collect()
    };
    // The distribution is `vari-cli` on PyPI (`vari` there is another project); the command
    // and the module stay `vari`.
    assert_eq!(values("Name"), ["vari-cli"]);
    assert_eq!(values("Version"), [VERSION]);
    assert!(
        values("Summary")[0].starts_with("Wheel variants"),
        "{metadata}"
    );
    assert_eq!(values("Requires-Python"), [">=3.9"]);
    assert_eq!(values("License-Expression"), ["Apache-2.0 OR MIT"]);
    assert_eq!(values("License-File"), ["LICENSE-APACHE", "LICENSE-MIT"]);
    let mut urls = values("Project-URL");
    urls.sort_unstable();
    assert_eq!(
        urls,
        [
            "Changelog, https://github.com/vari-dev/vari/blob/main/CHANGELOG.md",
            "Homepage, https://github.com/vari-dev/vari",
            "Issues, https://github.com/vari-dev/vari/issues",
            "Repository, https://github.com/vari-dev/vari",
        ]
    );
    let classifiers = values("Classifier");
    for expected in [
        "Programming Language :: Rust",
        "Operating System :: POSIX :: Linux",
        "Environment :: Console",
    ] {
        assert!(classifiers.contains(&expected), "{classifiers:?}");
    }
    assert_eq!(
        values("Description-Content-Type"),
        ["text/markdown; charset=UTF-8; variant=GFM"]
    );

    let names = wheel_names(wheel);
    for expected in [
        format!("vari_cli-{VERSION}.data/scripts/vari"),
        "vari/__init__.py".to_owned(),
        "vari/__main__.py".to_owned(),
        format!("{dist_info}/licenses/LICENSE-APACHE"),
        format!("{dist_info}/licenses/LICENSE-MIT"),
    ] {
        assert!(names.contains(&expected), "{expected} not in {names:?}");
    }

    // auditwheel agrees with the tag; a wheel that claims an older glibc than its binary needs
    // is refused.
    let shown = check(script("check-wheel").arg(wheel));
    assert!(
        shown.contains("tag manylinux_2_17_x86_64 checked"),
        "{shown}"
    );
    let dir = scratch();
    let lying = dir.path().join(format!(
        "vari_cli-{VERSION}-py3-none-manylinux_2_5_x86_64.whl"
    ));
    std::fs::copy(wheel, &lying).unwrap();
    check_fails(script("check-wheel").arg(&lying));
}

#[test]
fn pip_installs_the_wheel_offline_and_python_m_vari_runs_it() {
    let wheel = &built().wheel;
    let dir = scratch();
    let venv = dir.path().join("venv");
    check(
        Command::new(crate::common::test_python())
            .args(["-m", "venv"])
            .arg(&venv),
    );
    check(
        Command::new(venv.join("bin/python"))
            .args([
                "-m",
                "pip",
                "install",
                "--no-index",
                "--disable-pip-version-check",
            ])
            .arg(wheel)
            .env("PIP_CONFIG_FILE", "/dev/null"),
    );
    let cache = dir.path().join("cache");
    assert_installed_vari_works(&venv.join("bin/vari"), &cache);

    let direct = check(installed_vari(&venv.join("bin/vari"), &cache).arg("--version"));
    let via_python =
        check(installed_vari(&venv.join("bin/python"), &cache).args(["-m", "vari", "--version"]));
    assert_eq!(direct, via_python);
    // Arguments and the exit status pass through `python -m vari`.
    let output = installed_vari(&venv.join("bin/python"), &cache)
        .args(["-m", "vari", "no-such-command"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", output_text(&output));
}

#[test]
fn uv_tool_install_puts_vari_on_the_tool_bin_dir_offline() {
    let wheel = &built().wheel;
    let dir = scratch();
    let bin = dir.path().join("bin");
    check(
        Command::new(venv_bin().join("uv"))
            .args(["tool", "install", "--offline", "--no-config"])
            .arg(wheel)
            .env("UV_TOOL_DIR", dir.path().join("tools"))
            .env("UV_TOOL_BIN_DIR", &bin)
            .env("UV_CACHE_DIR", dir.path().join("uv-cache"))
            .env("UV_PYTHON", crate::common::test_python())
            .env("UV_PYTHON_DOWNLOADS", "never")
            .env_remove("VIRTUAL_ENV"),
    );
    assert_installed_vari_works(&bin.join("vari"), &dir.path().join("cache"));
}

#[test]
fn pipx_installs_the_wheel_offline() {
    let wheel = &built().wheel;
    let dir = scratch();
    let bin = dir.path().join("bin");
    check(
        Command::new(venv_bin().join("pipx"))
            .args(["install", "--pip-args=--no-index"])
            .arg(wheel)
            .env("PIPX_HOME", dir.path().join("pipx"))
            .env("PIPX_BIN_DIR", &bin)
            .env("PIPX_MAN_DIR", dir.path().join("man"))
            .env("PIPX_DEFAULT_PYTHON", crate::common::test_python())
            .env("PIP_CONFIG_FILE", "/dev/null")
            .env_remove("VIRTUAL_ENV"),
    );
    assert_installed_vari_works(&bin.join("vari"), &dir.path().join("cache"));
}

#[test]
fn standalone_binary_installs_only_with_the_right_sha256() {
    let built = built();
    let dir = scratch();
    let release = dir.path().join("release");
    check(
        script("build-binary")
            .args(["--target", TARGET, "--out"])
            .arg(&release)
            .arg(&built.wheel),
    );
    let binary = release.join(format!("vari-{TARGET}"));
    let sums = std::fs::read_to_string(release.join(format!("vari-{TARGET}.sha256"))).unwrap();
    assert_eq!(sums, format!("{}  vari-{TARGET}\n", sha256_hex(&binary)));
    assert_installed_vari_works(&binary, &dir.path().join("cache"));

    let install = |install_dir: &Path, url: &str, sha256: Option<&str>| -> Output {
        let mut command = script("install.sh");
        command
            .env("VARI_DOWNLOAD_URL", url)
            .env("VARI_INSTALL_DIR", install_dir)
            .env_remove("VARI_SHA256")
            .env_remove("VARI_VERSION")
            .env_remove("VARI_TARGET");
        if let Some(sha256) = sha256 {
            command.env("VARI_SHA256", sha256);
        }
        command.output().unwrap()
    };
    let url = format!("file://{}", release.display());

    // The right checksum, from the `.sha256` beside the binary: installed, and it runs.
    let good = dir.path().join("good");
    let output = install(&good, &url, None);
    assert!(output.status.success(), "{}", output_text(&output));
    assert_eq!(crate::common::files_in(&good), ["vari"]);
    assert_eq!(sha256_hex(&good.join("vari")), sha256_hex(&binary));
    assert_installed_vari_works(&good.join("vari"), &dir.path().join("cache"));

    // The right checksum given by the user.
    let pinned = dir.path().join("pinned");
    let output = install(&pinned, &url, Some(&sha256_hex(&binary).to_uppercase()));
    assert!(output.status.success(), "{}", output_text(&output));

    // A wrong checksum, given or published: nothing installed, one error line, non-zero exit.
    let wrong = "0".repeat(64);
    let refused = dir.path().join("refused");
    let output = install(&refused, &url, Some(&wrong));
    assert!(!output.status.success(), "{}", output_text(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("error: ") && stderr.contains("SHA-256") && stderr.lines().count() == 1,
        "{stderr}"
    );
    assert!(crate::common::files_in(&refused).is_empty());

    let tampered = dir.path().join("tampered");
    std::fs::create_dir(&tampered).unwrap();
    std::fs::copy(&binary, tampered.join(format!("vari-{TARGET}"))).unwrap();
    std::fs::write(
        tampered.join(format!("vari-{TARGET}.sha256")),
        format!("{wrong}  vari-{TARGET}\n"),
    )
    .unwrap();
    let output = install(&refused, &format!("file://{}", tampered.display()), None);
    assert!(!output.status.success(), "{}", output_text(&output));
    assert!(crate::common::files_in(&refused).is_empty());

    // A binary cut short by the server fails the same way.
    std::fs::write(tampered.join(format!("vari-{TARGET}.sha256")), &sums).unwrap();
    let whole = std::fs::read(&binary).unwrap();
    std::fs::write(
        tampered.join(format!("vari-{TARGET}")),
        &whole[..whole.len() / 2],
    )
    .unwrap();
    let output = install(&refused, &format!("file://{}", tampered.display()), None);
    assert!(!output.status.success(), "{}", output_text(&output));
    assert!(crate::common::files_in(&refused).is_empty());

    // Not a checksum, and a plain-http URL: refused before anything is downloaded.
    let output = install(&refused, &url, Some("not-a-sha256"));
    assert!(!output.status.success(), "{}", output_text(&output));
    let output = install(&refused, "http://127.0.0.1:9/releases", None);
    assert!(!output.status.success(), "{}", output_text(&output));
    assert!(String::from_utf8_lossy(&output.stderr).contains("only https:// and file://"));
    assert!(crate::common::files_in(&refused).is_empty());
}

#[test]
fn checksums_list_every_release_file() {
    let built = built();
    let dir = scratch();
    let release = dir.path().join("release");
    std::fs::create_dir(&release).unwrap();
    std::fs::copy(&built.wheel, release.join(built.wheel.file_name().unwrap())).unwrap();
    check(
        script("build-binary")
            .args(["--target", TARGET, "--out"])
            .arg(&release)
            .arg(&built.wheel),
    );
    check(script("checksums").arg(&release));
    let sums = std::fs::read_to_string(release.join("SHA256SUMS")).unwrap();
    let mut listed: Vec<&str> = sums.lines().map(|line| &line[66..]).collect();
    listed.sort_unstable();
    let mut expected = vec![
        built
            .wheel
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .to_owned(),
        format!("vari-{TARGET}"),
        format!("vari-{TARGET}.sha256"),
    ];
    expected.sort_unstable();
    assert_eq!(listed, expected);
    // `sha256sum -c` agrees with every line.
    check(
        Command::new("sha256sum")
            .args(["--check", "--strict", "SHA256SUMS"])
            .current_dir(&release),
    );
    assert!(built.dist.exists());
}

#[test]
fn sdist_holds_what_a_build_from_it_needs() {
    let dir = scratch();
    check(
        script("build-wheel")
            .arg("--sdist")
            .arg("--out")
            .arg(dir.path()),
    );
    let sdist = dir.path().join(format!("vari_cli-{VERSION}.tar.gz"));
    let listing = check(Command::new("tar").arg("-tzf").arg(&sdist));
    for expected in [
        "pyproject.toml",
        "Cargo.toml",
        "Cargo.lock",
        "LICENSE-APACHE",
        "LICENSE-MIT",
        "PKG-INFO",
        "crates/vari-cli/build.rs",
        "crates/vari-cli/Cargo.toml",
        "crates/vari-core/Cargo.toml",
        "python/vari/__main__.py",
        // Read by include_str! at build time.
        "crates/vari-detect/data/hardware-ranges.toml",
        "crates/vari-python/src/query.py",
    ] {
        let path = format!("vari_cli-{VERSION}/{expected}");
        assert!(
            listing.lines().any(|line| line == path),
            "{path} not in\n{listing}"
        );
    }
}

#[test]
fn release_workflow_is_valid_and_runs_only_repository_scripts() {
    let shown = check(&mut script("check-workflow"));
    assert!(shown.contains("every run step is a script"), "{shown}");

    let workflow = std::fs::read_to_string(root().join(".github/workflows/release.yml")).unwrap();
    for required in [
        "x86_64-unknown-linux-gnu",
        "aarch64-unknown-linux-gnu",
        "x86_64-unknown-linux-musl",
        "aarch64-unknown-linux-musl",
        "aarch64-apple-darwin",
        "x86_64-apple-darwin",
        "x86_64-pc-windows-msvc",
        "scripts/build-wheel --sdist",
        "scripts/checksums",
        "pypa/gh-action-pypi-publish",
        "id-token: write",
    ] {
        assert!(workflow.contains(required), "{required} not in release.yml");
    }

    let dir = scratch();
    // A step that is not a script of the repository.
    let inline = dir.path().join("inline.yml");
    std::fs::write(
        &inline,
        workflow.replace(
            "      - run: scripts/build-wheel --sdist --out dist\n",
            "      - run: curl -sSf https://example.com/x | sh\n",
        ),
    )
    .unwrap();
    let stderr = check_fails(script("check-workflow").arg(&inline));
    assert!(stderr.contains("not one call of a script"), "{stderr}");
    // A script that does not exist.
    let missing = dir.path().join("missing.yml");
    std::fs::write(
        &missing,
        workflow.replace(
            "scripts/checksums release",
            "scripts/no-such-script release",
        ),
    )
    .unwrap();
    let stderr = check_fails(script("check-workflow").arg(&missing));
    assert!(stderr.contains("scripts/no-such-script"), "{stderr}");
    // Invalid workflow syntax (a job without `runs-on`).
    let invalid = dir.path().join("invalid.yml");
    std::fs::write(
        &invalid,
        workflow.replace(
            "    runs-on: ubuntu-latest\n",
            "    runs_on: ubuntu-latest\n",
        ),
    )
    .unwrap();
    check_fails(script("check-workflow").arg(&invalid));
}

#[test]
fn release_tag_must_match_the_version_and_the_changelog() {
    let dir = scratch();
    let changelog = dir.path().join("CHANGELOG.md");
    std::fs::write(
        &changelog,
        format!("# Changelog\n\n## [Unreleased]\n\n## [{VERSION}] - 2026-11-26\n"),
    )
    .unwrap();
    let shown = check(
        script("check-version")
            .arg(format!("v{VERSION}"))
            .arg(&changelog),
    );
    assert!(shown.contains(VERSION), "{shown}");
    let stderr = check_fails(script("check-version").arg("v999.0.0").arg(&changelog));
    assert!(
        stderr.contains("does not match the workspace version"),
        "{stderr}"
    );
    std::fs::write(&changelog, "# Changelog\n\n## [Unreleased]\n").unwrap();
    let stderr = check_fails(
        script("check-version")
            .arg(format!("v{VERSION}"))
            .arg(&changelog),
    );
    assert!(stderr.contains("no `## ["), "{stderr}");
}
