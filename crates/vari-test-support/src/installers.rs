//! The real installers (the pip `python3 -m venv` bundles, the test venv's newest pip, and uv)
//! installing from an index into a `--target` directory of their own, with nothing of the
//! caller's configuration: what a test checks an index or a proxy against.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use crate::venv::{python, uv};

/// Which installer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Installer {
    /// The pip `python3 -m venv` bundles (this machine's, offline).
    MachinePip,
    /// The newest pip (the test venv's).
    NewestPip,
    /// uv (the test venv's).
    Uv,
}

/// Every installer, oldest pip first.
pub const INSTALLERS: [Installer; 3] = [Installer::MachinePip, Installer::NewestPip, Installer::Uv];

/// A `python3 -m venv` environment (made once per test binary, under `target_tmp`): the pip
/// this machine's Python bundles. Returns its Python.
pub fn machine_pip_python(target_tmp: &Path) -> PathBuf {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON
        .get_or_init(|| {
            let dir = target_tmp.join("vari-machine-pip");
            let python = dir.join("bin/python");
            if !python.is_file() {
                let status = Command::new("python3")
                    .args(["-m", "venv"])
                    .arg(&dir)
                    .status()
                    .expect("python3 runs");
                assert!(status.success(), "python3 -m venv {} failed", dir.display());
            }
            python
        })
        .clone()
}

/// One installer run into a `--target` directory of its own.
#[derive(Debug)]
pub struct Installed {
    /// The `--target` directory.
    pub dir: tempfile::TempDir,
    /// The command, its standard output and its standard error, for failure messages.
    pub output: String,
    /// Whether the installer exited with success.
    pub success: bool,
}

impl Installed {
    /// The label in `{dist_info}/variant.json` (the one variant it describes); `None` when
    /// the installed wheel has no `variant.json`.
    pub fn label(&self, dist_info: &str) -> Option<String> {
        let info = self.dir.path().join(dist_info);
        assert!(
            info.is_dir(),
            "{dist_info} is not installed:\n{}",
            self.output
        );
        let text = std::fs::read_to_string(info.join("variant.json")).ok()?;
        let value: serde_json::Value = serde_json::from_str(&text).expect("variant.json is JSON");
        let labels: Vec<&String> = value["variants"]
            .as_object()
            .expect("`variants` is an object")
            .keys()
            .collect();
        assert_eq!(labels.len(), 1, "{text}");
        Some(labels[0].clone())
    }

    /// The installed distributions (`name-version` of each `.dist-info`), sorted.
    pub fn distributions(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.dir.path())
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter_map(|n| n.strip_suffix(".dist-info").map(str::to_owned))
            .collect();
        names.sort();
        names
    }

    /// The file names in the installed `dist_info` directory, sorted.
    pub fn dist_info_files(&self, dist_info: &str) -> Vec<String> {
        let dir = self.dir.path().join(dist_info);
        assert!(
            dir.is_dir(),
            "{dist_info} is not installed:\n{}",
            self.output
        );
        crate::paths::file_names(&dir)
    }

    /// Asserts that the installer succeeded, showing its output where it did not.
    pub fn assert_success(&self) {
        assert!(self.success, "the installer failed:\n{}", self.output);
    }

    /// Asserts that the installer succeeded and installed exactly the distributions
    /// `expected` (`name-version`, sorted), showing its output where it did not.
    pub fn assert_installed(&self, expected: &[&str]) {
        self.assert_success();
        assert_eq!(self.distributions(), expected, "{}", self.output);
    }
}

/// Runs `installer` to install `arguments` (requirements and options) from `index` into a new
/// directory, with a fresh cache unless `kept_cache` names one (uv's, kept for the next run).
/// No configuration file, variable or cache of the caller's is read; stdin is closed.
pub fn install_into_target(
    installer: Installer,
    target_tmp: &Path,
    index: &str,
    arguments: &[String],
    kept_cache: Option<&Path>,
) -> Installed {
    let dir = tempfile::tempdir().unwrap();
    let fresh_cache = tempfile::tempdir().unwrap();
    let cache = kept_cache.unwrap_or(fresh_cache.path());
    let mut command = match installer {
        Installer::MachinePip | Installer::NewestPip => {
            let python = match installer {
                Installer::MachinePip => machine_pip_python(target_tmp),
                _ => python(),
            };
            let mut command = Command::new(python);
            command
                .args(["-m", "pip", "install", "--isolated", "--no-cache-dir"])
                .args([
                    "--disable-pip-version-check",
                    "--no-compile",
                    "--no-input",
                    "-v",
                ])
                .env("PIP_CONFIG_FILE", "/dev/null")
                .env("PIP_NO_CACHE_DIR", "1");
            command
        }
        Installer::Uv => {
            let mut command = Command::new(uv());
            command
                .args(["pip", "install", "--no-config"])
                .arg("--python")
                .arg(python())
                .env("UV_CACHE_DIR", cache)
                .env("UV_HTTP_RETRIES", "0")
                .env_remove("UV_INDEX_URL")
                .env_remove("UV_EXTRA_INDEX_URL");
            command
        }
    };
    let output = command
        .args(["--index-url", index])
        .arg("--target")
        .arg(dir.path())
        .args(arguments)
        .env_remove("PIP_INDEX_URL")
        .env_remove("PIP_EXTRA_INDEX_URL")
        .env_remove("PIP_FIND_LINKS")
        .stdin(Stdio::null())
        .output()
        .expect("the installer runs");
    let text = format!(
        "--- {installer:?} {arguments:?} from {index}\n--- stdout\n{}\n--- stderr\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    drop(fresh_cache);
    Installed {
        dir,
        output: text,
        success: output.status.success(),
    }
}
